"""The LoopIR of a scan: its trip count, port map (merged: fed-back outputs, then updated shared
variables; invariant: non_sequences and captures; sliced: sequence views; outputs: one per
output, concatenated or last value, then each shared variable's last value; the condition
last) and the values of its outputs after zero steps."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.kinds import tensors
from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    MergedInput,
    SlicedInput,
)
from ov_loops.frontends.theano.arguments import OutputInfo, SequenceInfo, as_output
from ov_loops.frontends.theano.body import Body, i64, rows
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.loop import LoopIR, LoopResult


def trip_count(seqs: list[SequenceInfo], n_steps) -> tuple[trips.TripCount, list[int]]:
    """n_steps, else the shortest sequence's usable length; and each sequence's offset."""
    offsets, usable = [], []
    for sequence in seqs:
        offset, ahead = max(0, -min(sequence.taps)), max(0, max(sequence.taps))
        offsets.append(offset)
        remaining = ops.subtract(
            ovgraph.length(sequence.value, 0), ops.constant(np.int64(offset + ahead))
        )
        usable.append(ops.maximum(remaining, ops.constant(np.int64(0))).output(0))
    if isinstance(n_steps, (int, np.integer)):
        value = ops.constant(np.int64(n_steps)).output(0)
    elif n_steps is not None:
        value = as_output(n_steps)
    else:
        value = usable[0]
        for other in usable[1:]:
            value = ops.minimum(value, other).output(0)
    return trips.trip_count(value), offsets


def loop_ir(name: str, results, body: Body, merged, emitted, trip, outs) -> LoopIR:
    """The LoopIR, still without its results (see the module docstring for its ports)."""
    parameters = body.parameters
    index_of = {p.get_instance_id(): i for i, p in enumerate(parameters)}
    inputs, outer = [], []
    for parameter, out, result in merged:
        inputs.append(MergedInput(UNNUMBERED, index_of[parameter.get_instance_id()], result))
        outer.append(rows(out.initial, -out.window) if out.is_window else out.initial)
    for parameter, variable, result in body.shared:
        inputs.append(MergedInput(UNNUMBERED, index_of[parameter.get_instance_id()], result))
        outer.append(variable.value.output(0))
    for parameter, value in body.invariant:
        inputs.append(InvariantInput(UNNUMBERED, index_of[parameter.get_instance_id()]))
        outer.append(value)
    for parameter, value in body.sliced:
        inputs.append(SlicedInput(UNNUMBERED, index_of[parameter.get_instance_id()], axis=0))
        outer.append(value)
    outputs = [
        LastValueOutput(UNNUMBERED, r) if out.last else ConcatenatedOutput(UNNUMBERED, r, 0)
        for r, out in zip(emitted, outs)
    ] + [LastValueOutput(UNNUMBERED, result) for _, _, result in body.shared]
    condition = len(results) - 1
    spec = number_ports(inputs, outputs, trip.source, trip.constant, None, condition)
    return LoopIR(
        path=name,
        op="scan",
        spec=spec,
        body=ov.Model(results, parameters, f"{name}/body"),
        outer=dict(enumerate(outer, start=2)),
        trip=trip,
        start=trips.initial_condition(None),
        carried=tensors(
            [f"outputs_info[{k}]" for k in range(len(merged))] + [v.name for _, v, _ in body.shared]
        ),
        results=(),
    )


def loop_results(outs: list[OutputInfo], body: Body) -> tuple[LoopResult, ...]:
    """One LoopResult per output: a fed-back output of which only the last value is returned
    is its initial state after zero steps; a stacked output is empty then, shaped from the
    initial state when fed back. Then one per carried shared variable: its value before the
    scan after zero steps."""
    made = tuple(
        LoopResult(k, initial=out.initial if out.taps else None)
        if out.last
        else LoopResult(k, empty_shape=_empty_shape(out) if out.taps else None)
        for k, out in enumerate(outs)
    )
    return made + tuple(
        LoopResult(len(outs) + k, initial=variable.value.output(0))
        for k, (_, variable, _) in enumerate(body.shared)
    )


def _empty_shape(out: OutputInfo) -> ov.Output:
    """The shape of zero steps of a fed-back output: [0, *its step shape], the step shape
    taken from the initial state (fn's step value has that shape)."""
    shape = ops.shape_of(out.initial, ov.Type.i64).output(0)
    if out.is_window:
        shape = rows(shape, 1)
    return ops.concat([i64(0), shape], 0).output(0)
