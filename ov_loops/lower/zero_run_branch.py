"""Lowering: a Loop-5 whose runs of no iteration an If around it takes (`zero_run_branch`).

OpenVINO's CPU plugin (2026.4.1) cannot run a Loop zero times when a carried value enters with
another shape than the body returns (passes/zero_run_carry.py); with at least one iteration it
runs. So the Loop goes in the then branch of an If on "it runs", and the else branch computes
what Loop-5 returns after zero iterations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.spec import ConcatenatedOutput, LoopSpec
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.steps import Unchunk
from ov_loops.loopir.trip_count import runs_zero
from ov_loops.lower.fold import empty_of_shape

LoopBuilder = Callable[
    [LoopSpec, ov.Model, ov.Output, ov.Output, Mapping[int, ov.Output], str], list[ov.Output]
]


def build_loop_in_if(loop: LoopIR, build_loop: LoopBuilder) -> list[ov.Output]:
    """The outputs, in external_port order, of::

        If(not runs_zero(trip, start)):
            then: the Loop-5 `build_loop(spec, body, trip, start, outer, path)` makes (loop5.py)
            else: Loop-5's outputs after zero iterations (`_zero_iteration_branch`)

    Every outer value a branch reads enters it as a Parameter of its own."""
    ports = sorted(loop.outer)
    then_inputs = [loop.trip.value, loop.start.value, *(loop.outer[port] for port in ports)]
    trip, start, *outer = (_parameter_like(value) for value in then_inputs)
    feeds = {port: parameter.output(0) for port, parameter in zip(ports, outer)}
    made = build_loop(loop.spec, loop.body, trip.output(0), start.output(0), feeds, loop.path)
    then_body = ov.Model([ops.result(value) for value in made], [trip, start, *outer], "ran")
    else_inputs, else_parameters, zero = _zero_iteration_branch(loop)
    else_body = ov.Model([ops.result(value) for value in zero], else_parameters, "ran_zero")
    # An Output, not a Node: if_op(LogicalNot node) makes an If without its condition input
    # (openvino 2026.4.1), and the first branch input then takes its place.
    branch = ops.if_op(ops.logical_not(runs_zero(loop.trip, loop.start)).output(0))
    branch.set_friendly_name(f"{loop.path}/runs")
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    for value, parameter in zip(then_inputs, then_body.get_parameters()):
        branch.set_input(value, parameter, None)
    for value, parameter in zip(else_inputs, else_parameters):
        branch.set_input(value, None, parameter)
    pairs = zip(then_body.get_results(), else_body.get_results())
    outputs = [branch.set_output(ran, not_ran) for ran, not_ran in pairs]
    branch.validate_and_infer_types()
    return outputs


def _zero_iteration_branch(
    loop: LoopIR,
) -> tuple[list[ov.Output], list[ov.Node], list[ov.Output]]:
    """The outer values the else branch reads, its Parameters for them, and its values: Loop-5's
    outputs after zero iterations, in external_port order (Loop-5 spec)::

        last value of a carried value's body result -> its initial value
        concatenated output                         -> empty along its axis, other dims static
                                                       or 0, or the frontend's `empty_shape`
        other last value (never read then)          -> zeros, its static dims or 0
    """
    spec: LoopSpec = loop.spec
    initial = {entry.body_result: loop.outer[entry.external_port] for entry in spec.merged_inputs}
    # A result unrolling cut into chunks (Unchunk) is empty in the Loop's own shape, one axis
    # more than the empty_shape its steps make of it.
    shapes = {
        result.port: result.empty_shape
        for result in loop.results
        if result.empty_shape and not any(isinstance(s, Unchunk) for s in result.after)
    }
    inputs: list[ov.Output] = []
    parameters: list[ov.Node] = []

    def entering(value: ov.Output) -> ov.Output:
        inputs.append(value)
        parameters.append(_parameter_like(value))
        return parameters[-1].output(0)

    values = []
    for entry in sorted(spec.outputs(), key=lambda entry: entry.external_port):
        body_value = loop.body_value(entry.body_result)
        if isinstance(entry, ConcatenatedOutput):
            shape = shapes.get(entry.external_port)
            if shape is None:
                values.append(ovgraph.empty_stack(body_value, entry.axis))
                continue
            known = ovgraph.folded_value(shape) is not None
            element = body_value.get_element_type()
            values.append(empty_of_shape(element, shape if known else entering(shape)))
        elif entry.body_result in initial:
            values.append(entering(initial[entry.body_result]))
        else:
            values.append(_zeros_like(body_value))
    return inputs, parameters, values


def _zeros_like(value: ov.Output) -> ov.Output:
    shape = value.get_partial_shape()
    dims = [0] if shape.rank.is_dynamic else ovgraph.lengths(shape, 0)
    return ops.constant(np.zeros(dims, np.uint8), value.get_element_type()).output(0)


def _parameter_like(value: ov.Output) -> ov.Node:
    return ops.parameter(value.get_partial_shape(), value.get_element_type())
