"""What has no tensor form is refused before OpenVINO's frontend runs: one line naming the
node or value and the reason, exit 1, nothing written."""

from __future__ import annotations

import onnx

from tests.harness import assert_one_line_error, run_cli, write
from tests.onnx_builders import T, graph, loop_body, model, node, typed

FLOATS = onnx.helper.make_tensor_type_proto(T.FLOAT, None)


def _convert(tmp_path, made: onnx.ModelProto):
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(tmp_path / "out.xml"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]
    return result


def test_a_map_input_is_refused(tmp_path):
    map_type = onnx.helper.make_map_type_proto(T.INT64, FLOATS)
    made = model(graph([node("Identity", ["x"], ["y"])],
                       [onnx.helper.make_value_info("m", map_type), typed("x")],
                       [typed("y")]), 18)  # fmt: skip
    result = _convert(tmp_path, made)
    assert_one_line_error(result, 1, "graph.value at main/m (a map value has no tensor form)")


def test_a_sequence_of_sequences_read_in_a_loop_is_refused_with_its_path(tmp_path):
    nested = onnx.helper.make_sequence_type_proto(onnx.helper.make_sequence_type_proto(FLOATS))
    body = loop_body(
        [
            node("SequenceAt", ["lists", "i"], ["inner"]),
            node("SequenceLength", ["inner"], ["n"]),
            node("Identity", ["cond_in"], ["go"]),
        ],  # fmt: skip
        [],
        [typed("go", T.BOOL, []), typed("n", T.INT64, [])],
    )
    made = model(graph([node("Loop", ["M", ""], ["ns"], body=body)],
                       [onnx.helper.make_value_info("lists", nested), typed("M", T.INT64, [])],
                       [typed("ns", T.INT64, [None])]), 18)  # fmt: skip
    result = _convert(tmp_path, made)
    assert_one_line_error(
        result,
        1,
        "graph.value at main/lists (a sequence of sequences value has no tensor form)",
        "SequenceAt-18 at main/Loop_0/body/SequenceAt_0 (input 'lists' is not a known sequence)",
    )


def test_an_op_taking_a_sequence_without_a_rewrite_is_refused(tmp_path):
    """SequenceMap (not expanded) and an op of another domain given a sequence."""
    mapped = graph([node("Neg", ["e"], ["ne"])], [typed("e")], [typed("ne")])
    made = model(graph(
        [node("SequenceConstruct", ["x", "x"], ["s"]),
         node("SequenceMap", ["s"], ["t"], body=mapped),
         node("Gizmo", ["s"], ["g"], domain="acme"),
         node("ConcatFromSequence", ["t"], ["y"], axis=0)],
        [typed("x", T.FLOAT, [2])], [typed("y"), typed("g")]), 18)  # fmt: skip
    made.opset_import.append(onnx.helper.make_opsetid("acme", 1))
    result = _convert(tmp_path, made)
    assert_one_line_error(
        result,
        1,
        "ai.onnx.SequenceMap-18 at main/SequenceMap_1 (takes a sequence or optional value",
        "acme.Gizmo-1 at main/Gizmo_2 (takes a sequence or optional value",
    )


def test_reading_an_element_of_unknown_rank_is_refused(tmp_path):
    """An element whose rank nothing declares (the CPU plugin runs no tensor of dynamic rank)."""
    made = model(graph(
        [node("SequenceAt", ["s", "k"], ["y"], name="read")],
        [onnx.helper.make_tensor_sequence_value_info("s", T.FLOAT, None), typed("k", T.INT64, [])],
        [typed("y")]), 18)  # fmt: skip
    result = _convert(tmp_path, made)
    assert_one_line_error(result, 1, "SequenceAt-18 at main/read (the rank of the sequence's")
