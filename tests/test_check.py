"""`ov-loops check`: compile on a device, compare with the numpy references, locate the first
diverging iteration; exit 0 match, 1 mismatch, 2 error."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest

import ov_loops
import ov_loops.converter as converter
from ov_loops.runtime import available_devices
from tests import loop_scenarios, scan_scenarios
from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.test_cli import assert_one_line_error, run_cli
from tests.test_conformance import EXPECTED_FAILURES, LOOP_CASES

SCENARIOS = {**loop_scenarios.SCENARIOS, **scan_scenarios.SCENARIOS}


def _first_feeds(runs):
    entry = runs[0]
    return entry[0] if isinstance(entry, tuple) else entry


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_check_passes_on_scenario_models_as_onnx_and_as_ir(name, tmp_path):
    made, runs = SCENARIOS[name]()
    source = tmp_path / "model.onnx"
    onnx.save(made, source)
    feeds = _first_feeds(runs)
    report = ov_loops.check(source, inputs=feeds)
    assert report.ok, "\n".join(report.lines())
    assert report.precision == "f32"
    ov_loops.save(ov_loops.convert(made), tmp_path / "model.xml")
    ir_report = ov_loops.check(tmp_path / "model.xml", inputs=feeds)
    assert ir_report.ok, "\n".join(ir_report.lines())


@pytest.mark.parametrize("name", sorted(set(LOOP_CASES) - set(EXPECTED_FAILURES)))
def test_check_passes_on_conformance_models(name, tmp_path):
    case = LOOP_CASES[name]
    onnx.save(case.model, tmp_path / "model.onnx")
    inputs, _ = case.data_sets[0]
    feeds = dict(zip([i.name for i in case.model.graph.input], inputs))
    report = ov_loops.check(
        tmp_path / "model.onnx", inputs=feeds, rtol=case.rtol, atol=max(case.atol, 1e-5)
    )
    assert report.ok, "\n".join(report.lines())


def _two_counters():
    """a <- a + 1 and b <- b * 2 for M iterations."""
    body = loop_body(
        [
            node("Add", ["a_in", "one"], ["a_out"]),
            node("Mul", ["b_in", "two"], ["b_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("a_in", T.FLOAT, [2]), typed("b_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("a_out", T.FLOAT, [2]), typed("b_out", T.FLOAT, [2])],
        initializers=[
            onnx.numpy_helper.from_array(np.ones(2, np.float32), "one"),
            onnx.numpy_helper.from_array(np.full(2, 2, np.float32), "two"),
        ],
    )
    return model(
        graph(
            [node("Loop", ["M", "", "a0", "b0"], ["a", "b"], body=body, name="counters")],
            [typed("M", T.INT64, []), typed("a0", T.FLOAT, [2]), typed("b0", T.FLOAT, [2])],
            [typed("a", T.FLOAT, [2]), typed("b", T.FLOAT, [2])],
        )
    )


def test_swapped_back_edges_are_located_to_loop_iteration_and_value(tmp_path, monkeypatch):
    """A deliberately corrupted translation (two carried values' back edges swapped)."""
    build = converter.build_loop

    def swapped(spec, *args, **kwargs):
        first, second = spec.merged_inputs[:2]
        corrupted = (
            dataclasses.replace(first, body_result=second.body_result),
            dataclasses.replace(second, body_result=first.body_result),
        )
        return build(dataclasses.replace(spec, merged_inputs=corrupted), *args, **kwargs)

    monkeypatch.setattr(converter, "build_loop", swapped)
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    feeds = {
        "M": np.array(4, np.int64),
        "a0": np.array([1, 2], np.float32),
        "b0": np.array([3, 4], np.float32),
    }
    report = ov_loops.check(tmp_path / "counters.onnx", inputs=feeds)
    assert report.exit_code == 1
    divergence = report.divergence
    assert (divergence.loop_path, divergence.iteration) == ("main/counters", 0)
    assert (divergence.carried_index, divergence.carried_name) == (0, "a0")
    assert "first divergence: main/counters, iteration 0, loop-carried value 0 'a0'" in (
        "\n".join(report.lines())
    )


def test_cli_check_match_and_mismatch(tmp_path):
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    np.savez(
        tmp_path / "inputs.npz",
        M=np.array(3, np.int64),
        a0=np.zeros(2, np.float32),
        b0=np.ones(2, np.float32),
    )
    result = run_cli(
        "check", str(tmp_path / "counters.onnx"), "--inputs", str(tmp_path / "inputs.npz")
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "inference precision f32" in result.stdout and result.stdout.strip().endswith("MATCH")
    assert "onnxruntime agrees" in result.stdout
    # A valid IR that the CPU plugin computes wrong: check finds it (exit 1).
    sample = "ir_samples/valid/loop_all_ports.xml"
    mismatch = run_cli("check", sample)
    assert mismatch.returncode == 1, mismatch.stdout + mismatch.stderr
    assert mismatch.stdout.strip().endswith("MISMATCH")


def test_cli_check_generates_inputs_from_shapes(tmp_path):
    made, _ = scan_scenarios.scan8_sequence_lens_variable_lengths()
    onnx.save(made, tmp_path / "scan8.onnx")
    result = run_cli(
        "check",
        str(tmp_path / "scan8.onnx"),
        "--shape",
        "lens=3",
        "--shape",
        "s0=3,2",
        "--shape",
        "x=3,4,2",
        "--seed",
        "7",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[3, 4, 2]" in result.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["missing.onnx"], "no such file"),
        (
            ["ir_samples/valid/loop_all_ports.xml", "--device", "NPU_THAT_IS_NOT_THERE"],
            "is not present; devices here:",
        ),
        (["ir_samples/rnn_loop.onnx", "--shape", "X=a,b"], "dims must be integers"),
        (["ir_samples/rnn_loop.onnx", "--inputs", "missing.npz"], "cannot read inputs"),
    ],
    ids=["missing_model", "absent_device", "bad_shape", "missing_inputs"],
)
def test_cli_check_errors_exit_2(args, fragment):
    assert_one_line_error(run_cli("check", *args), 2, fragment)


@pytest.mark.parametrize("device", ["GPU", "NPU"])
def test_check_on_accelerators(device, tmp_path):
    """Exercised through OpenVINO's device list: runs where the device is present."""
    present = available_devices()
    if not any(name.split(".")[0] == device for name in present):
        with pytest.raises(ov_loops.InputError, match=f"device {device} is not present"):
            ov_loops.check("ir_samples/rnn_loop.onnx", device=device)
        pytest.skip(f"no {device} here (OpenVINO lists {', '.join(present)})")
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    report = ov_loops.check(
        tmp_path / "counters.onnx",
        device=device,
        inputs={
            "M": np.array(3, np.int64),
            "a0": np.zeros(2, np.float32),
            "b0": np.ones(2, np.float32),
        },
        rtol=1e-3,
        atol=1e-3,
    )
    assert report.ok, "\n".join(report.lines())
