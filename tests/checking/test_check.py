"""`ov-loops check`: compile on a device, compare with the numpy references, locate the first
diverging iteration; exit 0 match, 1 mismatch, 2 error."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
import ov_loops.checking.run as check_run
import ov_loops.lower.loop5 as loop5
from ov_loops.checking import device
from ov_loops.checking.device import available_devices
from ov_loops.checking.diff import diff
from ov_loops.checking.inputs import InputSpec, generate_inputs
from ov_loops.cli import main
from tests import loop_scenarios, scan_scenarios
from tests.harness import assert_one_line_error, run_cli
from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.scenarios import SCENARIOS
from tests.test_conformance import LOOP_CASES, SEQUENCE_IO


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


@pytest.mark.parametrize("name", sorted(set(LOOP_CASES) - SEQUENCE_IO))
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
    build = loop5.build_loop

    def swapped(spec, *args, **kwargs):
        first, second = spec.merged_inputs[:2]
        corrupted = (
            dataclasses.replace(first, body_result=second.body_result),
            dataclasses.replace(second, body_result=first.body_result),
        )
        return build(dataclasses.replace(spec, merged_inputs=corrupted), *args, **kwargs)

    monkeypatch.setattr(loop5, "build_loop", swapped)
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
    assert (divergence.carried_index, divergence.value) == (0, "a0")
    assert "first divergence: main/counters[0] carried value 0 'a0' diverges at [0]" in (
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
    assert "onnxruntime vs the reference: agrees on all 2 output(s)" in result.stdout
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


# -- issue 9: hostile check invocations end in one line and exit 2 ------------------------------
def run_main(capsys, *args: str) -> subprocess.CompletedProcess:
    """`ov-loops ARGS` in this process (what `python -m ov_loops` runs, without the start-up
    cost); an escaping exception fails the test as a traceback would."""
    code = main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, captured.out, captured.err)


def _zero_trip_concatenating_ir(path):
    """A Loop-5 with a constant trip count 0 and a concatenated output: valid, but the CPU
    plugin dies with SIGFPE compiling it (ov-loops' own translation folds such loops)."""
    acc_in = ops.parameter([2], np.float32, name="acc_in")
    acc_result = ops.result(ops.add(acc_in, ops.constant(np.ones(2, np.float32))))
    part = ops.result(
        ops.unsqueeze(acc_result.input_value(0), ops.constant(np.array([0], np.int64)))
    )
    body = ov.Model([acc_result, part, ops.result(ops.constant(True))], [acc_in])
    acc0 = ops.parameter([2], np.float32, name="acc0")
    loop = ops.loop(ops.constant(np.int64(0)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 2])
    loop.set_merged_input(acc_in, acc0.output(0), acc_result.output(0))
    history = loop.get_concatenated_slices(part.output(0), 0, 1, 1, -1, 0)
    ov.save_model(ov.Model([history], [acc0]), str(path))
    return path


CRASHING_COMPILE = """
import os, signal
from ov_loops.checking import _device_worker as worker

def crash(*args):
    os.kill(os.getpid(), signal.SIGFPE)

worker.compile_model = crash
worker.main()
"""


def test_plugin_crash_at_compile_is_one_line_naming_signal_and_stage(capsys, monkeypatch, tmp_path):
    """A worker whose compile dies with SIGFPE (what the CPU plugin does on AVX-512 machines with
    the IR below; on AVX2-only ones it compiles it): one line naming the signal and the stage,
    from the CLI and the API, and the next check gets a new worker."""
    xml = _zero_trip_concatenating_ir(tmp_path / "zero_trip.xml")
    script = tmp_path / "crashing_worker.py"
    script.write_text(CRASHING_COMPILE)
    monkeypatch.setattr(device, "_worker", device.DeviceWorker([sys.executable, str(script)]))
    crashed = run_main(capsys, "check", str(xml), "--timeout", "120")  # a worker that hangs fails
    assert_one_line_error(crashed, 2, "SIGFPE", "during compile on CPU")
    with pytest.raises(ov_loops.InputError, match="crashed with SIGFPE during compile"):
        ov_loops.check(xml, timeout=120)
    device._worker.stop()
    monkeypatch.undo()
    assert ov_loops.check("ir_samples/valid/nested_loops.xml").ok  # this process lives on


HANGING_COMPILE = """
import pickle, sys, time
pickle.load(sys.stdin.buffer)  # the request; a worker that starts compiling, then hangs
pickle.dump(("stage", "compile"), sys.stdout.buffer)
sys.stdout.buffer.flush()
time.sleep(600)
"""


def test_a_worker_silent_past_the_timeout_is_killed_and_one_line(capsys, monkeypatch, tmp_path):
    """A plugin that hangs (here: a worker that says it compiles, then sleeps; it imports
    nothing, so its start-up stays within the timeout under load) ends the check after
    --timeout seconds of silence in that stage: one line naming the stage, the worker killed,
    the next check served."""
    script = tmp_path / "hanging_worker.py"
    script.write_text(HANGING_COMPILE)
    hanging = device.DeviceWorker([sys.executable, str(script)])
    monkeypatch.setattr(device, "_worker", hanging)
    valid = "ir_samples/valid/nested_loops.xml"
    said = run_main(capsys, "check", valid, "--timeout", "3")
    assert_one_line_error(said, 2, "no answer for 3 s during compile on CPU", "--timeout")
    assert hanging._process is None  # killed, not left sleeping
    with pytest.raises(ov_loops.InputError, match="no answer for 2 s during compile"):
        ov_loops.check(valid, timeout=2)
    monkeypatch.undo()
    assert ov_loops.check(valid, timeout=60).ok


@pytest.mark.parametrize("given", ["-1", "nan"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(capsys, given):
    said = run_main(capsys, "check", "ir_samples/valid/nested_loops.xml", "--timeout", given)
    assert_one_line_error(said, 2, "--timeout must be a positive number of seconds")


def test_the_zero_trip_concatenating_ir_is_one_line_or_a_match_on_this_cpu(tmp_path):
    """The real IR: the plugin crashes compiling it on some CPUs (one line, exit 2) and runs it
    on others (an empty output: MATCH); never a traceback."""
    result = run_cli("check", str(_zero_trip_concatenating_ir(tmp_path / "zero_trip.xml")))
    if result.returncode == 0:
        assert result.stdout.splitlines()[-1].startswith("MATCH"), result.stdout
    else:
        assert_one_line_error(result, 2, "SIGFPE", "during compile on CPU")


def test_bf16_inputs_stored_by_numpy_as_raw_void_feed_bf16_model_inputs(capsys, tmp_path):
    x = ops.parameter([3], ov.Type.bf16, name="x")
    doubled = ops.multiply(ops.convert(x, ov.Type.f32), ops.constant(np.float32(2)))
    ov.save_model(ov.Model([ops.result(doubled)], [x]), str(tmp_path / "bf16.xml"))
    onnx.save(
        model(
            graph(
                [node("Cast", ["x"], ["xf"], to=T.FLOAT), node("Add", ["xf", "xf"], ["y"])],
                [typed("x", T.BFLOAT16, [3])],
                [typed("y", T.FLOAT, [3])],
            )
        ),
        tmp_path / "bf16.onnx",
    )
    values = np.array([1.5, -2, 3.25], ml_dtypes.bfloat16)
    np.savez(tmp_path / "x.npz", x=values)
    with np.load(tmp_path / "x.npz") as stored:
        assert stored["x"].dtype == np.dtype("V2")  # what numpy makes of bfloat16
        spec = InputSpec("x", np.dtype(ml_dtypes.bfloat16), (3,))
        fed = generate_inputs([spec], {"x": stored["x"]}, {}, 0)["x"]
    np.testing.assert_array_equal(fed.astype(np.float32), values.astype(np.float32))
    for name in ("bf16.xml", "bf16.onnx"):
        result = run_main(
            capsys, "check", str(tmp_path / name), "--inputs", str(tmp_path / "x.npz")
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip().endswith("MATCH")


def _counter_inputs(tmp_path, **overrides):
    values = {
        "M": np.array(3, np.int64),
        "a0": np.zeros(2, np.float32),
        "b0": np.ones(2, np.float32),
        **overrides,
    }
    np.savez(tmp_path / "inputs.npz", **values)
    return str(tmp_path / "inputs.npz")


@pytest.mark.parametrize(
    "make_inputs, fragment",
    [
        (lambda p: _counter_inputs(p, M=np.array("3")), "<U1 values cannot feed"),
        (lambda p: _counter_inputs(p, M=np.array(3.0)), "float64 values cannot feed"),
        (lambda p: _counter_inputs(p, a0=np.zeros(2, [("re", "f4")])), "cannot feed"),
        (lambda p: _counter_inputs(p, M=np.array(2**64 - 1, np.uint64)), "do not fit int64"),
        (lambda p: _counter_inputs(p, a0=np.zeros(3, np.float32)), "the model declares [2]"),
        (lambda p: _counter_inputs(p, nosuch=np.zeros(1)), "the model's inputs: M, a0, b0"),
        (lambda p: _write(p / "x.npy", lambda f: np.save(f, np.zeros(2))), "a .npy file"),
        (lambda p: _write(p / "empty.npz", lambda f: None), "the file is empty"),
        (lambda p: _write(p / "junk.npz", lambda f: f.write(b"\x93NUMPY junk")), "cannot read"),
        (lambda p: _write(p / "zip.npz", lambda f: f.write(b"PK\x03\x04junk")), "cannot read"),
    ],
    ids=[
        "string_for_int",
        "float_for_int",
        "structured",
        "out_of_range",
        "wrong_shape",
        "unknown_name",
        "npy",
        "empty",
        "garbage",
        "broken_zip",
    ],
)
def test_cli_check_hostile_inputs_exit_2_in_one_line(capsys, tmp_path, make_inputs, fragment):
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    result = run_main(
        capsys, "check", str(tmp_path / "counters.onnx"), "--inputs", make_inputs(tmp_path)
    )
    assert_one_line_error(result, 2, fragment)


def _write(path, fill):
    with open(path, "wb") as handle:
        fill(handle)
    return str(path)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--shape", "x=-1,4,2"], "dims must not be negative"),
        (["--shape", "x=100000,100000,2"], "over the limit of 134217728 per value"),
        (["--shape", f"x={10**30},{10**30},2"], "over the limit of 134217728 per value"),
        (["--shape", "nosuch=3"], "--shape not in the model: nosuch; the model's inputs: lens"),
        (["--shape", "x=3,4"], "input 'x' has shape [3, 4], the model declares"),
        (["--seed", "-1"], "--seed must be a non-negative integer, not -1"),
        (["--max-iterations", "0"], "--max-iterations must be positive"),
    ],
    ids=["negative", "huge", "overflowing", "unknown_name", "wrong_rank", "seed", "iterations"],
)
def test_cli_check_hostile_shapes_and_numbers_exit_2_in_one_line(capsys, tmp_path, args, fragment):
    made, _ = scan_scenarios.scan8_sequence_lens_variable_lengths()
    onnx.save(made, tmp_path / "scan8.onnx")
    assert_one_line_error(
        run_main(capsys, "check", str(tmp_path / "scan8.onnx"), *args), 2, fragment
    )


def test_nested_loops_stop_at_the_total_iteration_budget(capsys, tmp_path):
    """20 x 20 x 20 nested iterations: no loop run reaches 1000, together they do."""
    made, runs = loop_scenarios.loop_nested_three_deep_with_captures()
    onnx.save(made, tmp_path / "nested.onnx")
    trips = {name: np.array(20) for name in ("M", "middle_trips", "inner_trips")}
    np.savez(tmp_path / "in.npz", **{**runs[0], **trips})
    result = run_main(
        capsys,
        "check",
        str(tmp_path / "nested.onnx"),
        "--inputs",
        str(tmp_path / "in.npz"),
        "--max-iterations",
        "1000",
    )
    assert_one_line_error(result, 2, "limit of 1000 iterations in total (--max-iterations)")


def test_doubling_carried_value_stops_at_the_element_bound(capsys, tmp_path):
    body = loop_body(
        [node("Concat", ["x_in", "x_in"], ["x_out"], axis=0), node("Identity", ["cond_in"], ["k"])],
        [typed("x_in", T.FLOAT, [None])],
        [typed("k", T.BOOL, []), typed("x_out", T.FLOAT, [None])],
    )
    doubling = node("Loop", ["M", "", "x0"], ["x"], body=body, name="doubling")
    made = model(
        graph(
            [doubling],
            [typed("M", T.INT64, []), typed("x0", T.FLOAT, [None])],
            [typed("x", T.FLOAT, [None])],
        )
    )
    onnx.save(made, tmp_path / "doubling.onnx")
    np.savez(tmp_path / "in.npz", M=np.array(60), x0=np.ones(3 * 2**16, np.float32))
    result = run_main(
        capsys, "check", str(tmp_path / "doubling.onnx"), "--inputs", str(tmp_path / "in.npz")
    )
    assert_one_line_error(
        result, 2, "Loop 'doubling'", "over the limit of 134217728 elements per value"
    )


def test_check_reports_conversion_failures_with_their_exit_code(capsys, tmp_path, monkeypatch):
    unsupported = model(
        graph(
            [node("Frobnicate", ["x"], ["y"], domain="com.example")],
            [typed("x", T.FLOAT, [2])],
            [typed("y", T.FLOAT, [2])],
        )
    )
    unsupported.opset_import.append(onnx.helper.make_opsetid("com.example", 1))
    onnx.save(unsupported, tmp_path / "frob.onnx")
    assert_one_line_error(run_main(capsys, "check", str(tmp_path / "frob.onnx")), 1, "Frobnicate")
    onnx.save(_two_counters(), tmp_path / "counters.onnx")

    def broken(source, **options):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(check_run, "translate", broken)
    with pytest.raises(ov_loops.ConversionError, match="cannot convert: RuntimeError: boom second"):
        ov_loops.check(tmp_path / "counters.onnx")


def test_diff_compares_infinities_and_nans_without_warnings():
    """Found by tests/fuzz/hostile_check.py: inf - inf warned on stderr and counted as a
    mismatch, and an infinity against the opposite one passed (its tolerance was infinite)."""
    want = np.array([np.inf, np.nan, 1, -np.inf, 2, np.inf], np.float32)
    have = np.array([np.inf, np.nan, 1, np.inf, np.nan, 5], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = diff("r", want, have, 1e-4, 1e-5)
    assert (row.mismatches, row.max_abs_error) == (3, float("inf"))
    assert diff("r", want[:3], have[:3], 1e-4, 1e-5).ok


def test_ir_openvino_cannot_read_is_one_line_with_openvino_s_reason(capsys):
    """OpenVINO's message ends in blank lines; the error kept the last line, which was empty."""
    sample = Path(__file__).resolve().parents[2] / "ir_samples" / "invalid" / "ST002.xml"
    result = run_main(capsys, "check", str(sample))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].split("OpenVINO cannot read it:")[1].strip(), lines[0]


def _gathering_rows(path: Path) -> None:
    """for i < M: y_i = X[i] (Gather 'row'), stacked: M past X's length fails in the reference."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["y"], axis=0, name="row"),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [],
        [typed("go", T.BOOL, []), typed("y", T.FLOAT, [3])],
    )
    main = graph(
        [node("Loop", ["M", ""], ["ys"], body=body)],
        [typed("X", T.FLOAT, ["T", 3]), typed("M", T.INT64, [])],
        [typed("ys", T.FLOAT, [None, 3])],
    )
    onnx.save(model(main), path)


def test_a_reference_failing_names_the_node_and_the_generated_inputs(tmp_path, capsys):
    """It said "ONNX reference: IndexError: index 2 is out of bounds ...": no node, and
    nothing said that check had made up the inputs that broke it."""
    path = tmp_path / "rows.onnx"
    _gathering_rows(path)
    result = run_main(capsys, "check", str(path), "--val-range", "M=3,3")
    assert_one_line_error(result, 2, "ONNX reference: Gather 'row' failed: IndexError: index 2")
    assert "(on generated inputs X, M: give them with --inputs" in result.stderr
