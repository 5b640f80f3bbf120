"""Random loop bodies converted with a random subset of the loop optimisations switched on, at
a random level, against the numpy reference: each pass alone and in any company must keep
results (issue 11). The bodies are those of test_random_bodies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ov_loops.conversion.driver import convert_model
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.loopir.passes.pipeline import CPU, PIPELINE, RECOGNIZE_CELLS, LoweringOptions
from tests.harness import assert_matches_onnxruntime, reference_oracle
from tests.test_random_bodies import _feeds, _loop_model, _scan_model, bodies

OPTIMIZATIONS = sorted(
    [kind.name for kind in PIPELINE if kind.level is not None] + [RECOGNIZE_CELLS.name]
)


@st.composite
def settings_of_passes(draw):
    """(level, the optimisations skipped)."""
    level = draw(st.sampled_from(OPTIMIZE_LEVELS[1:]))
    skipped = draw(st.sets(st.sampled_from(OPTIMIZATIONS))) if OPTIMIZATIONS else set()
    return level, frozenset(skipped)


def _translator(level: str, skipped: frozenset[str]):
    target = CPU.replace(skips=skipped)
    return lambda model: convert_model(load_model(model), LoweringOptions(target, level))


@settings(max_examples=40, deadline=None)
@given(body=bodies(), passes=settings_of_passes(), scan=st.booleans())
def test_random_bodies_with_random_optimizations(body, passes, scan, tmp_path_factory):
    rng = np.random.default_rng(2)
    lengths = (3, 5, 1) if scan else (3, 0, 5)
    runs = [_feeds(body[0], n, rng, loop=not scan) for n in lengths]
    made = (_scan_model if scan else _loop_model)(*body)
    assert_matches_onnxruntime(
        made,
        runs,
        tmp_path_factory.mktemp("optimized"),
        oracle=reference_oracle,
        translate=_translator(*passes),
    )


def test_a_skipped_optimization_does_not_run():
    target = CPU.replace(skips=frozenset(OPTIMIZATIONS))
    assert not any(target.runs(kind, "max") for kind in PIPELINE if kind.level is not None)
    assert not target.runs(RECOGNIZE_CELLS, "max")
    workarounds = [kind for kind in PIPELINE if kind.level is None and kind.name in CPU.passes]
    assert all(target.runs(kind, "none") for kind in workarounds)
