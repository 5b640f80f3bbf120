"""The random model generator reaches the shapes of past defects (issue 20), validly and
reproducibly, and the differential campaign's bookkeeping counts what it should. Generation
only: no conversion (test_differential.py runs the campaign)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

from tests.child_process import run_python
from tests.fuzz.differential import (
    ANSWER,
    STAGE,
    _compare_levels,
    _empty_counts,
    _refused_above,
    _Worker,
)
from tests.fuzz.random_models import FLAG, LENGTHS, SEQUENCE, TRIPS, random_model, write_model

SEEDS = range(300)


@pytest.fixture(scope="module")
def models():
    return [random_model(seed) for seed in SEEDS]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_random_models_are_valid_and_reproducible(seed):
    made = random_model(seed)
    onnx.checker.check_model(made.model, full_check=True)
    again = random_model(seed)
    assert again.model.SerializeToString() == made.model.SerializeToString()
    assert (again.description, again.input, again.chunks) == (
        made.description,
        made.input,
        made.chunks,
    )
    for feeds, same in zip(made.runs, again.runs):
        assert sorted(feeds) == sorted(same)
        for name in feeds:
            np.testing.assert_array_equal(feeds[name], same[name])


def test_a_replayed_model_and_its_runs_read_back_as_drawn(tmp_path):
    made = random_model(9)
    lines = write_model(9, tmp_path)
    assert onnx.load(tmp_path / "model.onnx").SerializeToString() == made.model.SerializeToString()
    for index, feeds in enumerate(made.runs):
        with np.load(tmp_path / f"run{index}.npz") as saved:
            assert sorted(saved) == sorted(feeds)
            for name, value in feeds.items():
                np.testing.assert_array_equal(saved[name], value)
    assert made.description in lines[0]


def test_every_model_runs_some_iterations_then_none_then_any(models):
    for made in models:
        some, none, _ = made.runs
        assert some[TRIPS] >= 1 and some[FLAG], made.seed
        assert none[TRIPS] == 0 and not none[FLAG], made.seed
        if LENGTHS in none:
            assert not none[LENGTHS].any(), made.seed


def test_static_shapes_are_the_same_in_every_run(models):
    static = [made for made in models if made.input]
    assert len(static) > len(models) // 5
    for made in static:
        shapes = {made.runs[k][SEQUENCE].shape for k in range(3)}
        assert len(shapes) == 1, (made.seed, shapes)
        assert f"{SEQUENCE}[{','.join(map(str, shapes.pop()))}]" in made.input


def test_chunks_cover_the_sequence_of_each_run(models):
    streamable = [made for made in models if made.chunks]
    assert len(streamable) > len(models) // 10
    for made in streamable:
        for feeds, lengths in zip(made.runs, made.chunks):
            assert sum(lengths) == feeds[SEQUENCE].shape[0] and len(lengths) >= 2


@pytest.mark.parametrize(
    "pattern",
    [
        r"^plain",
        r"^streamable",
        r"^scan8",
        r"Loop\(trip=constant",
        r"Loop\(trip=runtime",
        r"Loop\(trip=rows",
        r"Loop\(trip=absent",
        r"cond=constant",
        r"cond=runtime",
        r"appended=[12]",
        r"Scan\(X",
        r"Scan8\(lens=yes",
        r"Scan8\(lens=no",
        r"directions=\[1",
        r"If\(differing",
    ],
)
def test_the_generator_reaches(models, pattern):
    assert any(re.search(pattern, made.description) for made in models), pattern


def test_some_scan8_lengths_are_below_a_static_length(models):
    """A Scan-8 with sequence_lens shorter than the static length failed at inference at max."""
    found = [
        made.seed
        for made in models
        if made.input and LENGTHS in made.runs[0]
        for feeds in made.runs
        if (feeds[LENGTHS] < feeds[SEQUENCE].shape[1]).any()
    ]
    assert found


def _answer(mode: str, outcome: str, outputs=(), detail: str = "") -> dict:
    runs = [[{"shape": [len(values)], "data": list(values)} for values in outputs]]
    return {"seed": 1, "mode": mode, "outcome": outcome, "outputs": runs, "detail": detail}


def test_two_levels_that_differ_are_one_level_disagreement():
    counts = _empty_counts()
    answers = {
        "none": _answer("none", "ok", [[1.0, 2.0]]),
        "default": _answer("default", "ok", [[1.0, 2.0]]),
        "max": _answer("max", "ok", [[1.0, 2.0, 1.0]]),
    }
    _compare_levels(counts, 1, answers)
    assert counts["level_disagreements"] == 1
    assert counts["examples"][0]["detail"].startswith("[none vs max] run 0 output 0")


def test_levels_that_agree_within_the_tolerance_are_no_disagreement():
    counts = _empty_counts()
    answers = {
        "none": _answer("none", "ok", [[1.0, 2.0]]),
        "max": _answer("max", "ok", [[1.0, 2.0 + 1e-6]]),
    }
    _compare_levels(counts, 1, answers)
    assert counts["level_disagreements"] == 0


def test_a_level_refusing_what_a_lower_one_converts_is_counted():
    counts = _empty_counts()
    answers = {
        "none": _answer("none", "ok"),
        "default": _answer("default", "refusal", detail="main/Loop_0: no"),
        "max": _answer("max", "refusal", detail="main/Loop_0: no"),
    }
    _refused_above(counts, answers)
    assert counts["refused_above"] == 2
    assert counts["examples"][0]["detail"] == "[default, none converts] main/Loop_0: no"


_DIGESTS = """
import hashlib
from tests.fuzz.mutate_onnx import make_mutant
from tests.fuzz.random_models import random_model
for seed in range(100):
    print(seed, hashlib.sha256(random_model(seed).model.SerializeToString()).hexdigest())
for seed in range(30):
    name, mutant, _ = make_mutant(seed)
    made = hashlib.sha256(mutant.model.SerializeToString()).hexdigest()
    print(seed, name, made, mutant.steps)
"""


def test_a_seed_gives_the_same_input_in_every_process(monkeypatch, tmp_path):
    """The campaigns rebuild a seed's input in other processes (a worker restarted after a
    hang, --replay): the generators must not depend on the hash seed. The order of a set did
    (the main graph's extra outputs): a level disagreement compared two different models, and
    --replay gave a third."""
    printed = []
    for hash_seed in ("1", "2"):
        monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
        result = run_python(["-c", _DIGESTS], tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        printed.append(result.stdout.splitlines())
    assert len(printed[0]) == 130 and printed[0] == printed[1]


class _ScriptedWorker(_Worker):
    """A worker writing a stage line and its answer in one write (then, with `dies`, dying)."""

    def __init__(self, dies: bool = False) -> None:
        super().__init__()
        self.code = (
            "import sys\n"
            "for line in sys.stdin:\n"
            f"    sys.stdout.write('{STAGE}convert\\n' + ('' if {dies} else "
            f"'{ANSWER}' + '{{\"outcome\": \"ok\"}}\\n'))\n"
            "    sys.stdout.flush()\n"
            f"    if {dies}: sys.exit(3)\n"
        )

    def _start(self) -> subprocess.Popen:
        command = [sys.executable, "-c", self.code]
        return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_an_answer_written_with_a_stage_line_is_read_at_once():
    """readline() on the buffered pipe took both lines and then waited on the empty pipe: a
    hang was counted (and the worker restarted) for a model that had its answer."""
    with _ScriptedWorker() as worker:
        assert [worker.check(seed, "none", 20)["outcome"] for seed in (1, 2)] == ["ok", "ok"]
    with _ScriptedWorker(dies=True) as worker:
        answer = worker.check(1, "none", 20)
    assert answer["outcome"] == "crash" and answer["detail"] == "worker exit 3 in convert"
