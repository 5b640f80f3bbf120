"""Ops OpenVINO's ONNX frontend left without a conversion, with the ONNX node path of each."""

from __future__ import annotations

import onnx
import openvino as ov

from ov_loops.errors import UnsupportedItem
from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from ov_loops.frontends.onnx.proto.scopes import node_label, subgraphs
from ov_loops.ovgraph import upstream

# Every op the ONNX frontend leaves without a real conversion derives from FrameworkNode: its
# NotSupportedONNXNode and ONNXFrameworkNode, and the internal util:: ops it makes for sequences
# it cannot resolve (SequenceMark, SequenceAt, SequenceLength, ...).
NOT_CONVERTED = "FrameworkNode"


def unsupported_ops(
    model: ov.Model, graph: onnx.GraphProto, path: str, opset_of
) -> list[UnsupportedItem]:
    """An UnsupportedItem per op of `model` the frontend left unconverted, named by the node of
    `graph` (the graph as the user wrote it, at node path `path`) it came from; `opset_of(domain)`
    gives the model's opset of a domain. Placeholders are left out: they record their own error;
    so are the ops left unconverted downstream of one (their inputs never came: the loop's error
    says why, and blaming them would send the user the wrong way)."""
    unconverted = [op for op in _walk(model) if _without_conversion(op)]
    if not unconverted:  # the usual case: no need to index the graph's nodes (once per body)
        return []
    nodes = dict(_nodes_by_output(graph, path))
    failed = set()
    items = []
    for op in unconverted:
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


def _nodes_by_output(graph: onnx.GraphProto, path: str):
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


def _without_conversion(op: ov.Node) -> bool:
    """Whether the frontend left `op` unconverted: its type derives from FrameworkNode."""
    info = op.get_type_info()
    while info is not None:
        if info.name == NOT_CONVERTED:
            return True
        info = info.parent
    return False


def _walk(model: ov.Model):
    """Every op of `model` and of the bodies the frontend made (If, TensorIterator).

    Loop bodies are ours: their ops were collected when the body was converted.
    """
    for op in model.get_ordered_ops():
        yield op
        kind = op.get_type_name()
        if kind == "If":
            yield from _walk(op.get_then_body())
            yield from _walk(op.get_else_body())
        elif kind == "TensorIterator":
            yield from _walk(op.get_function())
