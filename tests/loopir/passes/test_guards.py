"""The zero-iteration guard keeps every value it computes at a static rank."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.loopir.passes import zero_run_guards
from tests.harness import compile_f32


def _guarded(zero_shape: ov.PartialShape) -> ov.Model:
    stacked = ops.parameter(ov.PartialShape([-1, 2]), ov.Type.f32, name="stacked")
    zero = ops.parameter(zero_shape, ov.Type.boolean, name="zero")
    (cut,) = zero_run_guards.guard_zero_iterations([stacked.output(0)], [0], [None], zero.output(0))
    return ov.Model([ops.result(cut)], [stacked, zero])


def _variadic_split(model: ov.Model) -> ov.Node:
    (split,) = [op for op in model.get_ordered_ops() if op.get_type_name() == "VariadicSplit"]
    return split


def test_variadic_split_lengths_have_static_rank_whatever_the_zero_flag():
    """A flag of unknown rank used to make the split lengths, and so the guarded output,
    dynamic-rank, which the CPU plugin refuses to compile ("VariadicSplit operation with dynamic
    rank"): the lengths are always shape [2]."""
    split = _variadic_split(_guarded(ov.PartialShape.dynamic()))
    assert split.input_value(2).get_partial_shape() == ov.PartialShape([2])
    assert split.output(0).get_partial_shape() == ov.PartialShape([-1, 2])


def test_guard_with_a_one_element_flag_compiles_and_cuts():
    """A flag of shape [1] (a condition of an old form) compiles on the CPU; the guard keeps all
    of the stacked output when the flag is false and none of it when true."""
    compiled = compile_f32(_guarded(ov.PartialShape([1])))
    stacked = np.arange(6, dtype=np.float32).reshape(3, 2)
    kept = compiled({"stacked": stacked, "zero": np.array([False])})[0]
    dropped = compiled({"stacked": stacked, "zero": np.array([True])})[0]
    np.testing.assert_array_equal(kept, stacked)
    assert dropped.shape == (0, 2)


def _guarded_pair(zero_shape: ov.PartialShape) -> ov.Model:
    """Two stacked outputs of one loop, on axes 0 and 1, guarded together."""
    first = ops.parameter(ov.PartialShape([-1, 2]), ov.Type.f32, name="first")
    second = ops.parameter(ov.PartialShape([2, -1]), ov.Type.f32, name="second")
    zero = ops.parameter(zero_shape, ov.Type.boolean, name="zero")
    values = [first.output(0), second.output(0)]
    cuts = zero_run_guards.guard_zero_iterations(values, [0, 1], [None, None], zero.output(0))
    return ov.Model([ops.result(cut) for cut in cuts], [first, second, zero])


def test_the_guards_of_a_loop_split_by_one_select_of_constant_lengths():
    """A loop's guards are one Select of two constant length pairs, shared, and a VariadicSplit
    per output: they read no length from a shape (9 ops per output, 13 post-loop ops per loop,
    were the cost of hundreds of loops)."""
    model = _guarded_pair(ov.PartialShape([]))
    kinds = sorted(op.get_type_name() for op in model.get_ordered_ops())
    computed = [kind for kind in kinds if kind not in ("Constant", "Parameter", "Result")]
    assert computed == ["Select", "VariadicSplit", "VariadicSplit"]
    (select,) = [op for op in model.get_ordered_ops() if op.get_type_name() == "Select"]
    lengths = [select.input_value(i).get_node().get_data().tolist() for i in (1, 2)]
    assert lengths == [[0, -1], [-1, 0]]


def test_guards_keep_all_or_nothing_on_either_axis_with_a_scalar_flag():
    compiled = compile_f32(_guarded_pair(ov.PartialShape([])))
    first = np.arange(6, dtype=np.float32).reshape(3, 2)
    second = np.arange(8, dtype=np.float32).reshape(2, 4)
    feeds = {"first": first, "second": second}
    kept = compiled({**feeds, "zero": np.array(False)})
    dropped = compiled({**feeds, "zero": np.array(True)})
    np.testing.assert_array_equal(kept[0], first)
    np.testing.assert_array_equal(kept[1], second)
    assert dropped[0].shape == (0, 2) and dropped[1].shape == (2, 0)
