"""proto/scopes.py: the names a graph reads from its enclosing scopes, and CapturedNames, which
walks each graph of a nest once however many enclosing graphs ask."""

from __future__ import annotations

import onnx
from onnx import helper

from ov_loops.frontends.onnx.proto import scopes

T = onnx.TensorProto
DEPTH = 5


def _value(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, T.FLOAT, [1])


def _loop_body(depth: int) -> onnx.GraphProto:
    """A Loop body reading `outer{depth}` from the main graph and its own input, and holding
    the next depth's Loop (whose body reads `outer{depth + 1}` ...)."""
    nodes = [helper.make_node("Add", [f"x{depth}", f"outer{depth}"], [f"y{depth}"])]
    if depth + 1 < DEPTH:
        loop = helper.make_node(
            "Loop", ["", "", f"y{depth}"], [f"z{depth}"], body=_loop_body(depth + 1)
        )
        nodes.append(loop)
        last = f"z{depth}"
    else:
        last = f"y{depth}"
    inputs = [_value(f"i{depth}"), _value(f"c{depth}"), _value(f"x{depth}")]
    return helper.make_graph(nodes, f"body{depth}", inputs, [_value(f"c{depth}"), _value(last)])


def _nest() -> onnx.GraphProto:
    loop = helper.make_node("Loop", ["", "", "x"], ["y"], body=_loop_body(0))
    return helper.make_graph([loop], "main", [_value("x")], [_value("y")])


def _bodies(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    """The graphs nested in `graph`, outermost first (as loops are read)."""
    return [each for each, _ in scopes.all_graphs(graph, "")][1:]


def test_captured_names_of_a_nest_are_every_depth_s_outer_reads():
    outermost = _bodies(_nest())[0]
    assert scopes.captured_names(outermost) == [f"outer{depth}" for depth in range(DEPTH)]


def test_captured_names_memo_agrees_at_every_depth():
    bodies = _bodies(_nest())
    captured = scopes.CapturedNames()
    assert [captured(body) for body in bodies] == [scopes.captured_names(b) for b in bodies]


def test_captured_names_memo_walks_each_graph_once(monkeypatch):
    bodies = _bodies(_nest())
    walked = []
    defined = scopes.defined_names
    monkeypatch.setattr(scopes, "defined_names", lambda g: walked.append(g.name) or defined(g))
    captured = scopes.CapturedNames()
    for body in bodies:  # outermost first: each call but the first finds its graph known
        captured(body)
    assert sorted(walked) == sorted(body.name for body in bodies)
    walked.clear()
    for body in bodies:
        scopes.captured_names(body)
    assert len(walked) > len(bodies)  # without the memo, once per enclosing graph


def test_captured_names_memo_hands_out_copies():
    body = _bodies(_nest())[0]
    captured = scopes.CapturedNames()
    captured(body).append("changed")
    assert "changed" not in captured(body)


def test_read_names_reads_nested_captures_as_told():
    body = _bodies(_nest())[0]
    told = scopes.read_names(body, lambda graph: [f"told:{graph.name}"])
    assert told == ["x0", "outer0", "y0", "told:body1", "c0", "z0"]
    assert scopes.read_names(body) == scopes.read_names(body, scopes.CapturedNames())


def _recursive_all_graphs(graph: onnx.GraphProto, path: str):
    """all_graphs as nested generators walk it: the order all_graphs keeps."""
    yield graph, path
    for index, node in enumerate(graph.node):
        for attr_name, body in scopes.subgraphs(node):
            label = scopes.node_label(node, index)
            yield from _recursive_all_graphs(body, f"{path}/{label}/{attr_name}")


def test_all_graphs_walks_each_graph_before_its_nested_ones_in_node_order():
    nest = _nest()
    branch = lambda name: helper.make_graph([], name, [], [_value("x")])  # noqa: E731
    branches = helper.make_node("If", ["c"], ["b"], then_branch=branch("t"), else_branch=_nest())
    nest.node.append(branches)
    walked = [(graph.name, path) for graph, path in scopes.all_graphs(nest, "main")]
    assert walked == [(g.name, path) for g, path in _recursive_all_graphs(nest, "main")]
    assert len(walked) == 2 * (DEPTH + 1) + 1
