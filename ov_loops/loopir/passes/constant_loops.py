"""Pass: a loop whose trip count and initial condition are constants, with an output of dynamic
shape, is kept a run-time computation for the CPU plugin.

OpenVINO's CPU plugin (2026.4.1) marks a node constant when every node feeding it is constant
(Node::updateConstantType) and gives a constant node's outputs static memory at compile time.
A Loop whose inputs all come from Constants, and which OpenVINO's ConstantFolding could not fold
away (an If in its body is enough), is such a node; an output of dynamic shape (the stack of a
loop that may stop early) then fails compilation: "Can not create StaticMemory object. The
memory desc is undefined" (OpenVINO's own ONNX frontend's IR too). Outer values that do come
from Parameters do not save it: OpenVINO drops the Loop inputs its body does not really read
(e.g. only an If branch that discards them), so only the trip count and initial condition are
sure to stay. The fix feeds the trip count through a value the plugin never marks constant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.spec import TRIP_COUNT_INPUT
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.trip_count import TripCount
from ov_loops.ovgraph import constant_value

# Ops whose values the CPU plugin never treats as constant (ConstantType::StrictNoConst).
RUNTIME_SOURCES = frozenset({"Parameter", "ReadValue", "RandomUniform"})


class KeepConstantLoopsAtRunTime(LoopPass):
    """When the trip count and the initial condition are computed from Constants alone and an
    output may have a dynamic shape, add a zero computed at run time to the trip count
    (`runtime_zero`)::

        if constant trip count and initial condition and dynamic output:
            trip count -> trip count + RandomUniform(integer, [0, 1))      # always 0
    """

    name = "keep-constant-loops-at-run-time"

    def run(self, loop: LoopIR) -> LoopIR:
        controls = [loop.trip.value, loop.start.value]
        if not may_give_dynamic_shape(loop) or not computed_from_constants(controls):
            return loop
        count = loop.trip.value
        zero = runtime_zero(count.get_element_type())
        zero.get_node().set_friendly_name(f"{loop.path}/zero_at_run_time")
        value = ops.add(count, zero).output(0)
        # What the IR shows (and the validator reads back): a trip count computed at run time.
        # It never stops the loop before iteration 0 (a constant 0 or false start is folded
        # before any pass runs), so no zero-iteration guard is due.
        trip = TripCount(value, TRIP_COUNT_INPUT, None, False)
        spec = dataclasses.replace(loop.spec, trip_count_source=TRIP_COUNT_INPUT, trip_count=None)
        return loop.replace(trip=trip, spec=spec)


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


def computed_from_constants(values: Iterable[ov.Output]) -> bool:
    """Whether `values` are computed from Constants alone: no Parameter, ReadValue or
    RandomUniform (RUNTIME_SOURCES) upstream of any of them."""
    seen: set[int] = set()
    pending = [value.get_node() for value in values]
    while pending:
        node = pending.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        if node.get_type_name() in RUNTIME_SOURCES:
            return False
        pending.extend(value.get_node() for value in node.input_values())
    return True


def runtime_zero(element_type: ov.Type) -> ov.Output:
    """A scalar 0 of the integer `element_type` that the CPU plugin computes at run time: a
    RandomUniform over [0, 1), which for integers draws 0 only."""
    shape = ops.constant(np.array([], np.int64))
    low, high = (ops.constant(np.array(v, element_type.to_dtype())) for v in (0, 1))
    return ops.random_uniform(shape, low, high, element_type.get_type_name()).output(0)
