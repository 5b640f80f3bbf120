"""LoopSpec + converted body -> an OpenVINO Loop-5 node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.errors import ConversionError

# The CPU plugin (2026.4.1) dies with SIGFPE (in compile_model, or in the first inference when
# dims are dynamic) on a Loop with any input or output port of static rank 13 or more, whatever
# the port's kind, the trip count or the nesting depth. Values inside the body may have any rank.
MAX_PORT_RANK = 12


def build_loop(
    spec: LoopSpec,
    body: ov.Model,
    trip_count: ov.Output,
    condition: ov.Output,
    external_inputs: Mapping[int, ov.Output],
    name: str,
) -> list[ov.Output]:
    """Emit a Loop-5 for `spec`; return its outputs in external_port order. ConversionError
    for ports of rank above MAX_PORT_RANK. `external_inputs` maps each port_map input's
    external_port (2, 3, ...) to its outer value. `name` (the ONNX node path) is also kept in
    the Loop's rt_info as `ov_loops_path`, which the IR keeps too.
    """
    loop = ops.loop(trip_count, condition)
    loop.set_friendly_name(name)
    loop.get_rt_info()["ov_loops_path"] = name
    loop.set_function(body)
    current = -1 if spec.current_iteration is None else spec.current_iteration
    condition_result = -1 if spec.execution_condition is None else spec.execution_condition
    loop.set_special_body_ports([current, condition_result])
    parameters = body.get_parameters()
    results = body.get_results()

    inputs = sorted(
        (*spec.sliced_inputs, *spec.merged_inputs, *spec.invariant_inputs),
        key=lambda entry: entry.external_port,
    )
    for port, entry in enumerate(inputs, start=2):
        assert entry.external_port == port, f"port_map inputs must be 2..n, got {entry}"
        value = external_inputs[port]
        parameter = parameters[entry.body_parameter]
        if isinstance(entry, SlicedInput):
            loop.set_sliced_input(
                parameter, value, entry.start, entry.stride, entry.part_size, entry.end, entry.axis
            )
        elif isinstance(entry, MergedInput):
            loop.set_merged_input(parameter, value, results[entry.body_result].output(0))
        else:
            assert isinstance(entry, InvariantInput)
            loop.set_invariant_input(parameter, value)

    outputs = sorted(
        (*spec.concatenated_outputs, *spec.last_value_outputs),
        key=lambda entry: entry.external_port,
    )
    produced = []
    for port, entry in enumerate(outputs):
        assert entry.external_port == port, f"outputs must be 0..n, got {entry}"
        value = results[entry.body_result].output(0)
        if isinstance(entry, ConcatenatedOutput):
            produced.append(
                loop.get_concatenated_slices(
                    value, entry.start, entry.stride, entry.part_size, entry.end, entry.axis
                )
            )
        else:
            produced.append(loop.get_iter_value(value, -1))
    loop.validate_and_infer_types()
    _refuse_high_rank_ports(loop, name)
    return produced


def _refuse_high_rank_ports(loop: ov.Node, name: str) -> None:
    """Raise a ConversionError naming the first port the CPU plugin cannot run: a rank above
    MAX_PORT_RANK (SIGFPE) or a dynamic rank (refused at compile: "CPU plug-in doesn't support
    Loop operation with dynamic rank"), e.g. a loop-carried value whose rank changes between
    iterations, or a body input declared with another rank than the value the loop feeds it."""
    ports = [(f"input {i}", value) for i, value in enumerate(loop.input_values())]
    ports += [(f"output {i}", output) for i, output in enumerate(loop.outputs())]
    for port, value in ports:
        rank = value.get_partial_shape().rank
        names = sorted(value.get_names())
        what = f"{port} ('{names[0]}')" if names else port
        if rank.is_dynamic:
            raise ConversionError(
                f"{name}: Loop-5 {what} has a dynamic rank (its rank is not the same on every "
                "iteration, or differs from what the body declares); OpenVINO's CPU plugin "
                "cannot compile Loops with such ports"
            )
        if rank.get_length() > MAX_PORT_RANK:
            raise ConversionError(
                f"{name}: Loop-5 {what} has rank {rank.get_length()}; OpenVINO's CPU plugin "
                f"crashes (SIGFPE) on Loop ports of rank above {MAX_PORT_RANK}"
            )


@dataclass(frozen=True)
class StackedPart:
    """How one scan output's per-iteration value leaves the body, and how to restore it.

    Normally the value gets a length-1 axis at `axis` and the Loop concatenates along it. When
    that would make a port of rank above MAX_PORT_RANK, the value leaves flattened to [1, n],
    concatenated along 0, and is reshaped (and transposed) back after the Loop, from its
    per-iteration `shape` (a constant) or, when dims are dynamic, from `body_shape`, a body value
    the Loop must return as an extra last-value output.
    """

    value: ov.Output
    port_axis: int
    axis: int
    shape: ov.Output | None = None
    body_shape: ov.Output | None = None

    @property
    def flattened(self) -> bool:
        return self.shape is not None or self.body_shape is not None


def stacked_part(value: ov.Output, axis: int) -> StackedPart:
    """The body value the Loop concatenates for the per-iteration `value` stacked along `axis`."""
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic or shape.rank.get_length() + 1 <= MAX_PORT_RANK:
        part = ops.unsqueeze(value, ops.constant(np.array([axis], np.int64)))
        return StackedPart(part.output(0), axis, axis)
    flat = ops.reshape(value, ops.constant(np.array([1, -1], np.int64)), False).output(0)
    if shape.is_static:
        dims = np.array(list(shape.to_shape()), np.int64)
        return StackedPart(flat, 0, axis, ops.constant(dims).output(0))
    return StackedPart(flat, 0, axis, body_shape=ops.shape_of(value, ov.Type.i64).output(0))


def unflatten(
    parts: list[StackedPart],
    outputs: list[ov.Output],
    shape_outputs: list[ov.Output],
    zero: ov.Output | None,
) -> list[ov.Output]:
    """The Loop's concatenated `outputs` for `parts` as stacked along each part's axis.

    `shape_outputs` are the Loop's last-value outputs for the parts' `body_shape`s, in order.
    """
    shapes = iter(shape_outputs)
    return [
        _unflatten(part, output, next(shapes) if part.body_shape else None, zero)
        for part, output in zip(parts, outputs)
    ]


def _unflatten(
    part: StackedPart, output: ov.Output, body_shape: ov.Output | None, zero: ov.Output | None
) -> ov.Output:
    """One concatenated output, reshaped (and transposed) back when its part was flattened.

    `body_shape` holds the per-iteration shape when it is not a constant. After zero iterations
    (`zero`, see cpu_guards.runs_zero) it holds nothing meaningful and the concatenated output
    may be an earlier run's [count, n]: that is shaped [count, n, 1, ...]
    (cpu_guards.guard_zero_iterations then empties it).
    """
    if not part.flattened:
        return output
    first = ops.constant(np.array([0], np.int64))
    dims = ops.shape_of(output, ov.Type.i64)
    count = ops.gather(dims, first, first)
    shape = part.shape
    if shape is None:
        shape = body_shape
        if zero is not None:
            ones = np.ones(body_shape.get_partial_shape()[0].get_length() - 1, np.int64)
            size = ops.gather(dims, ops.constant(np.array([1], np.int64)), first)
            shape = ops.select(zero, ops.concat([size, ops.constant(ones)], 0), body_shape)
    stacked = ops.reshape(output, ops.concat([count, shape], 0), False).output(0)
    if part.axis == 0:
        return stacked
    rank = stacked.get_partial_shape().rank.get_length()
    order = [*range(1, part.axis + 1), 0, *range(part.axis + 1, rank)]
    return ops.transpose(stacked, ops.constant(np.array(order, np.int64))).output(0)
