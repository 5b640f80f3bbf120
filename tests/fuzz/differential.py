"""Differential campaign: random valid If/Loop/Scan models, ov-loops on the CPU against oracles.

Each seed gives a model (tests/fuzz/random_models.py: plain, streamable or Scan-8; static input
shapes for a third) with three runs: some iterations, zero iterations, any. A worker process
converts it at every optimisation level (none, default, max), saves and reloads the IR,
validates it, compiles it on the CPU in f32 and runs the runs in order on one infer request,
comparing each output with onnxruntime and with the numpy ONNX reference: an output passes
when it matches either (onnxruntime 1.31 zeroes Scan states passed through unchanged, so the
two oracles may split; such splits are counted apart). The levels' outputs are compared with
each other too. A streamable model is also converted with `--stateful` (at the level the seed
picks) and each run fed in chunks of X from a fresh state, the outputs combined as
`check --chunks` does and compared with the oracles' whole-sequence outputs.

Outcomes per seed and mode (a level, or "stateful"), counted in total and per mode
("max/disagreements"):

- refusal: a one-line ConversionError (exit code 1 in the CLI); "refused_above" counts the
  levels that refused a model a lower level converted (not a failure, but each is listed);
- traceback: any other exception from ov-loops, or a ConversionError of several lines;
- crash: the worker died (a native crash);
- bad_ir: an unrunnable IR: `ov-loops validate` rejects it, or OpenVINO cannot compile or run it;
- oracle crash: the worker died while onnxruntime built its session or ran (its crash, not
  ours: counted apart, like oracle splits; that seed's other modes go without onnxruntime);
- hang: no answer within the per-mode timeout (the worker is killed and restarted);
- partial output: the compiled model has a different number of outputs than the ONNX graph;
- disagreement: an output matches neither oracle;
- undefined mean: an output matches neither oracle only where an oracle gives NaN, in a model
  holding a ReduceMean: a mean over zero elements, which ONNX leaves undefined (numpy and
  onnxruntime give NaN, OpenVINO 0; docs/pitfalls.md): counted apart, not a failure;
- level disagreement: two levels' outputs of one run differ (twice the tolerance), once a seed.

The worker reads (seed, mode) requests on stdin and answers one JSON line each, so a crash or a
hang costs one restart, not the campaign. `run(budget_seconds, seed)` tries the models from
`seed * 100000` on until the budget is spent; `run_seeds(seeds)` tries exactly those.
"""

from __future__ import annotations

import itertools
import json
import os
import selectors
import subprocess
import sys
import time

import numpy as np

from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from tests.fuzz import signature, start_worker
from tests.harness import assert_close

SEED_TIMEOUT = 60.0  # seconds per mode: conversion, compilation and every run
RTOL, ATOL = 1e-4, 1e-5
MAX_EXAMPLES = 40
STATEFUL = "stateful"
MODES = (*OPTIMIZE_LEVELS, STATEFUL)
ANSWER = "@@differential "  # prefix of the worker's answer lines (libraries may print too)
STAGE = "@@stage "  # prefix of the worker's lines naming the stage it enters
OUTCOMES = {
    "traceback": "tracebacks",
    "crash": "crashes",
    "hang": "hangs",
    "partial": "partial_outputs",
    "disagreement": "disagreements",
    "unrunnable": "bad_ir",
    "refusal": "refusals",
    "invalid": "invalid_models",
    "oracle_crash": "oracle_crashes",
    "undefined": "undefined_means",
}
PER_MODE = ("models", "refusals", "disagreements", "crashes", "bad_ir", "tracebacks", "hangs")
MUST_BE_ZERO = (
    "tracebacks",
    "crashes",
    "hangs",
    "partial_outputs",
    "disagreements",
    "bad_ir",
    "invalid_models",
    "level_disagreements",
)


def run(budget_seconds: float, seed: int) -> dict:
    """Try models `seed * 100000`, `+ 1`, ... until `budget_seconds` have passed (as the other
    campaigns number their inputs: the turns of a long run, seeds 1000 * S + turn, try
    different models); return the counts."""
    deadline = time.monotonic() + budget_seconds
    counts = _empty_counts()
    with _Worker() as worker:
        current = seed * 100_000
        while time.monotonic() < deadline:
            check_seed(worker, current, counts, SEED_TIMEOUT)
            current += 1
    return counts


def run_seeds(seeds, timeout: float = SEED_TIMEOUT) -> dict:
    """Try exactly `seeds`; return the counts (see the module docstring)."""
    counts = _empty_counts()
    with _Worker() as worker:
        for seed in seeds:
            check_seed(worker, seed, counts, timeout)
    return counts


def check_seed(worker: _Worker, seed: int, counts: dict, timeout: float) -> None:
    """Every level of the model of `seed`, then --stateful in chunks if it streams; counted."""
    counts["inputs"] += 1
    answers, skip_onnxruntime = {}, False
    for mode in MODES:
        if mode == STATEFUL and not any(a.get("streamable") for a in answers.values()):
            break
        answer = worker.check(seed, mode, timeout, skip_onnxruntime)
        if answer["outcome"] == "oracle_crash":
            _record(counts, mode, answer)
            skip_onnxruntime = True
            answer = worker.check(seed, mode, timeout, skip_onnxruntime)
        _record(counts, mode, answer)
        answers[mode] = answer
    counts["oracle_splits"] += any(a.get("oracle_split") for a in answers.values())
    _compare_levels(counts, seed, answers)
    _refused_above(counts, answers)


def mismatch(expected: np.ndarray, got: np.ndarray, scale: float = 1.0) -> str | None:
    """What differs between two outputs beyond the tolerance (times `scale`), or None."""
    try:
        assert_close(expected, got, "", RTOL * scale, ATOL * scale)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:200]
    return None


def _empty_counts() -> dict:
    counts = {"inputs": 0, **dict.fromkeys(OUTCOMES.values(), 0)}
    counts.update(level_disagreements=0, refused_above=0, oracle_splits=0)
    counts.update({f"{mode}/{key}": 0 for mode in MODES for key in PER_MODE})
    counts.update(examples=[], refusal_messages=[])
    return counts


def _record(counts: dict, mode: str, answer: dict) -> None:
    outcome = answer["outcome"]
    if outcome != "oracle_crash":
        counts[f"{mode}/models"] += 1
    if outcome == "ok":
        return
    key = OUTCOMES[outcome]
    counts[key] += 1
    if f"{mode}/{key}" in counts:
        counts[f"{mode}/{key}"] += 1
    if outcome == "refusal":  # every message, for the one-line check
        counts["refusal_messages"].append(answer["detail"])
    _example(counts, key, answer, f"[{mode}] {answer['detail']}")


def _example(counts: dict, kind: str, answer: dict, detail: str) -> None:
    """Keep one example per kind and message (numbers and names blanked), with a count."""
    for example in counts["examples"]:
        if example["class"] == kind and signature(example["detail"]) == signature(detail):
            example["count"] += 1
            return
    if len(counts["examples"]) < MAX_EXAMPLES:
        counts["examples"].append(
            {
                "class": kind,
                "seed": answer["seed"],
                "input": answer.get("description", "?"),
                "detail": detail[:400],
                "count": 1,
            }
        )


def _compare_levels(counts: dict, seed: int, answers: dict) -> None:
    """The first output of a run on which two levels differ, once a seed."""
    ran = {m: a["outputs"] for m, a in answers.items() if m != STATEFUL and a.get("outputs")}
    for (one, ours), (other, theirs) in itertools.combinations(ran.items(), 2):
        for index, (mine, yours) in enumerate(zip(ours, theirs)):
            for output, (a, b) in enumerate(zip(mine, yours)):
                problem = mismatch(_array(a), _array(b), scale=2.0)
                if problem:
                    counts["level_disagreements"] += 1
                    detail = f"[{one} vs {other}] run {index} output {output}: {problem}"
                    _example(counts, "level_disagreements", answers[one], detail)
                    return


def _refused_above(counts: dict, answers: dict) -> None:
    """Levels that refused a model a lower level converted."""
    converted = None
    for mode in OPTIMIZE_LEVELS:
        answer = answers.get(mode, {})
        if answer.get("outcome") == "refusal" and converted:
            counts["refused_above"] += 1
            detail = f"[{mode}, {converted} converts] {answer['detail']}"
            _example(counts, "refused_above", answer, detail)
        elif answer.get("outcome") not in ("refusal", "traceback", "invalid", None):
            converted = converted or mode


def _array(value: dict) -> np.ndarray:
    return np.asarray(value["data"], np.float32).reshape(value["shape"])


class _Worker:
    """A `python -m tests.fuzz.differential --worker` process, restarted after a crash or hang."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> _Worker:
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop()

    def _start(self) -> subprocess.Popen:
        return start_worker("tests.fuzz.differential", "--worker")

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def check(self, seed: int, mode: str, timeout: float, skip_onnxruntime: bool = False) -> dict:
        """The worker's answer for `seed` in `mode`, or a crash or hang outcome."""
        if self._process is None or self._process.poll() is not None:
            self._process = self._start()
        process = self._process
        request = {"seed": seed, "mode": mode, "skip_onnxruntime": skip_onnxruntime}
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except BrokenPipeError:  # it died already: its stdout ends below
            pass
        stage = ""
        for line in _lines(process, time.monotonic() + timeout):
            if line is None:  # the worker died
                return self._died(seed, mode, stage)
            if STAGE in line:
                stage = line[line.index(STAGE) + len(STAGE) :].strip()
            elif ANSWER in line:  # native code may have left a line unfinished before it
                return json.loads(line[line.index(ANSWER) + len(ANSWER) :])
        self._stop()
        detail = f"no answer in {timeout:.0f} s"
        return {"seed": seed, "mode": mode, "outcome": "hang", "detail": detail}

    def _died(self, seed: int, mode: str, stage: str) -> dict:
        """The outcome of a worker that died in `stage` (onnxruntime's: an oracle crash)."""
        code = self._process.wait()
        self._process = None
        outcome = "oracle_crash" if stage == "onnxruntime" else "crash"
        where = f" in {stage}" if stage else ""
        detail = f"worker exit {code}{where}"
        return {"seed": seed, "mode": mode, "outcome": outcome, "detail": detail}


def _lines(process: subprocess.Popen, deadline: float):
    """The lines `process` writes until `deadline`, then None if its stdout ends. Read from the
    pipe itself: readline() on the buffered file read the answer together with a stage line
    written just before it, and then waited for more on an empty pipe (a false hang)."""
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while selector.select(max(0.0, deadline - time.monotonic())):
            data = os.read(process.stdout.fileno(), 1 << 16)
            if not data:
                yield None
                return
            *lines, pending = (pending + data).split(b"\n")
            yield from (line.decode("utf-8", "replace") for line in lines)


def _serve() -> None:
    """Worker loop: one JSON request {seed, mode, skip_onnxruntime} per stdin line, one answer
    line per request."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what libraries print goes elsewhere
    from tests.fuzz.differential_worker import check

    def stage(name: str) -> None:
        answers.write(STAGE + name + "\n")
        answers.flush()

    for line in sys.stdin:
        request = json.loads(line)
        answer = check(request["seed"], request["mode"], stage, request["skip_onnxruntime"])
        answers.write(ANSWER + json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _serve()
    else:
        budget = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
        print(json.dumps(run(budget, int(sys.argv[2]) if len(sys.argv) > 2 else 0), indent=1))
