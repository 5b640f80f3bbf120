"""PackCarriedValues: which carried values share one back edge, which it leaves apart, and that
the loop computes the same (the IR reference before and after; every scenario in
test_passes.py)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED
from ov_loops.contract.spec import InvariantInput, LastValueOutput, MergedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pack_carried import PackCarriedValues, Unpacked
from ov_loops.loopir.trip_count import initial_condition, trip_count
from tests.loopir.passes.test_passes import _assert_keeps_results
from tests.loopir_scenarios import (
    _always,
    _loop,
    _parameter,
    lstm_step_per_gate_weights,
    lstm_step_symbolic_batch,
)


def test_h_and_c_of_an_lstm_step_share_one_back_edge():
    loop, _, _ = lstm_step_symbolic_batch()
    after = PackCarriedValues()(loop)
    assert after.applied == ("carried 2 values in one back edge",)
    (packed,) = after.spec.merged_inputs
    shape = after.body.get_parameters()[packed.body_parameter].get_partial_shape()
    assert shape.to_string() == "[?,8]"
    assert after.outer[packed.external_port].get_node().get_type_name() == "Concat"
    assert after.body_value(packed.body_result).get_node().get_type_name() == "Concat"
    assert after.carried == ()
    # the last values of h and c are the packed value's slots (its initial one after no
    # iteration), the stack of h still its own Result's
    assert {entry.body_result for entry in after.spec.last_value_outputs} == {packed.body_result}
    steps = [result.after for result in after.results]
    assert steps[:2] == [(Unpacked(1, 0, 4),), (Unpacked(1, 4, 4),)] and steps[2] == ()


def test_the_packed_step_computes_the_same(tmp_path):
    _assert_keeps_results(PackCarriedValues(), "lstm_step_symbolic_batch", tmp_path)


def test_a_loop_of_static_shapes_keeps_its_back_edges():
    """On the CPU plugin's static path a back edge costs one copy: no Split and Concat."""
    loop, _, _ = lstm_step_per_gate_weights()
    assert PackCarriedValues()(loop) is loop


def _two_carried(h0: ov.Output, c0: ov.Output, other: ov.Output | None = None) -> LoopIR:
    """h = tanh(h + c), c = c / 2 + h ([?, 3] each), twice; with `other`, an invariant input
    ([?, 3]), c = c + other instead."""
    h, c, y = _parameter("h", [-1, 3]), _parameter("c", [-1, 3]), _parameter("y", [-1, 3])
    h_next = ops.tanh(ops.add(h, c))
    if other is None:
        c_next = ops.add(ops.multiply(c, ops.constant(np.float32(0.5))), h)
    else:
        c_next = ops.add(c, y)
    invariant = [] if other is None else [InvariantInput(UNNUMBERED, 2)]
    return _loop(
        "two",
        [ops.result(h_next), ops.result(c_next), _always()],
        [h, c] + ([] if other is None else [y]),
        [MergedInput(UNNUMBERED, 0, 0), MergedInput(UNNUMBERED, 1, 1), *invariant],
        [LastValueOutput(UNNUMBERED, 0), LastValueOutput(UNNUMBERED, 1)],
        [h0, c0] + ([] if other is None else [other]),
        trip_count(ops.constant(np.int64(2)).output(0)),
        initial_condition(None),
        execution_condition=2,
    )


def _broadcast_rows(x: ov.Node) -> ov.Output:
    """zeros [rows of x, 3], the rows read through ShapeOf (as jax2onnx starts a carry)."""
    rows = ops.gather(ops.shape_of(x), ops.constant(np.int64([0])), ops.constant(np.int64(0)))
    shape = ops.concat([rows, ops.constant(np.int64([3]))], 0)
    return ops.broadcast(ops.constant(np.float32(0)), shape).output(0)


def test_starts_of_one_symbolic_batch_are_packed():
    x = _parameter("x", [-1, 5])
    loop = _two_carried(_broadcast_rows(x), _broadcast_rows(x))
    assert PackCarriedValues()(loop).applied == ("carried 2 values in one back edge",)


def test_starts_of_unrelated_dynamic_batches_stay_apart():
    """h0 [?, 3] and c0 [?, 3] are two inputs: their rows may differ (and broadcast)."""
    h0, c0 = _parameter("h0", [-1, 3]), _parameter("c0", [-1, 3])
    loop = _two_carried(h0.output(0), c0.output(0))
    assert PackCarriedValues()(loop) is loop


def test_a_value_whose_rows_may_change_stays_apart():
    """c = c + y broadcasts against an invariant input of other rows: after an iteration c's
    rows need not be h's any more."""
    x, y = _parameter("x", [-1, 5]), _parameter("y", [-1, 3])
    loop = _two_carried(_broadcast_rows(x), _broadcast_rows(x), y.output(0))
    assert PackCarriedValues()(loop) is loop


def test_an_invariant_input_of_the_same_rows_keeps_the_proof():
    """The same with y [rows of x, 3]: its rows are the carried values' (one symbol)."""
    x = _parameter("x", [-1, 5])
    loop = _two_carried(_broadcast_rows(x), _broadcast_rows(x), _broadcast_rows(x))
    assert PackCarriedValues()(loop).applied == ("carried 2 values in one back edge",)
