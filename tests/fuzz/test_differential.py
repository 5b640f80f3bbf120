"""The differential campaign, bounded: a fixed set of random nested If/Loop/Scan models, each
converted at every optimisation level (and with --stateful, fed in chunks, where it streams).

`python -m tests.fuzz` runs the same campaign for as long as it is told; this test tries a fixed
range of seeds so that CI is deterministic. A failure lists the seeds that reproduce it
(`tests.fuzz.random_models.random_model(seed)` rebuilds the model;
`tests.fuzz.differential_worker.check(seed, mode)` runs one mode of it).
"""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import onnx
import pytest

from tests.fuzz import differential_worker
from tests.fuzz.differential import MUST_BE_ZERO, STAGE, _Worker, run_seeds

# About 40 s on 2 cores: each seed at three levels, and --stateful in chunks where it streams
# (`python -m tests.fuzz --campaign differential --minutes N` runs more). On the generator of
# this commit none of these hits a defect known to be open (issue 20); seeds that do are not
# listed here until their fix lands.
SEEDS = range(0, 20)


@pytest.mark.fuzz
def test_random_nested_control_flow_models_match_the_oracles():
    counts = run_seeds(SEEDS)
    assert counts["inputs"] == len(SEEDS)
    assert {key: counts[key] for key in MUST_BE_ZERO} == dict.fromkeys(MUST_BE_ZERO, 0), counts[
        "examples"
    ]
    for message in counts["refusal_messages"]:  # refusals are one-line ConversionErrors
        assert message and "\n" not in message


class _SegfaultingWorker(_Worker):
    """A worker that dies by SIGSEGV as soon as it starts, as OpenVINO may."""

    def _start(self) -> subprocess.Popen:
        crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
        return subprocess.Popen(
            [sys.executable, "-c", crash], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )


class _OnnxruntimeSegfaultingWorker(_Worker):
    """A worker that says it enters onnxruntime, then dies by SIGSEGV."""

    def _start(self) -> subprocess.Popen:
        crash = (
            f"import os, signal; print({STAGE!r} + 'onnxruntime', flush=True); "
            "os.kill(os.getpid(), signal.SIGSEGV)"
        )
        return subprocess.Popen(
            [sys.executable, "-c", crash], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )


def test_a_crash_inside_onnxruntime_is_an_oracle_crash_not_ours():
    with _OnnxruntimeSegfaultingWorker() as worker:
        answer = worker.check(7, "none", timeout=30)
    assert answer["outcome"] == "oracle_crash"
    assert answer["detail"] == f"worker exit {-signal.SIGSEGV} in onnxruntime"


def test_a_native_crash_in_the_worker_is_counted_not_fatal():
    with _SegfaultingWorker() as worker:
        answers = [worker.check(seed, "max", timeout=30) for seed in (5, 6)]
    assert [answer["outcome"] for answer in answers] == ["crash", "crash"]
    assert answers[0]["detail"] == f"worker exit {-signal.SIGSEGV}"


@pytest.mark.parametrize("seed", [2700500060, 2700300021])
def test_a_mean_over_zero_elements_agrees_with_the_reference(seed):
    """ONNX leaves ReduceMean over zero elements undefined; numpy gives NaN, OpenVINO 0. The
    numpy reference takes 0 (reference/undefined_means.py), so these seeds (onnxruntime fails
    on their zero-length Scan) agree; they were disagreements at every level."""
    answer = differential_worker.check(seed, "none")
    assert answer["outcome"] == "ok", answer["detail"]


def test_a_nan_the_model_has_no_mean_for_is_a_disagreement():
    with_mean = onnx.helper.make_graph(
        [onnx.helper.make_node("ReduceMean", ["x"], ["y"])], "g", [], []
    )
    without = onnx.helper.make_graph([onnx.helper.make_node("Abs", ["x"], ["y"])], "g", [], [])
    nan, zero = [np.array([np.nan, 1.0])], [np.array([0.0, 1.0])]
    for graph, outcome in ((with_mean, "undefined"), (without, "disagreement")):
        model = onnx.helper.make_model(graph)
        assert differential_worker._disagreement(model, [nan], zero, ["y"])[0] == outcome
    model = onnx.helper.make_model(with_mean)
    other = [np.array([0.0, 2.0])]  # 1 differs too, where the oracle has no NaN
    assert differential_worker._disagreement(model, [nan], other, ["y"])[0] == "disagreement"
