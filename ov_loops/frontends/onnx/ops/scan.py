"""ONNX Scan (opsets 9-23) read as an OnnxLoopLayout; Scan-8 reads the same way (scan8.py).

Semantics followed (ONNX Scan spec, "The behavior of Scan ... is equivalent to the following
pseudocode")::

    length = scan_1.shape[axis_1]          # every scan input has this length on its axis
    st = init
    for t in range(length):
        parts = [x.take(t if forward else length - 1 - t, axis) for x, axis, forward in inputs]
        *st, *elements = body(*st, *parts)
        for out, element in zip(scan_outputs, elements):
            out.append(element) if appending else out.prepend(element)
    return *st, *[stack(out, axis=output_axis) for out in scan_outputs]

Layout: body inputs (states..., scan parts...), outputs (states..., scan output elements...).
Scan inputs are sliced inputs (axis, reverse = start -1, stride -1); scan outputs are
concatenated on their axis (prepended outputs are reversed after the Loop); there is no
iteration number and no condition. Axes are normalised (body.py) once ranks are known.
"""

from __future__ import annotations

from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.ops.body import loop_ir as translated_loop_ir
from ov_loops.frontends.onnx.ops.layout import (
    OnnxLoopLayout,
    PlaceholderValues,
    SlicedRead,
    StackedOutput,
    refuse_omitted_inputs,
    refuse_surplus_outputs,
)
from ov_loops.frontends.onnx.ops.port_types import check_flag
from ov_loops.frontends.onnx.ops.registry import loop_op
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import Captured, captured_names
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts

T = schema.TensorProto


def _ints(node: schema.NodeProto, name: str) -> list[int] | None:
    for attr in node.attribute:
        if attr.name == name:
            return list(attr.ints)
    return None


@loop_op("Scan", opsets=(9, None))
class OnnxScan(OnnxLoopLayout):
    """One ONNX Scan node."""

    sliced_lengths_must_agree = True
    type_rules = {
        "carried": "a state has one element type at its initial value, body input and output",
        "scan_input": "a scan input's body input has the scan input's element type",
        "sequence_lens": "sequence_lens is an int64 tensor",
    }
    sliced_rule = "scan_input"
    attributes = frozenset(
        {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions"}
        | {"scan_output_axes", "scan_output_directions"}
    )
    input_offset = 0  # where the states start among the node's inputs (Scan-8: sequence_lens)
    loop_ir = translated_loop_ir  # its body becomes the LoopIR (body.py)

    @classmethod
    def declared_feeds(
        cls, node: schema.NodeProto
    ) -> list[tuple[str, schema.ValueInfoProto, int | None]]:
        """The states feed their body inputs, the scanned inputs theirs a part at a time along
        their scan_input_axes (0 by default)."""
        bodies = [a.g for a in node.attribute if a.name == "body" and a.type == a.GRAPH]
        if not bodies:
            return []
        scanned = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        states = len(node.input) - scanned
        axes = next((list(a.ints) for a in node.attribute if a.name == "scan_input_axes"), [])
        axes += [0] * (scanned - len(axes))
        inputs = bodies[0].input
        return [
            *((name, value, None) for name, value in zip(node.input[:states], inputs)),
            *zip(node.input[states:], inputs[states:], axes),
        ]

    @classmethod
    def read(
        cls,
        node: schema.NodeProto,
        path: str,
        opset: int | None,
        sequences: SequenceParts,
        captured: Captured = captured_names,
    ) -> OnnxScan:
        """Check attributes and arity against the body; raise ConversionError naming the node.
        A Scan carries no sequences (the sequence rewrite refuses them): `sequences` is unread.
        `captured` gives the body's captures (scopes.CapturedNames: walked once per graph)."""
        inputs = list(node.input[cls.input_offset :])
        bodies = [a.g for a in node.attribute if a.name == "body" and a.type == a.GRAPH]
        scan_inputs = [a.i for a in node.attribute if a.name == "num_scan_inputs"]
        if not bodies or not scan_inputs:
            raise ConversionError(f"{path}: Scan needs the attributes 'body' and 'num_scan_inputs'")
        body, scans_in = bodies[0], scan_inputs[0]
        states, scans_out = cls._arity(node, path, inputs, body, scans_in)
        input_axes, input_directions, output_axes, output_directions = cls._axes(
            node, path, scans_in, scans_out
        )
        sliced = [
            SlicedRead(inputs[states + j], body.input[states + j].name, axis, bool(reverse))
            for j, (axis, reverse) in enumerate(zip(input_axes, input_directions))
        ]
        return cls(
            node=node,
            path=path,
            opset=opset,
            body=body,
            captures=captured(body),
            sliced=sliced,
            carried_sources=inputs[:states],
            carried_inputs=[value.name for value in body.input[:states]],
            carried_outputs=list(range(states)),
            stacked_outputs=[
                StackedOutput(states + k, axis, bool(reverse))
                for k, (axis, reverse) in enumerate(zip(output_axes, output_directions))
            ],
            sequence_lens_source=(node.input[0] or None) if cls.input_offset else None,
        )

    @classmethod
    def _axes(cls, node: schema.NodeProto, path: str, scans_in: int, scans_out: int) -> tuple:
        """(input axes, input directions, output axes, output directions) from the attributes."""
        attribute = cls._attribute
        return (
            attribute(node, path, "scan_input_axes", scans_in, 0),
            attribute(node, path, "scan_input_directions", scans_in, 0, True),
            attribute(node, path, "scan_output_axes", scans_out, 0),
            attribute(node, path, "scan_output_directions", scans_out, 0, True),
        )

    def check_own_ports(self, values: PlaceholderValues) -> None:
        """Scan-8's sequence_lens as it arrives (none otherwise)."""
        lengths = values.sequence_lens
        check_flag(self, lengths, "input sequence_lens", T.INT64, "sequence_lens", False)

    @classmethod
    def _arity(
        cls,
        node: schema.NodeProto,
        path: str,
        inputs: list[str],
        body: schema.GraphProto,
        scans_in: int,
    ) -> tuple[int, int]:
        """(states, scan outputs) of a Scan whose inputs (without Scan-8's sequence_lens) are
        `inputs`, checked against its body; raise ConversionError naming the node."""
        states = len(inputs) - scans_in
        if scans_in < 1 or states < 0:
            raise ConversionError(
                f"{path}: num_scan_inputs={scans_in} but the node has {len(inputs)} inputs"
                + (" besides sequence_lens" if cls.input_offset else "")
            )
        if len(body.input) != states + scans_in:
            raise ConversionError(
                f"{path}: body has {len(body.input)} inputs, expected {states + scans_in} "
                f"({states} states and num_scan_inputs={scans_in} scan inputs)"
            )
        body_inputs = [value.name for value in body.input]
        first = cls.input_offset  # Scan-8's sequence_lens comes first and may be omitted
        refuse_omitted_inputs(
            path, "Scan", inputs[:states], first, body_inputs[:states], "initial state"
        )
        refuse_omitted_inputs(
            path, "Scan", inputs[states:], first + states, body_inputs[states:], "scan input"
        )
        scans_out = len(body.output) - states
        if scans_out < 0:
            raise ConversionError(
                f"{path}: body has {len(body.output)} outputs, expected at least {states} states"
            )
        refuse_surplus_outputs(path, "Scan", len(node.output), states, "states", scans_out)
        return states, scans_out

    @staticmethod
    def _attribute(
        node: schema.NodeProto, path: str, name: str, count: int, default: int, flags: bool = False
    ) -> list[int]:
        values = _ints(node, name)
        if values is None:
            return [default] * count
        if len(values) != count:
            raise ConversionError(
                f"{path}: attribute {name} has {len(values)} entries, expected {count}"
            )
        if flags and any(value not in (0, 1) for value in values):
            raise ConversionError(f"{path}: attribute {name} must hold only 0 or 1, got {values}")
        return values
