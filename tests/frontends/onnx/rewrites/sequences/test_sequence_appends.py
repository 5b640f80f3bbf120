"""Lists a loop only appends to become scan outputs (sequence_appends.py) and match
onnxruntime at every optimisation level; lists used otherwise are left to the general
rewrite (sequences.py), and still match."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.frontends.onnx.proto.scopes import all_graphs
from ov_loops.frontends.onnx.rewrites.sequences.carried_shapes import CarriedShapes
from ov_loops.frontends.onnx.rewrites.sequences.sequence_appends import (
    lists_appended_in_loops_become_scan_outputs,
)
from tests.harness import assert_matches_onnxruntime, compile_f32, onnxruntime_oracle
from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.sequence_append_scenarios import APPENDED, NOT_APPENDED, _runs, concatenated_list

TORCH_MODELS = Path(__file__).parents[5] / "benchmarks" / "models"


def _sequence_ops(made: onnx.ModelProto) -> list[str]:
    return [
        node.op_type
        for each, _ in all_graphs(made.graph, "main")
        for node in each.node
        if node.op_type.startswith("Sequence") or node.op_type == "ConcatFromSequence"
    ]


def _prepared(made: onnx.ModelProto) -> onnx.ModelProto:
    """`made` after the fast path alone (the general rewrite would remove every list)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(made)
    return lists_appended_in_loops_become_scan_outputs(copy)


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
@pytest.mark.parametrize("name", list(APPENDED))
def test_appended_list_becomes_a_scan_output_matching_onnxruntime(name, optimize, tmp_path):
    made, runs = APPENDED[name]()
    assert _sequence_ops(made), "the scenario holds no sequence op"
    assert _sequence_ops(_prepared(made)) == []
    assert len({run["X"].shape[0] for run in runs}) >= 2, "runs need different trip counts"
    conversion = assert_matches_onnxruntime(made, runs, tmp_path, optimize=optimize)
    assert conversion.loops


@pytest.mark.parametrize("name", list(NOT_APPENDED))
def test_list_outside_the_fast_path_is_left_to_the_general_rewrite(name, tmp_path):
    made, runs = NOT_APPENDED[name]()
    before = _sequence_ops(made)
    assert _sequence_ops(_prepared(made)) == before
    assert_matches_onnxruntime(made, runs, tmp_path)


_EVERY_AXIS = [(axis, 1) for axis in range(-3, 3)] + [(axis, 0) for axis in range(-2, 2)]


@pytest.mark.parametrize("prepended", [False, True])
@pytest.mark.parametrize(("axis", "new_axis"), _EVERY_AXIS)
def test_every_axis_computes_what_the_list_did(axis, new_axis, prepended):
    """onnxruntime on the rewritten model agrees with onnxruntime on the model with the list,
    for every axis ConcatFromSequence accepts on a rank-2 element (no OpenVINO involved)."""
    made = concatenated_list(axis, new_axis, prepended)
    rewritten = _prepared(made)
    assert _sequence_ops(rewritten) == []
    before, after = onnxruntime_oracle(made), onnxruntime_oracle(rewritten)
    for feeds in _runs(4, 1, 3):
        for want, have in zip(before(feeds), after(feeds)):
            assert want.shape == have.shape
            np.testing.assert_array_equal(have, want)


@pytest.mark.parametrize("axis", [0, -3])
def test_a_list_stacked_on_axis_0_is_the_loops_own_output(axis):
    """torch.stack(out) needs no op after the Loop: its scan output takes the stack's name (an
    Identity there would be an OpenVINO Identity, a copy of the whole stack)."""
    made = concatenated_list(axis, 1)
    rewritten = _prepared(made)
    (loop,) = [each for each in rewritten.graph.node if each.op_type == "Loop"]
    assert "Y" in loop.output
    assert "Identity" not in {each.op_type for each in rewritten.graph.node}
    converted = ov_loops.convert(made)
    assert "Identity" not in {op.get_type_name() for op in converted.get_ordered_ops()}


def test_zero_iterations_give_an_empty_stack():
    """onnxruntime (and ONNX's reference) fail on ConcatFromSequence of an empty sequence;
    the fast path gives the empty scan output: [0, B, H] for torch.stack(out)."""
    made, _ = APPENDED["stack_axis_0"]()
    compiled = compile_f32(ov_loops.convert(made))
    (empty,) = _runs(0)
    h_final, stacked = compiled(empty).values()
    np.testing.assert_array_equal(h_final, empty["h0"])
    assert stacked.shape == (0, *empty["h0"].shape)


def _carrying(step: onnx.NodeProto, declared) -> onnx.ModelProto:
    """A Loop carrying s (declared in the body with shape `declared`) through `step`."""
    body = loop_body(
        [step, node("Identity", ["cond_in"], ["go"])],
        [typed("s_in", T.FLOAT, declared)],
        [typed("go", T.BOOL, []), typed("s_out", T.FLOAT, declared)],
    )
    main = graph(
        [node("Loop", ["M", "", "s0"], ["s_final"], body=body)],
        [typed("M", T.INT64, []), typed("s0", T.FLOAT, ["B", 3])],
        [typed("s_final", T.FLOAT, None)],
    )
    return model(main)


def test_a_carried_shape_the_body_keeps_is_proven_fixed():
    shapes = CarriedShapes(_carrying(node("Relu", ["s_in"], ["s_out"]), None))
    assert shapes.is_fixed("s_in") and shapes.is_fixed("s_out")
    assert shapes.shapes["s_in"] == ("B", 3)


def test_a_growing_carried_value_is_not_fixed_whatever_it_declares():
    grow = node("Concat", ["s_in", "s_in"], ["s_out"], axis=0)
    shapes = CarriedShapes(_carrying(grow, ["B", 3]))  # the declaration lies after iteration 1
    assert shapes.rank("s_in") == 2
    assert not shapes.is_fixed("s_in") and not shapes.is_fixed("s_out")
    assert shapes.shapes["s_out"][1] == 3


def _torch_runs(with_k: bool) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    runs = []
    for steps, batch, k in [(5, 2, 3), (2, 3, 1), (7, 1, 2)]:
        run = {
            "xs": rng.normal(size=(steps, batch, 8)).astype(np.float32),
            "h": rng.normal(size=(batch, 8)).astype(np.float32),
        }
        if with_k:
            run["k"] = np.array(k, np.int64)
        runs.append(run)
    return runs


TORCH_NAMES = ["torch_rnn_stack", "torch_rnn_cat_dim1"]
TORCH_NESTED = ["torch_nested_lists", "torch_list_through_inner_loop"]


@pytest.mark.parametrize("name", TORCH_NAMES + TORCH_NESTED)
def test_torchscript_list_appends_take_the_fast_path(name):
    """Models torch.onnx.export (TorchScript, opset 17) wrote from list-appending loops
    (benchmarks/models/export_torch_lists.py)."""
    made = onnx.load(str(TORCH_MODELS / f"{name}.onnx"))
    assert _sequence_ops(made) and _sequence_ops(_prepared(made)) == []


@pytest.mark.parametrize("optimize", ["none", "max"])
@pytest.mark.parametrize("name", TORCH_NAMES + TORCH_NESTED)
def test_torchscript_list_appends_match_onnxruntime(name, optimize, tmp_path):
    """The nested ones were refused until the zero-iteration guard kept the static dims its
    two candidates share (its run-time reshape made h [?,?], so the outer loop's carried type
    relaxed to [?,?] and the inner loop's h entered less static than it left)."""
    made = onnx.load(str(TORCH_MODELS / f"{name}.onnx"))
    runs = _torch_runs(with_k=len(made.graph.input) == 3)
    assert_matches_onnxruntime(made, runs, tmp_path, optimize=optimize)
