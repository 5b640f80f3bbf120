"""load/load.py reads a model: strings that are not UTF-8 are refused in one line naming the
field, wherever they are (one walk finds whether any is, then the field is named)."""

from __future__ import annotations

import re

import onnx
import pytest
from onnx import helper

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.load import load_model

T = onnx.TensorProto


def _model() -> onnx.ModelProto:
    value = lambda name: helper.make_tensor_value_info(name, T.FLOAT, ["n"])  # noqa: E731
    body = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["z"], name="inner")],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []), value("c"), value("a")],
        [value("c"), value("z")],
    )
    loop = helper.make_node("Loop", ["", "", "x"], ["y"], name="loop", body=body)
    graph = helper.make_graph([loop], "main", [value("x")], [value("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (bytes of the serialized model, spoiled, the field the refusal names)
SPOILED = {
    "node name": (b"loop", b"lo\xffp", "model.graph.node[0].name"),
    "repeated string": (b"\x12\x01z", b"\x12\x01\xff", "g.node[0].output"),
    "dim param": (b"\x12\x01n", b"\x12\x01\xff", "g.input[1].type.tensor_type.shape.dim[0]"),
}


@pytest.mark.parametrize("case", SPOILED)
def test_a_string_that_is_not_utf8_is_refused_naming_its_field(case):
    good, bad, field = SPOILED[case]
    data = _model().SerializeToString()
    spoiled = data.replace(good, bad, 1)
    assert spoiled != data
    with pytest.raises(InputError, match=re.escape(field) + r"\S* is not UTF-8: '.*\\xff"):
        load_model(spoiled)


def test_a_model_of_utf8_strings_loads():
    model = _model()
    model.graph.node[0].name = "lööp"
    assert load_model(model.SerializeToString()).model.graph.node[0].name == "lööp"
