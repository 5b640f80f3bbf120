"""simplify-body spares MOC a body it has nothing for (loopir/moc_inert.py), and a nest of loops
runs MOC once, on its outermost body: a nested body's unread Loop outputs are left to it, and
its outcome is kept when only nested bodies shrank. Hoisted computation reuses what the
enclosing graph computes already (a nested loop's guards are its parent's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from benchmarks.generated_models import nested_loops
from ov_loops.errors import ConversionError
from ov_loops.loopir.moc_inert import moc_inert
from ov_loops.loopir.passes import base, simplify
from ov_loops.ovgraph import twin
from tests import harness
from tests.loopir.passes.test_pass_simplify_memo import _counting_moc as counting_moc

EXPORTS = Path(__file__).parents[2] / "models" / "exporters"


def _parameter(name: str) -> ov.Node:
    return ops.parameter([4], np.float32, name=name)


def _model(value: ov.Output, *parameters: ov.Node) -> ov.Model:
    return ov.Model([ops.result(value)], list(parameters), "body")


def _constant(value: float) -> ov.Output:
    return ops.constant(np.full([4], value, np.float32)).output(0)


def _inner_loop(read_both: bool) -> tuple[ov.Model, ov.Node]:
    """A body holding a Loop of two outputs (a last value and a stacked one); the body reads
    the stacked one only when `read_both`."""
    x, y = _parameter("x"), _parameter("y")
    inner_x, inner_y = _parameter("ix"), _parameter("iy")
    added = ops.add(inner_x, inner_y)
    scanned = ops.unsqueeze(ops.multiply(added, inner_y), ops.constant(np.int64(0)))
    body = ov.Model(
        [ops.result(ops.constant(True)), ops.result(added), ops.result(scanned)],
        [inner_x, inner_y],
    )
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(inner_x, x.output(0), body.get_results()[1].output(0))
    loop.set_invariant_input(inner_y, y.output(0))
    last = loop.get_iter_value(body.get_results()[1].output(0), -1)
    stacked = loop.get_concatenated_slices(body.get_results()[2].output(0), 0, 1, 1, -1, 0)
    loop.validate_and_infer_types()
    outputs = [ops.result(ops.subtract(last, y))]
    if read_both:
        outputs.append(ops.result(stacked))
    return ov.Model(outputs, [x, y], "outer"), loop


def test_a_body_of_parameters_read_by_distinct_ops_is_inert():
    x, y = _parameter("x"), _parameter("y")
    step = ops.multiply(ops.add(x, y), y)
    _assert_inert(_model(ops.unsqueeze(step, ops.constant(np.int64(0))), x, y))


def test_a_constant_operand_of_no_chain_is_inert():
    """x + 2, and (x + 15) / 16 (the unrolled trip count): no chain of one family."""
    x = _parameter("x")
    _assert_inert(_model(ops.add(x, _constant(2.0)), x))
    _assert_inert(_model(ops.divide(ops.add(x, _constant(15.0)), _constant(16.0)), x))


def _assert_inert(body: ov.Model) -> None:
    """Found inert, and MOC indeed removes no op of it."""
    assert moc_inert(body)
    assert len(simplify.simplified(body).get_ordered_ops()) == len(body.get_ordered_ops())


@pytest.mark.parametrize(
    "what",
    [
        "constant addend",
        "times one",
        "constant chain",
        "folded constants",
        "twins",
        "convert chain",
        "x - x",
        "relu",
    ],
)
def test_what_moc_would_remove_is_not_inert(what):
    x, y = _parameter("x"), _parameter("y")
    made = {
        "constant addend": lambda: ops.add(x, _constant(0.0)),
        "times one": lambda: ops.multiply(x, _constant(1.0)),
        "constant chain": lambda: ops.subtract(ops.add(x, _constant(2.0)), _constant(3.0)),
        "folded constants": lambda: ops.add(y, ops.multiply(_constant(2.0), _constant(3.0))),
        "twins": lambda: ops.multiply(ops.add(x, y), ops.add(x, y)),
        "convert chain": lambda: ops.convert(ops.convert(x, np.float16), np.float32),
        "x - x": lambda: ops.add(ops.subtract(x, y), ops.subtract(y, y)),
        "relu": lambda: ops.relu(x),
    }[what]()
    assert not moc_inert(_model(made, x, y))


def test_a_nested_loops_unread_output_is_left_to_the_enclosing_body_only_when_deferred():
    unread, _ = _inner_loop(read_both=False)
    read, _ = _inner_loop(read_both=True)
    assert not moc_inert(unread)
    assert moc_inert(unread, deferred=True) and moc_inert(read, deferred=True)
    _assert_inert(read)


def _counting_moc(monkeypatch) -> list[int]:
    monkeypatch.setattr(base, "CHECKS", False)  # with CHECKS an inert body runs MOC to check
    return counting_moc(monkeypatch)


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_a_nest_runs_moc_once_on_its_outermost_body(monkeypatch, depth):
    calls = _counting_moc(monkeypatch)
    conversion = ov_loops.translate(nested_loops(depth))
    assert len(calls) == 1
    outermost = conversion.loops[0]
    assert outermost.optimizations[0].startswith("simplified body")
    loops = [op for op in _all_ops(conversion.model) if op.get_type_name() == "Loop"]
    assert len(loops) == depth
    for loop in loops:  # the nested loops' stacked outputs nothing reads are pruned
        assert all(output.get_target_inputs() for output in loop.outputs()), loop


def _all_ops(model: ov.Model):
    for op in model.get_ordered_ops():
        yield op
        if op.get_type_name() == "Loop":
            yield from _all_ops(op.get_function())


def test_no_graph_of_a_converted_nest_computes_a_value_twice():
    """The guards of each nested loop's trip count, hoisted into its parent's body (and the
    outermost's into the main graph), are the parent's own: computed once."""
    conversion = ov_loops.translate(nested_loops(3))
    twins = [op for op in _all_ops(conversion.model) if twin(op) is not None]
    assert not twins


@pytest.mark.parametrize("optimize", ["default", "max"])
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_nests_match_onnxruntime(tmp_path, depth, optimize):
    feeds = [
        {"M": np.array(count, np.int64), "x": np.arange(4, dtype=np.float32)} for count in (2, 0, 3)
    ]
    harness.assert_matches_onnxruntime(nested_loops(depth), feeds, tmp_path, optimize=optimize)


def test_a_wrong_inert_claim_fails_the_checks(monkeypatch):
    """With CHECKS (the tests), a body found inert still runs MOC, which must not shrink it."""
    monkeypatch.setattr(simplify, "_UNCHANGED", {})
    monkeypatch.setattr(simplify, "moc_inert", lambda body, deferred=False: True)
    with pytest.raises(ConversionError, match="simplify-body.*MOC shrinks a body found inert"):
        ov_loops.translate(EXPORTS / "torch_ts_count_input.onnx")  # MOC drops an Identity
