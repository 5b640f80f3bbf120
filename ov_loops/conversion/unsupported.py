"""Ops OpenVINO's ONNX frontend left without a conversion, with the ONNX node path of each."""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import UnsupportedItem
from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import node_label, subgraphs
from ov_loops.ovgraph import upstream

# Every op the ONNX frontend leaves without a real conversion derives from FrameworkNode: its
# NotSupportedONNXNode and ONNXFrameworkNode, and the internal util:: ops it makes for sequences
# it cannot resolve (SequenceMark, SequenceAt, SequenceLength, ...).
NOT_CONVERTED = "FrameworkNode"


def unsupported_ops(
    model: ov.Model, graph: schema.GraphProto, path: str, opset_of
) -> list[UnsupportedItem]:
    """An UnsupportedItem per op of `model` the frontend left unconverted, named by the node of
    `graph` (the graph as the user wrote it, at node path `path`) it came from; `opset_of(domain)`
    gives the model's opset of a domain. Placeholders are left out: they record their own error;
    so are the ops left unconverted downstream of one (their inputs never came: the loop's error
    says why, and blaming them would send the user the wrong way)."""
    found = unconverted(model)
    if not found:  # the usual case: no need to index the graph's nodes (once per body)
        return []
    nodes = dict(_nodes_by_output(graph, path))
    failed = set()
    items = []
    for op in found:
        node, node_path = nodes.get(op.get_friendly_name(), (None, path))
        if node is not None and node.domain == PLACEHOLDER_DOMAIN:
            failed.add(op.get_instance_id())
        elif node is None:
            items.append((op, UnsupportedItem(op.get_friendly_name(), "?", None, node_path)))
        else:
            opset = opset_of(node.domain)
            items.append((op, UnsupportedItem(node.op_type, node.domain, opset, node_path)))
    return [item for op, item in items if not _after_any(op, failed)]


def _after_any(op: ov.Node, failed: set[int]) -> bool:
    """Whether `op` is computed from one of the `failed` nodes (by instance id)."""
    if not failed:
        return False
    return any(node.get_instance_id() in failed for node in upstream(op.input_values()))


def _nodes_by_output(graph: schema.GraphProto, path: str):
    """(name, (node, node path)) for nodes of `graph` and its non-Loop subgraphs, by node name
    and by output name."""
    for index, node in enumerate(graph.node):
        node_path = f"{path}/{node_label(node, index)}"
        for name in (node.name, *node.output):  # the frontend names nodes either way
            if name:
                yield name, (node, node_path)
        if node.domain != PLACEHOLDER_DOMAIN:
            for attr_name, sub in subgraphs(node):
                yield from _nodes_by_output(sub, f"{node_path}/{attr_name}")


def unconverted(model: ov.Model) -> list[ov.Node]:
    """The ops of `model` and of the bodies the frontend made (If, TensorIterator) that it left
    without a conversion: their type derives from FrameworkNode.

    Loop bodies are ours: their ops were collected when the body was converted.
    """
    found = []
    for op in model.get_ordered_ops():
        info = op.get_type_info()
        if _is_framework_node(info):
            found.append(op)
        elif info.name == "If":
            found.extend(unconverted(op.get_then_body()))
            found.extend(unconverted(op.get_else_body()))
        elif info.name == "TensorIterator":
            found.extend(unconverted(op.get_function()))
    return found


# By op type (name, version): every graph converted is walked, each type's ancestry read once.
_FRAMEWORK_NODE_TYPES: dict[tuple[str, str], bool] = {}


def _is_framework_node(info) -> bool:
    """Whether the op type `info` (a DiscreteTypeInfo) derives from FrameworkNode."""
    key = (info.name, info.version_id)
    known = _FRAMEWORK_NODE_TYPES.get(key)
    if known is None:
        known = False
        while info is not None and not known:
            known = info.name == NOT_CONVERTED
            info = info.parent
        _FRAMEWORK_NODE_TYPES[key] = known
    return known
