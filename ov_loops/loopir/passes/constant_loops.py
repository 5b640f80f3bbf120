"""Pass: a loop computed from constants alone, with an If in its body and an output of dynamic
shape, is kept a run-time computation for the CPU plugin; so is a loop that may stop early
computed from constants and shapes (constants once the model's shapes are static).

OpenVINO's CPU plugin (2026.4.1) marks a node constant when every node feeding it is constant
(Node::updateConstantType) and gives a constant node's outputs static memory at compile time.
A Loop whose inputs all come from Constants, and which OpenVINO's ConstantFolding could not fold
away (measured: it folds such Loops unless their body has an If), is such a node; an output of
dynamic shape (the stack of a loop that may stop early) then fails compilation: "Can not create
StaticMemory object. The memory desc is undefined" (OpenVINO's own ONNX frontend's IR too).
Outer values from Parameters that the body does not really read do not save it: OpenVINO drops
them (an If branch that discards a value: seed 42424020 of the differential campaign). The fix
gives the Loop an input the plugin never marks constant, read by the body's condition so that
OpenVINO keeps it (an invariant input: the plugin copies it when the Loop runs, where it reads
the trip count and initial condition in its prepareParams; the variants that fed those were
tried only with the unwritten scalar draw `runtime_zero` describes, and failed).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract import ports
from ov_loops.contract.spec import InvariantInput
from ov_loops.loopir.analysis import computes_from_constants
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.ovgraph import constant_value


class KeepConstantLoopsAtRunTime(LoopPass):
    """When the loop's inputs are computed from Constants alone (`computes_from_constants`),
    its body has an If (`has_if`: without one OpenVINO folds the whole Loop, measured) and an
    output may have a dynamic shape, or when it may stop early and its inputs are computed from
    Constants and shapes (`from_shapes`), the loop reads a zero computed at run time
    (`runtime_zero`) as an invariant input, which the execution condition checks::

        if dynamic output and (constant inputs and If in the body or from_shapes):
            zero = BitwiseAnd(RandomUniform(i32, [0, 1)), 0)   # outside: always 0
            body: condition -> condition and zero == 0
    """

    name = "keep-constant-loops-at-run-time"

    def run(self, loop: LoopIR) -> LoopIR:
        if not may_give_dynamic_shape(loop):
            return loop
        # computes_from_constants first: has_if walks every nested body (quadratic in depth)
        if not (computes_from_constants(loop) and has_if(loop.body)) and not from_shapes(loop):
            return loop
        zero = runtime_zero(ov.Type.i32)
        parameter = ops.parameter([], ov.Type.i32)
        parameter.set_friendly_name(f"{loop.path}/zero")
        # The condition's own Result, changed in place: a data output reading it keeps its
        # values (zero == 0), and no Result is left that no port reads.
        result = loop.body.get_results()[loop.spec.execution_condition]
        is_zero = ops.equal(parameter, ops.constant(np.int32(0)))
        still = ops.logical_and(result.input_value(0), is_zero)
        result.input(0).replace_source_output(still.output(0))
        parameters = [*loop.body.get_parameters(), parameter]
        entries = [*loop.spec.inputs(), InvariantInput(ports.UNNUMBERED, len(parameters) - 1)]
        spec = ports.renumbered(loop.spec, entries, loop.spec.outputs())
        outer = dict(loop.outer) | {2 + len(loop.spec.inputs()): zero}
        return loop.with_body(list(loop.body.get_results()), parameters, spec).replace(outer=outer)


def from_shapes(loop: LoopIR) -> bool:
    """Whether `loop` may stop early (its condition is not a true Constant: an unrolled loop's
    remainder) and its inputs are computed from Constants and the shapes of values, some shape
    among them: the CPU plugin treats it as a constant once the model's shapes are static
    (`model.reshape`) and refuses its stacks, with or without an If in its body (PyTensor's
    gradient of `reduce` at max)."""
    condition = constant_value(loop.body_value(loop.spec.execution_condition))
    if condition is not None and bool(condition.all()):
        return False
    return computes_from_constants(loop, shapes=True) and not computes_from_constants(loop)


def may_give_dynamic_shape(loop: LoopIR) -> bool:
    """Whether some output of the Loop-5 for `loop` may have a dynamic shape: a body value of
    a dynamic shape, or a stack whose length is not a constant trip count that always runs."""
    spec = loop.spec
    for entry in (*spec.concatenated_outputs, *spec.last_value_outputs):
        if loop.body_value(entry.body_result).get_partial_shape().is_dynamic:
            return True
    if not spec.concatenated_outputs:
        return False
    condition = constant_value(loop.body_value(spec.execution_condition))
    always = condition is not None and bool(condition.all())
    return loop.trip.constant is None or not always


def has_if(model: ov.Model) -> bool:
    """Whether `model`, or a body or branch inside it, has an If."""
    for node in model.get_ordered_ops():
        if node.get_type_name() == "If":
            return True
        if node.get_type_name() in ("Loop", "TensorIterator") and has_if(node.get_function()):
            return True
    return False


def runtime_zero(element_type: ov.Type) -> ov.Output:
    """A scalar 0 of the integer `element_type` that the CPU plugin computes at run time: a
    RandomUniform over [0, 1), which for integers draws 0 only. Drawn as shape [1] and squeezed:
    with an output of shape [] the CPU plugin's RandomUniform leaves its output unwritten
    (garbage such as 158792561 once other models ran in the process, measured).

    The draw is then ANDed bitwise with 0, an op OpenVINO's core cannot evaluate (2026.4.1),
    while it can evaluate RandomUniform: through the draw `model.reshape` to static shapes
    evaluated the whole Loop to bound the lengths of the VariadicSplit that trims an unrolled
    stack, and failed ("get_partial_shape().same_scheme(value.get_shape())", tensor.cpp)."""
    shape = ops.constant(np.array([1], np.int64))
    low, high = (ops.constant(np.array(v, element_type.to_dtype())) for v in (0, 1))
    draw = ops.random_uniform(shape, low, high, element_type.get_type_name())
    draw.set_friendly_name("zero_at_run_time")
    unevaluated = ops.bitwise_and(draw, ops.constant(np.array([0], element_type.to_dtype())))
    return ops.squeeze(unevaluated, ops.constant(np.array([0], np.int64))).output(0)
