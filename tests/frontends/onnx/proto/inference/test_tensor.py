"""proto/inference/tensor.py: differential tests against onnx's inference on one-node models
of random declared shapes (Gather, Gemm, MatMul, Concat, Shape, Constant)."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.onnx_builders import graph, model, node, untyped
from tests.shape_inference_compare import compared
from tests.shape_inference_strategies import DIMS, ELEM_TYPES, SHAPES, T, one_node, value

MATRICES = st.one_of(st.none(), st.lists(DIMS, min_size=2, max_size=2))


def _answered(found) -> bool:
    assert not found
    return found is not None


@settings(max_examples=100, deadline=None)
@given(ELEM_TYPES, SHAPES, SHAPES, st.integers(-3, 2))
def test_gather_answers_as_onnx(elem_type, data, indices, axis):
    made = one_node(
        "Gather", [value("x", elem_type, data), value("i", T.INT64, indices)], axis=axis
    )
    assert _answered(compared(made)) or (data is not None and not -len(data) <= axis < len(data))


@settings(max_examples=100, deadline=None)
@given(MATRICES, MATRICES, st.integers(0, 1), st.integers(0, 1), st.booleans(), SHAPES)
def test_gemm_answers_as_onnx(a, b, trans_a, trans_b, with_c, c):
    inputs = [value("a", T.FLOAT, a), value("b", T.FLOAT, b)]
    inputs += [value("c", T.FLOAT, c)] if with_c else []
    found = compared(one_node("Gemm", inputs, transA=trans_a, transB=trans_b))
    assert _answered(found) or None not in (a, b)


@settings(max_examples=150, deadline=None)
@given(SHAPES, SHAPES)
def test_matmul_answers_as_onnx(a, b):
    made = one_node("MatMul", [value("a", T.FLOAT, a), value("b", T.FLOAT, b)])
    assert not compared(made)


@settings(max_examples=150, deadline=None)
@given(st.lists(SHAPES, min_size=1, max_size=3), st.integers(-3, 2))
def test_concat_answers_as_onnx(shapes, axis):
    inputs = [value(f"x{index}", T.FLOAT, shape) for index, shape in enumerate(shapes)]
    assert not compared(one_node("Concat", inputs, axis=axis))


@settings(max_examples=60, deadline=None)
@given(SHAPES, st.sampled_from([13, 17]), st.one_of(st.none(), st.integers(-4, 4)))
def test_shape_answers_as_onnx(shape, opset, start):
    attrs = {} if start is None or opset < 15 else {"start": start, "end": -1}
    assert _answered(
        compared(one_node("Shape", [value("x", T.FLOAT, shape)], opset=opset, **attrs))
    )


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["value", "value_float", "value_floats", "value_int", "value_ints"]),
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    ELEM_TYPES,
)
def test_constant_answers_as_onnx(kind, dims, elem_type):
    values = {
        "value": onnx.numpy_helper.from_array(
            np.zeros(dims, onnx.helper.tensor_dtype_to_np_dtype(elem_type))
        ),
        "value_float": 1.5,
        "value_floats": [1.0] * len(dims),
        "value_int": 2,
        "value_ints": list(dims),
    }
    made = model(graph([node("Constant", [], ["c"], **{kind: values[kind]})], [], [untyped("c")]))
    assert _answered(compared(made))
