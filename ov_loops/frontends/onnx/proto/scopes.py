"""Outer-scope analysis: which names a graph reads from its enclosing scopes.

ONNX subgraphs (Loop and Scan bodies, If branches) may read any value visible in an
enclosing graph by name. The translator turns these captures into explicit inputs.
"""

from __future__ import annotations

from collections.abc import Iterator

from ov_loops.frontends.onnx.proto import schema


def subgraphs(node: schema.NodeProto) -> Iterator[tuple[str, schema.GraphProto]]:
    """Yield (attribute name, graph) for every subgraph attribute of `node`."""
    for attr in node.attribute:
        if attr.type == schema.AttributeProto.GRAPH:
            yield attr.name, attr.g
        elif attr.type == schema.AttributeProto.GRAPHS:
            for index, graph in enumerate(attr.graphs):
                yield f"{attr.name}_{index}", graph


def defined_names(graph: schema.GraphProto) -> set[str]:
    """Names a graph defines itself: inputs, initializers and node outputs."""
    names = {value.name for value in graph.input}
    names.update(init.name for init in graph.initializer)
    names.update(init.values.name for init in graph.sparse_initializer)
    for node in graph.node:
        names.update(name for name in node.output if name)
    return names


def read_names(graph: schema.GraphProto) -> list[str]:
    """Names `graph` reads: node inputs, its nested graphs' captures and its outputs, in order."""
    read: dict[str, None] = {}
    for node in graph.node:
        read.update((name, None) for name in node.input if name)
        for _, body in subgraphs(node):
            read.update((name, None) for name in captured_names(body))
    read.update((value.name, None) for value in graph.output)
    return list(read)


def captured_names(graph: schema.GraphProto) -> list[str]:
    """Names `graph` (or any graph nested in it) reads but does not define, in first-use order."""
    defined = defined_names(graph)
    return [name for name in read_names(graph) if name not in defined]


def node_label(node: schema.NodeProto, index: int) -> str:
    """How a node is named in paths: its name, or `OpType_index` when it has none."""
    return node.name or f"{node.op_type}_{index}"


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_N` for the first N that is not taken; the name is then taken."""
    name, suffix = base, 0
    while name in taken:
        suffix += 1
        name = f"{base}_{suffix}"
    taken.add(name)
    return name


def all_graphs(graph: schema.GraphProto, path: str) -> Iterator[tuple[schema.GraphProto, str]]:
    """`graph` and every graph nested in it, each with its path (`main/Loop_0/body`)."""
    yield graph, path
    for index, node in enumerate(graph.node):
        for attr_name, body in subgraphs(node):
            yield from all_graphs(body, f"{path}/{node_label(node, index)}/{attr_name}")


def all_names(graph: schema.GraphProto) -> set[str]:
    """Every value name used anywhere in `graph` and its nested graphs."""
    names: set[str] = set()
    for each, _ in all_graphs(graph, ""):
        names |= defined_names(each) | set(read_names(each))
        names.update(value.name for value in each.value_info)
    return names
