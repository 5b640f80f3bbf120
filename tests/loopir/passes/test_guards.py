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
