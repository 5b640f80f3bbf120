"""copy-concats-before-abs, without a device: which Abs gets a copy of its input.

That the pass keeps what each loop computes is checked with every pass in
tests/loopir/passes/test_passes.py (scenario `mean_of_a_concat_also_read_by_abs`); the CPU
regressions are in tests/loopir/passes/test_abs_of_shared_concat.py."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

from ov_loops.loopir.passes.abs_concats import CopyConcatsBeforeAbs, copy_concats_before_abs
from ov_loops.loopir.passes.pipeline import CPU
from ov_loops.ovgraph import ops_by_type
from tests.loopir_scenarios import mean_of_a_concat_also_read_by_abs


def _types(values) -> list[str]:
    return [value.get_node().get_type_name() for value in values]


def test_the_abs_of_a_concat_the_mean_reads_too_reads_a_copy():
    loop, _, _ = mean_of_a_concat_also_read_by_abs()
    after = CopyConcatsBeforeAbs()(loop)
    ops_ = {op.get_type_name(): op for op in after.body.get_ordered_ops()}
    assert _types(ops_["Abs"].input_values()) == ["Maximum"]
    assert _types(ops_["Maximum"].input_values()) == ["Concat", "Concat"]
    assert _types(ops_["ReduceMean"].input_values()[:1]) == ["Concat"]
    assert after.spec == loop.spec


def _abs_of_concat(shape, shared: bool, view: bool = False) -> tuple[ov.Model, ov.Node]:
    """|Concat(x, x)| (through a Reshape to its own shape when `view`), and ReduceSum of the
    Concat when `shared`."""
    x = ops.parameter(shape, np.float32)
    both = ops.concat([x, x], 0)
    read = ops.reshape(both, ops.constant(np.array([-1])), False) if view else both
    absolute = ops.abs(read)
    outputs = [absolute]
    if shared:
        outputs.append(ops.reduce_sum(both, ops.constant(np.array([0])), False))
    return ov.Model(outputs, [x]), absolute


@pytest.mark.parametrize(
    "shape, shared, view, copied",
    [
        ([2], True, False, 1),
        ([-1], True, False, 1),  # rank 1, length dynamic
        (ov.PartialShape.dynamic(), True, False, 1),  # the rank may turn out to be 1
        ([2], True, True, 1),  # the Reshape to its own shape is removed before AbsSinking
        ([2], False, False, 0),  # only the Abs reads it: AbsSinking's rewrite is right
        ([2], False, True, 0),
        ([2, 3], True, False, 0),  # AbsSinking matches rank 1 only
    ],
)
def test_which_abs_gets_a_copy(shape, shared, view, copied):
    made, absolute = _abs_of_concat(shape, shared, view)
    source = absolute.input_value(0).get_node().get_type_name()
    assert copy_concats_before_abs(made) == copied
    assert _types(absolute.input_values()) == (["Maximum"] if copied else [source])


def test_an_abs_in_a_nested_body_gets_a_copy_once():
    inner, absolute = _abs_of_concat([2], shared=True)
    condition = ops.parameter([], ov.Type.boolean)
    then_body = ov.Model([ops.result(value) for value in inner.outputs], inner.get_parameters())
    else_x = ops.parameter([2], np.float32)
    twice = ops.concat([else_x, else_x], 0)
    else_body = ov.Model([ops.result(twice), ops.result(ops.reduce_sum(else_x, [0]))], [else_x])
    x = ops.parameter([2], np.float32)
    branch = ops.if_op(condition)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(x.output(0), then_body.get_parameters()[0], else_x)
    for index in range(2):
        branch.set_output(then_body.get_results()[index], else_body.get_results()[index])
    made = ov.Model(branch.outputs(), [condition, x])
    assert copy_concats_before_abs(made) == 1
    assert _types(absolute.input_values()) == ["Maximum"]
    assert copy_concats_before_abs(made) == 0  # the Abs reads the copy now


def _maximums(model: ov.Model) -> int:
    return sum(op.get_type_name() == "Maximum" for op in model.get_ordered_ops())


def test_the_profile_runs_the_model_workaround_for_the_op_types_present():
    # the driver takes the census once (ovgraph.ops_by_type) and the profile skips what
    # acts on no op type of the model
    made, _ = _abs_of_concat([2], shared=True)
    present = ops_by_type(made).keys()
    assert {"Abs", "Concat"} <= present
    CPU.apply_model_workarounds(made, present - {"Abs"})
    assert _maximums(made) == 0
    CPU.apply_model_workarounds(made, present)
    assert _maximums(made) == 1
