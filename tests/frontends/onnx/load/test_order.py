"""load/order.py: the stable topological sort of every graph, a subgraph's captures read as
inputs of the node that holds it."""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.order import sort_topologically
from ov_loops.frontends.onnx.proto import scopes

T = onnx.TensorProto


def _value(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, T.FLOAT, [1])


def _body(name: str, nodes: list[onnx.NodeProto], read: str) -> onnx.GraphProto:
    inputs = [_value(f"{name}_i"), _value(f"{name}_c"), _value(f"{name}_x")]
    outputs = [_value(f"{name}_c"), _value(read)]
    return helper.make_graph(nodes, name, inputs, outputs)


def _model(inner_first: bool) -> onnx.ModelProto:
    """main: Loop(outer) before the Relu making `r` that a body two levels down reads; the
    outer body likewise holds its Loop before the Neg making `n` that the inner body reads
    (`inner_first`: the nodes of the outer body already in order)."""
    inner = _body("inner", [helper.make_node("Add", ["r", "n"], ["s"])], "s")
    loop = helper.make_node("Loop", ["", "", "outer_x"], ["t"], name="inner_loop", body=inner)
    negate = helper.make_node("Neg", ["outer_x"], ["n"], name="negate")
    outer = _body("outer", [negate, loop] if inner_first else [loop, negate], "t")
    main = [
        helper.make_node("Loop", ["", "", "x"], ["y"], name="outer_loop", body=outer),
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
    ]
    graph = helper.make_graph(main, "main", [_value("x")], [_value("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _names(graph: onnx.GraphProto) -> list[list[str]]:
    return [[node.name for node in each.node] for each, _ in scopes.all_graphs(graph, "")]


@pytest.mark.parametrize("inner_first", [False, True])
def test_sort_puts_producers_of_nested_captures_first(inner_first):
    model = sort_topologically(_model(inner_first))
    assert _names(model.graph) == [["relu", "outer_loop"], ["negate", "inner_loop"], [""]]


def test_sort_keeps_a_sorted_model_as_it_is():
    model = sort_topologically(_model(True))
    again = onnx.ModelProto()
    again.CopyFrom(model)
    assert sort_topologically(again).SerializeToString() == model.SerializeToString()


def test_sort_names_a_node_on_a_cycle_through_a_nested_capture():
    model = _model(True)
    relu = model.graph.node[1]
    relu.input[0] = "y"  # the Loop's output, while its body reads the Relu's
    with pytest.raises(InputError, match="main/outer_loop: the graph has a cycle"):
        sort_topologically(model)
