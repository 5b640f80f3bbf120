"""proto/inference/elementwise.py: differential tests against onnx's inference on one-node
models of random declared shapes (broadcasting ops, same-shape ops, casts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ov_loops.frontends.onnx.proto.inference.elementwise import broadcast
from ov_loops.frontends.onnx.proto.inference.kinds import Unsure
from tests.shape_inference_compare import compared
from tests.shape_inference_strategies import ELEM_TYPES, SHAPES, T, one_node, value

BINARY = st.sampled_from(["Add", "Sub", "Mul", "Div", "Less", "Greater", "Equal"])
UNARY = st.sampled_from(["Identity", "Tanh", "Sigmoid", "Relu", "Neg", "Abs", "Softmax"])


@settings(max_examples=150, deadline=None)
@given(BINARY, ELEM_TYPES, SHAPES, SHAPES, st.booleans())
def test_broadcasting_ops_answer_as_onnx(op, elem_type, left, right, data_prop):
    made = one_node(op, [value("x", elem_type, left), value("y", elem_type, right)])
    found = compared(made, data_prop)
    assert not found
    if found is None:  # ours refuses only dims that cannot broadcast
        shapes = [tuple(left), tuple(right)]
        try:
            broadcast(shapes)
            raise AssertionError("refused shapes that broadcast")
        except Unsure:
            pass


def test_broadcast_keeps_one_symbol_and_drops_two():
    assert broadcast([("a", 1), (1, 3)]) == ("a", 3)
    assert broadcast([("a",), ("b",)]) == (None,)
    assert broadcast([("a",), (2,)]) == (2,)
    assert broadcast([(2,), None]) is None


@settings(max_examples=80, deadline=None)
@given(UNARY, ELEM_TYPES, SHAPES, st.integers(-4, 3))
def test_same_shape_ops_answer_as_onnx(op, elem_type, shape, axis):
    attrs = {"axis": axis} if op == "Softmax" else {}
    found = compared(one_node(op, [value("x", elem_type, shape)], **attrs))
    assert not found
    assert found is not None or op == "Softmax"


@settings(max_examples=40, deadline=None)
@given(ELEM_TYPES, SHAPES, SHAPES, st.sampled_from([T.FLOAT, T.INT64, T.BOOL]))
def test_casts_answer_as_onnx(elem_type, shape, other, to):
    assert compared(one_node("Cast", [value("x", elem_type, shape)], to=to)) == []
    made = one_node("CastLike", [value("x", elem_type, shape), value("y", to, other)])
    assert compared(made) == []
