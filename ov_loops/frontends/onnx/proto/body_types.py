"""Types of values crossing between the ONNX graph and converted OpenVINO graphs: the type a
body input gets from its outer value, loop-carried types relaxed to a fixed point, and the
Parameters of inputs the frontend dropped."""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ops

from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.types import TensorType, onnx_elem_type, ov_element_type
from ov_loops.ovgraph import lengths


def tensor_type(value: ov.Output, declared: schema.ValueInfoProto | None) -> TensorType:
    """The type a body input gets from the outer value (falling back to what the body declares)."""
    element = value.get_element_type()
    elem_type = onnx_elem_type(element)
    if elem_type == 0 and declared is not None and declared.type.HasField("tensor_type"):
        elem_type = declared.type.tensor_type.elem_type
    return TensorType(elem_type, shape_of(value))


def shape_of(value: ov.Output) -> tuple[int | None, ...] | None:
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    return tuple(lengths(shape))


def relax(entering: TensorType, leaving: ov.Output) -> TensorType:
    """The loop-carried type that covers both the entering value and the body's output (whose
    element types port_types.check_body_outputs has found alike)."""
    produced = onnx_elem_type(leaving.get_element_type())
    left, right = entering.shape, shape_of(leaving)
    if left is None or right is None or len(left) != len(right):
        shape = None
    else:
        shape = tuple(a if a == b else None for a, b in zip(left, right))
    return TensorType(entering.elem_type or produced, shape)


def add_unread_parameters(body: ov.Model, declared) -> None:
    """Add Parameters for loop-carried body inputs the body never reads (the frontend drops
    them); their merged inputs still need them. `declared` holds (name, outer value, type)."""
    present = {
        name for parameter in body.get_parameters() for name in parameter.output(0).get_names()
    }
    missing = []
    for name, value, value_type in declared:
        if name in present:
            continue
        shape = (
            ov.PartialShape.dynamic()
            if value_type.shape is None
            else ov.PartialShape([-1 if dim is None else dim for dim in value_type.shape])
        )
        parameter = ops.parameter(shape, value.get_element_type())
        parameter.output(0).set_names({name})
        missing.append(parameter)
    if missing:
        body.add_parameters(missing)


def with_declared_inputs(
    model: ov.Model, graph: schema.GraphProto, shapes: dict[str, ov.PartialShape] | None = None
) -> ov.Model:
    """The model with a Parameter for every input the ONNX graph declares, in its order: the
    frontend drops inputs nothing reads, and users feed them by name all the same. Such a
    Parameter has the shape `shapes` gives it, else the declared one."""
    initializers = {init.name for init in graph.initializer}
    existing = {
        name: parameter
        for parameter in model.get_parameters()
        for name in parameter.output(0).get_names()
    }
    ordered = [
        existing.get(value.name) or declared_parameter(value, (shapes or {}).get(value.name))
        for value in graph.input
        if value.name not in initializers
    ]
    ordered += [p for p in model.get_parameters() if all(p != q for q in ordered)]
    if len(ordered) == len(model.get_parameters()) and all(
        a == b for a, b in zip(ordered, model.get_parameters())
    ):
        return model
    return ov.Model(model.get_results(), ordered, model.get_friendly_name())


def declared_parameter(
    value: schema.ValueInfoProto, shape: ov.PartialShape | None = None
) -> ov.Node:
    """A Parameter of the type and shape (unless `shape` is given) a graph input declares (for
    an input nothing reads)."""
    tensor = value.type.tensor_type
    element = ov_element_type(tensor.elem_type)
    if element is None:
        name = helpers.tensor_dtype_to_string(tensor.elem_type)
        raise ConversionError(f"main: input '{value.name}': OpenVINO has no element type {name}")
    if shape is None:
        shape = _declared_shape(tensor)
    parameter = ops.parameter(shape, element, name=value.name)
    parameter.output(0).set_names({value.name})
    return parameter


def _declared_shape(tensor: schema.TypeProto.Tensor) -> ov.PartialShape:
    shape = ov.PartialShape.dynamic()
    if tensor.HasField("shape"):
        shape = ov.PartialShape(
            [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
        )
    return shape


def rank(value: ov.Output) -> int | None:
    shape = value.get_partial_shape()
    return None if shape.rank.is_dynamic else shape.rank.get_length()
