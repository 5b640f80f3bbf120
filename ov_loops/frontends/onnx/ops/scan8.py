"""ONNX Scan-8: a Loop over the batch entries whose body scans one entry.

Semantics (ONNX Scan-8, "Operator semantics")::

    for b in range(batch):                      # the batch loop (this module's LoopIR)
        length = sequence_lens[b] if given else T
        states[b], outs = Scan9(states[b], scans[b][:length], captures)   # one entry
        outputs[b] = outs zero-padded along the sequence axis to T

Scan-8 adds a leading batch axis to states, scan inputs and outputs, scans axis 1 and takes
optional `sequence_lens` first; its `directions` attribute holds the scan inputs' directions.
Its node reads as the Scan of one entry (scan.py: its axes 0, its outputs appended). States,
scan inputs and sequence lengths are sliced on the batch axis; final states and scan outputs
are concatenated on it. The entry's scan is translated and lowered as any Scan-9's (`scan_entry`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import ConcatenatedOutput, InvariantInput, SlicedInput
from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.ops.body import LoopContext, translate
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout, PlaceholderValues
from ov_loops.frontends.onnx.ops.port_types import check_arriving
from ov_loops.frontends.onnx.ops.registry import loop_op
from ov_loops.frontends.onnx.ops.scan import OnnxScan
from ov_loops.frontends.onnx.proto import schema
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.loop import LoopIR, LoopResult

BATCH_OP = "Scan-8 batch"
# scan_entry(values of one entry) -> the outputs of its scan, and the reports of it and its loops
ScanEntry = Callable[[PlaceholderValues], tuple[list[ov.Output], list]]


@loop_op("Scan", opsets=(8, 8))
class OnnxScan8(OnnxScan):
    """One ONNX Scan-8 node, read as the scan of one batch entry."""

    input_offset = 1
    attributes = frozenset({"body", "num_scan_inputs", "directions"})

    @classmethod
    def declared_feeds(
        cls, node: schema.NodeProto
    ) -> list[tuple[str, schema.ValueInfoProto, int | None]]:
        """None: the body declares one batch entry's values, not the node's inputs."""
        return []

    @classmethod
    def _axes(cls, node: schema.NodeProto, path: str, scans_in: int, scans_out: int) -> tuple:
        """Per batch entry the sequence axis is 0 and outputs are appended."""
        directions = cls._attribute(node, path, "directions", scans_in, 0, True)
        return [0] * scans_in, directions, [0] * scans_out, [0] * scans_out

    def loop_ir(self, values: PlaceholderValues, context: LoopContext) -> tuple[LoopIR, list]:
        """The batch loop fed `values` (an ill-typed port refused first) and the reports of the
        entry's scan; a Scan-8 keeps no state across inferences (--stateful)."""
        check_arriving(self, values)
        if context.keeps_state:
            raise ConversionError(f"{self.path}: --stateful: a Scan-8 keeps no state")
        return batch_loop_ir(
            self, values, lambda entry: context.lower(*translate(self, entry, context))
        )


def batch_loop_ir(
    layout: OnnxLoopLayout, values: PlaceholderValues, scan_entry: ScanEntry
) -> tuple[LoopIR, list]:
    """The batch loop of the Scan-8 `layout` fed `values`, and the reports of the entry's scan.

    `scan_entry(values)` translates the scan of one entry (values without the batch axis) and
    returns all its outputs and reports."""
    zero, one = _i64(0), _i64(1)  # shared, as one Constant each, by all that follows
    entries = _BatchEntries(layout.path)
    states = [entries.add(v, f"state_{i}") for i, v in enumerate(values.carried)]
    scans = [entries.add(v, f"scan_input_{j}") for j, v in enumerate(values.sliced)]
    captures = []
    for name, value in zip(layout.captures, values.captures):
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        parameter.output(0).set_names({name})
        captures.append(parameter)
    if values.sequence_lens is not None:
        length = ops.reshape(entries.add(values.sequence_lens, "sequence_length"), one, False)
        scans = [ops.slice(x, zero, length, one, zero).output(0) for x in scans]
    inner, reports = scan_entry(
        PlaceholderValues(None, None, states, [c.output(0) for c in captures], scans, None)
    )
    full_length = ops.gather(ops.shape_of(entries.first_scan()), zero, zero)
    padded = _padded(inner[layout.carried_count :], full_length, zero, one)
    per_entry = inner[: layout.carried_count] + padded
    results = [ops.result(ops.unsqueeze(value, _i64(0))) for value in per_entry]
    results.append(ops.result(ops.constant(True)))
    inputs = [InvariantInput(UNNUMBERED, i) for i in range(len(captures))]
    inputs += [SlicedInput(UNNUMBERED, len(captures) + j, 0) for j in range(len(entries))]
    outputs = [ConcatenatedOutput(UNNUMBERED, k, 0) for k in range(len(per_entry))]
    trip = trips.trip_count(None, entries.outer, [0] * len(entries), True, layout.path)
    start = trips.initial_condition(None)
    spec = number_ports(inputs, outputs, trip.source, trip.constant, None, len(results) - 1)
    empty = _empty_shapes(results[:-1], layout.carried_count, values.sliced[0], zero, one)
    loop = LoopIR(
        path=layout.path,
        in_main_graph=layout.in_main_graph,
        in_loop_body=layout.in_loop_body,
        op=BATCH_OP,
        spec=spec,
        body=ov.Model(results, [*captures, *entries.parameters], f"{layout.path}/body"),
        outer=dict(enumerate([*values.captures, *entries.outer], start=2)),
        trip=trip,
        start=start,
        carried=(),
        results=tuple(LoopResult(k, empty_shape=shape) for k, shape in enumerate(empty)),
    )
    return loop, reports


class _BatchEntries:
    """Parameters holding one batch entry of outer values, in the order they were added."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.outer: list[ov.Output] = []
        self.parameters: list[ov.Node] = []
        self.entries: list[ov.Output] = []

    def __len__(self) -> int:
        return len(self.parameters)

    def add(self, value: ov.Output, role: str) -> ov.Output:
        """A Parameter for one entry of `value` (a Loop-5 part: [1, *entry]); returns the entry."""
        shape = value.get_partial_shape()
        if shape.rank.is_static:
            shape = ov.PartialShape([1, *ovgraph.dimensions(shape)[1:]])
        part = ops.parameter(shape, value.get_element_type())
        part.output(0).set_names({f"{self.path}/{role}"})
        self.outer.append(value)
        self.parameters.append(part)
        self.entries.append(ops.squeeze(part, _i64(0)).output(0))
        return self.entries[-1]

    def first_scan(self) -> ov.Output:
        """The first scan input's entry (before it is cut to its sequence length)."""
        return next(
            entry
            for entry, parameter in zip(self.entries, self.parameters)
            if "/scan_input_" in parameter.output(0).get_any_name()
        )


def _padded(values: list[ov.Output], full_length, zero, one) -> list[ov.Output]:
    """Each scan output zero-padded along axis 0 to `full_length`."""
    padded = []
    for value in values:
        missing = ops.subtract(full_length, ops.gather(ops.shape_of(value), zero, zero))
        rest = ops.slice(ops.shape_of(value), one, ops.constant(np.array([2**31 - 1])), one)
        zeros = ops.broadcast(
            ops.convert(ops.constant(np.float32(0)), value.get_element_type()),
            ops.concat([missing, rest], 0),
        )
        padded.append(ops.concat([value, zeros], 0).output(0))
    return padded


def _empty_shapes(results: list, states: int, first_scan, zero, one) -> list[ov.Output | None]:
    """An empty batch's outputs: states [0, *state], scan outputs [0, T, *element], with T the
    first scan input's sequence length."""
    sequence_length = ops.gather(ops.shape_of(first_scan, ov.Type.i64), one, zero)
    shapes = []
    for index, result in enumerate(results):
        dims = ovgraph.empty_dims(result.input_value(0), 0)
        if dims is None:
            shapes.append(None)
        elif index < states:
            shapes.append(ops.constant(np.array(dims, np.int64)).output(0))
        else:
            element = ops.constant(np.array(dims[2:], np.int64))
            shapes.append(ops.concat([zero, sequence_length, element], 0).output(0))
    return shapes


def _i64(*values: int) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)
