"""Rewrite: ai.onnx.ml ArrayFeatureExtractor as a standard ONNX Gather.

skl2onnx's nearest-neighbour models (KNeighborsClassifier and KNeighborsRegressor for every
metric, RadiusNeighborsRegressor) read the training labels of the neighbours their Scan found
with ArrayFeatureExtractor, which OpenVINO's ONNX frontend cannot convert.
"""

from __future__ import annotations

import numpy as np

from ov_loops.errors import UnsupportedError, UnsupportedItem
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import all_graphs, all_names, fresh_name, node_label
from ov_loops.frontends.onnx.proto.types import known_types

T = schema.TensorProto
ML_DOMAIN = "ai.onnx.ml"
_RESHAPE_WITH_SHAPE_INPUT = 5  # Reshape-5: the shape is an input


def array_feature_extractor_as_gather(model: schema.ModelProto) -> schema.ModelProto:
    """Replace every ArrayFeatureExtractor (ai.onnx.ml, in every graph) by a Gather on X's last
    axis of Y flattened.

    Semantics (ai.onnx.ml ArrayFeatureExtractor-1: "the indices are applied to the last axes";
    the output shape is onnxruntime's, onnx.reference's too)::

        n = size(Y)                                   # Y: int64 of any shape
        Z = X[..., flatten(Y)]                        # Z[..., j] = X[..., Y.flat[j]]
        Z.shape = [1, n] if rank(X) == 1 else X.shape[:-1] + [n]

    As standard ONNX::

        rank(X) == 1:  Z = Gather(X, Reshape(Y, [1, -1]), axis=0)
        rank(X) >= 2:  Z = Gather(X, Reshape(Y, [-1]), axis=rank(X) - 1)

    Indices outside [0, d) (d the last dim of X) and an empty Y are errors in onnxruntime at
    run time; the IR cannot fail at run time: a negative index counts from the end (Gather's
    rule, and onnx.reference's), other out-of-range ones read what OpenVINO's Gather reads
    (zeros on CPU), and an empty Y gives an empty Z.

    Refused (UnsupportedError, exit 1, every such node at once): string tensors (OpenVINO has
    no string Gather: class labels that are strings), a scalar X (onnxruntime refuses it too),
    an X of unknown rank, a model whose ai.onnx opset is below 5.
    """
    found = [
        (graph, path, index)
        for graph, path in all_graphs(model.graph, "main")
        for index, node in enumerate(graph.node)
        if node.op_type == "ArrayFeatureExtractor" and node.domain == ML_DOMAIN
    ]
    if not found:
        return model
    types = _value_types(model)
    refused = [
        item
        for graph, path, index in found
        if (
            item := _refusal(
                graph.node[index], f"{path}/{node_label(graph.node[index], index)}", types, model
            )
        )
    ]
    if refused:
        raise UnsupportedError(refused)
    taken = all_names(model.graph)
    for graph, _, index in reversed(found):  # later nodes first: earlier indices stay valid
        node = graph.node[index]
        shape, flat, gather = _as_gather(node, types[node.input[0]][1], taken)
        graph.node[index].CopyFrom(gather)
        graph.node.insert(index, flat)
        graph.node.insert(index, shape)
    return model


def _refusal(
    node: schema.NodeProto,
    path: str,
    types: dict[str, tuple[int, int | None]],
    model: schema.ModelProto,
) -> UnsupportedItem | None:
    """Why `node` cannot become a Gather, as an UnsupportedItem; None when it can."""
    elem_type, rank = types.get(node.input[0], (0, None))
    if elem_type == T.STRING or types.get(node.output[0], (0, None))[0] == T.STRING:
        reason = "string tensors: OpenVINO has no string Gather (export the labels as integers)"
    elif rank is None:
        reason = f"the rank of its input X '{node.input[0]}' is unknown"
    elif rank == 0:
        reason = f"its input X '{node.input[0]}' is a scalar: the op reads X's last axis"
    elif (opset_version(model) or 0) < _RESHAPE_WITH_SHAPE_INPUT:
        reason = "the model's ai.onnx opset is below 5 (the rewrite needs Reshape-5)"
    else:
        return None
    return UnsupportedItem(node.op_type, node.domain, 1, path, reason)


def _as_gather(
    node: schema.NodeProto, rank: int, taken: set[str]
) -> tuple[schema.NodeProto, schema.NodeProto, schema.NodeProto]:
    """The shape Constant, the Reshape of the indices and the Gather replacing `node`."""
    data, indices = node.input
    target = [1, -1] if rank == 1 else [-1]
    shape_name = fresh_name(f"{node.output[0]}_indices_shape", taken)
    flat_name = fresh_name(f"{node.output[0]}_indices", taken)
    shape = helpers.make_node(
        "Constant", [], [shape_name], value=helpers.from_array(np.array(target))
    )
    flat = helpers.make_node("Reshape", [indices, shape_name], [flat_name])
    gather = helpers.make_node(
        "Gather", [data, flat_name], [node.output[0]], name=node.name, axis=rank - 1
    )
    return shape, flat, gather


def _value_types(model: schema.ModelProto) -> dict[str, tuple[int, int | None]]:
    """(element type, rank or None) of every value shape inference or an initializer knows."""
    found: dict[str, tuple[int, int | None]] = {}
    for name, value_type in known_types(model).items():
        if value_type.HasField("tensor_type"):
            tensor = value_type.tensor_type
            rank = len(tensor.shape.dim) if tensor.HasField("shape") else None
            found[name] = (tensor.elem_type, rank)
    for graph, _ in all_graphs(model.graph, "main"):
        found.update(
            (tensor.name, (tensor.data_type, len(tensor.dims))) for tensor in graph.initializer
        )
    return found
