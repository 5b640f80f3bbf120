"""MergeSharedMatMuls: which MatMuls and Adds it merges, which it leaves, and that the loop
computes the same (the IR reference before and after; every scenario in test_passes.py)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED
from ov_loops.contract.spec import LastValueOutput, MergedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.merge_matmuls import MergeSharedMatMuls
from ov_loops.loopir.trip_count import initial_condition, trip_count
from ov_loops.lower.loop5 import lower_to_loop5
from tests.loopir.passes.test_passes import _assert_keeps_results, _assert_same, _reference_outputs
from tests.loopir_scenarios import _always, _loop, _parameter, lstm_step_per_gate_weights


def _op_types(loop: LoopIR) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


def test_the_per_gate_products_and_their_sums_become_one_each():
    loop, _, _ = lstm_step_per_gate_weights()
    after = MergeSharedMatMuls()(loop)
    assert after.applied == ("merged 8 MatMuls into 2, their 4 Adds into 1",)
    types = _op_types(after)
    assert types.count("MatMul") == 2 and types.count("VariadicSplit") == 1
    assert types.count("Add") == 2  # the gates' sum, and c's
    (split,) = [op for op in after.body.get_ordered_ops() if op.get_type_name() == "VariadicSplit"]
    assert split.input_value(0).get_node().get_type_name() == "Add"
    assert list(split.input_value(2).get_node().get_data()) == [4, 4, 4, 4]


def test_the_merged_step_computes_the_same(tmp_path):
    _assert_keeps_results(MergeSharedMatMuls(), "lstm_step_per_gate_weights", tmp_path)


def _one_step(update) -> LoopIR:
    """y = update(y) for two iterations, y [2, 3]."""
    y0, y = _parameter("y0", [2, 3]), _parameter("y", [2, 3])
    return _loop(
        "step",
        [ops.result(update(y.output(0))), _always()],
        [y],
        [MergedInput(UNNUMBERED, 0, 0)],
        [LastValueOutput(UNNUMBERED, 0)],
        [y0.output(0)],
        trip_count(ops.constant(np.int64(2)).output(0)),
        initial_condition(None),
        execution_condition=1,
    )


def _weight(seed: int, shape=(3, 3)) -> ov.Output:
    return ops.constant(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_matmuls_of_other_transposes_or_a_computed_weight_stay_apart():
    def update(y):
        transposed = ops.matmul(y, _weight(1), False, True)
        plain = ops.matmul(y, _weight(2), False, False)
        computed = ops.matmul(y, ops.tanh(_weight(3)), False, False)
        return ops.add(ops.add(transposed, plain), computed).output(0)

    loop = _one_step(update)
    assert MergeSharedMatMuls()(loop) is loop


def test_sums_of_some_slots_only_stay_apart():
    """A GRU's candidate reads r * (h U_n), not a plain sum: the products merge, the sums do
    not (a split's every slot must be summed with the other split's)."""

    def update(y):
        x_parts = [ops.matmul(y, _weight(seed), False, False) for seed in (1, 2)]
        h = ops.tanh(y)
        h_parts = [ops.matmul(h, _weight(seed), False, False) for seed in (3, 4)]
        first = ops.add(x_parts[0], h_parts[0])
        second = ops.add(x_parts[1], ops.multiply(first, h_parts[1]))
        return ops.add(first, second).output(0)

    after = MergeSharedMatMuls()(_one_step(update))
    assert after.applied == ("merged 4 MatMuls into 2",)
    assert _op_types(after).count("Add") == 3


def test_merged_sums_of_operands_that_broadcast_compute_the_same(tmp_path):
    """The sums' operands broadcast along the other axis ([1, 6] and [2, 6] before the
    splits): merged, the same values (the IR reference)."""

    def update(y):
        first_row = ops.slice(
            y,
            ops.constant(np.int64([0])),
            ops.constant(np.int64([1])),
            ops.constant(np.int64([1])),
            ops.constant(np.int64([0])),
        )
        x_parts = [ops.matmul(first_row, _weight(seed), False, False) for seed in (1, 2)]
        h_parts = [ops.matmul(y, _weight(seed), False, False) for seed in (3, 4)]
        sums = [ops.add(a, b) for a, b in zip(x_parts, h_parts)]
        return ops.tanh(ops.multiply(sums[0], ops.sigmoid(sums[1]))).output(0)

    feeds = {"y0": np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)}
    outputs = []
    for merge in (False, True):
        loop = _one_step(update)
        y0 = loop.outer[2].get_node()
        if merge:
            loop = MergeSharedMatMuls()(loop)
            assert loop.applied == ("merged 4 MatMuls into 2, their 2 Adds into 1",)
        values = lower_to_loop5(loop)
        outputs.append(_reference_outputs(values, [y0], feeds, tmp_path / f"{merge}.xml"))
    _assert_same(outputs[1], outputs[0])
