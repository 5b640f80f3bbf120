"""An ONNX loop's layout and converted body -> a LoopIR (Loop-5 ports, outer values, results).

The body keeps the frontend's Parameters and Results; this adds what Loop-5 needs:

    sliced body input        -> Parameter with a length-1 axis at the slicing axis, squeezed
    stacked body output      -> Result of the value with a length-1 axis at its stacking axis
    no condition output      -> a Result of constant true (the execution condition)
    condition of several elements -> its first element, with a warning (as onnxruntime)
    port_map inputs          -> merged (carried) | invariant (captures read) | sliced (read)
    port_map outputs         -> last value (carried) | concatenated (stacked, axis)
    iteration number, if read -> current_iteration; condition output -> execution_condition
"""

from __future__ import annotations

import logging

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    MergedInput,
    SlicedInput,
)
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout, PlaceholderValues
from ov_loops.frontends.onnx.proto import schema
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.steps import Reverse
from ov_loops.loopir.trip_count import InitialCondition, TripCount
from ov_loops.opfactory import constant, op

log = logging.getLogger(__name__)


def onnx_loop_ir(
    layout: OnnxLoopLayout,
    body: ov.Model,
    values: PlaceholderValues,
    counts: tuple[TripCount, InitialCondition],
    slice_axes: list[int],
    stacked_axes: list[int],
) -> LoopIR:
    """The LoopIR of the loop `layout` describes, from its converted `body`, the values
    arriving at its placeholder, its trip count and initial condition (`counts`) and the
    normalised axes of its sliced inputs and stacked outputs."""
    part_axes = {entry.body_input: axis for entry, axis in zip(layout.sliced, slice_axes)}
    parameters = _with_part_axis(body.get_parameters(), part_axes)
    index = {name: i for i, p in enumerate(parameters) for name in p.output(0).get_names()}
    results = list(body.get_results())
    empty_shapes = []
    for entry, axis in zip(layout.stacked_outputs, stacked_axes):
        value = results[entry.index].input_value(0)
        empty_shapes.append(_declared_empty_shape(layout.body.output[entry.index], value, axis))
        results[entry.index] = op("Result", op("Unsqueeze", value, _i64(axis)))
    condition = layout.condition_output
    if condition is None:
        results.append(op("Result", constant(True)))
        condition = len(results) - 1
    else:
        results[condition] = _one_flag(results[condition], f"{layout.path}: body output 0")

    inputs, outer = _inputs(layout, index, values, slice_axes)
    outputs = [LastValueOutput(UNNUMBERED, out) for out in layout.carried_outputs]
    outputs += [
        ConcatenatedOutput(UNNUMBERED, entry.index, axis)
        for entry, axis in zip(layout.stacked_outputs, stacked_axes)
    ]
    carried = len(layout.carried_outputs)
    trip, start = counts
    current = index[layout.iteration_input] if layout.reads_iteration_number() else None
    spec = number_ports(inputs, outputs, trip.source, trip.constant, current, condition)
    loop_results = [LoopResult(k, initial=value) for k, value in enumerate(values.carried)]
    loop_results += [
        LoopResult(carried + k, empty_shape=shape, after=(Reverse(axis),) if entry.reverse else ())
        for k, (entry, axis, shape) in enumerate(
            zip(layout.stacked_outputs, stacked_axes, empty_shapes)
        )
    ]
    return LoopIR(
        path=layout.path,
        in_main_graph=layout.in_main_graph,
        in_loop_body=layout.in_loop_body,
        op=layout.op,
        spec=spec,
        body=ov.Model(results, parameters, f"{layout.path}/body"),
        outer=dict(enumerate(outer, start=2)),
        trip=trip,
        start=start,
        carried=layout.carried_values(),
        results=tuple(loop_results),
    )


def _inputs(layout: OnnxLoopLayout, index: dict[str, int], values: PlaceholderValues, slice_axes):
    """The port_map inputs in port order, and the outer value of each: merged (carried),
    invariant (captures the body reads), sliced (parts the body reads)."""
    inputs, outer = [], []
    for name, out, value in zip(layout.carried_inputs, layout.carried_outputs, values.carried):
        inputs.append(MergedInput(UNNUMBERED, index[name], out))
        outer.append(value)
    for name, value in zip(layout.captures, values.captures):
        if name in index:  # the frontend drops captures the body does not read
            inputs.append(InvariantInput(UNNUMBERED, index[name]))
            outer.append(value)
    for entry, axis, value in zip(layout.sliced, slice_axes, values.sliced):
        if entry.body_input in index:  # unread: the trip count is outside
            direction = dict(start=-1, stride=-1, end=0) if entry.reverse else {}
            inputs.append(SlicedInput(UNNUMBERED, index[entry.body_input], axis, **direction))
            outer.append(value)
    return inputs, outer


def _declared_empty_shape(
    declared: schema.ValueInfoProto, value: ov.Output, axis: int
) -> ov.Output | None:
    """The shape of a stacked output after zero iterations when the body's declaration knows a
    dim the converted body does not (a static batch in a body whose loop is fed a symbolic one),
    as onnxruntime's Loop makes it: per-iteration dims, numbers where declared, else 0::

        dims[d] = value's static dim d, else declared dim_value d, else 0;  insert 0 at axis

    None when the declaration adds nothing (ovgraph.empty_dims says the same then) or its rank
    differs from the value's."""
    shape = value.get_partial_shape()
    tensor = declared.type.tensor_type
    if shape.rank.is_dynamic or not tensor.HasField("shape"):
        return None
    if len(tensor.shape.dim) != shape.rank.get_length():
        return None
    dims = [
        have.get_length() if have.is_static else max(said.dim_value, 0)
        for have, said in zip(ovgraph.dimensions(shape), tensor.shape.dim)
    ]
    if not any(have.is_dynamic and dim for have, dim in zip(ovgraph.dimensions(shape), dims)):
        return None
    dims.insert(axis, 0)
    return _i64(*dims)


def _one_flag(result: ov.Node, what: str) -> ov.Node:
    """The condition Result as Loop-5 takes it (a scalar or [1]). A condition of several
    elements (a Less of two vectors where the body declares a scalar) is read as onnxruntime's
    Loop kernel reads it, by its first element (`*cond.Data<bool>()`), with a warning when it
    surely has another number of elements than one; one of no element is false (onnxruntime
    reads past its end)::

        shape [] or [1]   -> as is
        otherwise         -> concat(flatten(cond), [false])[0]
    """
    value = result.input_value(0)
    shape = value.get_partial_shape()
    if shape.is_static and shape.to_shape() in (ov.Shape([]), ov.Shape([1])):
        return result
    if shape.rank.is_static and any(
        dim.is_static and dim.get_length() != 1 for dim in ovgraph.dimensions(shape)
    ):
        log.warning(
            "%s (the condition) has shape %s, not one element: its first element decides "
            "whether the loop goes on, as onnxruntime reads it",
            what,
            shape,
        )
    flat = ops.reshape(value, _i64(-1), False)
    padded = ops.concat([flat, ops.constant(np.array([False]))], 0)
    first = ops.gather(padded, _i64(0), _i64(0))
    return ops.result(first)


def _i64(*values: int) -> ov.Output:
    return constant(values, np.int64)


def _with_part_axis(parameters, part_axes: dict[str, int]) -> list:
    """The Parameters, each named in `part_axes` (a sliced part) replaced by one with a length-1
    axis there, squeezed away for its readers."""
    kept = []
    for parameter in parameters:
        names = parameter.output(0).get_names() & part_axes.keys()
        if not names:
            kept.append(parameter)
            continue
        axis = part_axes[next(iter(names))]
        shape = parameter.get_partial_shape()
        if shape.rank.is_static:
            dims = ovgraph.dimensions(shape)
            shape = ov.PartialShape([*dims[:axis], 1, *dims[axis:]])
        part = ops.parameter(shape, parameter.get_element_type())
        part.output(0).set_names(parameter.output(0).get_names())
        squeezed = ops.squeeze(part, _i64(axis))
        parameter.output(0).replace(squeezed.output(0))
        kept.append(part)
    return kept
