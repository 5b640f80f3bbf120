"""ONNX Loop (opsets 1-23) -> typed body graph and LoopSpec.

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

The Loop-5 translation: each loop-carried value is a merged input (back edge from its body
output) with a last-value output; each scan output is unsqueezed to a leading 1 in the body and
becomes a concatenated output on axis 0; the iteration number is `current_iteration`; the
body's condition output is `execution_condition`; values captured from enclosing scopes are
invariant inputs (constants among them become body constants), except those the body reads
at the iteration number, which become sliced inputs (see slicing.py). The body's condition
input is
the constant true: an iteration runs only when `keepgoing` is true, and `keepgoing` is what
the body receives.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ov_loops.errors import ConversionError, UnsupportedItem
from ov_loops.loops.slicing import SlicedCapture, slice_iteration_gathers
from ov_loops.loops.spec import (
    TRIP_COUNT_CONSTANT,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.onnx_io.scopes import captured_names, defined_names, fresh_name, read_names


@dataclass(frozen=True)
class TensorType:
    """An ONNX tensor type: elem_type 0 is unknown, `shape` None unknown rank, None dims dynamic."""

    elem_type: int
    shape: tuple[int | None, ...] | None

    def without_leading_axis(self) -> TensorType:
        """The type of one part of this tensor along axis 0."""
        return TensorType(self.elem_type, None if self.shape is None else self.shape[1:])

    def value_info(self, name: str) -> onnx.ValueInfoProto:
        info = onnx.ValueInfoProto(name=name)
        tensor = info.type.tensor_type
        tensor.elem_type = self.elem_type
        if self.shape is not None:
            tensor.shape.SetInParent()
            for length in self.shape:
                dim = tensor.shape.dim.add()
                if length is not None:
                    dim.dim_value = length
        return info


INT64_SCALAR = TensorType(onnx.TensorProto.INT64, ())


@dataclass
class OnnxLoop:
    """One ONNX Loop node, its body and what the body captures from enclosing scopes.

    `body` is the node's body with reads at the iteration number rewritten (see slicing.py);
    `captures` are the other values it reads from enclosing scopes.
    """

    node: onnx.NodeProto
    path: str
    opset: int | None
    body: onnx.GraphProto
    captures: list[str]
    sliced: list[SlicedCapture]

    @classmethod
    def read(cls, node: onnx.NodeProto, path: str, opset: int | None) -> OnnxLoop:
        """Check the node's arity against its body; raise ConversionError naming the node."""
        bodies = [a.g for a in node.attribute if a.name == "body" and a.type == a.GRAPH]
        if not bodies:
            raise ConversionError(f"{path}: Loop has no 'body' graph attribute")
        body = bodies[0]
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
        scans = len(body.output) - 1 - carried
        if scans < 0:
            raise ConversionError(
                f"{path}: body has {len(body.output)} outputs, expected at least {carried + 1} "
                f"(condition and {carried} loop-carried values)"
            )
        if len(node.output) > carried + scans:
            raise ConversionError(
                f"{path}: Loop has {len(node.output)} outputs but its body yields "
                f"{carried} loop-carried values and {scans} scan outputs"
            )
        body, sliced = slice_iteration_gathers(body, captured_names(body))
        slice_inputs = {entry.body_input for entry in sliced}
        captures = [name for name in captured_names(body) if name not in slice_inputs]
        return cls(node, path, opset, body, captures, sliced)

    # -- layout of the node ---------------------------------------------------------------
    @property
    def has_trip_count(self) -> bool:
        return bool(self.node.input[0])

    @property
    def has_condition(self) -> bool:
        return bool(self.node.input[1])

    @property
    def carried_count(self) -> int:
        return len(self.node.input) - 2

    @property
    def scan_count(self) -> int:
        return len(self.body.output) - 1 - self.carried_count

    def placeholder_inputs(self) -> list[str]:
        """Inputs of the placeholder: present M, present cond, carried, captures, sliced sources."""
        present = [name for name in self.node.input[:2] if name]
        sources = [entry.source for entry in self.sliced]
        return present + list(self.node.input[2:]) + self.captures + sources

    def split(self, values: list) -> tuple[object, object, list, list, list]:
        """Split placeholder input values: (M or None, cond or None, carried, captures, sliced)."""
        values = list(values)
        trip_count = values.pop(0) if self.has_trip_count else None
        condition = values.pop(0) if self.has_condition else None
        carried = values[: self.carried_count]
        captures = values[self.carried_count : self.carried_count + len(self.captures)]
        sliced = values[self.carried_count + len(self.captures) :]
        return trip_count, condition, carried, captures, sliced

    # -- body ------------------------------------------------------------------------------
    def unsupported_types(self, outer_types: dict[str, onnx.TypeProto]) -> list[UnsupportedItem]:
        """Sequence-, Optional- and Map-typed loop-carried values (not supported yet)."""
        items = []
        names = zip(
            self.node.input[2:],
            self.body.input[2:],
            self.body.output[1 : 1 + self.carried_count],
        )
        for outer, body_in, body_out in names:
            types = [body_in.type, body_out.type, outer_types.get(outer, onnx.TypeProto())]
            kinds = {t.WhichOneof("value") for t in types} - {None, "tensor_type"}
            for kind in sorted(kinds):
                readable = kind.replace("_type", "")
                items.append(
                    UnsupportedItem(
                        "Loop",
                        self.node.domain,
                        self.opset,
                        self.path,
                        f"{readable}-typed loop-carried value '{outer}' is not supported yet",
                    )
                )
        return items

    def reads_iteration_number(self) -> bool:
        return self.body.input[0].name in read_names(self.body)

    def reads_condition(self) -> bool:
        return self.body.input[1].name in read_names(self.body)

    def body_model(
        self,
        template: onnx.GraphProto,
        carried_types: list[TensorType],
        condition_shape: tuple[int, ...],
        capture_types: list[TensorType],
        slice_types: list[TensorType],
        model: onnx.ModelProto,
    ) -> onnx.ModelProto:
        """The body as a standalone model whose inputs are typed from the outer values.

        Inputs: [iteration number if read] carried... captures... slices...; the condition input, if
        read, is a constant true of `condition_shape`.
        Outputs: condition, carried..., scan outputs...; each produced by a node of the body
        (outputs that pass an input, a capture or an initializer straight through, or repeat
        another output, get an Identity).
        """
        graph = onnx.GraphProto()
        graph.CopyFrom(template)
        graph.name = template.name or "body"
        del graph.input[:]
        del graph.output[:]
        del graph.value_info[:]
        if self.reads_iteration_number():
            graph.input.append(INT64_SCALAR.value_info(template.input[0].name))
        if self.reads_condition():
            always_true = onnx.helper.make_tensor("", onnx.TensorProto.BOOL, condition_shape, [1])
            constant = onnx.helper.make_node(
                "Constant", [], [template.input[1].name], value=always_true
            )
            graph.node.insert(0, constant)
        for value, value_type in zip(template.input[2:], carried_types):
            graph.input.append(value_type.value_info(value.name))
        for name, value_type in zip(self.captures, capture_types):
            graph.input.append(value_type.value_info(name))
        for entry, value_type in zip(self.sliced, slice_types):
            graph.input.append(value_type.value_info(entry.body_input))

        produced_by_node = {name for node in template.node for name in node.output if name}
        seen: set[str] = set()
        taken = defined_names(template) | set(self.captures)
        taken.update(entry.body_input for entry in self.sliced)
        for index, value in enumerate(template.output):
            name = value.name
            if name not in produced_by_node or name in seen:
                fresh = fresh_name(f"{name}__ov_loops_out{index}", taken)
                graph.node.append(onnx.helper.make_node("Identity", [name], [fresh]))
                name = fresh
            seen.add(name)
            graph.output.append(onnx.ValueInfoProto(name=name))

        opsets = list(model.opset_import)
        body = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="ov-loops")
        body.ir_version = model.ir_version
        body.functions.extend(model.functions)
        return body

    def spec(
        self, parameter_index: dict[str, int], trip_count_source: str, trip_count: int | None
    ) -> LoopSpec:
        """The LoopSpec of this loop, given where each body input landed among the Parameters.

        Captures without a Parameter (constants moved into the body) are not inputs.
        Body Results are: condition, carried values, scan outputs (unsqueezed), in that order.
        """
        carried_names = [value.name for value in self.body.input[2:]]
        merged = [
            MergedInput(2 + i, parameter_index[name], 1 + i) for i, name in enumerate(carried_names)
        ]
        inputs = [name for name in self.captures if name in parameter_index]  # not constants
        port = 2 + len(merged)
        invariant = [
            InvariantInput(port + i, parameter_index[name]) for i, name in enumerate(inputs)
        ]
        port += len(invariant)
        sliced = [
            SlicedInput(port + i, parameter_index[entry.body_input], axis=0)
            for i, entry in enumerate(self.sliced)
        ]
        carried = self.carried_count
        last_values = [LastValueOutput(i, 1 + i) for i in range(carried)]
        concatenated = [
            ConcatenatedOutput(carried + k, 1 + carried + k, axis=0) for k in range(self.scan_count)
        ]
        current = (
            parameter_index[self.body.input[0].name] if self.reads_iteration_number() else None
        )
        return LoopSpec(
            trip_count_source=trip_count_source,
            trip_count=trip_count if trip_count_source == TRIP_COUNT_CONSTANT else None,
            sliced_inputs=tuple(sliced),
            merged_inputs=tuple(merged),
            invariant_inputs=tuple(invariant),
            concatenated_outputs=tuple(concatenated),
            last_value_outputs=tuple(last_values),
            current_iteration=current,
            execution_condition=0,
        )
