"""`ov-loops check` options (issue 14): tolerances by precision, --val-range, NAME[d0,d1] shapes,
saved inputs and outputs, warnings on vacuous matches, second opinions, --format json for every
command, -q/-v and progress lines; each with its bad input (one line, exit 2)."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import sys
import types

import numpy as np
import onnx
import pytest

import ov_loops.checking.device as device
from ov_loops import logs
from ov_loops.checking.diff import diff
from ov_loops.checking.opinions import convert_model_outputs
from ov_loops.checking.settings import Settings
from ov_loops.checking.tolerance import FLOAT_DEFAULTS, Tolerances, parse_tolerances
from tests import scan_scenarios
from tests.checking.test_check import _two_counters, run_main
from tests.harness import assert_one_line_error, run_cli
from tests.onnx_builders import T, graph, loop_body, model, node, typed

COUNTER_FEEDS = {
    "M": np.array(3, np.int64),
    "a0": np.zeros(2, np.float32),
    "b0": np.ones(2, np.float32),
}


@pytest.fixture(autouse=True)
def _logging_left_as_found():
    """The CLI configures the ov_loops loggers per run; later tests get them as they were."""
    yield
    for logger in (logging.getLogger("ov_loops"), logs.PROGRESS):
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
        logger.propagate = True


@pytest.fixture
def counters(tmp_path):
    """a <- a + 1, b <- b * 2 for M iterations (outputs a, b), and its inputs as an .npz."""
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    np.savez(tmp_path / "in.npz", **COUNTER_FEEDS)
    return str(tmp_path / "counters.onnx"), str(tmp_path / "in.npz")


def _table_row(stdout: str, output: str) -> list[str]:
    return next(line.split() for line in stdout.splitlines() if line.split()[:1] == [output])


# -- tolerances -------------------------------------------------------------------------------
def test_tolerance_follows_the_narrower_of_element_type_and_inference_precision():
    default = Tolerances()
    assert default.for_output("y", np.float16, "f32").precision == "f16"
    assert default.for_output("y", np.float32, "bf16").precision == "bf16"
    assert default.for_output("y", np.float64, "f32").precision == "f32"
    assert default.for_output("y", np.float64, None).precision == "f64"
    assert (default.for_output("y", np.float32, "f32").rtol, "f32") == (
        FLOAT_DEFAULTS["f32"][0],
        default.for_output("y", np.float32, "f32").precision,
    )
    for exact in (np.int64, np.int32, np.bool_):
        tolerance = default.for_output("n", exact, "bf16")
        assert (tolerance.rtol, tolerance.atol, tolerance.text()) == (0, 0, "exact")


def test_global_tolerance_leaves_integers_exact_and_per_output_overrides_any_type():
    tolerances = parse_tolerances(["1e-2", "n=3"], ["0.5"])
    assert tolerances.for_output("y", np.float32, "f32").text() == "0.01/0.5"
    assert tolerances.for_output("k", np.int64, "f32").text() == "exact"
    named = tolerances.for_output("n", np.int64, "f32")
    assert (named.rtol, named.atol, named.source) == (3.0, 0.0, "--rtol/--atol n=")


def test_an_f16_output_one_unit_in_the_last_place_off_passes_at_f16_tolerance_only():
    want = np.linspace(0.5, 8, 16).astype(np.float16)
    have = want.copy()
    have[5] = np.nextafter(want[5], np.float16(np.inf))
    f16 = Tolerances().for_output("y", np.float16, "f32")
    assert diff("y", want, have, f16.rtol, f16.atol).ok
    f32 = Tolerances().for_output("y", np.float32, "f32")
    assert diff("y", want, have, f32.rtol, f32.atol).mismatches == 1


def test_integers_compare_exactly_past_two_to_the_53():
    want, have = np.array([2**53], np.int64), np.array([2**53 + 1], np.int64)
    assert diff("n", want, have, 0, 0).mismatches == 1
    assert diff("n", want, want, 0, 0).ok


def _f16_accumulator():
    """acc <- acc + x for M iterations, in f16."""
    body = loop_body(
        [node("Add", ["acc_in", "x"], ["acc_out"]), node("Identity", ["cond_in"], ["keep"])],
        [typed("acc_in", T.FLOAT16, [4])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT16, [4])],
    )
    return model(
        graph(
            [node("Loop", ["M", "", "acc0"], ["acc"], body=body)],
            [typed("M", T.INT64, []), typed("acc0", T.FLOAT16, [4]), typed("x", T.FLOAT16, [4])],
            [typed("acc", T.FLOAT16, [4])],
        )
    )


def test_table_names_each_output_s_precision_and_tolerance(capsys, tmp_path, counters):
    onnx.save(_f16_accumulator(), tmp_path / "f16.onnx")
    result = run_main(capsys, "check", str(tmp_path / "f16.onnx"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert _table_row(result.stdout, "acc")[3:5] == ["f16", "5e-3/1e-3"]
    model_path, inputs = counters
    result = run_main(capsys, "check", model_path, "--inputs", inputs, "--atol", "b=0.25")
    assert _table_row(result.stdout, "a")[3:5] == ["f32", "1e-4/1e-5"]
    assert _table_row(result.stdout, "b")[3:5] == ["f32", "1e-4/0.25"]
    assert "inference precision f32," in result.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (
            ["--atol", "nosuch=1e-3"],
            "not an output of the model: nosuch; the model's outputs: a, b",
        ),
        (["--rtol", "abc"], "--rtol abc: expected a number or NAME=NUMBER"),
        (["--atol", "=1"], "--atol =1: expected a number or NAME=NUMBER"),
        (["--atol", "-1"], "must be finite and non-negative"),
        (["--rtol", "a=inf"], "must be finite and non-negative"),
        (["--atol", "a=1", "--atol", "a=2"], "output 'a' given twice"),
    ],
    ids=["unknown_output", "not_a_number", "no_name", "negative", "infinite", "twice"],
)
def test_bad_tolerances_are_one_line_exit_2(capsys, counters, args, fragment):
    model_path, inputs = counters
    result = run_main(capsys, "check", model_path, "--inputs", inputs, *args)
    assert_one_line_error(result, 2, fragment)


# -- inputs -----------------------------------------------------------------------------------
def test_val_range_fixes_a_trip_count_and_bounds_floats(capsys, tmp_path, counters):
    model_path, _ = counters
    saved = tmp_path / "fed.npz"
    args = ["--val-range", "M=5,5", "--val-range=-3,-2", "--save-inputs", str(saved)]
    result = run_main(capsys, "check", model_path, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    with np.load(saved) as fed:
        assert int(fed["M"]) == 5
        assert fed["a0"].dtype == np.float32 and ((fed["a0"] >= -3) & (fed["a0"] < -2)).all()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--val-range", "M=3,1"], "bounds must be finite with LO <= HI"),
        (["--val-range", "M=1"], "expected NAME=LO,HI or LO,HI"),
        (["--val-range", "nosuch=0,1"], "--val-range not in the model: nosuch"),
        (["--val-range", "M=0.2,0.8"], "no int64 value of input 'M' lies in [0.2, 0.8]"),
        (["--val-range", "M=1,2", "--val-range", "M=3,4"], "M given twice"),
        (["--inputs", "IN", "--val-range", "M=1,2"], "given both in --inputs and --val-range: M"),
    ],
    ids=["reversed", "one_bound", "unknown", "no_integer", "twice", "given_too"],
)
def test_bad_val_ranges_are_one_line_exit_2(capsys, counters, args, fragment):
    model_path, inputs = counters
    args = [inputs if arg == "IN" else arg for arg in args]
    assert_one_line_error(run_main(capsys, "check", model_path, *args), 2, fragment)


def test_boolean_input_ranges_are_zero_or_one(capsys, tmp_path):
    body = loop_body(
        [node("Identity", ["a_in"], ["a_out"]), node("Identity", ["cond_in"], ["keep"])],
        [typed("a_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("a_out", T.FLOAT, [2])],
    )
    made = model(
        graph(
            [node("Loop", ["M", "go", "a0"], ["a"], body=body)],
            [typed("M", T.INT64, []), typed("go", T.BOOL, []), typed("a0", T.FLOAT, [2])],
            [typed("a", T.FLOAT, [2])],
        )
    )
    onnx.save(made, tmp_path / "cond.onnx")
    saved = tmp_path / "fed.npz"
    source = str(tmp_path / "cond.onnx")
    result = run_main(capsys, "check", source, "--val-range", "go=0,0", "--save-inputs", str(saved))
    assert result.returncode == 0, result.stdout + result.stderr
    with np.load(saved) as fed:
        assert fed["go"].dtype == np.bool_ and not fed["go"]
    result = run_main(capsys, "check", source, "--val-range", "go=0,2")
    assert_one_line_error(result, 2, "input 'go' is boolean: its bounds are 0 or 1")


def test_openvino_shape_syntax_beside_the_equals_form(capsys, tmp_path):
    made, _ = scan_scenarios.scan8_sequence_lens_variable_lengths()
    onnx.save(made, tmp_path / "scan8.onnx")
    saved = tmp_path / "fed.npz"
    shapes = ["--shape", "lens[3],s0[3,2]", "--shape", "x=3,4,2", "--save-inputs", str(saved)]
    result = run_main(capsys, "check", str(tmp_path / "scan8.onnx"), *shapes)
    assert result.returncode == 0, result.stdout + result.stderr
    with np.load(saved) as fed:
        assert [fed[name].shape for name in ("lens", "s0", "x")] == [(3,), (3, 2), (3, 4, 2)]


@pytest.mark.parametrize(
    "shape, fragment",
    [
        ("x[3,4", "expected NAME[D0,D1,...][,NAME[...]]"),
        ("x[3]y[2]", "expected NAME[D0,D1,...][,NAME[...]]"),
        ("[3,4]", "expected NAME=D0,D1,... or NAME[D0,D1,...]"),
        ("x[a,2]", "dims must be integers"),
        ("nosuch[3]", "--shape not in the model: nosuch; the model's inputs: lens, s0, x"),
        ("x[3,4,2],x[3,4,2]", "input 'x' given twice"),
    ],
    ids=["unclosed", "no_comma", "no_name", "not_integers", "unknown", "twice"],
)
def test_bad_bracket_shapes_are_one_line_exit_2(capsys, tmp_path, shape, fragment):
    made, _ = scan_scenarios.scan8_sequence_lens_variable_lengths()
    onnx.save(made, tmp_path / "scan8.onnx")
    result = run_main(capsys, "check", str(tmp_path / "scan8.onnx"), "--shape", shape)
    assert_one_line_error(result, 2, fragment)


# -- saved inputs and outputs -----------------------------------------------------------------
def test_saved_inputs_and_outputs_round_trip_and_saved_outputs_decide(capsys, tmp_path, counters):
    model_path, _ = counters
    fed, got = tmp_path / "fed.npz", tmp_path / "got.npz"
    first = run_main(
        capsys, "check", model_path, "--save-inputs", str(fed), "--save-outputs", str(got)
    )
    assert first.returncode == 0, first.stdout + first.stderr
    with np.load(fed) as inputs, np.load(got) as outputs:
        assert sorted(inputs.files) == ["M", "a0", "b0"] and sorted(outputs.files) == ["a", "b"]
        expected_a = inputs["a0"] + int(inputs["M"])
        np.testing.assert_allclose(outputs["a"], expected_a, rtol=1e-6)
        wrong = {"a": outputs["a"], "b": outputs["b"] + 1}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    again = run_main(capsys, "check", model_path, "--inputs", str(fed), "--load-outputs", str(got))
    assert again.returncode == 0, again.stdout
    assert "saved vs the device: agrees on all 2 output(s)" in again.stdout
    np.savez(tmp_path / "wrong.npz", **wrong)
    off = run_main(
        capsys,
        "check",
        model_path,
        "--inputs",
        str(fed),
        "--load-outputs",
        str(tmp_path / "wrong.npz"),
    )
    assert off.returncode == 1 and off.stdout.strip().endswith("MISMATCH")
    assert "saved vs the device: DISAGREES on b" in off.stdout
    assert (
        _table_row(off.stdout, "b")[-2:] == ["2", "differ"]
        and _table_row(off.stdout, "a")[-1] == "ok"
    )


@pytest.mark.parametrize(
    "outputs, fragment",
    [
        ({"a": np.zeros(2, np.float32)}, "(missing b); the model's outputs: a, b"),
        (
            {"a": np.zeros(2), "b": np.zeros(2), "c": np.zeros(1)},
            "not outputs of the model: c",
        ),
        ({"a": np.zeros(2), "b": np.array(["x", "y"])}, "saved output 'b' holds <U1 values"),
    ],
    ids=["missing", "extra", "strings"],
)
def test_load_outputs_checks_names_and_kinds(capsys, tmp_path, counters, outputs, fragment):
    model_path, inputs = counters
    np.savez(tmp_path / "saved.npz", **outputs)
    args = ["--inputs", inputs, "--load-outputs", str(tmp_path / "saved.npz")]
    assert_one_line_error(run_main(capsys, "check", model_path, *args), 2, fragment)


def test_unwritable_or_unreadable_npz_paths_are_one_line_exit_2(capsys, tmp_path, counters):
    model_path, inputs = counters
    for option in ("--save-inputs", "--save-outputs"):
        result = run_main(capsys, "check", model_path, option, str(tmp_path / "no" / "f.npz"))
        assert_one_line_error(result, 2, "no such directory")
    result = run_main(capsys, "check", model_path, "--load-outputs", str(tmp_path / "none.npz"))
    assert_one_line_error(result, 2, "cannot read outputs")
    assert not (tmp_path / "no").exists()


# -- vacuous matches --------------------------------------------------------------------------
def _scan_output_only():
    """ys[i] = x * 2 for M iterations: the only output is the stacked scan output."""
    body = loop_body(
        [node("Add", ["x", "x"], ["y"]), node("Identity", ["cond_in"], ["keep"])],
        [],
        [typed("keep", T.BOOL, []), typed("y", T.FLOAT, [2])],
    )
    return model(
        graph(
            [node("Loop", ["M", ""], ["ys"], body=body, name="stacker")],
            [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
            [typed("ys", T.FLOAT, [None, 2])],
        )
    )


def test_all_empty_outputs_and_an_idle_loop_are_warned_about(capsys, tmp_path):
    onnx.save(_scan_output_only(), tmp_path / "stack.onnx")
    result = run_main(capsys, "check", str(tmp_path / "stack.onnx"), "--val-range", "M=0,0")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "  warning: every output is empty: no element was compared" in lines
    assert any(
        "warning: loop(s) main/stacker ran zero times on the generated inputs (generated: M, x)"
        in line
        for line in lines
    ), lines
    assert lines[-1] == "MATCH (2 warning(s) above)"
    busy = run_main(capsys, "check", str(tmp_path / "stack.onnx"), "--val-range", "M=2,2")
    assert "warning" not in busy.stdout and busy.stdout.splitlines()[-1] == "MATCH"


def test_zero_trips_from_given_inputs_are_not_warned_about_but_empty_outputs_are(capsys, tmp_path):
    onnx.save(_scan_output_only(), tmp_path / "stack.onnx")
    np.savez(tmp_path / "in.npz", M=np.array(0), x=np.ones(2, np.float32))
    result = run_main(
        capsys, "check", str(tmp_path / "stack.onnx"), "--inputs", str(tmp_path / "in.npz")
    )
    assert "ran zero times" not in result.stdout
    assert "every output is empty" in result.stdout


# -- second opinions --------------------------------------------------------------------------
def test_onnxruntime_missing_or_refusing_is_a_line_saying_why(capsys, monkeypatch, counters):
    model_path, inputs = counters
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    result = run_main(capsys, "check", model_path, "--inputs", inputs)
    assert "  onnxruntime: skipped: onnxruntime is not installed" in result.stdout
    assert "onnxruntime" not in result.stdout.splitlines()[1]  # no column without results

    def refuse(*args, **kwargs):
        raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : no such thing\n")

    fake = types.SimpleNamespace(
        SessionOptions=lambda: types.SimpleNamespace(), InferenceSession=refuse
    )
    monkeypatch.setitem(sys.modules, "onnxruntime", fake)
    result = run_main(capsys, "check", model_path, "--inputs", inputs)
    assert result.returncode == 0
    assert (
        "  onnxruntime: skipped: onnxruntime refuses the model: [ONNXRuntimeError] : 10 : "
        "INVALID_GRAPH : no such thing"
    ) in result.stdout


def test_against_convert_model_is_its_own_column(capsys, counters):
    model_path, inputs = counters
    result = run_main(capsys, "check", model_path, "--inputs", inputs, "--against", "convert-model")
    assert result.returncode == 0, result.stdout + result.stderr
    header = _table_row(result.stdout, "output")
    assert header[-2:] == ["onnxruntime", "convert_model"]
    assert _table_row(result.stdout, "a")[-2:] == ["ok", "ok"]
    assert "convert_model vs the reference: agrees on all 2 output(s)" in result.stdout


def test_against_convert_model_needs_onnx_and_a_known_name(capsys):
    ir = "ir_samples/valid/nested_loops.xml"
    result = run_main(capsys, "check", ir, "--against", "convert-model")
    assert_one_line_error(result, 2, "--against convert-model needs an ONNX model")
    result = run_cli("check", ir, "--against", "tensorrt")
    assert_one_line_error(result, 2, "--against", "invalid choice")


CRASHING_CONVERT = """
import os, signal
from ov_loops.checking import _device_worker as worker

def crash(*args):
    os.kill(os.getpid(), signal.SIGSEGV)

worker._convert_model = crash
worker.main()
"""


def test_a_convert_model_crash_is_a_line_and_the_check_goes_on(
    capsys, monkeypatch, tmp_path, counters
):
    """The worker that converts dies with SIGSEGV in openvino.convert_model (a stand-in for a
    crashing frontend): the opinion says so, and the check still compares and answers."""
    script = tmp_path / "crashing_worker.py"
    script.write_text(CRASHING_CONVERT)
    monkeypatch.setattr(device, "_worker", device.DeviceWorker([sys.executable, str(script)]))
    model_path, inputs = counters
    result = run_main(capsys, "check", model_path, "--inputs", inputs, "--against", "convert-model")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "  convert_model: skipped: OpenVINO crashed with SIGSEGV during convert_model: "
        "openvino.convert_model cannot convert this model"
    ) in result.stdout
    assert result.stdout.splitlines()[-1] == "MATCH"
    device._worker.stop()


def test_convert_model_failure_is_a_reason(tmp_path):
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    settings = Settings("CPU", {}, 0, 1e-4, 1e-5, "f32", 100)
    reason = convert_model_outputs(tmp_path / "junk.onnx", tmp_path, settings, {})
    assert isinstance(reason, str) and reason.startswith("openvino.convert_model failed: ")


# -- --format json ----------------------------------------------------------------------------
def test_check_json_is_one_object_with_the_documented_keys(capsys, counters):
    model_path, inputs = counters
    args = ["--inputs", inputs, "--atol", "b=0.5", "--format", "json"]
    result = run_main(capsys, "check", model_path, *args)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "ov-loops-check/1" and report["verdict"] == "MATCH"
    assert report["precision"] == {"requested": "f32", "inferred": "f32"}
    a, b = report["outputs"]
    assert (a["name"], a["computed_in"], a["rtol"], a["atol"]) == ("a", "f32", 1e-4, 1e-5)
    assert (b["atol"], b["tolerance_source"]) == (0.5, "--rtol/--atol b=")
    assert a["opinions"]["onnxruntime"]["ok"] is True
    assert report["opinions"] == [
        {
            "name": "onnxruntime",
            "against": "reference",
            "status": "compared",
            "reason": None,
            "ok": True,
            "decides": False,
        }
    ]
    assert (report["divergence"], report["warnings"], report["exit_code"]) == (None, [], 0)


def test_check_json_of_a_mismatch_has_its_numbers_as_json(capsys):
    result = run_main(capsys, "check", "ir_samples/valid/loop_all_ports.xml", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)  # no bare Infinity or NaN
    assert report["verdict"] == "MISMATCH" and report["exit_code"] == 1
    assert all(output["mismatches"] > 0 for output in report["outputs"])


def test_validate_json_includes_show(capsys):
    sample = "ir_samples/valid/nested_loops.xml"
    shown = run_main(capsys, "validate", sample, "--show").stdout.splitlines()
    report = json.loads(run_main(capsys, "validate", sample, "--format", "json", "--show").stdout)
    assert report["show"] == shown[: len(report["show"])] and report["show"]
    plain = json.loads(run_main(capsys, "validate", sample, "--format", "json").stdout)
    assert "show" not in plain and plain["loops"] == report["loops"]


def test_convert_json_lists_each_loop(capsys, tmp_path, counters):
    model_path, _ = counters
    out = tmp_path / "out.xml"
    result = run_main(capsys, "convert", model_path, "-o", str(out), "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "ov-loops-convert/1" and report["output"] == str(out)
    (loop,) = report["loops"]
    assert (loop["path"], loop["op"], loop["becomes"], loop["folded"]) == (
        "main/counters",
        "Loop",
        "Loop-5",
        None,
    )
    assert loop["carried"] == ["a0", "b0"] and loop["spec"].startswith("trip count input;")
    assert report["translated"] == 1 and out.exists()


# -- verbosity and progress -------------------------------------------------------------------
def test_verbose_logs_stages_quiet_logs_nothing(capsys, monkeypatch, counters):
    monkeypatch.delenv("OV_LOOPS_PROGRESS", raising=False)
    model_path, inputs = counters
    verbose = run_main(capsys, "check", model_path, "--inputs", inputs, "-v")
    said = verbose.stderr.splitlines()
    assert any(line.startswith("ov-loops: INFO: main/counters converted in") for line in said)
    assert any(line.startswith("ov-loops: INFO: compiled and ran on CPU in") for line in said)
    quiet = run_main(capsys, "check", model_path, "--inputs", inputs, "-q")
    assert quiet.stderr == "" and quiet.stdout.strip().endswith("MATCH")
    plain = run_main(capsys, "check", model_path, "--inputs", inputs)
    assert plain.stderr == ""  # not a terminal: no progress lines


def test_progress_lines_forced_on_and_off_by_quiet(capsys, monkeypatch, tmp_path, counters):
    monkeypatch.setenv("OV_LOOPS_PROGRESS", "1")
    model_path, inputs = counters
    result = run_main(capsys, "convert", model_path, "-o", str(tmp_path / "o.xml"))
    lines = result.stderr.splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("ov-loops: [")
        and "] main/counters converted in " in lines[0]
    )
    checked = run_main(capsys, "check", model_path, "--inputs", inputs)
    stages = [line.split("] ", 1)[1].split(" in ")[0] for line in checked.stderr.splitlines()]
    assert stages[-2:] == ["compiled and ran on CPU", "onnxruntime ran"], stages
    assert run_main(capsys, "check", model_path, "--inputs", inputs, "-q").stderr == ""


def test_help_documents_max_iterations_formats_and_tolerances():
    text = run_cli("check", "--help").stdout
    for fragment in (
        "--max-iterations N",
        "--val-range",
        "NAME[D0,D1]",
        "ov-loops-check/1",
        "bf16 4e-2/1e-2",
    ):
        assert fragment in text, fragment
    assert "ov-loops-convert/1" in "".join(run_cli("convert", "--help").stdout.split())
    assert "layer_path" in "".join(run_cli("validate", "--help").stdout.split())


def test_ir_check_says_why_onnxruntime_is_not_asked(capsys):
    result = run_main(capsys, "check", "ir_samples/valid/nested_loops.xml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "  onnxruntime: skipped: the model is an IR (onnxruntime runs ONNX" in result.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_waits_for_long_work_and_quiet_silences_it(monkeypatch):
    """On a terminal, progress lines appear once the work has taken PROGRESS_AFTER seconds."""
    monkeypatch.delenv("OV_LOOPS_PROGRESS", raising=False)
    terminal = _Terminal()
    with logs.configured(0, terminal):
        _progress_waits_then_shows(terminal)
    assert not any(getattr(h, "_ov_loops_cli", False) for h in logs.PROGRESS.handlers)


def _progress_waits_then_shows(terminal: _Terminal) -> None:
    (handler,) = logs.PROGRESS.handlers
    logs.progress("main/Loop_0 converted", 0.1)
    assert terminal.getvalue() == ""  # quick work: no line
    handler.start -= logs.PROGRESS_AFTER
    logs.progress("main/Loop_1 converted", 1.5)
    (line,) = terminal.getvalue().splitlines()
    assert line.startswith("ov-loops: [") and line.endswith("] main/Loop_1 converted in 1.50 s")
    logs.configure(-1, terminal)
    assert logs.PROGRESS.handlers == []


@dataclasses.dataclass(frozen=True)
class _Found:
    """A stand-in for the divergence locator's answer: a dataclass with a text()."""

    loop_path: str
    iteration: int

    def text(self) -> str:
        return f"first divergence: {self.loop_path}, iteration {self.iteration}"


def test_check_json_carries_the_divergence_and_non_finite_numbers_as_strings():
    from ov_loops.checking.diff import OutputDiff
    from ov_loops.checking.report import CheckReport

    row = OutputDiff("a", (2,), "float32", float("inf"), float("nan"), 2, "shape differs")
    tolerance = Tolerances().for_output("a", np.float32, "f32")
    report = CheckReport("m.onnx", "CPU", "f32", [row], "ONNX reference (numpy)", [tolerance])
    report.divergence = _Found("main/counters", 3)
    document = json.loads(report.to_json())
    assert document["divergence"] == {
        "text": "first divergence: main/counters, iteration 3",
        "loop_path": "main/counters",
        "iteration": 3,
    }
    (output,) = document["outputs"]
    assert (output["max_abs_error"], output["max_rel_error"]) == ("inf", "nan")
    assert document["verdict"] == "MISMATCH" and output["note"] == "shape differs"


def test_native_precision_is_read_back_from_the_device_and_sets_the_tolerance(capsys, counters):
    """This CPU infers in bf16 by default: f32 outputs are judged at bf16 tolerance there (on a
    CPU without bf16 the device reports f32 and so does the table)."""
    model_path, inputs = counters
    args = ["--inputs", inputs, "--precision", "native", "--format", "json"]
    report = json.loads(run_main(capsys, "check", model_path, *args).stdout)
    inferred = report["precision"]["inferred"]
    assert report["precision"]["requested"] == "native" and inferred in ("bf16", "f16", "f32")
    expected = Tolerances().for_output("a", np.float32, inferred)
    a = report["outputs"][0]
    assert (a["computed_in"], a["rtol"], a["atol"]) == (inferred, expected.rtol, expected.atol)
