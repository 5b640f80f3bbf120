"""ONNX Loop (opsets 1-23) read as an OnnxLoopLayout and registered for every opset.

Semantics followed (ONNX Loop spec, "Operator semantics"; onnxruntime's behaviour where the
spec's pseudo-code differs)::

    keepgoing = cond if cond is given else True     # an omitted cond starts true ...
    i = 0
    v = v_initial
    scans = [[] for _ in range(K)]
    while (M is None or i < M) and keepgoing:
        keepgoing, *v, *scan_values = body(i, keepgoing, *v)   # ... and the body's is honoured
        for out, value in zip(scans, scan_values):
            out.append(value)
        i += 1
    return *v, *[stack(out, axis=0) for out in scans]

Layout: body inputs (iteration number, condition, carried...), outputs (condition, carried...,
scan outputs...). The iteration number is `current_iteration`; the condition output is
`execution_condition`; the condition input is the constant true, since an iteration runs only
when `keepgoing` is true and that is what the body receives. Scan outputs stack on axis 0.
Captured tensors the body reads at a scalar iteration number become sliced inputs (slicing.py).
"""

from __future__ import annotations

from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.ops.body import loop_ir as translated_loop_ir
from ov_loops.frontends.onnx.ops.layout import (
    OnnxLoopLayout,
    PlaceholderValues,
    StackedOutput,
    flag_shape,
    refuse_omitted_inputs,
    refuse_surplus_outputs,
)
from ov_loops.frontends.onnx.ops.port_types import (
    check_flag,
    declared_elem_type,
    ill_typed,
    type_name,
)
from ov_loops.frontends.onnx.ops.registry import is_loop_op, loop_op
from ov_loops.frontends.onnx.ops.slicing import slice_iteration_gathers
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import Captured, captured_names, not_defined, read_names
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts

T = schema.TensorProto
BODY_INPUTS = "the body's inputs are (iteration_num int64, condition bool, loop-carried values...)"


def is_loop(node: schema.NodeProto) -> bool:
    """Whether `node` is an ONNX Loop (which the sequence rewrites look into)."""
    return is_loop_op(node) and node.op_type == OnnxLoop.op


@loop_op("Loop", opsets=(1, None))
class OnnxLoop(OnnxLoopLayout):
    """One ONNX Loop node."""

    type_rules = {
        "M": "M is an int64 scalar",
        "cond": "cond is a bool scalar",
        "iteration": BODY_INPUTS,
        "condition": BODY_INPUTS,
        "condition_output": "the body's first output is the condition, a bool scalar",
        "carried": "a loop-carried value has one element type at its initial value, body input "
        "and output",
    }
    loop_ir = translated_loop_ir  # its body becomes the LoopIR (body.py)

    @classmethod
    def declared_feeds(
        cls, node: schema.NodeProto
    ) -> list[tuple[str, schema.ValueInfoProto, int | None]]:
        """M and cond feed the iteration number and the condition, then the initial carried
        values their body inputs."""
        bodies = [a.g for a in node.attribute if a.name == "body" and a.type == a.GRAPH]
        inputs = bodies[0].input if bodies else []
        return [(name, value, None) for name, value in zip(node.input, inputs) if name]

    @classmethod
    def read(
        cls,
        node: schema.NodeProto,
        path: str,
        opset: int | None,
        sequences: SequenceParts,
        captured: Captured = captured_names,
    ) -> OnnxLoop:
        """Check the node's arity against its body; raise ConversionError naming the node.
        `sequences` (the sequence rewrite's record) says which carried inputs are one value;
        `captured` gives the captures of the graphs nested in the body (scopes.CapturedNames:
        each walked once for the loops at every depth)."""
        bodies = [a.g for a in node.attribute if a.name == "body" and a.type == a.GRAPH]
        if not bodies:
            raise ConversionError(f"{path}: Loop has no 'body' graph attribute")
        body = bodies[0]
        carried, scans = _arity(node, body, path)
        carried_inputs = [value.name for value in body.input[2:]]
        sliced, reads = [], read_names(body, captured)
        captures = not_defined(body, reads)
        if flag_shape(body.input[0]) == ():  # Gather at a [1] iteration number keeps the axis
            body, sliced = slice_iteration_gathers(body, captures)
        if sliced:
            reads = read_names(body, captured)
            captures = not_defined(body, reads)
        slice_inputs = {entry.body_input for entry in sliced}
        return cls(
            node=node,
            path=path,
            opset=opset,
            body=body,
            captures=[name for name in captures if name not in slice_inputs],
            sliced=sliced,
            carried_sources=list(node.input[2:]),
            carried_inputs=[value.name for value in body.input[2:]],
            carried_outputs=list(range(1, 1 + carried)),
            stacked_outputs=[StackedOutput(1 + carried + k) for k in range(scans)],
            trip_source=node.input[0] or None,
            condition_source=node.input[1] or None,
            iteration_input=body.input[0].name,
            condition_input=body.input[1].name,
            condition_output=0,
            carried_kinds=sequences.carried_kinds(carried_inputs),
            body_reads=frozenset(reads),
        )

    def check_own_ports(self, values: PlaceholderValues) -> None:
        """M and cond as they arrive; the iteration number and condition as the body declares
        them."""
        check_flag(self, values.trip_count, f"input M '{self.trip_source}'", T.INT64, "M")
        check_flag(self, values.condition, f"input cond '{self.condition_source}'", T.BOOL, "cond")
        for position, name, elem_type, rule in (
            (0, self.iteration_input, T.INT64, "iteration"),
            (1, self.condition_input, T.BOOL, "condition"),
        ):
            declared = declared_elem_type(self, name)
            if declared not in (0, elem_type):
                found = f"is declared {type_name(declared)}"
                raise ill_typed(self, f"body input {position} '{name}'", found, rule)


def _arity(node: schema.NodeProto, body: schema.GraphProto, path: str) -> tuple[int, int]:
    """(carried values, scan outputs) of Loop `node` with `body`, its inputs and outputs
    checked against them; ConversionError naming the node."""
    carried = len(node.input) - 2
    if carried < 0:
        raise ConversionError(
            f"{path}: Loop needs inputs M and cond (possibly empty), got {len(node.input)}"
        )
    if len(body.input) != carried + 2:
        raise ConversionError(
            f"{path}: body has {len(body.input)} inputs, expected {carried + 2} "
            f"(iteration number, condition and {carried} loop-carried values)"
        )
    carried_inputs = [value.name for value in body.input[2:]]
    refuse_omitted_inputs(path, "Loop", node.input[2:], 2, carried_inputs, "initial value")
    scans = len(body.output) - 1 - carried
    if scans < 0:
        raise ConversionError(
            f"{path}: body has {len(body.output)} outputs, expected at least {carried + 1} "
            f"(condition and {carried} loop-carried values)"
        )
    refuse_surplus_outputs(path, "Loop", len(node.output), carried, "loop-carried values", scans)
    return carried, scans
