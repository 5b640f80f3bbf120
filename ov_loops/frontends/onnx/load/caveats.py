"""ONNX nodes whose semantics OpenVINO's CPU plugin keeps only in some cases, found in the ONNX
graph; the driver's caller words the warning (docs/pitfalls.md)."""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import all_graphs, node_label

RECURRENT_OPS = frozenset({"LSTM", "GRU", "RNN"})
SEQUENCE_LENS = 4  # the input index of `sequence_lens` in ONNX LSTM, GRU and RNN


def nodes_with_sequence_lengths(model: schema.ModelProto) -> list[str]:
    """The paths of the LSTM, GRU and RNN nodes, in every graph, given `sequence_lens`."""
    return [
        f"{path}/{node_label(node, index)}"
        for graph, path in all_graphs(model.graph, "main")
        for index, node in enumerate(graph.node)
        if node.domain in ("", "ai.onnx")
        and node.op_type in RECURRENT_OPS
        and len(node.input) > SEQUENCE_LENS
        and node.input[SEQUENCE_LENS]
    ]
