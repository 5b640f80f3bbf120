"""Topological order of a graph's nodes, as onnxruntime and OpenVINO establish it themselves.

ONNX requires nodes in topological order and its checker refuses graphs that are not; the
runtimes sort them. The sort is stable (nodes already in order keep it) and sees the values a
subgraph reads from the graph around it as inputs of the node owning the subgraph.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import (
    Captured,
    CapturedNames,
    captured_names,
    node_label,
    subgraphs,
)


def sort_nodes(nodes, path: str, captured: Captured = captured_names) -> None:
    """Sort `nodes` (a graph's or a function's) and those of every graph nested in them, in
    place. Raises InputError naming a node on a cycle when there is no topological order.
    `captured` gives a nested graph's captures (a `CapturedNames` shared by the whole sort
    reads each graph once, not once per enclosing graph)."""
    order = topological_order(nodes, path, captured)
    if order != sorted(order):
        _reorder(nodes, order)  # copies: their graphs are new to `captured`
    for index, node in enumerate(nodes):
        for attr_name, body in subgraphs(node):
            sort_nodes(body.node, f"{path}/{node_label(node, index)}/{attr_name}", captured)


def topological_order(
    nodes: Sequence[schema.NodeProto], path: str, captured: Captured = captured_names
) -> list[int]:
    """Indices of `nodes` in a topological order that keeps the given order where it can:
    each step takes the earliest node whose inputs are all available (a subgraph's reads as
    `captured` gives them)."""
    producer: dict[str, int] = {}
    for index, node in enumerate(nodes):
        for name in node.output:
            if name:
                producer.setdefault(name, index)
    # A node reading its own output waits for itself: a cycle of one.
    waits_for = [_producers(node, producer, captured) for node in nodes]
    feeds: list[list[int]] = [[] for _ in nodes]
    for index, needed in enumerate(waits_for):
        for before in needed:
            feeds[before].append(index)
    missing = [len(needed) for needed in waits_for]
    ready = [index for index, count in enumerate(missing) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for after in feeds[index]:
            missing[after] -= 1
            if missing[after] == 0:
                heapq.heappush(ready, after)
    if len(order) < len(nodes):
        on_cycle = _node_on_cycle(waits_for, set(range(len(nodes))) - set(order))
        label = node_label(nodes[on_cycle], on_cycle)
        raise InputError(f"{path}/{label}: the graph has a cycle through this node")
    return order


def _producers(node: schema.NodeProto, producer: dict[str, int], captured: Captured) -> set[int]:
    """The nodes that produce what `node` reads, its subgraphs' captures included."""
    names = [name for name in node.input if name]
    for _, body in subgraphs(node):
        names += captured(body)
    return {producer[name] for name in names if name in producer}


def _node_on_cycle(waits_for: list[set[int]], left: set[int]) -> int:
    """A node on a cycle among the nodes never ready: follow what they wait for until a node
    comes round again."""
    seen: set[int] = set()
    current = min(left)
    while current not in seen:
        seen.add(current)
        current = min(waits_for[current] & left)
    return current


def _reorder(nodes, order: list[int]) -> None:
    copies = []
    for index in order:
        copy = schema.NodeProto()
        copy.CopyFrom(nodes[index])
        copies.append(copy)
    del nodes[:]
    nodes.extend(copies)


def sort_topologically(model: schema.ModelProto) -> schema.ModelProto:
    """Put the nodes of every graph and function in topological order (stable).

    Why: onnxruntime and OpenVINO accept unsorted graphs (they sort them), the ONNX checker
    does not. A graph with a real cycle is an InputError naming a node on it.
    """
    captured = CapturedNames()
    sort_nodes(model.graph.node, "main", captured)
    for function in model.functions:
        sort_nodes(function.node, f"function {function.name}", captured)
    return model
