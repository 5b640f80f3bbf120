"""Rewrites: constants with no elements, which OpenVINO's ONNX frontend and CPU plugin mistake.

`expand_to_an_empty_shape_is_identity` drops an Expand to the empty shape;
`keep_empty_constants_empty` computes every empty constant with ConstantOfShape.
"""

from __future__ import annotations

import numpy as np

from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import all_graphs, all_names, fresh_name

T = schema.TensorProto


# ConstantOfShape-9's value types; the others arrived in later opsets or never.
_CONSTANT_OF_SHAPE_TYPES = frozenset(
    {T.FLOAT16, T.FLOAT, T.DOUBLE, T.BOOL}
    | {T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64}
)


def expand_to_an_empty_shape_is_identity(model: schema.ModelProto) -> schema.ModelProto:
    """Replace `Expand(x, shape)` by `Identity(x)` where `shape` is a constant with no elements
    (in every graph; an Expand to the empty shape leaves x as it is).

    Why: OpenVINO's CPU plugin dies (SIGSEGV) compiling the Broadcast such an Expand becomes
    when x is a scalar that is not a constant, and its frontend turns `Expand(x, [])` into a
    broadcast to [1] (see keep_empty_constants_empty).
    """
    empty = _empty_constant_names(model.graph)
    for graph, _ in all_graphs(model.graph, "main"):
        for node in graph.node:
            if _is_standard(node, "Expand") and len(node.input) == 2 and node.input[1] in empty:
                node.op_type = "Identity"
                del node.input[1:]
    return model


def _empty_constant_names(graph: schema.GraphProto) -> set[str]:
    """Names of the constants with no elements in `graph` and its nested graphs."""
    names = set()
    for each, _ in all_graphs(graph, "main"):
        inputs = {value.name for value in each.input}
        names.update(
            tensor.name
            for tensor in each.initializer
            if tensor.name not in inputs and 0 in tensor.dims
        )
        names.update(node.output[0] for node in each.node if _empty_constant_type(node))
    return names


def keep_empty_constants_empty(model: schema.ModelProto) -> schema.ModelProto:
    """Compute every constant with no elements (a Constant node or an initializer that is not a
    graph input) with ConstantOfShape, in every graph.

    Why: OpenVINO's ONNX frontend reads an empty constant as a placeholder for a missing value:
    `Constant(value_ints=[])` (torch.export's shape of a scalar) makes `Expand(x, shape)` give
    shape [1] instead of x's; an empty `value` tensor becomes a scalar. ConstantOfShape of the
    constant's shape makes the same empty tensor as an ordinary value.
    """
    if (opset_version(model) or 0) < 9 or not _empty_constant_names(model.graph):
        return model  # nothing to rewrite: no need to collect every name (a walk of them all)
    taken = all_names(model.graph)
    # Innermost graphs first, so no graph changes while one nested in it is being rewritten.
    for graph, _ in reversed(list(all_graphs(model.graph, "main"))):
        for index in reversed(range(len(graph.node))):
            node = graph.node[index]
            found = _empty_constant_type(node)
            if found is not None:
                shape, made = _constant_of_shape(node.output[0], node.name, *found, taken)
                node.CopyFrom(made)
                graph.node.insert(index, shape)
        _move_empty_initializers(graph, taken)
    return model


def _empty_constant_type(node: schema.NodeProto) -> tuple[int, list[int]] | None:
    """(element type, dims) of a Constant node whose value has no elements and a type
    ConstantOfShape makes; None for any other node."""
    if not _is_standard(node, "Constant"):
        return None
    if len(node.attribute) != 1 or len(node.output) != 1:
        return None
    attr = node.attribute[0]
    if attr.name == "value_ints":
        found = (T.INT64, [len(attr.ints)])
    elif attr.name == "value_floats":
        found = (T.FLOAT, [len(attr.floats)])
    elif attr.name == "value":
        found = (attr.t.data_type, list(attr.t.dims))
    else:
        return None
    return found if _is_empty_constant(*found) else None


def _is_standard(node: schema.NodeProto, op_type: str) -> bool:
    return node.op_type == op_type and node.domain in ("", "ai.onnx")


def _is_empty_constant(elem_type: int, dims: list[int]) -> bool:
    return 0 in dims and elem_type in _CONSTANT_OF_SHAPE_TYPES


def _move_empty_initializers(graph: schema.GraphProto, taken: set[str]) -> None:
    inputs = {value.name for value in graph.input}
    for index in reversed(range(len(graph.initializer))):
        tensor = graph.initializer[index]
        if tensor.name in inputs or not _is_empty_constant(tensor.data_type, list(tensor.dims)):
            continue
        nodes = _constant_of_shape(tensor.name, "", tensor.data_type, list(tensor.dims), taken)
        del graph.initializer[index]
        for position, made in enumerate(nodes):
            graph.node.insert(position, made)


def _constant_of_shape(
    output: str, name: str, elem_type: int, dims: list[int], taken: set[str]
) -> tuple[schema.NodeProto, schema.NodeProto]:
    """The two nodes computing an all-zero tensor of `dims` into `output`: the shape Constant
    and the ConstantOfShape named `name`."""
    shape_name = fresh_name(f"{output}_shape", taken)
    shape = helpers.make_node(
        "Constant",
        [],
        [shape_name],
        value=helpers.from_array(np.array(dims, np.int64)),
    )
    zero = helpers.make_tensor("value", elem_type, [1], [0])
    return shape, helpers.make_node(
        "ConstantOfShape", [shape_name], [output], name=name, value=zero
    )
