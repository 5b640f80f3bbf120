"""`ov-loops check` checks what is deployed (issue 20): an .onnx is converted with convert's
options (one definition, same parsing and validation) and the report says which; an .xml
refuses them; weights stored as f16 are compared at a tolerance that fits their rounding, said
in the report; an IR input without a tensor name is generated and fed by its layer name."""

from __future__ import annotations

import json
import shutil

import numpy as np
import onnx
import onnxruntime as ort
import openvino.opset15 as ops
import pytest
from lxml import etree

import ov_loops
import ov_loops.checking.run as check_run
from ov_loops.checking.device import core
from ov_loops.checking.tolerance import F16_WEIGHTS, Tolerances, magnitude
from ov_loops.checking.weights import f16_weights, rounded_weights
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.reference.onnx_reference import run_onnx
from tests.checking.test_check import _two_counters, run_main
from tests.harness import assert_one_line_error, run_cli

RNN_SCAN = "ir_samples/rnn_scan.onnx"
RNN_FEEDS = dict(np.load("ir_samples/rnn_scan.inputs.npz"))


def _json(result) -> dict:
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _onnxruntime_outputs(path: str, feeds: dict, target) -> None:
    """onnxruntime's outputs of the model at `path` on `feeds`, saved as the .npz `target`."""
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)
    np.savez(target, **{o.name: v for o, v in zip(session.get_outputs(), outputs)})


@pytest.fixture
def rnn(tmp_path):
    """rnn_scan.onnx converted as convert converts it (f16 weights), its inputs, and
    onnxruntime's outputs on them."""
    xml, inputs, saved = tmp_path / "rnn.xml", tmp_path / "in.npz", tmp_path / "ort.npz"
    assert run_cli("convert", RNN_SCAN, "-o", str(xml)).returncode == 0
    np.savez(inputs, **RNN_FEEDS)
    _onnxruntime_outputs(RNN_SCAN, RNN_FEEDS, saved)
    return xml, str(inputs), str(saved)


# -- convert's options -------------------------------------------------------------------------
def _faulty_at_max(monkeypatch) -> list[dict]:
    """check's `translate` as the real one, but a conversion at --optimize max computes its
    first output plus 1 (a defect only that level has); the keywords of each call are kept."""
    calls, translate = [], check_run.translate

    def faulty(source, **options):
        calls.append(options)
        conversion = translate(source, **options)
        if options["optimize"] == "max":
            result = conversion.model.outputs[0].get_node()
            bumped = ops.add(result.input_value(0), np.float32(1))
            result.input(0).replace_source_output(bumped.output(0))
        return conversion

    monkeypatch.setattr(check_run, "translate", faulty)
    return calls


def test_check_converts_with_convert_s_options_and_says_which(capsys, tmp_path, monkeypatch):
    """A defect of --optimize max alone: check at the default level matches, check
    --optimize max finds it; the report names the options it converted with."""
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    calls = _faulty_at_max(monkeypatch)
    model = str(tmp_path / "counters.onnx")
    shape = ["--val-range", "M=3,3"]
    default = run_main(capsys, "check", model, *shape)
    assert default.returncode == 0, default.stdout + default.stderr
    assert (
        "  converted with --optimize default --target CPU --compress_to_fp16=True: "
        "weights stored as f16 (3 constant(s), 0 rounded)"
    ) in default.stdout
    args = ["--optimize", "max", "--unroll", "4", "--compress_to_fp16=False", "--format", "json"]
    report = _json(run_main(capsys, "check", model, *shape, *args))
    assert (report["verdict"], report["outputs"][0]["ok"]) == ("MISMATCH", False)
    assert report["conversion"] == {
        "optimize": "max",
        "input": None,
        "target": "CPU",
        "unroll": 4,
        "stateful": False,
        "max_trip_count": None,
        "compress_to_fp16": False,
    }
    assert calls[-1] == {
        "optimize": "max", "input": None, "target": "CPU", "unroll": 4, "stateful": False,
        "max_trip_count": None,
    }  # fmt: skip
    assert report["f16_weights"] == 0


def test_the_python_api_takes_convert_s_keywords(tmp_path, monkeypatch):
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    calls = _faulty_at_max(monkeypatch)
    feeds = {"M": np.array(3), "a0": np.zeros(2, np.float32), "b0": np.ones(2, np.float32)}
    report = ov_loops.check(tmp_path / "counters.onnx", inputs=feeds, optimize="max", target="GPU")
    assert not report.ok and calls[-1]["target"] == "GPU"
    assert report.conversion.spelled() == "--optimize max --target GPU --compress_to_fp16=True"
    with pytest.raises(ov_loops.InputError, match="optimize: unknown level 'fast'"):
        ov_loops.check(tmp_path / "counters.onnx", inputs=feeds, optimize="fast")
    with pytest.raises(ov_loops.InputError, match="compress_to_fp16 must be True or False"):
        ov_loops.check(tmp_path / "counters.onnx", inputs=feeds, compress_to_fp16="no")


@pytest.mark.parametrize(
    "option",
    [
        ["--optimize", "fast"],
        ["--compress_to_fp16=maybe"],
        ["--target", "XPU"],
        ["--unroll", "two"],
        ["--input", "X[1,2"],
        ["--input", "nosuch[1]"],
        ["--unroll=-1"],
    ],
    ids=["level", "flag", "target", "unroll", "input_text", "input_name", "negative_unroll"],
)
def test_bad_conversion_options_are_refused_as_convert_refuses_them(tmp_path, option):
    """The same definition, parsing and validation: the same one line, exit 2."""
    converted = run_cli("convert", RNN_SCAN, "-o", str(tmp_path / "x.xml"), *option)
    checked = run_cli("check", RNN_SCAN, *option)
    assert_one_line_error(converted, 2)
    assert_one_line_error(checked, 2)
    assert checked.stderr == converted.stderr


def test_an_ir_refuses_conversion_options_in_one_line(rnn):
    xml, _, _ = rnn
    assert_one_line_error(
        run_cli("check", str(xml), "--optimize", "default", "--compress_to_fp16=False"),
        2,
        "--optimize, --compress_to_fp16: conversion options do not apply to an IR",
    )
    with pytest.raises(ov_loops.InputError, match="--stateful: conversion options do not"):
        ov_loops.check(xml, stateful=False)


def test_input_shapes_the_conversion_and_the_generated_inputs(capsys):
    """--input fixes X's dims (and bounds T to 3..6): generated inputs follow it, within the
    bounds (2 would be outside), and the IR checked has them."""
    args = ["--input", "X[3..6,1,16],h0[1,16]", "--format", "json"]
    report = _json(run_main(capsys, "check", RNN_SCAN, *args))
    assert report["verdict"] == "MATCH", report
    assert report["outputs"][1]["shape"] == [3, 1, 16]
    assert report["conversion"]["input"] == "X[3..6,1,16],h0[1,16]"
    static = _json(run_main(capsys, "check", RNN_SCAN, "--input", "X[5,1,16]", "--format", "json"))
    assert static["outputs"][1]["shape"] == [5, 1, 16] and static["verdict"] == "MATCH"


@pytest.mark.parametrize("given", [False, True])
def test_an_input_retyped_by_input_is_fed_in_its_type(capsys, tmp_path, given):
    """--input X[...]{f16}: the IR takes X as f16 (converted to f32 where it enters). check
    feeds it f16 values, and the references the same values in f32; before, every such check
    failed ("Failed to set tensor for input with precision: f32 ... is: f16"), given or
    generated inputs alike."""
    args = ["--input", "X[5,1,16]{f16}", "--compress_to_fp16=False", "--format", "json"]
    if given:
        feeds = {"h0": RNN_FEEDS["h0"], "X": np.random.default_rng(7).random((5, 1, 16))}
        np.savez(tmp_path / "in.npz", **feeds)  # X in f64, not a value f16 holds exactly
        args += ["--inputs", str(tmp_path / "in.npz"), "--save-inputs", str(tmp_path / "fed.npz")]
    report = _json(run_main(capsys, "check", RNN_SCAN, *args))
    assert report["verdict"] == "MATCH", report
    assert report["outputs"][1]["max_abs_error"] < 1e-5  # the same inputs on both sides
    if given:
        fed = np.load(tmp_path / "fed.npz")["X"]
        assert fed.dtype == np.float32 and np.array_equal(fed, feeds["X"].astype(np.float16))


def test_chunks_convert_stateful_given_or_not(capsys, tmp_path):
    np.savez(tmp_path / "in.npz", **RNN_FEEDS)
    for extra in ([], ["--stateful"]):
        args = ["--inputs", str(tmp_path / "in.npz"), "--chunks", "X=5,7", "--format", "json"]
        report = _json(run_main(capsys, "check", RNN_SCAN, *args, *extra))
        assert report["verdict"] == "MATCH" and report["conversion"]["stateful"] is True
        assert report["chunks"]["lengths"] == [5, 7]


def test_chunks_an_input_made_static_cannot_take_are_refused_in_one_line(capsys, tmp_path):
    """--input X[12,1,16] with --chunks X=5,7: each chunk failed at the device ("inference
    failed: Can't set the input tensor ... are incompatible"); now refused before it runs."""
    np.savez(tmp_path / "in.npz", **RNN_FEEDS)
    given = ["--inputs", str(tmp_path / "in.npz"), "--chunks", "X=5,7"]
    result = run_main(capsys, "check", RNN_SCAN, *given, "--input", "X[12,1,16],h0[1,16]")
    assert_one_line_error(result, 2, "--chunks: the model's input 'X' takes dim 12 on axis 0")
    bounded = run_main(capsys, "check", RNN_SCAN, *given, "--input", "X[1..12,1,16],h0[1,16]")
    assert bounded.returncode == 0, bounded.stderr


# -- weights stored as f16 -----------------------------------------------------------------------
def test_f16_weights_against_onnxruntime_match_at_their_tolerance_and_say_so(rnn, capsys):
    """convert's IR (f16 weights) against onnxruntime's outputs (f32 weights): 5.6e-4 apart,
    a MISMATCH at f32 tolerance that said nothing of why; at the f16 weights' tolerance a
    MATCH whose report says which tolerance and why."""
    xml, inputs, saved = rnn
    result = run_main(capsys, "check", str(xml), "--inputs", inputs, "--load-outputs", saved)
    assert result.returncode == 0, result.stdout
    assert "the IR as given (check converts only an .onnx): weights stored as f16" in (
        result.stdout
    )
    assert (
        "note: weights stored as f16, compared with results of f32 weights (the saved outputs) "
        "at tolerance 'f16 weights': rtol 0.00195, atol 0.00195 x max|expected|"
    ) in result.stdout
    document = _json(
        run_main(capsys, "check", str(xml), "--inputs", inputs, "--load-outputs", saved,
                 "--format", "json")
    )  # fmt: skip
    hs = document["outputs"][1]
    assert (hs["rtol"], hs["tolerance_source"]) == (1e-4, "default")  # the IR reference: f16 too
    cell = hs["opinions"]["saved"]
    assert (cell["tolerance_source"], cell["rtol"]) == ("f16 weights", F16_WEIGHTS)
    assert 2.5e-4 < cell["max_abs_error"] < cell["atol"]


def test_f16_weights_still_mismatching_hint_at_f32_weights(rnn, capsys, tmp_path):
    xml, inputs, saved = rnn
    wrong = {name: value + np.float32(0.05) for name, value in np.load(saved).items()}
    np.savez(tmp_path / "wrong.npz", **wrong)
    args = ["--inputs", inputs, "--load-outputs", str(tmp_path / "wrong.npz")]
    result = run_main(capsys, "check", str(xml), *args)
    assert result.returncode == 1
    assert (
        "  hint: the IR stores its weights as f16: convert it with --compress_to_fp16=False for "
        "f32 weights, or give --rtol/--atol"
    ) in result.stdout
    onnx_result = run_main(capsys, "check", RNN_SCAN, *args)
    assert onnx_result.returncode == 1
    assert "  hint: --compress_to_fp16=False converts with f32 weights" in onnx_result.stdout


def test_an_onnx_check_compares_f16_weights_with_the_reference_at_their_tolerance(capsys, tmp_path):
    """Default: convert's f16 weights, rounded, so the ONNX reference (f32 weights) is compared
    at the f16 weights' tolerance, scaled by each output's max|reference|; onnxruntime against
    the reference stays at f32's; --compress_to_fp16=False keeps f32's everywhere."""
    np.savez(tmp_path / "in.npz", **RNN_FEEDS)
    args = ["--inputs", str(tmp_path / "in.npz"), "--format", "json"]
    document = _json(run_main(capsys, "check", RNN_SCAN, *args))
    assert (document["f16_weights"], document["rounded_weights"]) == (3, 3)
    hs = document["outputs"][1]
    assert hs["tolerance_source"] == "f16 weights" and hs["ok"]
    reference = run_onnx(load_model(RNN_SCAN).model, RNN_FEEDS)[1]
    assert hs["atol"] == pytest.approx(F16_WEIGHTS * np.abs(reference).max(), rel=1e-6)
    assert hs["opinions"]["onnxruntime"]["tolerance_source"] == "default"
    plain = _json(run_main(capsys, "check", RNN_SCAN, *args, "--compress_to_fp16=False"))
    assert (plain["f16_weights"], plain["outputs"][1]["tolerance_source"]) == (0, "default")
    assert (plain["outputs"][1]["rtol"], plain["outputs"][1]["atol"]) == (1e-4, 1e-5)


def test_weights_exact_in_f16_keep_the_f32_tolerance(capsys, tmp_path):
    """The counters' weights (1, 2, and the body's) are stored as f16 without rounding:
    nothing to loosen."""
    onnx.save(_two_counters(), tmp_path / "counters.onnx")
    document = _json(run_main(capsys, "check", str(tmp_path / "counters.onnx"), "--format", "json"))
    assert (document["f16_weights"], document["rounded_weights"]) == (3, 0)
    assert {o["tolerance_source"] for o in document["outputs"]} == {"default"}
    assert not any("f16" in note for note in document["notes"])


def test_f16_weights_are_counted_and_their_rounding_found(tmp_path):
    conversion = ov_loops.translate(RNN_SCAN)
    ov_loops.save(conversion.model, tmp_path / "f16.xml")
    ov_loops.save(conversion.model, tmp_path / "f32.xml", compress_to_fp16=False)
    stored = core().read_model(str(tmp_path / "f16.xml"))
    assert f16_weights(stored) == rounded_weights(stored, conversion.model) == 3
    assert f16_weights(core().read_model(str(tmp_path / "f32.xml"))) == 0
    counters = ov_loops.translate(_two_counters())
    ov_loops.save(counters.model, tmp_path / "counters.xml")
    stored = core().read_model(str(tmp_path / "counters.xml"))
    assert (f16_weights(stored), rounded_weights(stored, counters.model)) == (3, 0)


def test_the_f16_weights_tolerance_is_scaled_and_yields_to_given_ones():
    tolerances = Tolerances()
    loosened = tolerances.for_output("y", np.float32, "f32", weights_scale=10.0)
    assert (loosened.rtol, loosened.atol, loosened.source) == (
        F16_WEIGHTS, 10 * F16_WEIGHTS, "f16 weights"
    )  # fmt: skip
    assert tolerances.for_output("y", np.float32, "bf16", 0.1).rtol == 4e-2  # the looser stays
    assert tolerances.for_output("n", np.int64, "f32", 10.0).text() == "exact"
    given = Tolerances(rtol=1e-6).for_output("y", np.float32, "f32", 10.0)
    assert (given.rtol, given.source) == (1e-6, "--rtol/--atol")
    assert magnitude(np.array([-3.0, np.inf, np.nan, 2.0])) == 3.0


# -- an IR input without a tensor name -------------------------------------------------------------
def _without_port_names(xml, target) -> None:
    """The IR at `xml` with the `names` of its main graph's output ports removed (Parameters
    and every layer feeding a Result alike), as `target`."""
    tree = etree.parse(str(xml))
    for layer in tree.getroot().find("layers"):
        for port in layer.findall("output/port"):
            port.attrib.pop("names", None)
    tree.write(str(target))
    shutil.copy(xml.with_suffix(".bin"), target.with_suffix(".bin"))


def test_an_ir_input_without_a_tensor_name_goes_by_its_layer_name(rnn, capsys, tmp_path):
    xml, _, _ = rnn
    nameless = tmp_path / "nameless.xml"
    _without_port_names(xml, nameless)
    assert all(not port.get_names() for port in core().read_model(str(nameless)).inputs)
    result = run_cli("check", str(nameless))
    assert result.returncode == 0, result.stdout + result.stderr
    np.savez(tmp_path / "h0.npz", h0=RNN_FEEDS["h0"])
    args = ["--inputs", str(tmp_path / "h0.npz"), "--shape", "X=5,1,16"]
    args += ["--save-outputs", str(tmp_path / "out.npz"), "--format", "json"]
    document = _json(run_main(capsys, "check", str(nameless), *args))
    assert document["verdict"] == "MATCH"
    assert [o["shape"] for o in document["outputs"]] == [[1, 16], [5, 1, 16]]
    assert sorted(np.load(tmp_path / "out.npz").files) == ["h_last", "hs"]
