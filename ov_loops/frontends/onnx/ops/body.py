"""A loop's body, typed from the values arriving at its placeholder and converted, and the LoopIR
of the loop (to_loop_ir.py) — the translation every op shares (Scan-8 wraps it, scan8.py).

    translate(layout, values):
        refuse string tensors entering the loop (OpenVINO's CPU plugin cannot run them)
        slice axes = each sliced input's axis normalised against its rank
        trip count = M, capped by the sliced inputs' lengths (loopir/trip_count.py)
        body = convert(the body typed from the values), carried shapes relaxed to a fixed point
        stacked axes = each stacked output's axis normalised against its rank + 1
        -> onnx_loop_ir(layout, body, values, ...)

The driver converts a typed body with OpenVINO's frontend (recursion: its own loops come back
through their placeholders) and lowers loops; a `LoopContext` is what a translation asks of it.
"""

from __future__ import annotations

from typing import Protocol

import openvino as ov

from ov_loops.errors import ConversionError, UnsupportedItem
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout, PlaceholderValues
from ov_loops.frontends.onnx.ops.port_types import check_arriving, check_body_outputs
from ov_loops.frontends.onnx.ops.to_loop_ir import onnx_loop_ir
from ov_loops.frontends.onnx.proto import body_types, helpers, schema
from ov_loops.frontends.onnx.proto.scopes import defined_names, fresh_name
from ov_loops.frontends.onnx.proto.types import TensorType
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.loop import LoopIR
from ov_loops.record import Record

MAX_SHAPE_RELAXATIONS = 8


class LoopContext(Protocol):
    """What translating one loop asks of the driver (conversion/driver.py). Reports are the
    driver's own (its ConvertedLoop); a translation passes them on without reading them."""

    @property
    def template(self) -> schema.GraphProto:
        """The loop's body with its own loops replaced by their placeholders."""

    @property
    def model(self) -> schema.ModelProto:
        """The model the loop is in (its opsets, IR version and functions)."""

    @property
    def keeps_state(self) -> bool:
        """Whether the target keeps the loop's carried values across inferences (--stateful,
        a loop of the main graph)."""

    def convert(self, body: schema.ModelProto) -> tuple[ov.Model, list]:
        """`body` (the typed template) converted by OpenVINO's frontend, and the reports of
        the loops in it; raises the first error of one of them."""

    def lower(self, loop: LoopIR, nested: list) -> tuple[list[ov.Output], list]:
        """`loop` lowered for the target: its values (in result order), and its report
        followed by `nested` (the reports of its body's loops) unless it was folded away."""

    def refuse(self, items: list[UnsupportedItem]) -> None:
        """Record constructs the model cannot be converted with (reported with all others)."""

    @property
    def guarded_counts(self) -> dict:
        """The conversion's runtime trip counts guarded so far, by source value (trip_count.py)."""


class BodyTypes(Record):
    """The types a body's inputs get from the values arriving: carried values, captures and
    sliced parts (each without its slicing axis), and the shape the loop's condition has."""

    __slots__ = ("carried", "captures", "sliced", "condition_shape")

    def __init__(
        self,
        carried: list[TensorType],
        captures: list[TensorType],
        sliced: list[TensorType],
        condition_shape: tuple[int, ...],
    ) -> None:
        self.carried = carried
        self.captures = captures
        self.sliced = sliced
        self.condition_shape = condition_shape


def loop_ir(
    layout: OnnxLoopLayout, values: PlaceholderValues, context: LoopContext
) -> tuple[LoopIR, list]:
    """The LoopIR of the loop `layout` describes fed `values` (an ill-typed port refused first,
    port_types.py), and the reports of its body's loops: an op's `loop_ir`."""
    check_arriving(layout, values)
    return translate(layout, values, context)


def translate(
    layout: OnnxLoopLayout, values: PlaceholderValues, context: LoopContext
) -> tuple[LoopIR, list]:
    """The LoopIR of one (unbatched) loop fed `values`, and the reports of its body's loops
    (module docstring)."""
    _refuse_strings(layout, values, context)
    slice_axes = [
        normalize_axis(entry.axis, body_types.rank(value), f"{layout.path}: input '{entry.source}'")
        for entry, value in zip(layout.sliced, values.sliced)
    ]
    trip = trips.trip_count(
        values.trip_count,
        values.sliced,
        slice_axes,
        layout.sliced_lengths_must_agree,
        layout.path,
        context.guarded_counts,
    )
    start = trips.initial_condition(values.condition)
    body, nested = converted_body(layout, values, slice_axes, context)
    stacked_axes = _stacked_axes(layout, body)
    loop = onnx_loop_ir(layout, body, values, (trip, start), slice_axes, stacked_axes)
    return loop, nested


def normalize_axis(axis: int, rank: int | None, what: str) -> int:
    """`axis` in [0, rank); raise ConversionError naming `what` otherwise."""
    if rank is None:
        if axis < 0:
            raise ConversionError(f"{what}: negative axis {axis} on a value of unknown rank")
        return axis
    if not -rank <= axis < rank:
        raise ConversionError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _stacked_axes(layout: OnnxLoopLayout, body: ov.Model) -> list[int]:
    """The axis of each stacked output, normalised against the rank of what it stacks + 1."""
    results = body.get_results()
    axes = []
    for entry in layout.stacked_outputs:
        value_rank = body_types.rank(results[entry.index].input_value(0))
        stacked_rank = None if value_rank is None else value_rank + 1
        axes.append(
            normalize_axis(entry.axis, stacked_rank, f"{layout.path}: output {entry.index}")
        )
    return axes


def _refuse_strings(
    layout: OnnxLoopLayout, values: PlaceholderValues, context: LoopContext
) -> None:
    """String tensors may not flow through a Loop: OpenVINO's CPU plugin cannot run them. Each
    is an unsupported construct; the loop fails with a ConversionError."""
    names = [*layout.carried_sources, *layout.captures, *(entry.source for entry in layout.sliced)]
    items = [
        UnsupportedItem(
            layout.op,
            layout.node.domain,
            layout.opset,
            layout.path,
            f"string tensor '{name}' in a loop (OpenVINO's CPU plugin cannot run it)",
        )
        for name, value in zip(names, [*values.carried, *values.captures, *values.sliced])
        if value.get_element_type() == ov.Type.string
    ]
    if items:
        context.refuse(items)
        raise ConversionError(f"{layout.path}: string tensors in a loop")


def converted_body(
    layout: OnnxLoopLayout, values: PlaceholderValues, slice_axes: list[int], context: LoopContext
) -> tuple[ov.Model, list]:
    """Convert the body, typed from the outer values; return it and its loops' reports.

    Loop-carried values start with the shapes they enter with. When the body returns a
    different shape, the differing dimensions (or the rank) become dynamic and the body is
    converted again, until the shapes settle: a fixed point, so static shapes are kept only
    where every iteration provably has them. A body condition input that declares no shape
    gets the loop's condition's.
    """
    types = _arriving_types(layout, values, slice_axes, context.template)
    for _ in range(MAX_SHAPE_RELAXATIONS):
        body, nested = context.convert(body_model(layout, context.template, types, context.model))
        check_body_outputs(layout, [each.elem_type for each in types.carried], body)
        results = body.get_results()
        relaxed = [
            body_types.relax(entering, results[out].input_value(0))
            for entering, out in zip(types.carried, layout.carried_outputs)
        ]
        if relaxed == types.carried:
            body_types.add_unread_parameters(
                body, zip(layout.carried_inputs, values.carried, types.carried)
            )
            return body, nested
        types = BodyTypes(relaxed, types.captures, types.sliced, types.condition_shape)
    raise ConversionError(f"{layout.path}: loop-carried shapes did not settle")


def _arriving_types(
    layout: OnnxLoopLayout,
    values: PlaceholderValues,
    slice_axes: list[int],
    template: schema.GraphProto,
) -> BodyTypes:
    """The types of the body's inputs as the values arrive (a carried value of unknown element
    type takes the one the body declares)."""
    declared = {value.name: value for value in template.input}
    condition = values.condition
    return BodyTypes(
        [
            body_types.tensor_type(value, declared.get(name))
            for value, name in zip(values.carried, layout.carried_inputs)
        ],
        [body_types.tensor_type(value, None) for value in values.captures],
        [
            body_types.tensor_type(value, None).without_axis(axis)
            for value, axis in zip(values.sliced, slice_axes)
        ],
        (1,) if condition is not None and body_types.shape_of(condition) == (1,) else (),
    )


def body_model(
    layout: OnnxLoopLayout, template: schema.GraphProto, types: BodyTypes, model: schema.ModelProto
) -> schema.ModelProto:
    """The body as a standalone model whose inputs are typed `types`.

    Inputs: [iteration number if read] carried... captures... sliced parts...; a condition
    input, if read, is a constant true (an iteration runs only when the condition is true).
    Both have the shape the body declares for them (`declared_flag_shape`). Outputs keep the
    body's order; each is produced by a node of the body (an output that passes an input, a
    capture or an initializer straight through, or repeats another output, gets an Identity).
    """
    body = schema.ModelProto(ir_version=model.ir_version, producer_name="ov-loops")
    graph = body.graph  # built in place: onnx.helper.make_model would copy it again
    graph.CopyFrom(template)
    graph.name = template.name or "body"
    del graph.input[:]
    del graph.output[:]
    del graph.value_info[:]
    if layout.reads_iteration_number():
        shape = layout.declared_flag_shape(layout.iteration_input)
        iteration = TensorType(schema.TensorProto.INT64, shape)
        graph.input.append(iteration.value_info(layout.iteration_input))
    if layout.reads_condition():
        shape = layout.declared_flag_shape(layout.condition_input, types.condition_shape)
        graph.node.insert(0, _always_true(layout.condition_input, shape))
    names = [*layout.carried_inputs, *layout.captures, *(s.body_input for s in layout.sliced)]
    for name, value_type in zip(names, [*types.carried, *types.captures, *types.sliced]):
        graph.input.append(value_type.value_info(name))
    _add_outputs(graph, template, defined_names(template) | set(names))
    body.opset_import.extend(model.opset_import)
    body.functions.extend(model.functions)
    return body


def _always_true(name: str, shape: tuple[int, ...]) -> schema.NodeProto:
    """A Constant node giving `name` a true of `shape` (as onnx.helper's make_node and
    make_tensor make it, byte for byte, in a quarter of their time)."""
    true = schema.TensorProto(
        name="", data_type=schema.TensorProto.BOOL, dims=shape, int32_data=[1]
    )
    value = schema.AttributeProto(name="value", type=schema.AttributeProto.TENSOR, t=true)
    return schema.NodeProto(output=[name], op_type="Constant", attribute=[value])


def _add_outputs(graph: schema.GraphProto, template: schema.GraphProto, taken: set[str]) -> None:
    """The template's outputs, in order, each produced by a node of `graph` (an Identity for one
    that no node of the template produces, or that repeats an earlier output)."""
    produced_by_node = {name for node in template.node for name in node.output if name}
    seen: set[str] = set()
    for index, value in enumerate(template.output):
        name = value.name
        if name not in produced_by_node or name in seen:
            fresh = fresh_name(f"{name}__ov_loops_out{index}", taken)
            graph.node.append(helpers.make_node("Identity", [name], [fresh]))
            name = fresh
        seen.add(name)
        graph.output.append(schema.ValueInfoProto(name=name))
