"""Each sequence scenario (tests/sequence_scenarios.py) converts at every optimisation level,
saves as clean IR and matches onnxruntime (CPU, f32); the numpy ONNX reference agrees."""

from __future__ import annotations

import pytest

from ov_loops.reference.onnx_reference import run_onnx
from tests.harness import assert_close, assert_matches_onnxruntime, onnxruntime_oracle
from tests.sequence_scenarios import SEQUENCE_SCENARIOS


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
@pytest.mark.parametrize("name", sorted(SEQUENCE_SCENARIOS))
def test_sequence_scenario_matches_onnxruntime(name, optimize, tmp_path):
    model, runs = SEQUENCE_SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(model, runs, tmp_path, optimize=optimize)
    assert conversion.loops, "no loop was reported"


@pytest.mark.parametrize("name", sorted(SEQUENCE_SCENARIOS))
def test_reference_agrees_with_onnxruntime_on_sequence_scenario(name):
    model, runs = SEQUENCE_SCENARIOS[name]()
    oracle = onnxruntime_oracle(model)
    for index, feeds in enumerate(runs):
        for k, (expected, got) in enumerate(zip(oracle(feeds), run_onnx(model, feeds))):
            assert_close(expected, got, f"{name} run {index} output {k}", 1e-5, 1e-6)
