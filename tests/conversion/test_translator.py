"""Translator properties beyond end-to-end agreement: folding, typing, element types, opsets, IR."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import ov_loops
from tests.harness import assert_matches_onnxruntime, compile_f32, run, save_and_reload
from tests.loop_scenarios import (
    SCENARIOS,
    loop_constant_false_condition_folded,
    loop_constant_zero_trip_count_folded,
    loop_untyped_body_inputs_and_outputs,
)
from tests.onnx_builders import ELEMENT_TYPES, T, graph, loop_body, model, node, typed


@pytest.mark.parametrize(
    "builder, reason",
    [
        (loop_constant_zero_trip_count_folded, "trip count 0"),
        (loop_constant_false_condition_folded, "initial condition false"),
    ],
)
def test_provably_zero_iteration_loops_are_folded_away(builder, reason, tmp_path):
    made, _ = builder()
    conversion = ov_loops.translate(made)
    assert [loop.folded for loop in conversion.loops] == [f"runs zero times: {reason}"]
    _, tree = save_and_reload(conversion.model, tmp_path)
    assert not [layer for layer in tree.iter("layer") if layer.get("type") == "Loop"]
    y, ys = run(compile_f32(conversion.model), {"y0": np.array([1, 2, 3], np.float32)})
    np.testing.assert_array_equal(y, [1, 2, 3])
    assert ys.shape == (0, 3) and ys.dtype == np.float32


def test_fully_untyped_body_matches_numpy(tmp_path):
    """onnxruntime rejects a body whose iteration/condition inputs are untyped; we convert it."""
    made, runs = loop_untyped_body_inputs_and_outputs(iteration_and_condition_typed=False)
    compiled = compile_f32(save_and_reload(ov_loops.convert(made), tmp_path)[0])
    for feeds in runs:
        v, scans = run(compiled, feeds)
        expected_v, expected_scans = feeds["v0"], []
        for i in range(int(feeds["M"])):
            expected_v = expected_v + expected_v
            expected_scans.append(expected_v * i)
        np.testing.assert_allclose(v, expected_v, rtol=1e-6)
        assert scans.shape == (len(expected_scans), 2, 2)
        if expected_scans:
            np.testing.assert_allclose(scans, np.stack(expected_scans), rtol=1e-6)


# The Loop test covers these (the Scan tests cover every type).
LOOP_TYPES = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("name", LOOP_TYPES)
def test_loop_carried_and_scanned_element_types(name, tmp_path):
    elem, dtype = ELEMENT_TYPES[name]
    body = loop_body(
        [
            node("Add", ["v_in", "step"], ["v_out"]),
            node("Identity", ["cond_in"], ["keep"]),
            node("Not", ["flag_in"], ["flag_out"]),
        ],
        [typed("v_in", elem, [3]), typed("flag_in", T.BOOL, [3])],
        [
            typed("keep", T.BOOL, []),
            typed("v_out", elem, [3]),
            typed("flag_out", T.BOOL, [3]),
            typed("v_out", elem, [3]),
            typed("flag_out", T.BOOL, [3]),
        ],
    )
    made = model(
        graph(
            [node("Loop", ["M", "", "v0", "f0"], ["v", "f", "vs", "fs"], body=body)],
            [
                typed("M", T.INT64, []),
                typed("v0", elem, [3]),
                typed("f0", T.BOOL, [3]),
                typed("step", elem, [3]),
            ],
            [
                typed("v", elem, [3]),
                typed("f", T.BOOL, [3]),
                typed("vs", elem, [None, 3]),
                typed("fs", T.BOOL, [None, 3]),
            ],
        )
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "v0": np.array([1, 2, 3], dtype),
            "f0": np.array([True, False, True]),
            "step": np.array([2, 0, 1], dtype),
        }
        for m in (4, 0, 2)
    ]
    assert_matches_onnxruntime(made, runs, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("opset", [9, 11, 13, 16, 19, 21, 23])
def test_loop_across_opsets(opset, tmp_path):
    made, runs = SCENARIOS["loop_trip_count_and_condition"]()
    made.opset_import[0].version = opset
    if opset < 13:  # ReduceSum takes axes as an attribute before opset 13
        made = onnx.version_converter.convert_version(made, opset)
    assert_matches_onnxruntime(made, runs, tmp_path)


def test_ir_port_map_matches_the_loop_spec(tmp_path):
    """The saved IR's port_map, back edges and special ports are those of the LoopSpec."""
    made, _ = SCENARIOS["loop_iteration_number_and_condition_as_data"]()
    conversion = ov_loops.translate(made)
    (converted,) = conversion.loops
    spec = converted.spec
    _, tree = save_and_reload(conversion.model, tmp_path)
    (layer,) = [layer for layer in tree.iter("layer") if layer.get("type") == "Loop"]
    inputs = layer.find("port_map").findall("input")
    outputs = layer.find("port_map").findall("output")
    edges = layer.find("back_edges").findall("edge")
    purposes = {entry.get("purpose") for entry in inputs + outputs} - {None}
    assert purposes == {"current_iteration", "execution_condition"} == set(spec.special_ports())
    mapped_inputs = [entry for entry in inputs if entry.get("purpose") is None]
    assert len(mapped_inputs) == len(spec.merged_inputs) + len(spec.invariant_inputs)
    assert len(edges) == len(spec.merged_inputs)
    with_axis = [entry for entry in outputs if entry.get("axis") is not None]
    assert [int(entry.get("axis")) for entry in with_axis] == [0] * len(spec.concatenated_outputs)
    last = [e for e in outputs if e.get("axis") is None and e.get("purpose") is None]
    assert len(last) == len(spec.last_value_outputs)


def test_gather_at_the_iteration_number_becomes_a_sliced_input(tmp_path):
    made, runs = SCENARIOS["loop_reads_capture_at_iteration_number"]()
    conversion = assert_matches_onnxruntime(made, runs, tmp_path)
    (spec,) = [loop.spec for loop in conversion.loops]
    assert [(entry.axis, entry.part_size, entry.stride) for entry in spec.sliced_inputs] == [
        (0, 1, 1)
    ]
    # X stays an invariant input too (Gather(X, zero)); Y is read on axis 1, so not sliced;
    # `limit` and `rows` are captured too. The zero-row run in `runs` runs no iteration.
    assert len(spec.invariant_inputs) == 4 and spec.trip_count_source == "input"
    _, tree = save_and_reload(conversion.model, tmp_path)
    (layer,) = [layer for layer in tree.iter("layer") if layer.get("type") == "Loop"]
    sliced = [e for e in layer.find("port_map").findall("input") if e.get("axis") is not None]
    assert [e.get("axis") for e in sliced] == ["0"]
