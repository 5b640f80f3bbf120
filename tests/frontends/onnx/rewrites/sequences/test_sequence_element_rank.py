"""The rank of a sequence's elements from what is inserted, when the appended tensor's rank
needs a constant of an enclosing graph (issue 22 item 7).

TorchScript writes a loop appending `v.sum(1)` to a list with the ReduceSum's axes a Constant
of the main graph. ONNX shape inference reads a constant input's value only from the node's own
graph, so the ReduceSum's rank was unknown, and ConcatFromSequence of the list was refused
("the rank of the sequence's elements is not known"). A list the body also reads (its length
in the condition) takes the general sequence rewrite, which needs the rank.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.harness import assert_matches_onnxruntime
from tests.onnx_builders import T, graph, loop_body, model, node, typed


def _appending_while_loop(axes_outside: bool = True) -> onnx.ModelProto:
    """while len(sums) < limit: v = v * 1.5; sums.append(v.sum(1)); return stack(sums, 1), v"""
    axes = helper.make_tensor("", T.INT64, [1], [1])
    axes_node = node("Constant", [], ["axes"], value=axes)
    body_nodes = [
        node("Mul", ["v_in", "factor"], ["v_out"]),
        node("ReduceSum", ["v_out", "axes"], ["row_sum"], keepdims=0),
        node("SequenceInsert", ["sums_in", "row_sum"], ["sums_out"]),
        node("SequenceLength", ["sums_out"], ["count"]),
        node("Less", ["count", "limit"], ["go"]),
    ]
    if not axes_outside:
        body_nodes.insert(0, axes_node)
    sequence = helper.make_tensor_sequence_value_info
    body = loop_body(
        body_nodes,
        [typed("v_in", T.FLOAT, ["B", 3]), sequence("sums_in", T.FLOAT, None)],
        [
            typed("go", T.BOOL, []),
            typed("v_out", T.FLOAT, ["B", 3]),
            sequence("sums_out", T.FLOAT, None),
        ],
    )
    factor = helper.make_tensor("", T.FLOAT, [], [1.5])
    main_nodes = [
        node("Constant", [], ["factor"], value=factor),
        node("SequenceEmpty", [], ["empty"], dtype=T.FLOAT),
        node("Loop", ["", "", "x", "empty"], ["v", "sums_list"], body=body),
        node("ConcatFromSequence", ["sums_list"], ["sums"], axis=1, new_axis=1),
    ]
    if axes_outside:
        main_nodes.insert(0, axes_node)
    main = graph(
        main_nodes,
        [typed("x", T.FLOAT, ["B", 3]), typed("limit", T.INT64, [])],
        [typed("v", T.FLOAT, ["B", 3]), typed("sums", T.FLOAT, ["B", "N"])],
    )
    return model(main)


def test_appended_rank_from_a_constant_of_the_main_graph(tmp_path):
    rng = np.random.default_rng(2)
    runs = [
        {"x": rng.standard_normal((batch, 3)).astype(np.float32), "limit": np.array(n, np.int64)}
        for batch, n in ((2, 4), (3, 1))
    ]
    assert_matches_onnxruntime(_appending_while_loop(), runs, tmp_path)


def test_appended_rank_from_a_constant_of_the_body(tmp_path):
    """The same with the axes inside the body, which inference always read."""
    runs = [{"x": np.ones((2, 3), np.float32), "limit": np.array(3, np.int64)}]
    assert_matches_onnxruntime(_appending_while_loop(axes_outside=False), runs, tmp_path)
