"""Campaign: mutated ONNX loop models through `ov-loops convert`, then the IR on the CPU.

Seeds are the Loop and Scan scenario models. Each mutant gets one to three mutations
(`tests/fuzz/onnx_mutations.py`) and is converted by the CLI in a subprocess; a conversion that
exits 0 is compiled on the CPU in f32 and run once in another subprocess, then compared with
onnxruntime when onnxruntime runs the mutant. A mutant that only got validity-preserving
mutations and is refused while onnxruntime runs it is counted under "refused_valid"; one that
the spec itself forbids (ill-typed Loop ports) and converts is counted under "accepted_invalid"
(information, with examples: onnxruntime accepts some of these too).
"""

from __future__ import annotations

import functools
import pickle
import random
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

from tests.fuzz import Outcome, Recorder, fuzz, last_line, run_cli, run_python
from tests.fuzz.onnx_mutations import BAD_UTF8_MARKER, MUTATIONS, Mutant, NotApplicable

CONVERT_TIMEOUT = 60.0
PROBE_TIMEOUT = 60.0
RTOL, ATOL = 1e-3, 1e-4  # f32 through mutated graphs; f16 and bf16 get their own below
LOW_PRECISION = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
PROBE = "import sys; from tests.fuzz.mutate_onnx import probe; probe(*sys.argv[1:])"


@functools.cache
def seeds() -> dict[str, tuple[bytes, dict]]:
    """Every Loop and Scan scenario: its serialised model and the feeds of its first run."""
    from tests.scenarios import SCENARIOS

    built = {}
    for name, builder in sorted(SCENARIOS.items()):
        model, runs = builder()
        feeds = runs[0][0] if isinstance(runs[0], tuple) else runs[0]
        built[name] = (model.SerializeToString(), feeds)
    return built


def make_mutant(input_seed: int) -> tuple[str, Mutant, dict]:
    """The mutant `input_seed` stands for: (seed scenario name, mutant, the scenario's feeds)."""
    rng = random.Random(input_seed)
    name = rng.choice(sorted(seeds()))
    data, feeds = seeds()[name]
    mutant = Mutant(onnx.load_from_string(data), feeds=dict(feeds))
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        for _attempt in range(8):
            key = rng.choice(sorted(MUTATIONS))
            mutation, keeps_valid = MUTATIONS[key]
            try:
                step = mutation(mutant, rng)
            except NotApplicable:
                continue
            except Exception:  # noqa: BLE001  an earlier mutation left nothing it can act on
                continue
            mutant.steps.append(f"{key}: {step}")
            mutant.keeps_valid = mutant.keeps_valid and keeps_valid
            break
    return name, mutant, mutant.feeds


def write_mutant(mutant: Mutant, directory: Path) -> Path:
    """Write the mutant as directory/model/model.onnx with its files beside it."""
    model_dir = directory / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    for name, data in mutant.files.items():
        path = model_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    marker = BAD_UTF8_MARKER.encode()
    serialised = mutant.model.SerializeToString().replace(marker, b"\xff" * len(marker))
    path = model_dir / "model.onnx"
    path.write_bytes(serialised)
    return path


def run(budget_seconds: float, seed: int, max_inputs: int | None = None) -> dict:
    """Mutate and convert until the budget (or `max_inputs`) is spent; the counts dict."""
    return fuzz("mutate_onnx", try_mutant, budget_seconds, seed, max_inputs)


def try_mutant(input_seed: int, recorder: Recorder) -> None:
    """Convert the mutant `input_seed` and, when that succeeds, load and run its IR."""
    name, mutant, feeds = make_mutant(input_seed)
    what = f"{name}: {'; '.join(mutant.steps) or 'unmutated'}"
    recorder.counts["inputs"] += 1
    with tempfile.TemporaryDirectory(prefix="ov-loops-fuzz-") as scratch:
        work = Path(scratch)
        model = write_mutant(mutant, work)
        out = work / "out"
        out.mkdir()
        xml = out / "model.xml"
        outcome = run_cli(
            ["convert", str(model), "-o", str(xml), "--compress_to_fp16=False"],  # f32: compared
            timeout=CONVERT_TIMEOUT,
            cwd=work,  # not the model's directory: external data must resolve beside the model
            outputs=[xml, xml.with_suffix(".bin")],
            watched=out,
        )
        recorder.outcome(outcome, input_seed, what)
        if outcome.classes:
            return
        if outcome.returncode == 0 and mutant.must_refuse:
            ports = [step for step in mutant.steps if step.startswith("loop_port_types")]
            recorder.info("accepted_invalid", input_seed, what, f"converted: {ports[-1]}")
        with open(work / "feeds.pkl", "wb") as file:
            pickle.dump(feeds, file)
        if outcome.returncode == 0:
            _judge_ir(work, model, xml, input_seed, what, recorder)
        elif mutant.keeps_valid:
            _judge_refusal(work, model, outcome, input_seed, what, recorder)


def _probe(work: Path, model: Path, xml: Path | None) -> tuple[Outcome, dict[str, str]]:
    command = [sys.executable, "-c", PROBE, str(model), str(xml or "-"), str(work)]
    outcome = run_python(command, PROBE_TIMEOUT, cwd=work)
    stages = {}
    if (work / "stages").exists():
        for line in (work / "stages").read_text().splitlines():
            key, _, message = line.partition(" ")
            stages[key] = message
    return outcome, stages


def _judge_ir(work: Path, model: Path, xml: Path, seed: int, what: str, recorder: Recorder):
    """convert exited 0: the IR must compile and run, and agree with onnxruntime."""
    outcome, stages = _probe(work, model, xml)
    if "ov_ran" in stages:
        recorder.counts["ir_runs"] = recorder.counts.get("ir_runs", 0) + 1
    if "compile_failed" in stages:
        recorder.failure("bad_ir", seed, what, f"compile_model refused: {stages['compile_failed']}")
    elif "compiled" not in stages or ("ov_ran" not in stages and "ov_run_failed" not in stages):
        where = "compile_model" if "compiled" not in stages else "inference"
        hung_running = outcome.classes == ["hangs"] and where == "inference"
        if hung_running and not _finishes_in_ort(work, model):
            recorder.info("unbounded_loops", seed, what, "neither runtime finishes")
        elif outcome.classes:
            recorder.failure("bad_ir", seed, what, f"{where}: {outcome.detail}")
        elif "no_inputs" not in stages:
            recorder.info("probe_errors", seed, what, last_line(outcome.stderr))
    elif "ov_run_failed" in stages and "ort_ran" in stages:
        detail = f"onnxruntime runs it, the IR fails: {stages['ov_run_failed']}"
        recorder.failure("bad_ir", seed, what, detail)
    elif "ov_ran" in stages and "ort_ran" in stages:
        recorder.counts["compared"] = recorder.counts.get("compared", 0) + 1
        with open(work / "feeds_used.pkl", "rb") as file:
            feeds = pickle.load(file)
        problem = _compare(_load(work / "ov.pkl"), _load(work / "ort.pkl"), feeds)
        if problem:
            recorder.failure("disagreements", seed, what, problem)


def _finishes_in_ort(work: Path, model: Path) -> bool:
    """Whether onnxruntime finishes the run the IR hung on (an unbounded loop hangs both)."""
    return "ort_ran" in _probe(work, model, None)[1]


def _judge_refusal(work: Path, model: Path, refusal: Outcome, seed: int, what: str, recorder):
    """A mutant that should still be valid was refused: note it when onnxruntime runs it."""
    _, stages = _probe(work, model, None)
    if "ort_ran" in stages:
        recorder.info("refused_valid", seed, what, last_line(refusal.stderr))


def _load(path: Path) -> list:
    with open(path, "rb") as file:
        return pickle.load(file)


def _compare(ours: list, theirs: list, feeds: dict) -> str:
    """'' when every output agrees within tolerance, else what differs first."""
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, onnxruntime gives {len(theirs)}"
    for index, (got, want) in enumerate(zip(ours, theirs)):
        got, want = np.asarray(got), np.asarray(want)
        if got.size == 0 and want.size == 0:
            continue
        if _zeroed_passthrough(got, want, feeds):
            continue  # onnxruntime 1.31 zeroes Scan states passed through unchanged
        if got.shape != want.shape:
            return f"output {index}: shape {list(got.shape)}, onnxruntime {list(want.shape)}"
        if not _close(got, want):
            return f"output {index} ({got.dtype}): values differ from onnxruntime"
    return ""


def _zeroed_passthrough(got: np.ndarray, want: np.ndarray, feeds: dict) -> bool:
    if want.dtype.kind not in "fiub" or np.any(want):
        return False
    return any(np.shape(v) == got.shape and np.array_equal(v, got) for v in feeds.values())


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    rtol, atol = LOW_PRECISION.get(want.dtype.name, (RTOL, ATOL))
    got, want = _portable(got), _portable(want)
    if want.dtype.kind not in "fiucb" or got.dtype.kind not in "fiucb":
        return bool(np.array_equal(got.astype(str), want.astype(str)))
    if want.dtype.kind in "iub":
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))


# -- the probe, run in a subprocess: `python -c PROBE model.onnx model.xml|- workdir` -------------
def probe(model_path: str, xml: str, work_dir: str) -> None:
    """Compile `xml` on the CPU (f32) and run it once, then run onnxruntime on `model_path`,
    recording each stage in work_dir/stages so the parent knows where a native crash struck."""
    work = Path(work_dir)
    feeds = _probe_feeds(model_path, work)
    if feeds is None:
        return
    if xml != "-":
        _probe_openvino(xml, feeds, work)
    try:
        import onnxruntime

        session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        theirs = session.run(None, feeds)
    except Exception as exc:  # onnxruntime's refusals are not ours to judge
        _stage(work, "ort_failed", str(exc))
        return
    _dump(work / "ort.pkl", [np.asarray(v) for v in theirs])
    _stage(work, "ort_ran")


def _probe_feeds(model_path: str, work: Path) -> dict | None:
    from ov_loops.checking.inputs import generate_inputs, onnx_input_specs

    try:
        specs = onnx_input_specs(onnx.load(model_path, load_external_data=False))
        seed_feeds = _load(work / "feeds.pkl")
        given = {
            s.name: seed_feeds[s.name]
            for s in specs
            if s.name in seed_feeds
            and np.dtype(s.dtype) == seed_feeds[s.name].dtype
            and (s.dims is None or len(s.dims) == seed_feeds[s.name].ndim)
        }
        feeds = generate_inputs(specs, given, {}, 0)
    except Exception as exc:  # untyped or unranked inputs: nothing to run
        _stage(work, "no_inputs", str(exc))
        return None
    _dump(work / "feeds_used.pkl", feeds)
    return feeds


def _probe_openvino(xml: str, feeds: dict, work: Path) -> None:
    from ov_loops.checking.device import run as run_compiled
    from tests.harness import compile_f32

    try:
        compiled = compile_f32(xml)
    except Exception as exc:
        _stage(work, "compile_failed", str(exc))
        return
    _stage(work, "compiled")
    try:
        ours = run_compiled(compiled, feeds)
    except Exception as exc:
        _stage(work, "ov_run_failed", str(exc))
        return
    _dump(work / "ov.pkl", [_portable(v) for v in ours])
    _stage(work, "ov_ran")


def _portable(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def _dump(path: Path, value) -> None:
    with open(path, "wb") as file:
        pickle.dump(value, file)


def _stage(work: Path, key: str, message: str = "") -> None:
    with open(work / "stages", "a") as file:
        file.write(f"{key} {last_line(message)}\n")
