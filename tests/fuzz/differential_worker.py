"""The in-worker half of the differential campaign: one seed, one outcome (see differential.py).

Runs in a process of its own, which a native crash may kill.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov

import ov_loops
from ov_loops.checking.device import run
from ov_loops.errors import ConversionError
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.reference.onnx_reference import run_onnx
from tests.fuzz.differential import ATOL, RTOL
from tests.fuzz.random_models import RandomModel, random_model
from tests.harness import assert_close, compile_f32


def check_seed(seed: int, stage=lambda name: None) -> dict:
    """Convert (at the optimisation level the seed picks), compile and run the model of `seed`;
    the outcome as a JSON-ready dict. `stage(name)` is told each stage entered (ov-loops,
    onnxruntime), so that a native crash is blamed on the right one."""
    made = random_model(seed)
    optimize = OPTIMIZE_LEVELS[seed % len(OPTIMIZE_LEVELS)]
    answer = {"seed": seed, "description": f"{made.description}, optimize={optimize}"}
    try:
        onnx.checker.check_model(made.model, full_check=True)
    except Exception as exc:  # a generator bug, not an ov-loops one
        return {**answer, "outcome": "invalid", "detail": _first_line(exc)}
    stage("ov-loops")
    try:
        conversion = ov_loops.translate(made.model, optimize=optimize)
    except ConversionError as exc:
        text = str(exc)
        outcome = "refusal" if text and "\n" not in text and exc.exit_code == 1 else "traceback"
        return {**answer, "outcome": outcome, "detail": text}
    except Exception as exc:
        return {**answer, "outcome": "traceback", "detail": f"{type(exc).__name__}: {exc}"}
    outcome, detail, split = _run_and_compare(made, conversion.model, stage)
    return {**answer, "outcome": outcome, "detail": detail, "oracle_split": split}


def _run_and_compare(made: RandomModel, model: ov.Model, stage) -> tuple[str, str, bool]:
    """(outcome, detail, whether onnxruntime and the reference disagreed on some output)."""
    with tempfile.TemporaryDirectory(prefix="ov-loops-differential-") as scratch:
        xml = Path(scratch) / "model.xml"
        ov_loops.save(model, xml, compress_to_fp16=False)
        errors = ov_loops.validate(xml).errors
        if errors:
            return "disagreement", f"validate: {errors[0].text(xml)}", False
        try:
            compiled = compile_f32(xml)
        except Exception as exc:
            return "crash", f"compile: {_first_line(exc)}", False
    expected_count = len(made.model.graph.output)
    if len(compiled.outputs) != expected_count:
        return "partial", f"{len(compiled.outputs)} outputs, the model has {expected_count}", False
    stage("onnxruntime")
    oracles = _oracles(made.model)
    stage("ov-loops")
    split = False
    for attempt, feeds in enumerate(made.runs):
        try:
            got = run(compiled, feeds)
        except Exception as exc:
            return "crash", f"run {attempt}: {_first_line(exc)}", split
        stage("onnxruntime")
        expectations = [oracle(feeds) for oracle in oracles]
        stage("ov-loops")
        expectations = [outputs for outputs in expectations if outputs is not None]
        for index, output in enumerate(made.model.graph.output):
            verdicts = [_mismatch(outputs[index], got[index]) for outputs in expectations]
            if len(expectations) == 2:
                split |= _mismatch(expectations[0][index], expectations[1][index]) is not None
            if verdicts and all(verdicts):
                return "disagreement", f"run {attempt} output {output.name}: {verdicts[0]}", split
    return "ok", "", split


def _oracles(model: onnx.ModelProto) -> list:
    """onnxruntime and the numpy reference, each returning None where it cannot run the model."""
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    except Exception:
        session = None

    def onnxruntime(feeds):
        try:
            return None if session is None else session.run(None, feeds)
        except Exception:
            return None

    def reference(feeds):
        try:
            return run_onnx(model, feeds)
        except Exception:
            return None

    return [onnxruntime, reference]


def _mismatch(expected: np.ndarray, got: np.ndarray) -> str | None:
    try:
        assert_close(expected, got, "", RTOL, ATOL)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:200]
    return None


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Check ", "Exception from src"))]
    return (useful or lines or [type(exc).__name__])[0][:300]
