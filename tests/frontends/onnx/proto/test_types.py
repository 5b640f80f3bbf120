"""`only_tensors`: when a model provably holds tensors only, the driver skips shape inference
of the whole model (its outer types would then say nothing but tensors)."""

from __future__ import annotations

import onnx
import pytest

from ov_loops.frontends.onnx.proto.types import known_types, only_tensors
from tests.onnx_builders import T, graph, loop_body, model, node, typed

FLOATS = onnx.helper.make_tensor_type_proto(T.FLOAT, None)


def _loop_model(body_nodes, main_nodes=(), inputs=()) -> onnx.ModelProto:
    body = loop_body(
        [*body_nodes, node("Identity", ["cond_in"], ["go"]), node("Add", ["c_in", "c_in"], ["c"])],
        [typed("c_in")],
        [typed("go", T.BOOL, []), typed("c")],
    )
    loop = node("Loop", ["M", "", "x"], ["y"], body=body)
    return model(
        graph([*main_nodes, loop], [typed("M", T.INT64, []), typed("x"), *inputs], [typed("y")])
    )


def test_a_model_of_tensors_only_needs_no_inference():
    made = _loop_model([node("Neg", ["c_in"], ["unused"])])
    assert only_tensors(made)
    kinds = {each.WhichOneof("value") for each in known_types(made).values()}
    assert kinds == {"tensor_type"}


SEQUENCE = node("SequenceEmpty", [], ["s"], dtype=T.FLOAT)
SPARSE = onnx.helper.make_sparse_tensor(
    onnx.helper.make_tensor("v", T.FLOAT, [1], [1.0]),
    onnx.helper.make_tensor("i", T.INT64, [1], [0]),
    [2],
)


@pytest.mark.parametrize(
    "made",
    [
        _loop_model([SEQUENCE]),  # in a body
        _loop_model([], [SEQUENCE]),
        _loop_model([], [node("Constant", [], ["k"], sparse_value=SPARSE)]),
        _loop_model([], [onnx.helper.make_node("Binarizer", ["x"], ["b"], domain="ai.onnx.ml")]),
        _loop_model(
            [],
            [],
            [onnx.helper.make_value_info("m", onnx.helper.make_map_type_proto(T.INT64, FLOATS))],
        ),
    ],
    ids=["sequence-op-in-body", "sequence-op", "sparse-constant", "other-domain", "map-input"],
)
def test_a_model_that_may_hold_other_values_is_inferred(made):
    assert not only_tensors(made)
