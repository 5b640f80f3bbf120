"""HoistInvariantComputation: what it moves out of a body, what it leaves, and that the loop
computes the same (the IR reference before and after, tests/loopir/passes/test_passes.py; an ONNX
loop on the CPU plugin against onnxruntime)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from benchmarks.invariant_product import invariant_product_model
from ov_loops.contract.ports import UNNUMBERED
from ov_loops.contract.spec import InvariantInput, LastValueOutput, MergedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.licm import HoistInvariantComputation
from ov_loops.loopir.passes.pipeline import CPU
from ov_loops.loopir.trip_count import initial_condition, trip_count
from ov_loops.lower import loop5
from ov_loops.lower.loop5 import lower_to_loop5
from tests import harness
from tests.loopir.passes.test_passes import _assert_keeps_results, _assert_same, _reference_outputs
from tests.loopir_scenarios import (
    SCENARIOS,
    _loop,
    _parameter,
    constant_subgraph_and_direct_capture,
    invariant_matmul_chain,
)


def _op_types(loop: LoopIR) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


def test_the_invariant_product_leaves_the_body():
    loop, parameters, _ = invariant_matmul_chain()
    after = HoistInvariantComputation()(loop)
    assert after.applied == ("moved 2 invariant ops out",)
    assert _op_types(after).count("MatMul") == 1 and "Multiply" not in _op_types(after)
    # W1 and W2 are read by nothing left in the body: one invariant input, the product, remains
    assert after.spec.merged_inputs == (MergedInput(2, 0, 0),)
    assert after.spec.invariant_inputs == (InvariantInput(3, 1),)
    product = after.body.get_parameters()[1]
    (matmul,) = [op for op in after.body.get_ordered_ops() if op.get_type_name() == "MatMul"]
    assert matmul.input_value(1).get_node() == product
    assert after.body_value(2).get_node() == product  # the last value of P
    outside = after.outer[3].get_node()
    assert outside.get_type_name() == "Multiply"
    inner = outside.input_value(0).get_node()
    assert inner.get_type_name() == "MatMul"
    assert [value.get_node() for value in inner.input_values()] == parameters[:2]


def test_a_subgraph_of_constants_and_direct_reads_stay():
    loop, _, _ = constant_subgraph_and_direct_capture()
    assert HoistInvariantComputation()(loop) is loop


def _capture_reader_loop(update) -> tuple[LoopIR, list[ov.Node], dict]:
    """y = update(y, x) with x captured, twice."""
    x, y0 = _parameter("x", [2]), _parameter("y0", [2])
    y, x_in = _parameter("y", [2]), _parameter("x_in", [2])
    y_next = update(y, x_in)
    loop = _loop(
        "reader",
        [ops.result(y_next), ops.result(ops.constant(True))],
        [y, x_in],
        [MergedInput(UNNUMBERED, 0, 0), InvariantInput(UNNUMBERED, 1)],
        [LastValueOutput(UNNUMBERED, 0)],
        [y0.output(0), x.output(0)],
        trip_count(ops.constant(np.int64(2)).output(0)),
        initial_condition(None),
        execution_condition=1,
    )
    feeds = {"x": np.array([1.0, 2.0], np.float32), "y0": np.array([0.5, 0.5], np.float32)}
    return loop, [x, y0], feeds


def _plus_shape(y, x_in):
    return ops.add(y, ops.convert(ops.shape_of(x_in), ov.Type.f32))


def _plus_random(y, x_in):
    zero, one = ops.constant(np.float32(0)), ops.constant(np.float32(1))
    return ops.add(y, ops.random_uniform(ops.shape_of(x_in), zero, one, "f32"))


def _plus_random_up_to_the_largest(y, x_in):
    """y + noise in [0, max(x)): max(x) is invariant, the noise is not."""
    zero, shape = ops.constant(np.float32(0)), ops.constant(np.array([2], np.int64))
    return ops.add(
        y, ops.random_uniform(shape, zero, ops.reduce_max(x_in, ops.constant(np.int64(0))), "f32")
    )


def _plus_negative(y, x_in):
    return ops.add(y, ops.negative(x_in))


@pytest.mark.parametrize("update", [_plus_shape, _plus_random])
def test_shape_of_and_randomness_stay_in_the_body(update):
    loop, _, _ = _capture_reader_loop(update)
    assert HoistInvariantComputation()(loop) is loop


def test_randomness_stays_and_its_invariant_bound_moves():
    loop, _, _ = _capture_reader_loop(_plus_random_up_to_the_largest)
    after = HoistInvariantComputation()(loop)
    assert "RandomUniform" in _op_types(after) and "ReduceMax" not in _op_types(after)
    assert after.outer[3].get_node().get_type_name() == "ReduceMax"


def test_an_op_that_reads_only_a_capture_moves(tmp_path):
    loop, parameters, feeds = _capture_reader_loop(_plus_negative)
    expected = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "a.xml")
    loop, parameters, feeds = _capture_reader_loop(_plus_negative)
    after = HoistInvariantComputation()(loop)
    assert "Negative" not in _op_types(after)
    assert after.outer[3].get_node().get_type_name() == "Negative"
    assert len(after.spec.invariant_inputs) == 1  # the capture's own input is gone
    actual = _reference_outputs(lower_to_loop5(after), parameters, feeds, tmp_path / "b.xml")
    _assert_same(actual, expected)


def _plus_negative_at_rank_13(y, x_in):
    """y + -x added at rank 13: -x reshaped to rank 13 is invariant, too high a rank for a
    Loop-5 port."""
    rank13 = ops.constant(np.array([2] + [1] * 12, np.int64))
    high = ops.reshape(ops.negative(x_in), rank13, False)
    total = ops.add(ops.reshape(y, rank13, False), high)
    return ops.reshape(total, ops.constant(np.array([2], np.int64)), False)


def test_a_value_of_rank_13_stays_and_what_feeds_it_moves(tmp_path):
    loop, parameters, feeds = _capture_reader_loop(_plus_negative_at_rank_13)
    expected = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "a.xml")
    loop, parameters, feeds = _capture_reader_loop(_plus_negative_at_rank_13)
    after = HoistInvariantComputation()(loop)
    assert after.outer[3].get_node().get_type_name() == "Negative"
    assert _op_types(after).count("Reshape") == 3 and "Negative" not in _op_types(after)
    actual = _reference_outputs(lower_to_loop5(after), parameters, feeds, tmp_path / "b.xml")
    _assert_same(actual, expected)


@pytest.fixture
def any_rank(monkeypatch):
    """Lower rank-13 ports too (see tests/loopir/passes/test_passes.py: any_port_rank)."""
    monkeypatch.setattr(loop5, "_refuse_high_rank_ports", lambda node, name: None)


@pytest.mark.usefixtures("any_rank")
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_cpu_profile_at_default_keeps_what_the_loop_computes(scenario: str, tmp_path):
    _assert_keeps_results(lambda loop: CPU.run(loop, "default"), scenario, tmp_path)


def test_an_onnx_loop_computes_the_product_once_on_the_cpu(tmp_path):
    model = invariant_product_model(8)
    generator = np.random.default_rng(3)

    def feeds(count: int) -> dict:
        weights = {name: generator.standard_normal((8, 8)).astype(np.float32) / 3 for name in "12"}
        return {
            "M": np.array(count, np.int64),
            "h0": generator.standard_normal((1, 8)).astype(np.float32),
            "W1": weights["1"],
            "W2": weights["2"],
        }

    runs = [feeds(5), feeds(0), feeds(2)]
    conversion = harness.assert_matches_onnxruntime(model, runs, tmp_path)
    (loop,) = conversion.loops
    assert "moved 1 invariant ops out" in loop.optimizations
    (node,) = [op for op in conversion.model.get_ordered_ops() if op.get_type_name() == "Loop"]
    body_ops = [op.get_type_name() for op in node.get_function().get_ordered_ops()]
    assert body_ops.count("MatMul") == 1
    assert ov_loops.translate(model, optimize="none").loops[0].optimizations == ()
