"""Each ONNX Scan scenario converts to clean IR (Loop-5 only) and matches onnxruntime (CPU, f32)."""

from __future__ import annotations

import pytest

from tests.harness import assert_matches_onnxruntime
from tests.scan_scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scan_scenario_matches_onnxruntime(name, tmp_path):
    model, runs = SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(model, runs, tmp_path)
    assert any(loop.op.startswith("Scan") for loop in conversion.loops), conversion.loops
