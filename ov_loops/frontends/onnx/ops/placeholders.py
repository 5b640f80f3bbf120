"""Normalisation pass: replace each loop node (of an op in ops/registry.py) by a placeholder the
converter expands.

The placeholder lives in a custom domain of its own (a model's nodes in it are refused when the
model is loaded, see frontends.onnx.load.prepare), keeps the op type, carries an integer
`key` naming the original node, and takes as extra inputs the values the body captures from
enclosing scopes. Omitted (empty) inputs are dropped; the converter knows which were present.
Subgraphs of other nodes (If branches) are rewritten in place, recursively; Loop and Scan
bodies are rewritten later, when the converter expands their placeholder.
"""

from __future__ import annotations

from collections.abc import Callable

from ov_loops.frontends.onnx.ops.registry import is_loop_op
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import node_label

# Hyphens and the "internal" part keep it out of the way of real operator domains.
PLACEHOLDER_DOMAIN = "ov-loops.internal.loop-placeholder"

# register(node, path) -> (key, inputs of the placeholder)
Register = Callable[[schema.NodeProto, str], tuple[int, list[str]]]


def with_placeholder_opset(model: schema.ModelProto) -> schema.ModelProto:
    """`model` importing the placeholders' domain (changed in place), so the frontend takes them."""
    if opset_version(model, PLACEHOLDER_DOMAIN) is None:
        model.opset_import.append(helpers.make_opsetid(PLACEHOLDER_DOMAIN, 1))
    return model


def replace_loops(
    graph: schema.GraphProto, path: str, register: Register, in_branches: Register | None = None
) -> schema.GraphProto:
    """Return a copy of `graph` with every loop node (outside loop bodies) replaced; loops of
    `graph` itself are registered with `register`, those in its other nodes' subgraphs (If
    branches) with `in_branches` (default: `register`)."""
    in_branches = in_branches or register
    result = schema.GraphProto()
    result.CopyFrom(graph)
    del result.node[:]
    for index, node in enumerate(graph.node):
        node_path = f"{path}/{node_label(node, index)}"
        if is_loop_op(node):
            key, inputs = register(node, node_path)
            placeholder = helpers.make_node(
                node.op_type,
                inputs,
                list(node.output),
                name=node.name or node_label(node, index),
                domain=PLACEHOLDER_DOMAIN,
                key=key,
            )
            result.node.append(placeholder)
            continue
        rewritten = result.node.add()
        rewritten.CopyFrom(node)
        for attr in rewritten.attribute:
            if attr.type == schema.AttributeProto.GRAPH:
                attr.g.CopyFrom(replace_loops(attr.g, f"{node_path}/{attr.name}", in_branches))
            elif attr.type == schema.AttributeProto.GRAPHS:
                for sub_index, sub in enumerate(attr.graphs):
                    sub.CopyFrom(
                        replace_loops(sub, f"{node_path}/{attr.name}_{sub_index}", in_branches)
                    )
    return result
