"""proto/inference/sequence.py: differential tests against onnx's inference on the sequence
ops of random declared element shapes."""

from __future__ import annotations

import onnx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.onnx_builders import graph, model, node, untyped
from tests.shape_inference_compare import compared
from tests.shape_inference_strategies import SHAPES, T, value


@settings(max_examples=150, deadline=None)
@given(SHAPES, SHAPES, st.integers(-4, 3), st.integers(0, 1), st.booleans())
def test_inserts_and_concatenations_answer_as_onnx(element, tensor, axis, new_axis, empty):
    """SequenceInsert(s, x) (s declared or a SequenceEmpty), then ConcatFromSequence."""
    first = [node("SequenceEmpty", [], ["s"])] if empty else []
    inputs = [value("x", T.FLOAT, tensor)]
    if not empty:
        inputs.append(onnx.helper.make_tensor_sequence_value_info("s", T.FLOAT, element))
    nodes = [
        *first,
        node("SequenceInsert", ["s", "x"], ["t"]),
        node("ConcatFromSequence", ["t"], ["y"], axis=axis, new_axis=new_axis),
    ]
    made = model(graph(nodes, inputs, [untyped("t"), untyped("y")]))
    found = compared(made)
    assert not found
    assert found is not None or (element is not None and tensor is not None)
