"""Run converted models on the CPU in f32 and compare them with onnxruntime; run the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
from lxml import etree

import ov_loops
from ov_loops.checking.device import core, run
from ov_loops.ir.reader import loop_spec, loops, read_ir

F32 = {"INFERENCE_PRECISION_HINT": "f32"}  # the CPU config: this CPU computes in bf16 by default


def compile_f32(model: ov.Model | str | Path) -> ov.CompiledModel:
    """Compile a model, or the IR at a path, on CPU with f32 inference precision, with the one
    OpenVINO Core of the process (ov-loops' own)."""
    if not isinstance(model, ov.Model):
        model = core().read_model(str(model))
    return core().compile_model(model, "CPU", F32)


def check_ir(xml: Path) -> etree._ElementTree:
    """The IR has no TensorIterator, only Loop-5 loops, no negative axes, and OpenVINO reads it."""
    tree = etree.parse(str(xml), etree.XMLParser(resolve_entities=False, no_network=True))
    layers = tree.iter("layer")
    for layer in layers:
        assert layer.get("type") != "TensorIterator", f"TensorIterator layer {layer.get('name')}"
        if layer.get("type") == "Loop":
            assert layer.get("version") == "opset5", layer.get("version")
    for entry in tree.iter("input", "output"):
        if entry.getparent() is not None and entry.getparent().tag == "port_map":
            assert int(entry.get("axis", "0")) >= 0, etree.tostring(entry)
    core().read_model(str(xml))
    return tree


def save_and_reload(
    model: ov.Model, directory: Path, conversion: ov_loops.Conversion | None = None
) -> tuple[ov.Model, etree._ElementTree]:
    """Save, check the IR, validate it (no error) and, given the conversion, check that the
    validator reads back each loop's LoopSpec exactly as the translator built it."""
    xml = directory / "model.xml"
    ov_loops.save(model, xml, compress_to_fp16=False)  # compared with f32 references
    tree = check_ir(xml)
    report = ov_loops.validate(xml)
    assert not report.errors, [finding.text(xml) for finding in report.errors]
    if conversion is not None:
        document = read_ir(xml)
        # A split loop's second Loop-5 (lower/remainder.py) is its loop's `remainder`.
        read_back = sorted(repr(loop_spec(document, g, layer)) for _, g, layer in loops(document))
        built = sorted(
            repr(spec)
            for loop in conversion.loops
            for spec in (loop.spec, loop.remainder)
            if spec is not None
        )
        assert read_back == built
    return core().read_model(str(xml)), tree


def assert_close(expected: np.ndarray, got: np.ndarray, what: str, rtol: float, atol: float):
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.size == 0 and expected.shape == (0,) and got.size == 0 and got.shape[:1] == (0,):
        # onnxruntime returns shape (0,) for a zero-iteration scan output whose shape the body
        # does not declare; ov-loops returns [0, *per-iteration shape].
        return
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:  # as float64: numpy 1.26 cannot promote ml_dtypes' bfloat16 in assert_allclose
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, err_msg=what
        )


def onnxruntime_oracle(model: onnx.ModelProto):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def reference_oracle(model: onnx.ModelProto):
    from ov_loops.reference.onnx_reference import run_onnx

    return lambda feeds: run_onnx(model, feeds)


def assert_matches_onnxruntime(
    model: onnx.ModelProto,
    runs: list,
    directory: Path,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    oracle=onnxruntime_oracle,
    optimize: str = "default",
    translate=None,
) -> ov_loops.Conversion:
    """Convert, save, reload, compile (CPU, f32) and run every run in order against the oracle
    (onnxruntime unless told otherwise).

    A run is a feeds dict, or (feeds, expected outputs) where onnxruntime cannot compute them
    (it fails, or crashes with SIGFPE, on zero-length Scan inputs). The runs share one compiled
    model, so a zero-iteration run after a run with iterations exercises the stale-output pitfall.
    `optimize` is the optimisation level it converts with, unless `translate` (a function of
    the model) converts it.
    """
    if translate is None:
        conversion = ov_loops.translate(model, optimize=optimize)
    else:
        conversion = translate(model)
    reloaded, _ = save_and_reload(conversion.model, directory, conversion)
    compiled = compile_f32(reloaded)
    compute = oracle(model)
    names = [output.name for output in model.graph.output]
    for attempt, entry in enumerate(runs):
        feeds, expected = entry if isinstance(entry, tuple) else (entry, None)
        if expected is None:
            expected = compute(feeds)
        got = run(compiled, feeds)
        for index, name in enumerate(names):
            what = f"run {attempt} {feeds_summary(feeds)}: {name}"
            assert_close(expected[index], got[index], what, rtol, atol)
    return conversion


def feeds_summary(feeds: dict[str, np.ndarray]) -> str:
    return ", ".join(
        f"{k}={v.tolist() if np.asarray(v).size <= 2 else np.asarray(v).shape}"
        for k, v in feeds.items()
    )


# -- the command line ----------------------------------------------------------------------------
def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m ov_loops ARGS` in a subprocess (from the directory `cwd`), output as text."""
    return subprocess.run(
        [sys.executable, "-m", "ov_loops", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, code: int, *fragments: str):
    """The command exited `code` with one `ov-loops: error:` line holding every fragment."""
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ov-loops: error: "), lines[0]
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def write(tmp_path: Path, made: onnx.ModelProto, name: str = "model.onnx") -> Path:
    """Save `made` as tmp_path/name; the path."""
    path = tmp_path / name
    path.write_bytes(made.SerializeToString())
    return path
