"""`check --optimize max` locates a divergence in what max deploys: a loop unrolled by k (one
Loop-5 iteration runs k of the loop's) and a loop split in two Loop-5s, the second running the
remainder (lower/remainder.py), both in the Ifs that take their runs of no iteration. Before,
the probes did not look inside Ifs nor map a Loop-5's iterations back to the loop's: a fault in
the remainder was "node Loop 'L' output ... diverges", not located inside."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto as T
from onnx import helper

import ov_loops
from benchmarks.rnn_cell import rnn_cell_nodes
from benchmarks.rnn_loop import rnn_weights
from ov_loops.checking.probes import LOOP_TYPES
from ov_loops.lower.loop5 import REMAINDER
from tests.checking.test_divergence import _bumped_above, faulty_device
from tests.harness import save_and_reload

H, STEPS, ROWS = 8, 37, 3  # 37 = 2 * 16 + 5: two Loop-5 iterations of 16, then 5


def _rnn_with_a_running_sum() -> onnx.ModelProto:
    """Loop 'L' over X [T, B, 8]: h = tanh(x W + h R + b), s = s + h (not one recurrent cell, so
    max unrolls it); outputs h, s and the stacked h."""
    value = helper.make_tensor_value_info
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
            *rnn_cell_nodes("x_t", "h_in", "h_out"),
            helper.make_node("Add", ["s_in", "h_out"], ["s_out"]),
            helper.make_node("Identity", ["h_out"], ["y"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "body",
        [value("i", T.INT64, []), value("cond_in", T.BOOL, []),
         value("h_in", T.FLOAT, ["B", H]), value("s_in", T.FLOAT, ["B", H])],
        [value("keep", T.BOOL, []), value("h_out", T.FLOAT, ["B", H]),
         value("s_out", T.FLOAT, ["B", H]), value("y", T.FLOAT, ["B", H])],
    )  # fmt: skip
    main = helper.make_graph(
        [
            helper.make_node("Shape", ["X"], ["shape"], start=0, end=1),
            helper.make_node("Squeeze", ["shape"], ["steps"]),
            helper.make_node("Loop", ["steps", "", "h0", "h0"], ["h", "s", "hs"], body=body,
                             name="L"),
        ],
        "m",
        [value("X", T.FLOAT, ["T", "B", H]), value("h0", T.FLOAT, ["B", H])],
        [value("h", T.FLOAT, ["B", H]), value("s", T.FLOAT, ["B", H]),
         value("hs", T.FLOAT, ["T", "B", H])],
        rnn_weights(H, 0),
    )  # fmt: skip
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


def _loops(graph: ov.Model):
    for op in graph.get_ordered_ops():
        if op.get_type_name() in LOOP_TYPES:
            yield op
            yield from _loops(op.get_function())
        elif op.get_type_name() == "If":
            yield from _loops(op.get_then_body())
            yield from _loops(op.get_else_body())


def _bump_running_sum(model: ov.Model, second: bool) -> None:
    """s + 100 in every iteration of the first Loop-5 of 'L' (or of the second, `second`): the
    back edge of the Loop-5's second merged input (s; h is the first) goes through the bump."""
    for op in _loops(model):
        path = op.get_rt_info()["ov_loops_path"].astype(str)
        if path.endswith(REMAINDER) != second:
            continue
        merged = sorted(
            (d for d in op.get_input_descriptions() if "Merged" in type(d).__name__),
            key=lambda description: description.input_index,
        )
        result = op.get_function().get_results()[merged[1].body_value_index]
        value = result.input_value(0)
        result.input(0).replace_source_output(_bumped_above(value, -1e9, 100.0))
        return
    raise AssertionError("no such Loop-5")


def _check_with_fault(tmp_path, monkeypatch, second: bool, **options):
    made = _rnn_with_a_running_sum()
    onnx.save(made, tmp_path / "model.onnx")
    faulty_device(monkeypatch, lambda model: _bump_running_sum(model, second))
    rng = np.random.default_rng(0)
    feeds = {
        "X": rng.standard_normal((STEPS, ROWS, H)).astype(np.float32),
        "h0": np.zeros((ROWS, H), np.float32),
    }
    report = ov_loops.check(tmp_path / "model.onnx", inputs=feeds, optimize="max", **options)
    assert not report.ok
    return report.divergence


@pytest.mark.parametrize("second, iteration", [(False, 15), (True, 32)], ids=["first", "second"])
def test_a_fault_in_a_split_loop_is_located_in_the_loops_iterations(
    second, iteration, tmp_path, monkeypatch
):
    """Symbolic batch: the first Loop-5 runs 32 iterations 16 at a time, the second 5."""
    (loop,) = ov_loops.translate(_rnn_with_a_running_sum(), optimize="max").loops
    assert "unrolled x16" in loop.optimizations and "second Loop-5" in loop.optimizations[-1]
    found = _check_with_fault(tmp_path, monkeypatch, second)
    assert (found.kind, found.where, found.carried_index) == ("carried", f"main/L[{iteration}]", 1)


def test_a_fault_in_a_masked_unrolled_loop_is_located_at_the_end_of_its_chunk(
    tmp_path, monkeypatch
):
    """Static shapes: one Loop-5 of 3 iterations of 16, copies past 37 masked."""
    static = f"X[{STEPS},{ROWS},{H}],h0[{ROWS},{H}]"
    (loop,) = ov_loops.translate(_rnn_with_a_running_sum(), optimize="max", input=static).loops
    assert "unrolled x16" in loop.optimizations and loop.remainder is None
    found = _check_with_fault(tmp_path, monkeypatch, False, input=static)
    assert (found.kind, found.where, found.carried_index) == ("carried", "main/L[15]", 1)


def test_the_second_loop5_of_a_split_loop_is_reported_and_read_back(tmp_path):
    conversion = ov_loops.translate(_rnn_with_a_running_sum(), optimize="max")
    (loop,) = conversion.loops
    assert loop.remainder is not None and loop.spec is not None
    save_and_reload(conversion.model, tmp_path, conversion)  # both LoopSpecs read back
