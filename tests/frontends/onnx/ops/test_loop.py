"""ops/loop.py reads a Loop node into its layout: the captures and the names its body reads,
nested bodies included, the same whether the converter's CapturedNames or captured_names
gives the nested bodies' captures."""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

from ov_loops.frontends.onnx.ops.loop import OnnxLoop
from ov_loops.frontends.onnx.proto import scopes
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts

T = onnx.TensorProto


def _value(name: str, elem_type: int = T.FLOAT, shape: list | None = None):
    return helper.make_tensor_value_info(name, elem_type, [1] if shape is None else shape)


def _loop(inner_reads: str, iteration_shape: list) -> onnx.NodeProto:
    """A Loop whose body holds a Loop reading `inner_reads` (the outer body's iteration number,
    or a main-graph value) and `w`, captured from the main graph."""
    inner = helper.make_graph(
        [helper.make_node("Add", [inner_reads, "w"], ["s"])],
        "inner",
        [_value("j", T.INT64, []), _value("d", T.BOOL, []), _value("a")],
        [_value("d", T.BOOL, []), _value("s")],
    )
    body = helper.make_graph(
        [helper.make_node("Loop", ["", "", "x"], ["y"], body=inner)],
        "outer",
        [_value("i", T.INT64, iteration_shape), _value("c", T.BOOL, []), _value("x")],
        [_value("c", T.BOOL, []), _value("y")],
    )
    return helper.make_node("Loop", ["m", "", "x0"], ["y0"], name="loop", body=body)


@pytest.mark.parametrize("inner_reads", ["i", "v"])
@pytest.mark.parametrize("iteration_shape", [[], [1]])
def test_read_with_captured_names_memo_is_the_same_layout(inner_reads, iteration_shape):
    node = _loop(inner_reads, iteration_shape)
    plain = OnnxLoop.read(node, "main/loop", 17, SequenceParts())
    memo = OnnxLoop.read(node, "main/loop", 17, SequenceParts(), scopes.CapturedNames())
    assert memo == plain
    assert plain.captures == ([] if inner_reads == "i" else ["v"]) + ["w"]
    for layout in (plain, memo):
        assert layout.reads_iteration_number() == (inner_reads == "i")
        assert layout.reads_condition()  # the body returns its condition input
