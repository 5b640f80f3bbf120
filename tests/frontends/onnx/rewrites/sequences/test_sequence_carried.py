"""A carried sequence is one LoopIR CarriedValue of kind "sequence" over its four merged inputs,
which the passes treat whole; `check` and sequence inputs."""

from __future__ import annotations

import onnx
import pytest

import ov_loops
from ov_loops.contract.kinds import SEQUENCE, TENSOR
from ov_loops.frontends.onnx.ops.loop import OnnxLoop
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts
from ov_loops.frontends.onnx.rewrites.sequences.sequences import lower_sequences
from tests.harness import assert_matches_onnxruntime
from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.sequence_scenarios import SEQUENCE_SCENARIOS, seq
from tests.test_conformance import LOOP_CASES


def _list_beside_a_sum():
    """acc += x and s.append(x) each iteration; only acc is used after the loop."""
    body = loop_body(
        [
            node("Add", ["acc_in", "x"], ["acc_out"]),
            node("SequenceInsert", ["s_in", "x"], ["s_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],  # fmt: skip
        [typed("acc_in", T.FLOAT, [2]), seq("s_in")],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, [2]), seq("s_out")],
    )
    nodes = [node("SequenceEmpty", [], ["s_0"]),
             node("Loop", ["M", "", "x", "s_0"], ["acc", "s"], body=body, name="loop")]  # fmt: skip
    inputs = [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])]
    return model(graph(nodes, inputs, [typed("acc", T.FLOAT, [2])]), 18)


def test_the_frontend_groups_a_carried_sequence_into_one_value():
    parts = SequenceParts()
    lowered = lower_sequences(_list_beside_a_sum(), parts)
    loop = OnnxLoop.read(lowered.graph.node[-1], "main/loop", 18, parts)
    values = loop.carried_values()
    assert [(v.name, v.merged, v.kind) for v in values] == [
        ("x", (0,), TENSOR),
        ("s_0", (1, 2, 3, 4), SEQUENCE),
    ]


@pytest.mark.parametrize(("optimize", "merged"), [("none", 4), ("default", 0)])
def test_an_unchanged_carried_sequence_becomes_invariant_whole(optimize, merged, tmp_path):
    made, runs = SEQUENCE_SCENARIOS["carried_unchanged_and_read_at_the_iteration_number"]()
    conversion = assert_matches_onnxruntime(made, runs, tmp_path, optimize=optimize)
    assert len(conversion.loops[0].spec.merged_inputs) == merged
    made_invariant = [note for note in conversion.loops[0].optimizations if "carried" in note]
    expected = ["made 1 unchanged carried value(s) invariant"] if optimize == "default" else []
    assert made_invariant == expected  # one sequence, not its four ports


def test_check_generates_a_sequence_input_and_matches_with_one_given(tmp_path):
    """check generates a sequence input (tests/checking/test_check_sequence_inputs.py has the
    forms), and matches when given one as its four tensors."""
    case = LOOP_CASES["test_loop13_seq"]
    onnx.save(case.model, tmp_path / "model.onnx")
    inputs, _ = case.data_sets[0]
    generated = ov_loops.check(tmp_path / "model.onnx")
    assert generated.ok, "\n".join(generated.lines())
    parts = ["seq_empty", "seq_empty.sizes", "seq_empty.ranks", "seq_empty.shapes"]
    feeds = dict(zip(["trip_count", "cond", *parts], ov_loops.to_ir_inputs(case.model, inputs)))
    report = ov_loops.check(tmp_path / "model.onnx", inputs=feeds)
    assert report.ok, "\n".join(report.lines())
