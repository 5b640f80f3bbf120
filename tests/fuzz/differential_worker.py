"""The in-worker half of the differential campaign: one (seed, mode), one answer (see
differential.py).

Runs in a process of its own, which a native crash may kill. The model of the last seed asked
for and its oracles' outputs are kept, so the modes of one seed build them once.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov

import ov_loops
from ov_loops.checking.chunks import Chunking, combine
from ov_loops.checking.device import infer
from ov_loops.errors import ConversionError
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.reference.onnx_reference import run_onnx
from tests.fuzz.differential import ATOL, RTOL, STATEFUL, mismatch
from tests.fuzz.random_models import SEQUENCE, RandomModel, random_model
from tests.harness import compile_f32

_last: dict = {}  # the seed of the model kept and the model; its oracles' outputs per run


def check(seed: int, mode: str, stage=lambda name: None, skip_onnxruntime: bool = False) -> dict:
    """Convert the model of `seed` at optimisation level `mode` (or, mode "stateful", with
    --stateful at the level the seed picks, fed in chunks), compile and run each of its runs in
    order on one infer request; the outcome as a JSON-ready dict with the outputs of each run.
    `stage(name)` is told each stage entered (ov-loops, onnxruntime), so that a native crash
    is blamed on the right one; `skip_onnxruntime` leaves that oracle out (it crashed)."""
    made = _model(seed)
    level = OPTIMIZE_LEVELS[seed % len(OPTIMIZE_LEVELS)] if mode == STATEFUL else mode
    answer = {"seed": seed, "mode": mode, "description": made.description, "outputs": []}
    answer["streamable"] = made.chunks is not None
    try:
        onnx.checker.check_model(made.model, full_check=True)
    except Exception as exc:  # a generator bug, not an ov-loops one
        return {**answer, "outcome": "invalid", "detail": _first_line(exc)}
    stage("ov-loops")
    try:
        if mode == STATEFUL:  # X comes in chunks: its length cannot be static
            conversion = ov_loops.translate(made.model, optimize=level, stateful=True)
        else:
            conversion = ov_loops.translate(made.model, optimize=level, input=made.input)
    except ConversionError as exc:
        text = str(exc)
        outcome = "refusal" if text and "\n" not in text and exc.exit_code == 1 else "traceback"
        return {**answer, "outcome": outcome, "detail": text}
    except Exception as exc:
        return {**answer, "outcome": "traceback", "detail": f"{type(exc).__name__}: {exc}"}
    expected = _expected(made, stage, skip_onnxruntime)
    stage("ov-loops")
    return {**answer, **_run_and_compare(made, conversion.model, expected, mode == STATEFUL)}


def _model(seed: int) -> RandomModel:
    if _last.get("seed") != seed:
        _last.clear()
        _last.update(seed=seed, made=random_model(seed))
    return _last["made"]


def _expected(made: RandomModel, stage, skip_onnxruntime: bool) -> list[list[list]]:
    """Per run, the outputs of each oracle that ran it (computed once per seed)."""
    if "expected" not in _last:
        stage("onnxruntime")
        oracles = _oracles(made.model, skip_onnxruntime)
        runs = [[oracle(feeds) for oracle in oracles] for feeds in made.runs]
        _last["expected"] = [[outputs for outputs in run if outputs is not None] for run in runs]
        _last["split"] = any(
            len(run) == 2 and any(mismatch(a, b) for a, b in zip(*run)) for run in _last["expected"]
        )
    return _last["expected"]


def _run_and_compare(made: RandomModel, model: ov.Model, expected: list, chunked: bool) -> dict:
    """Validate, compile and run every run of `made` on one infer request (chunked: fed in
    chunks after a reset_state); the outcome, its detail, the outputs of every run."""
    with tempfile.TemporaryDirectory(prefix="ov-loops-differential-") as scratch:
        xml = Path(scratch) / "model.xml"
        ov_loops.save(model, xml, compress_to_fp16=False)
        errors = ov_loops.validate(xml).errors
        if errors:
            return {"outcome": "unrunnable", "detail": f"validate: {errors[0].text(xml)}"}
        try:
            compiled = compile_f32(xml)
        except Exception as exc:
            return {"outcome": "unrunnable", "detail": f"compile: {_first_line(exc)}"}
    names = [output.name for output in made.model.graph.output]
    if len(compiled.outputs) != len(names):
        detail = f"{len(compiled.outputs)} outputs, the model has {len(names)}"
        return {"outcome": "partial", "detail": detail}
    request = compiled.create_infer_request()
    found, outputs = {"outcome": "ok", "detail": ""}, []
    for attempt, feeds in enumerate(made.runs):
        try:
            if chunked:
                got = _chunked(request, feeds, made.chunks[attempt], expected[attempt])
            else:
                got = infer(request, feeds)
        except Exception as exc:
            return {"outcome": "unrunnable", "detail": f"run {attempt}: {_first_line(exc)}"}
        outputs.append([_portable(value) for value in got])
        outcome, problem = _disagreement(made.model, expected[attempt], got, names)
        if problem and found["outcome"] in ("ok", "undefined"):
            found = {"outcome": outcome, "detail": f"run {attempt} {problem}"}
    return {**found, "outputs": outputs, "oracle_split": _last.get("split", False)}


def _chunked(request: ov.InferRequest, feeds: dict, lengths: list[int], expected: list) -> list:
    """The outputs of `feeds` fed with X in chunks of `lengths` from a fresh state, combined
    as `check --chunks` does (scan outputs concatenated, last values the last chunk's)."""
    request.reset_state()
    parts = [infer(request, chunk) for chunk in Chunking(SEQUENCE, 0, tuple(lengths)).split(feeds)]
    if not expected:  # nothing to take the outputs' shapes from
        return parts[-1]
    return combine(expected[0], parts, 0)[0]


def _disagreement(
    model: onnx.ModelProto, expected: list, got: list, names: list[str]
) -> tuple[str, str]:
    """("ok", "") when every output matches one oracle at least (or none ran); else the outcome
    and what differs: "undefined" when the model holds a ReduceMean and every element that
    differs is NaN in an oracle (`_undefined_mean`), else "disagreement"."""
    undefined = ""
    for index, name in enumerate(names):
        verdicts = [mismatch(outputs[index], got[index]) for outputs in expected]
        if not verdicts or not all(verdicts):
            continue
        problem = f"output {name}: {verdicts[0]}"
        if not _undefined_mean(model, [outputs[index] for outputs in expected], got[index]):
            return "disagreement", problem
        undefined = undefined or problem
    return ("undefined", undefined) if undefined else ("ok", "")


def _undefined_mean(model: onnx.ModelProto, expected: list, got: np.ndarray) -> bool:
    """Whether an output may differ by a ReduceMean over zero elements, which ONNX leaves
    undefined (onnx/onnx#5568: "ReduceMean({}) = Undefined"): numpy and onnxruntime compute
    0/0 = NaN, OpenVINO 0 (docs/pitfalls.md). So: the model has a ReduceMean (in any graph),
    and an oracle whose output differs from `got` only where it is NaN."""
    if not any(node.op_type == "ReduceMean" for node in _all_nodes(model.graph)):
        return False
    got = np.asarray(got, np.float64)
    for want in expected:
        want = np.asarray(want, np.float64)
        if want.shape != got.shape or not np.isnan(want).any():
            continue
        close = np.isclose(got, want, rtol=RTOL, atol=ATOL)
        if np.all(close | np.isnan(want)):
            return True
    return False


def _all_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            for body in [attribute.g, *attribute.graphs]:
                yield from _all_nodes(body)


def _oracles(model: onnx.ModelProto, skip_onnxruntime: bool) -> list:
    """onnxruntime and the numpy reference, each returning None where it cannot run the model."""
    session = None
    if not skip_onnxruntime:
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


def _portable(value: np.ndarray) -> dict:
    value = np.asarray(value, np.float32)
    return {"shape": list(value.shape), "data": value.ravel().tolist()}


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Check ", "Exception from src"))]
    return (useful or lines or [type(exc).__name__])[0][:300]
