"""Loops onnxruntime runs although their types say less or other than the values (issue 22
items 4 and 5): graph inputs typed without a shape whose loop body declares one, and a body
condition of several elements where the body declares a scalar."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.frontends.onnx.rewrites.shapeless_inputs import shapeless_inputs_take_declared_shapes
from tests.harness import assert_matches_onnxruntime
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed


def _shapeless_loop() -> onnx.ModelProto:
    """x (float, no shape) carried as the body's float[2]; M and cond without shapes too."""
    body = loop_body(
        [
            node("Add", ["x_in", "one"], ["x_out"]),
            node("Mul", ["x_out", "x_out"], ["square"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("x_in", T.FLOAT, [2])],
        [typed("go", T.BOOL, []), typed("x_out", T.FLOAT, [2]), typed("square", T.FLOAT, [2])],
        [const("one", [1.0, 2.0])],
    )
    main = graph(
        [node("Loop", ["M", "cond", "x"], ["y", "squares"], body=body)],
        [typed("M", T.INT64), typed("cond", T.BOOL), typed("x", T.FLOAT)],
        [typed("y", T.FLOAT), typed("squares", T.FLOAT)],
    )
    return model(main)


def _shapeless_scan(axis: int = 0) -> onnx.ModelProto:
    """A Scan-9 summing rows of xs (float, no shape) along `axis` into s (float, no shape): the
    body declares the state float[3] and the scanned rows float[3]."""
    body = graph(
        [node("Add", ["s_in", "row"], ["s_out"]), node("Identity", ["s_out"], ["partial"])],
        [typed("s_in", T.FLOAT, [3]), typed("row", T.FLOAT, [3])],
        [typed("s_out", T.FLOAT, [3]), typed("partial", T.FLOAT, [3])],
        name="body",
    )
    main = graph(
        [
            node(
                "Scan",
                ["s", "xs"],
                ["total", "partials"],
                body=body,
                num_scan_inputs=1,
                scan_input_axes=[axis],
            )
        ],  # fmt: skip
        [typed("s", T.FLOAT), typed("xs", T.FLOAT)],
        [typed("total", T.FLOAT), typed("partials", T.FLOAT)],
    )
    return model(main)


def test_shapeless_loop_inputs_take_the_shapes_the_body_declares(tmp_path):
    """Refused before ("Loop-5 input 2 ('x') has a dynamic rank"); onnxruntime runs it."""
    x = np.array([1.0, 1.0], np.float32)
    runs = [{"M": np.array(count, np.int64), "cond": np.array(True), "x": x} for count in (3, 0, 1)]
    conversion = assert_matches_onnxruntime(_shapeless_loop(), runs, tmp_path)
    shapes = {p.get_any_name(): p.get_partial_shape() for p in conversion.model.inputs}
    assert [str(shapes[name]) for name in ("M", "cond", "x")] == ["[]", "[]", "[2]"]


def test_shapeless_scan_inputs_take_the_rank_the_body_declares(tmp_path):
    rng = np.random.default_rng(1)
    runs = [
        {"s": np.zeros(3, np.float32), "xs": rng.standard_normal((rows, 3)).astype(np.float32)}
        for rows in (4, 1)
    ]
    conversion = assert_matches_onnxruntime(_shapeless_scan(), runs, tmp_path)
    shapes = {p.get_any_name(): str(p.get_partial_shape()) for p in conversion.model.inputs}
    assert shapes == {"s": "[3]", "xs": "[?,3]"}  # the rows' dims too: it was [?,?]


def test_shapeless_scan_inputs_scanned_along_axis_1_take_the_rows_dims_around_it(tmp_path):
    """xs [3, n] scanned along axis 1: its columns are the body's float[3] rows."""
    rng = np.random.default_rng(2)
    runs = [{"s": np.zeros(3, np.float32), "xs": rng.standard_normal((3, 5)).astype(np.float32)}]
    conversion = assert_matches_onnxruntime(_shapeless_scan(axis=1), runs, tmp_path)
    shapes = {p.get_any_name(): str(p.get_partial_shape()) for p in conversion.model.inputs}
    assert shapes == {"s": "[3]", "xs": "[3,?]"}


def test_an_input_two_loops_declare_differently_is_left_alone():
    """x enters two Loops whose bodies declare [2] and [3]: no shape is the body's."""
    made = _shapeless_loop()
    other = onnx.ModelProto()
    other.CopyFrom(made)
    body = other.graph.node[0].attribute[0].g
    body.input[2].type.tensor_type.shape.dim[0].dim_value = 3
    second = onnx.helper.make_node("Loop", ["M", "cond", "x"], ["y2", "s2"], body=body)
    made.graph.node.append(second)
    rewritten = shapeless_inputs_take_declared_shapes(made)
    declared = {
        value.name: value.type.tensor_type.HasField("shape") for value in rewritten.graph.input
    }
    assert declared == {"M": True, "cond": True, "x": False}


def _vector_condition_loop() -> onnx.ModelProto:
    """x += 1 while Less(x, limit), both int32[2]: the body declares its condition a scalar
    and computes it of shape [2]."""
    body = loop_body(
        [
            node("Add", ["x_in", "one"], ["x_out"]),
            node("Less", ["x_out", "limit"], ["go"]),
            node("Identity", ["x_out"], ["seen"]),
        ],
        [typed("x_in", T.INT32, [2])],
        [typed("go", T.BOOL, []), typed("x_out", T.INT32, [2]), typed("seen", T.INT32, [2])],
        [const("one", [1, 1], np.int32)],
    )
    main = graph(
        [node("Loop", ["M", "", "x"], ["y", "ys"], body=body)],
        [typed("M", T.INT64, []), typed("x", T.INT32, [2]), typed("limit", T.INT32, [2])],
        [typed("y", T.INT32, [2]), typed("ys", T.INT32, [None, 2])],
    )
    return model(main)


def test_a_condition_of_two_elements_is_read_by_its_first_as_onnxruntime_does(tmp_path, caplog):
    """onnxruntime's Loop reads the first element; the IR failed validation (SP002), and
    OpenVINO at run time ("mem->getShape() == Shape{1}")."""
    x = np.zeros(2, np.int32)
    runs = [
        {"M": np.array(20, np.int64), "x": x, "limit": np.array(limit, np.int32)}
        for limit in ([3, 10], [10, 3], [0, 5])
    ]
    with caplog.at_level(logging.WARNING, logger="ov_loops"):
        assert_matches_onnxruntime(_vector_condition_loop(), runs, tmp_path)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "main/Loop_0: body output 0 (the condition) has shape [2]" in warning
    assert "first element" in warning


@pytest.mark.parametrize("shape", [[1], []])
def test_a_condition_of_one_element_is_left_as_it_is(shape, caplog):
    made = _vector_condition_loop()
    body = made.graph.node[0].attribute[0].g
    body.node[1].op_type = "ReduceMin"  # of the [2] Less: one element
    body.node[1].input[:] = ["x_out"]
    body.node.insert(2, onnx.helper.make_node("Cast", ["go_value"], ["go"], to=T.BOOL))
    body.node[1].output[:] = ["go_value"]
    body.node[1].attribute.append(onnx.helper.make_attribute("keepdims", len(shape)))
    with caplog.at_level(logging.WARNING, logger="ov_loops"):
        ov_loops.translate(made)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
