"""Outer-scope analysis: which names a graph reads from its enclosing scopes.

ONNX subgraphs (Loop and Scan bodies, If branches) may read any value visible in an
enclosing graph by name. The translator turns these captures into explicit inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ov_loops.frontends.onnx.proto import schema

# A graph's captured names (captured_names, or a CapturedNames memo of them)
Captured = Callable[[schema.GraphProto], list[str]]


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


def read_names(graph: schema.GraphProto, captured: Captured | None = None) -> list[str]:
    """Names `graph` reads: node inputs, its nested graphs' captures (`captured`: by default
    `captured_names`) and its outputs, in order."""
    captured = captured or captured_names
    read: dict[str, None] = {}
    for node in graph.node:
        read.update((name, None) for name in node.input if name)
        for _, body in subgraphs(node):
            read.update((name, None) for name in captured(body))
    read.update((value.name, None) for value in graph.output)
    return list(read)


def captured_names(graph: schema.GraphProto, captured: Captured | None = None) -> list[str]:
    """Names `graph` (or any graph nested in it) reads but does not define, in first-use order
    (those of its nested graphs as `captured` says: by default walked again)."""
    return not_defined(graph, read_names(graph, captured))


def not_defined(graph: schema.GraphProto, names: list[str]) -> list[str]:
    """The `names` that `graph` does not define (`names` its reads: its captures), in order."""
    defined = defined_names(graph)
    return [name for name in names if name not in defined]


class CapturedNames:
    """`captured_names` of each graph asked, computed once, those of the graphs nested in it
    with it: for the graphs of one model that do not change while it is in use (one conversion's,
    one sort's). Asked for a graph and then for each graph nested in it, as loops at every depth
    are read, `captured_names` walks each graph once per enclosing graph (quadratic in depth);
    this walks it once. Graphs are told apart by identity (protobuf hands out one object per
    message while it lives), each kept alive with its names so that no other takes its id."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[schema.GraphProto, list[str]]] = {}

    def __call__(self, graph: schema.GraphProto) -> list[str]:
        known = self._known.get(id(graph))
        if known is None:
            known = (graph, captured_names(graph, self))
            self._known[id(graph)] = known
        return list(known[1])


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
    """`graph` and every graph nested in it, each with its path (`main/Loop_0/body`), each graph
    before those nested in it, in node order; a graph's nodes are read as the walk goes. One
    generator per graph below a stack: nested generators (`yield from`) passed each graph up
    through one frame per enclosing graph (quadratic in depth)."""
    yield graph, path
    walks = [_subgraphs_of_nodes(graph, path)]
    while walks:
        found = next(walks[-1], None)
        if found is None:
            walks.pop()
            continue
        yield found
        walks.append(_subgraphs_of_nodes(*found))


def _subgraphs_of_nodes(
    graph: schema.GraphProto, path: str
) -> Iterator[tuple[schema.GraphProto, str]]:
    """The subgraphs of `graph`'s nodes (not those nested deeper), each with its path."""
    for index, node in enumerate(graph.node):
        for attr_name, body in subgraphs(node):
            yield body, f"{path}/{node_label(node, index)}/{attr_name}"


def all_names(graph: schema.GraphProto) -> set[str]:
    """Every value name used anywhere in `graph` and its nested graphs."""
    names: set[str] = set()
    for each, _ in all_graphs(graph, ""):
        names |= defined_names(each) | set(read_names(each))
        names.update(value.name for value in each.value_info)
    return names
