"""What ONNX Loop and Scan have in common: a body with a layout, turned into a typed standalone
model and a LoopSpec.

A body's layout names its inputs (iteration number, condition, loop-carried values, sliced
parts) and indexes its outputs (condition, loop-carried values, stacked outputs). Values read
from enclosing scopes (captures) become extra inputs. The subclasses read their node; the
translation from layout to Loop-5 ports is here, once:

    port_map inputs:  merged (carried) | invariant (captures) | sliced (parts, axis, direction)
    port_map outputs: last value (carried) | concatenated (stacked, axis)
    special ports:    iteration number -> current_iteration; condition output -> execution_condition
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import onnx

from ov_loops.contract.values import CarriedKind
from ov_loops.errors import ConversionError, UnsupportedItem
from ov_loops.frontends.onnx.scopes import defined_names, fresh_name, read_names


@dataclass(frozen=True)
class TensorType:
    """An ONNX tensor type: elem_type 0 is unknown, `shape` None unknown rank, None dims dynamic."""

    elem_type: int
    shape: tuple[int | None, ...] | None

    def without_axis(self, axis: int) -> TensorType:
        """The type of one part of this tensor along `axis` (which is removed)."""
        if self.shape is None:
            return self
        return TensorType(self.elem_type, self.shape[:axis] + self.shape[axis + 1 :])

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


@dataclass(frozen=True)
class SlicedRead:
    """The body reads `source` one part at a time along `axis` (which the body does not see).

    `axis` is as written in the model (possibly negative) until normalised against the rank.
    """

    source: str
    body_input: str
    axis: int = 0
    reverse: bool = False


@dataclass(frozen=True)
class StackedOutput:
    """Body output `index` is stacked over the iterations along `axis` (prepended if reverse)."""

    index: int
    axis: int = 0
    reverse: bool = False


def normalize_axis(axis: int, rank: int | None, what: str) -> int:
    """`axis` in [0, rank); raise ConversionError naming `what` otherwise."""
    if rank is None:
        if axis < 0:
            raise ConversionError(f"{what}: negative axis {axis} on a value of unknown rank")
        return axis
    if not -rank <= axis < rank:
        raise ConversionError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def refuse_omitted_inputs(
    path: str, op: str, inputs: list[str], first: int, body_inputs: list[str], role: str
) -> None:
    """Raise ConversionError naming the node when one of `inputs` (the node's inputs from index
    `first` on, each a `role` feeding the body input of `body_inputs` at its position) is
    omitted: an empty name, which Loop and Scan allow only for their optional inputs."""
    for offset, (name, body_input) in enumerate(zip(inputs, body_inputs)):
        if not name:
            raise ConversionError(
                f"{path}: {op} input {first + offset} ({role} for body input '{body_input}') "
                "is omitted (empty name); it is required"
            )


def flag_shape(declared: onnx.ValueInfoProto, fed: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The shape a Loop body's iteration-number or condition input is fed with: () when the body
    declares a scalar, (1,) when it declares any other rank (an old form declares [1];
    onnxruntime feeds [1] whatever the rank, and OpenVINO's frontend reads [1]), and `fed` (the
    shape of the value the loop receives, as onnxruntime passes it on) when it declares none."""
    tensor = declared.type.tensor_type
    if not tensor.HasField("shape"):
        return fed
    return (1,) if tensor.shape.dim else ()


class PlaceholderValues(NamedTuple):
    """The values arriving at a placeholder, by role (whatever their type)."""

    trip_count: object
    condition: object
    carried: list
    captures: list
    sliced: list
    sequence_lens: object


@dataclass
class LoopBody:
    """An ONNX control-flow node whose body becomes a Loop-5 body. Subclasses fill the layout."""

    node: onnx.NodeProto
    path: str
    opset: int | None
    body: onnx.GraphProto
    captures: list[str]
    sliced: list[SlicedRead]
    carried_sources: list[str]  # outer names of the initial loop-carried values
    carried_inputs: list[str]  # body inputs receiving them
    carried_outputs: list[int]
    stacked_outputs: list[StackedOutput]
    trip_source: str | None = None  # outer name of the trip count, if any
    condition_source: str | None = None  # outer name of the initial condition, if any
    iteration_input: str | None = None
    condition_input: str | None = None
    condition_output: int | None = None
    # Scan-8: inputs carry a leading batch axis; each batch entry is scanned on its own, up to
    # its sequence length when `sequence_lens_source` is given.
    batched: bool = False
    sequence_lens_source: str | None = None
    # the kind of each logical carried value (a sequence takes several inputs); None: tensors.
    carried_kinds: list[CarriedKind] | None = None

    op = "Loop"
    # Scan requires every sliced input to have the same length; Loop stops at the shortest.
    sliced_lengths_must_agree = False

    # -- layout ------------------------------------------------------------------------------
    @property
    def carried_count(self) -> int:
        return len(self.carried_inputs)

    def reads_iteration_number(self) -> bool:
        return self.iteration_input is not None and self.iteration_input in read_names(self.body)

    def reads_condition(self) -> bool:
        return self.condition_input is not None and self.condition_input in read_names(self.body)

    def placeholder_inputs(self) -> list[str]:
        """Inputs of the placeholder: [M] [cond] carried... captures... sliced... [sequence_lens]"""
        present = [name for name in (self.trip_source, self.condition_source) if name]
        sources = [entry.source for entry in self.sliced]
        lengths = [self.sequence_lens_source] if self.sequence_lens_source else []
        return present + self.carried_sources + self.captures + sources + lengths

    def split(self, values: list) -> PlaceholderValues:
        """The placeholder's input values by role (absent ones are None)."""
        values = list(values)
        trip_count = values.pop(0) if self.trip_source else None
        condition = values.pop(0) if self.condition_source else None
        sequence_lens = values.pop() if self.sequence_lens_source else None
        carried, values = values[: self.carried_count], values[self.carried_count :]
        captures, sliced = values[: len(self.captures)], values[len(self.captures) :]
        return PlaceholderValues(trip_count, condition, carried, captures, sliced, sequence_lens)

    def declared_flag_shape(self, name: str | None, fed: tuple[int, ...] = ()) -> tuple[int, ...]:
        """`flag_shape` of the body input `name` (the iteration number or the condition)."""
        declared = [value for value in self.body.input if value.name == name]
        return flag_shape(declared[0], fed) if declared else fed

    # -- checks ------------------------------------------------------------------------------
    def unsupported_types(self, outer_types: dict[str, onnx.TypeProto]) -> list[UnsupportedItem]:
        """Sequence-, Optional- and Map-typed loop-carried values (not supported yet)."""
        items = []
        inputs = {value.name: value.type for value in self.body.input}
        for outer, body_in, out in zip(
            self.carried_sources, self.carried_inputs, self.carried_outputs
        ):
            types = [inputs[body_in], self.body.output[out].type, outer_types.get(outer)]
            kinds = {t.WhichOneof("value") for t in types if t is not None}
            for kind in sorted(kinds - {None, "tensor_type"}):
                readable = kind.replace("_type", "")
                reason = f"{readable}-typed loop-carried value '{outer}' is not supported yet"
                items.append(
                    UnsupportedItem(self.op, self.node.domain, self.opset, self.path, reason)
                )
        return items

    # -- body --------------------------------------------------------------------------------
    def body_model(
        self,
        template: onnx.GraphProto,
        carried_types: list[TensorType],
        capture_types: list[TensorType],
        slice_types: list[TensorType],
        model: onnx.ModelProto,
        condition_fed_shape: tuple[int, ...] = (),
    ) -> onnx.ModelProto:
        """The body as a standalone model whose inputs are typed from the outer values.

        Inputs: [iteration number if read] carried... captures... sliced parts...; a condition
        input, if read, is a constant true (an iteration runs only when the condition is true).
        Both have the shape the body declares for them (`declared_flag_shape`). Outputs keep
        the body's order; each is produced by a node of the body (an output that passes an
        input, a capture or an initializer straight through, or repeats another output, gets
        an Identity).
        """
        graph = onnx.GraphProto()
        graph.CopyFrom(template)
        graph.name = template.name or "body"
        del graph.input[:]
        del graph.output[:]
        del graph.value_info[:]
        if self.reads_iteration_number():
            iteration = TensorType(
                onnx.TensorProto.INT64, self.declared_flag_shape(self.iteration_input)
            )
            graph.input.append(iteration.value_info(self.iteration_input))
        if self.reads_condition():
            condition_shape = self.declared_flag_shape(self.condition_input, condition_fed_shape)
            always_true = onnx.helper.make_tensor("", onnx.TensorProto.BOOL, condition_shape, [1])
            graph.node.insert(
                0, onnx.helper.make_node("Constant", [], [self.condition_input], value=always_true)
            )
        names = [*self.carried_inputs, *self.captures, *(s.body_input for s in self.sliced)]
        for name, value_type in zip(names, [*carried_types, *capture_types, *slice_types]):
            graph.input.append(value_type.value_info(name))

        produced_by_node = {name for node in template.node for name in node.output if name}
        seen: set[str] = set()
        taken = defined_names(template) | set(names)
        for index, value in enumerate(template.output):
            name = value.name
            if name not in produced_by_node or name in seen:
                fresh = fresh_name(f"{name}__ov_loops_out{index}", taken)
                graph.node.append(onnx.helper.make_node("Identity", [name], [fresh]))
                name = fresh
            seen.add(name)
            graph.output.append(onnx.ValueInfoProto(name=name))

        body = onnx.helper.make_model(
            graph, opset_imports=list(model.opset_import), producer_name="ov-loops"
        )
        body.ir_version = model.ir_version
        body.functions.extend(model.functions)
        return body
