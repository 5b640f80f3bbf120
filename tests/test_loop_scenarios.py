"""Each ONNX Loop scenario converts, saves as clean IR and matches onnxruntime (CPU, f32)."""

from __future__ import annotations

import pytest

from tests.harness import assert_matches_onnxruntime
from tests.loop_scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_onnxruntime(name, tmp_path):
    model, runs = SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(model, runs, tmp_path)
    assert conversion.loops, "no loop was reported"
