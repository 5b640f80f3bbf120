"""Rewrite: refuse nodes in the domain of ov-loops' own loop placeholders."""

from __future__ import annotations

from ov_loops.errors import UnsupportedError, UnsupportedItem
from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import all_graphs, node_label


def refuse_placeholder_domain(model: schema.ModelProto) -> schema.ModelProto:
    """Refuse nodes in the domain of ov-loops' own loop placeholders.

    Why: the converter would take such a node for one of its placeholders (and skip it). The
    model is valid ONNX that ov-loops cannot convert, so this is an UnsupportedError (exit 1)
    like any op without a conversion.
    """
    items = [
        UnsupportedItem(
            node.op_type,
            node.domain,
            None,
            f"{path}/{node_label(node, index)}",
            "domain reserved for ov-loops' own placeholders",
        )
        for graph, path in all_graphs(model.graph, "main")
        for index, node in enumerate(graph.node)
        if node.domain == PLACEHOLDER_DOMAIN
    ]
    if items:
        raise UnsupportedError(items)
    return model
