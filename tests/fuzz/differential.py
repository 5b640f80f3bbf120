"""Differential campaign: random valid If/Loop/Scan models, ov-loops on the CPU against oracles.

Each seed gives a model (tests/fuzz/random_models.py). A worker process converts it with
ov-loops at the optimisation level the seed picks (seed % 3: none, default, max), saves and
reloads the IR, compiles it on the CPU in f32 and runs every feed of the seed, comparing
each output with onnxruntime and with the numpy ONNX reference: an output passes when it
matches either (onnxruntime 1.31 zeroes Scan states passed through unchanged, so the two
oracles may split; such splits are counted apart). Outcomes per seed:

- refusal: a one-line ConversionError (exit code 1 in the CLI);
- traceback: any other exception from ov-loops, or a ConversionError of several lines;
- crash: the worker died (a native crash), or OpenVINO could not read, compile or run the IR;
- oracle crash: the worker died while onnxruntime built its session (its crash, not ours:
  counted apart, like oracle splits);
- hang: no answer within the per-seed timeout (the worker is killed and restarted);
- partial output: the compiled model has a different number of outputs than the ONNX graph;
- disagreement: an output matches neither oracle (or the IR fails `ov-loops validate`).

The worker reads seeds on stdin and answers one JSON line per seed, so a crash or a hang costs
one restart, not the campaign. `run(budget_seconds, seed)` tries seeds from `seed` on until the
budget is spent; `run_seeds(seeds)` tries exactly those.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time

from tests.fuzz import start_worker

SEED_TIMEOUT = 60.0  # seconds per model: conversion, compilation and every run
RTOL, ATOL = 1e-4, 1e-5
MAX_EXAMPLES = 20
ANSWER = "@@differential "  # prefix of the worker's answer lines (libraries may print too)
STAGE = "@@stage "  # prefix of the worker's lines naming the stage it enters
FAILURES = {
    "traceback": "tracebacks",
    "crash": "crashes",
    "hang": "hangs",
    "partial": "partial_outputs",
    "disagreement": "disagreements",
    "refusal": "refusals",
    "invalid": "invalid_models",
    "oracle_crash": "oracle_crashes",
}


def run(budget_seconds: float, seed: int) -> dict:
    """Try seeds `seed`, `seed + 1`, ... until `budget_seconds` have passed; return the counts."""
    deadline = time.monotonic() + budget_seconds
    with _Worker() as worker:
        counts = _empty_counts()
        current = seed
        while time.monotonic() < deadline:
            _record(counts, worker.check(current, SEED_TIMEOUT))
            current += 1
    return counts


def run_seeds(seeds, timeout: float = SEED_TIMEOUT) -> dict:
    """Try exactly `seeds`; return the counts (see the module docstring)."""
    counts = _empty_counts()
    with _Worker() as worker:
        for seed in seeds:
            _record(counts, worker.check(seed, timeout))
    return counts


def _empty_counts() -> dict:
    counts = {"inputs": 0, **dict.fromkeys(FAILURES.values(), 0)}
    counts.update(oracle_splits=0, examples=[], refusal_messages=[])
    return counts


def _record(counts: dict, answer: dict) -> None:
    counts["inputs"] += 1
    counts["oracle_splits"] += answer.get("oracle_split", False)
    outcome = answer["outcome"]
    if outcome == "ok":
        return
    counts[FAILURES[outcome]] += 1
    if outcome == "refusal":  # every message, for the one-line check; not an example
        counts["refusal_messages"].append(answer["detail"])
    elif len(counts["examples"]) < MAX_EXAMPLES:
        counts["examples"].append(
            f"seed {answer['seed']}: {outcome}: {answer['detail'][:300]} "
            f"(model: {answer.get('description', '?')[:300]})"
        )


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

    def check(self, seed: int, timeout: float) -> dict:
        """The worker's answer for `seed`, or a crash or hang outcome."""
        if self._process is None or self._process.poll() is not None:
            self._process = self._start()
        process = self._process
        try:
            process.stdin.write(f"{seed}\n")
            process.stdin.flush()
        except BrokenPipeError:  # it died already: its stdout ends below
            pass
        deadline, stage = time.monotonic() + timeout, ""
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while selector.select(max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline()
                if not line:  # the worker died
                    return self._died(seed, stage)
                if STAGE in line:
                    stage = line[line.index(STAGE) + len(STAGE) :].strip()
                elif ANSWER in line:  # native code may have left a line unfinished before it
                    return json.loads(line[line.index(ANSWER) + len(ANSWER) :])
        self._stop()
        return {"seed": seed, "outcome": "hang", "detail": f"no answer in {timeout:.0f} s"}

    def _died(self, seed: int, stage: str) -> dict:
        """The outcome of a worker that died in `stage` (onnxruntime's: an oracle crash)."""
        code = self._process.wait()
        self._process = None
        outcome = "oracle_crash" if stage == "onnxruntime" else "crash"
        where = f" in {stage}" if stage else ""
        return {"seed": seed, "outcome": outcome, "detail": f"worker exit {code}{where}"}


def _serve() -> None:
    """Worker loop: one seed per stdin line, one answer line per seed."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what libraries print goes elsewhere
    from tests.fuzz.differential_worker import check_seed

    def stage(name: str) -> None:
        answers.write(STAGE + name + "\n")
        answers.flush()

    for line in sys.stdin:
        answer = check_seed(int(line), stage)
        answers.write(ANSWER + json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _serve()
    else:
        budget = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
        print(json.dumps(run(budget, int(sys.argv[2]) if len(sys.argv) > 2 else 0), indent=1))
