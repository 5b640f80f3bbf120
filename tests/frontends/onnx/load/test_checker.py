"""The ONNX checker's refusal, worded on one line."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.checker import check_model, one_line


def test_a_refusal_names_the_node_on_its_one_line():
    """The checker says which node on its second line ("name: OpType: Add"): kept, joined."""
    node = helper.make_node("Add", ["x", "undefined_value"], ["y"], name="adder")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(InputError) as refused:
        check_model(model)
    message = str(refused.value)
    assert "\n" not in message
    assert "undefined_value" in message and "adder" in message and "Add" in message
    assert message.endswith("is not output of any previous nodes.")


def test_one_line_joins_and_bounds():
    assert one_line("a \n\n b\n==> Context: c") == "a b ==> Context: c"
    assert one_line("  \n") == "invalid"
    long = one_line("x" * 1000, limit=50)
    assert len(long) == 50 and long.endswith("...")
