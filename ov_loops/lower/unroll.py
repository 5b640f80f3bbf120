"""Lowering: a loop with a constant trip count becomes straight-line graph (full unrolling).

The loop is first unrolled by its own trip count n into a Loop-5 that would run once
(`UnrollIterations`' `UnrolledBody`: n body copies chained through the carried values, sliced
inputs split, stacked outputs concatenated, copies after a false condition masked by Select on
the running "still going" flag); that one iteration is then inlined: each body Parameter is
replaced by the outer value its port receives and current_iteration by the constant 0, so
copy j sees the constant j.
"""

from __future__ import annotations

import numpy as np
import openvino as ov

from ov_loops.contract.spec import TRIP_COUNT_UNBOUNDED
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.steps import AfterLoop, apply_steps
from ov_loops.loopir.unrolling import Plan, UnrolledBody, always_true, shapes_kept, unrollable
from ov_loops.lower.fallback import fall_back
from ov_loops.lower.loop5 import build_loop
from ov_loops.opfactory import constant
from ov_loops.ovgraph import MAX_FOLDED_DEPTH, NOT_FOLDED, upstream


def stops_early(loop: LoopIR) -> bool:
    """Whether the body's execution condition may become false (it is not a true Constant)."""
    return not always_true(loop.body_value(loop.spec.execution_condition))


def trip_count_reason(loop: LoopIR) -> str:
    """Why `loop`'s trip count is not a constant, and what to do: it has none, or it is made
    of the values of inputs (not their shapes: the walk stops at ShapeOf), dynamic shapes, the
    results of ops only run time knows, or constants in more ops than folding goes through."""
    if loop.trip.source == TRIP_COUNT_UNBOUNDED:
        bound = (
            "--max_trip_count N bounds it"
            if not loop.spec.concatenated_outputs
            else "--max_trip_count N would not help: its stacked outputs' length depends on "
            "where it stops"
        )
        return (
            "it has no trip count: M is absent or at least 2**31-1, so it runs until its "
            f"condition is false, which depends on data; {bound}"
        )
    nodes = list(upstream([loop.trip.value], lambda node: node.get_type_name() != "ShapeOf"))
    kinds = {node.get_type_name(): node.get_friendly_name() for node in nodes}
    inputs = [node for node in nodes if node.get_type_name() == "Parameter"]
    if inputs and not loop.in_main_graph:
        return "its trip count depends on run-time values of the enclosing graph"
    if inputs:
        named = ", ".join(sorted(f"'{node.get_friendly_name()}'" for node in inputs))
        return (
            f"its trip count depends on the run-time value of input {named}, not on shapes: "
            f"make {named} an initializer of the ONNX model"
        )
    if "ShapeOf" in kinds:
        return "its trip count is computed from a dynamic shape: give static input shapes"
    late = sorted(kind for kind in kinds if kind in NOT_FOLDED)
    if late:
        return f"its trip count is computed at run time by {late[0]} {kinds[late[0]]}"
    return (
        f"its trip count is computed from constants in a way not folded: over {MAX_FOLDED_DEPTH} "
        "ops deep, or an op that cannot be evaluated"
    )


def unroll_refusal(loop: LoopIR) -> str | None:
    """Why `loop` cannot be unrolled into straight-line graph, or None when it can::

    trip count not a constant              -> refused (no count of copies), saying what it is
    initial condition not a constant true  -> refused (it may run zero times at run time)
    a body the partial unroller leaves     -> refused (nested Loop/If, unusual slicing, ...)
    may stop early, with stacked outputs   -> refused (their length is known only at run time)
    may stop early, dynamic shapes         -> refused (masked copies need static shapes)
    """
    if loop.trip.constant is None:
        return trip_count_reason(loop)
    if loop.start.constant is not True:
        return "its initial condition is not a constant true"
    if not unrollable(loop) or any(
        (e.start, e.stride, e.end) != (0, 1, -1) for e in loop.spec.concatenated_outputs
    ):
        return "its body holds a Loop, If or TensorIterator, or it slices or stacks unusually"
    if stops_early(loop) and loop.spec.concatenated_outputs:
        return "it may stop early, so its stacked outputs' length is known only at run time"
    if stops_early(loop) and not shapes_kept(loop):
        return "it may stop early and its body has values of dynamic shape"
    return None


def unroll_fully(loop: LoopIR) -> list[ov.Output]:
    """The values of `loop` (unroll_refusal None, trip count n >= 1) computed without a Loop,
    in result order::

        carried = initial
        for j in range(n):                     # one body copy each, j a constant
            going = going and cond of copy j-1  # (when the condition may become false)
            carried, last values = body(carried, x[j], j) if going else unchanged   # Select
            part j of each stacked output = its per-iteration value
        stacked outputs = Concat of the n parts (Loop-5 spec: port_map axis)
    """
    once = UnrolledBody(loop, Plan.of(loop, loop.trip.constant)).loop()
    spec, body = once.spec, once.body
    feeds = {entry.body_parameter: once.outer[entry.external_port] for entry in spec.inputs()}
    parameters = body.get_parameters()
    if spec.current_iteration is not None:
        counter = parameters[spec.current_iteration]
        dims = counter.get_partial_shape().to_shape()
        zero = np.zeros(dims, counter.get_element_type().to_dtype())
        feeds[spec.current_iteration] = constant(zero)
    for index, parameter in enumerate(parameters):
        parameter.output(0).replace(feeds[index])
    results = body.get_results()
    outputs = sorted(spec.outputs(), key=lambda entry: entry.external_port)
    values = [results[entry.body_result].input_value(0) for entry in outputs]
    if loop.fallback is not None:  # the loop it replaced, when its safe flag is false
        values = fall_back(loop, values, build_loop)
    return apply_steps(once.results, AfterLoop(values, once.trip, once.start))
