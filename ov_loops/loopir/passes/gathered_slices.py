"""Pass: a body that reads row i of an invariant input at iteration i reads a sliced input.

jax2onnx writes `lax.scan` over xs as a Loop that carries xs unchanged and reads
`Gather(xs, iteration, axis 0)` (RemoveDeadValues makes xs an invariant input); as a sliced
input the same read is what the cell lowering (lower/cells.py) and the hoisting of per-row work
(passes/hoist_sliced.py) recognise, and the CPU plugin hands each iteration its row without a
Gather.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract import ports
from ov_loops.contract.spec import TRIP_COUNT_CONSTANT, TRIP_COUNT_INPUT, SlicedInput
from ov_loops.loopir.analysis import unread_parameters
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.trip_count import capped


class SliceGatheredRows(LoopPass):
    """Replace each `Gather(P, i, axis a)` (P an invariant input of static rank, i the
    iteration's Parameter, a scalar; batch_dims 0) by the part of a new sliced input::

        sliced input: outer[P] along a, from row 0, one row per iteration
        body: Gather(P, i, axis a) -> Squeeze(part, a)
        trip count -> min(trip count, len(outer[P], a))      (an unbounded one: the length)

    Iteration i reads row i, so a run the ONNX model can make (whose Gather index stays in
    range) never runs more iterations than P has rows: the cap changes nothing for it, and a
    Loop-5 needs it (it fails at run time on a sliced input shorter than its trip count).

    Only rows a MatMul reads: those are what the cell lowering and the hoisting use. A sliced
    part costs a back-edge copy where a back edge may be a view of it (CopyBackEdges): jax's
    `c + x_t` cumulative sum (jax_lax_scan_flip_cumsum, T=1000, symbolic B) measured 2.19-2.20x
    of onnxruntime sliced against 1.78x gathered (CPU time, 40 rounds).
    """

    name = "slice-gathered-rows"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        gathers = _row_reads(loop)
        if not gathers:
            return loop
        parameters = list(loop.body.get_parameters())
        entries, sliced = list(loop.spec.inputs()), []
        first = 2 + len(entries)
        for gather, parameter_index, axis in gathers:
            part_shape = ov.PartialShape(
                ovgraph.dimensions(gather.input_value(0).get_partial_shape())
            )
            part_shape[axis] = ov.Dimension(1)
            part = ops.parameter(part_shape, gather.get_output_element_type(0))
            part.set_friendly_name(f"{loop.path}/row{len(sliced)}")
            squeezed = ops.squeeze(part, ops.constant(np.array([axis], np.int64)))
            gather.output(0).replace(squeezed.output(0))
            parameters.append(part)
            entries.append(SlicedInput(ports.UNNUMBERED, len(parameters) - 1, axis))
            outer = loop.outer[_port_of(loop, parameter_index)]
            sliced.append((outer, axis))
        spec = ports.renumbered(loop.spec, entries, loop.spec.outputs())
        added = {first + k: outer for k, (outer, _) in enumerate(sliced)}
        after = loop.with_body(list(loop.body.get_results()), parameters, spec)
        after = _with_capped_trip(after.replace(outer=dict(loop.outer) | added), sliced)
        unread = unread_parameters(after, after.spec.invariant_inputs)
        if unread:
            after = after.without_parameters(unread)
        return after.noting(f"read {len(gathers)} gathered row(s) as sliced input(s)")


def _row_reads(loop: LoopIR) -> list[tuple[ov.Node, int, int]]:
    """The Gathers of row `iteration` of an invariant input that a MatMul reads: (node, body
    Parameter index of the input, axis); not along a dynamic axis when the trip count is a
    constant (the cap would make it a runtime count)."""
    if loop.spec.current_iteration is None:
        return []
    parameters = loop.body.get_parameters()
    iteration = parameters[loop.spec.current_iteration].get_instance_id()
    invariant = {
        parameters[e.body_parameter].get_instance_id(): e.body_parameter
        for e in loop.spec.invariant_inputs
    }
    found = []
    for node in loop.body.get_ordered_ops():
        if node.get_type_name() != "Gather" or node.get_attributes().get("batch_dims", 0) != 0:
            continue
        data, index = (value.get_node().get_instance_id() for value in node.input_values()[:2])
        rank = node.input_value(0).get_partial_shape().rank
        if data not in invariant or index != iteration or rank.is_dynamic:
            continue
        if node.input_value(1).get_partial_shape().rank.get_length() != 0:
            continue
        axis_value = ovgraph.constant_value(node.input_value(2))
        if axis_value is None or axis_value.size != 1:
            continue
        axis = int(axis_value.reshape(-1)[0]) % rank.get_length()
        if (
            loop.trip.constant is not None
            and node.input_value(0).get_partial_shape()[axis].is_dynamic
        ):
            continue
        if any(
            reader.get_node().get_type_name() == "MatMul"
            for reader in node.output(0).get_target_inputs()
        ):
            found.append((node, invariant[data], axis))
    return found


def _port_of(loop: LoopIR, parameter_index: int) -> int:
    return next(e.external_port for e in loop.spec.inputs() if e.body_parameter == parameter_index)


def _with_capped_trip(loop: LoopIR, sliced: list[tuple[ov.Output, int]]) -> LoopIR:
    """`loop` with its trip count capped at the rows of the sliced values."""
    trip = capped(loop.trip, [value for value, _ in sliced], [axis for _, axis in sliced])
    if trip.source == TRIP_COUNT_CONSTANT:
        return loop.replace(trip=trip).with_trip_count(trip.constant)
    spec = dataclasses.replace(loop.spec, trip_count_source=TRIP_COUNT_INPUT, trip_count=None)
    return loop.replace(trip=trip, spec=spec)
