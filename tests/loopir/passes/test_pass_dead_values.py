"""RemoveDeadValues: unchanged carried values become invariant inputs, unread inputs go, and
the loop computes the same (the IR reference before and after, tests/loopir/passes/test_passes.py;
an ONNX loop on the CPU plugin against onnxruntime, zero-iteration runs among its runs)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ov_loops.contract.spec import (
    InvariantInput,
    MergedInput,
    SlicedInput,
)
from ov_loops.loopir.passes.dead_values import OuterValue, RemoveDeadValues
from ov_loops.loopir.passes.pipeline import CPU
from tests import harness
from tests.loopir.passes.test_passes import _assert_keeps_results
from tests.loopir_scenarios import (
    accumulating_loop,
    pass_through_carried,
    runtime_counter_two_carried,
    unread_capture_and_slice,
)


def test_an_unchanged_carried_value_becomes_an_invariant_input():
    loop, parameters, _ = pass_through_carried(3)
    acc0, c0 = (parameter.output(0) for parameter in parameters[:2])
    after = RemoveDeadValues()(loop)
    assert after.applied == ("made 1 unchanged carried value(s) invariant",)
    assert after.spec.merged_inputs == (MergedInput(2, 0, 0),)
    assert after.spec.invariant_inputs == (InvariantInput(3, 1),)
    assert after.outer[2] == acc0 and after.outer[3] == c0
    assert [value.name for value in after.carried] == ["carried0"]
    assert after.carried[0].merged == (0,)
    acc, c, stacked = after.results
    assert acc == loop.results[0]
    assert c.after == (OuterValue(c0),) and c.initial == c0
    assert stacked == loop.results[2]
    # the outputs keep their ports and Results (a Result may read an invariant Parameter)
    assert after.spec.outputs() == loop.spec.outputs()
    assert after.body_value(1).get_node() == after.body.get_parameters()[1]


def test_only_the_unchanged_value_of_two_becomes_invariant():
    loop, _, _ = runtime_counter_two_carried()
    after = RemoveDeadValues()(loop)
    assert after.spec.merged_inputs == (MergedInput(2, 1, 0),)
    assert after.spec.invariant_inputs == (InvariantInput(3, 2),)
    assert after.spec.current_iteration == 0
    assert [result.after for result in after.results] == [(), (OuterValue(loop.outer[3]),), ()]


def test_inputs_nothing_reads_are_dropped():
    loop, parameters, _ = unread_capture_and_slice()
    xs, _, x, _, _ = (parameter.output(0) for parameter in parameters)
    after = RemoveDeadValues()(loop)
    assert after.applied == ("dropped 2 unread input(s)",)
    assert after.spec.sliced_inputs == (SlicedInput(3, 1, 0),)
    assert after.spec.invariant_inputs == (InvariantInput(4, 2),)
    assert after.outer[3] == xs and after.outer[4] == x and len(after.outer) == 3
    assert len(after.body.get_parameters()) == 3
    assert after.trip == loop.trip


def test_a_loop_without_dead_values_is_left_alone():
    loop, _, _ = accumulating_loop(3)
    assert RemoveDeadValues()(loop) is loop


def test_the_last_value_of_an_unchanged_value_is_its_initial_value_after_zero_runs(tmp_path):
    """Without the OuterValue step the IR reference returns zeros for a Loop-5 last value no
    back edge feeds; the pass alone and the CPU profile give the initial value."""
    _assert_keeps_results(RemoveDeadValues(), "pass_through_carried_zero", tmp_path / "pass")
    _assert_keeps_results(
        lambda loop: CPU.run(loop, "default"), "pass_through_carried_zero", tmp_path / "cpu"
    )


def _pass_through_model() -> onnx.ModelProto:
    """A tf2onnx-style ONNX Loop: acc = acc + c * i with c carried unchanged; M iterations; the
    last values of both and the stack of c."""
    f32 = TensorProto.FLOAT
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=f32),
            helper.make_node("Mul", ["c_in", "i_f"], ["step"]),
            helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Identity", ["c_in"], ["c_scan"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", f32, [2]),
            helper.make_tensor_value_info("c_in", f32, [2]),
        ],
        [
            helper.make_tensor_value_info("keep", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", f32, [2]),
            helper.make_tensor_value_info("c_out", f32, [2]),
            helper.make_tensor_value_info("c_scan", f32, [2]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "acc0", "c0"], ["acc", "c", "cs"], body=body)],
        "pass_through",
        [
            helper.make_tensor_value_info("M", TensorProto.INT64, []),
            helper.make_tensor_value_info("acc0", f32, [2]),
            helper.make_tensor_value_info("c0", f32, [2]),
        ],
        [
            helper.make_tensor_value_info("acc", f32, [2]),
            helper.make_tensor_value_info("c", f32, [2]),
            helper.make_tensor_value_info("cs", f32, [None, 2]),
        ],
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


def test_an_onnx_pass_through_runs_on_the_cpu(tmp_path):
    def feeds(count: int, shift: float) -> dict:
        return {
            "M": np.array(count, np.int64),
            "acc0": np.array([1.0, -1.0], np.float32) + shift,
            "c0": np.array([0.5, 2.0], np.float32) - shift,
        }

    empty = (feeds(0, 3.0), None)
    expected_empty = [empty[0]["acc0"], empty[0]["c0"], np.zeros((0, 2), np.float32)]
    runs = [feeds(3, 0.0), (empty[0], expected_empty), feeds(4, 1.0)]
    conversion = harness.assert_matches_onnxruntime(_pass_through_model(), runs, tmp_path)
    (loop,) = conversion.loops
    assert "made 1 unchanged carried value(s) invariant" in loop.optimizations
    # (work on the now-invariant value may leave the body too: more invariant inputs)
    assert len(loop.spec.merged_inputs) == 1 and len(loop.spec.invariant_inputs) >= 1
    (node,) = [op for op in conversion.model.get_ordered_ops() if op.get_type_name() == "Loop"]
    kinds = {type(d).__name__ for d in node.get_input_descriptions()}
    assert kinds == {"InvariantInputDescription", "MergedInputDescription"}
