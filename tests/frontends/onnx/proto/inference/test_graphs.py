"""proto/inference/graphs.py: the walk over graphs writes onnx's types where onnx writes
them (declared value_info refined, new value_info appended, untyped outputs typed, body
inputs refined) and gives up where onnx's answer is not sure."""

from __future__ import annotations

import numpy as np
import onnx

from ov_loops.frontends.onnx.proto import inference
from tests.onnx_builders import graph, loop_body, model, node, typed, untyped
from tests.shape_inference_compare import compared

T = onnx.TensorProto


def test_declared_and_new_types_are_written_as_onnx_writes_them():
    made = model(
        graph(
            [node("Tanh", ["x"], ["a"]), node("Relu", ["a"], ["b"]), node("Neg", ["b"], ["y"])],
            [typed("x", T.FLOAT, ["n", 3])],
            [untyped("y")],
        )
    )
    made.graph.value_info.append(typed("a", T.FLOAT, [None, None]))
    ours = inference.own_inference(made)
    assert [value.name for value in ours.graph.value_info] == ["a", "b", "y"]
    assert ours.graph.output[0].type == ours.graph.value_info[2].type
    assert compared(made) == []


def test_body_inputs_take_the_loop_types():
    body = loop_body(
        [node("Identity", ["cond_in"], ["cond_out"]), node("Tanh", ["h_in"], ["h_out"])],
        [typed("h_in", T.FLOAT, [None])],
        [typed("cond_out", T.BOOL, []), untyped("h_out")],
    )
    made = model(
        graph(
            [node("Loop", ["M", "", "h"], ["h_last"], body=body)],
            [typed("M", T.INT64, []), typed("h", T.FLOAT, [2])],
            [untyped("h_last")],
        )
    )
    ours = inference.own_inference(made)
    inputs = ours.graph.node[0].attribute[0].g.input
    assert inputs[2].type.tensor_type.shape.dim[0].dim_param.startswith("unk__")
    assert compared(made) == []


def test_unknown_names_and_redefinitions_are_left_to_onnx():
    reads_nothing_typed = model(graph([node("Tanh", ["x"], ["y"])], [untyped("x")], [untyped("y")]))
    twice = model(  # a node output named as an initializer
        graph(
            [node("Tanh", ["x"], ["w"])],
            [typed("x", T.FLOAT, [2])],
            [untyped("w")],
            [onnx.numpy_helper.from_array(np.zeros([2], np.float32), "w")],
        )
    )
    assert inference.own_inference(reads_nothing_typed) is None
    assert inference.own_inference(twice) is None


def test_models_with_other_ops_domains_or_opsets_are_not_covered():
    relu = graph([node("Relu", ["x"], ["y"])], [typed("x", T.FLOAT, [2])], [untyped("y")])
    assert inference.own_inference(model(relu)) is not None
    assert inference.own_inference(model(relu, opset=12)) is None
    other = graph([node("Reshape", ["x", "x"], ["y"])], [typed("x", T.INT64, [1])], [])
    assert inference.own_inference(model(other)) is None
    relu.node[0].domain = "com.microsoft"
    assert inference.own_inference(model(relu)) is None
