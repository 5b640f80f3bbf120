"""Scenarios that went wrong at one optimisation level only, run at every level against both
oracles (onnxruntime and ov-loops' ONNX reference): a defect of a pass is in the IR itself, so
`check OUT.xml`, which compares the IR with its own reference, cannot see it (issue 20)."""

from __future__ import annotations

import pytest

from tests.harness import assert_matches_onnxruntime, onnxruntime_oracle, reference_oracle
from tests.loop_scenarios import SCENARIOS as LOOP_SCENARIOS
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS

LEVELS = ("none", "default", "max")
ORACLES = {"onnxruntime": onnxruntime_oracle, "reference": reference_oracle}
# Each with the level it failed at and what went wrong there.
FOUND = {
    # max: stacked, unrolled, and on a zero-iteration run its initial value came back twice
    "loop_appended_carried_values_may_run_zero_times": LOOP_SCENARIOS,
    # max: the entry's scan unrolled; every run with a length below 14 failed to infer
    "scan8_sequence_lens_static_shapes": SCAN_SCENARIOS,
    # default, max: stacked with part_size 2 and 3, which Loop-5 refuses
    "loop_carried_values_grown_by_parts_of_several_rows": LOOP_SCENARIOS,
    # none: a Loop's unread output of a value growing along axis 1 ("object is not initialized")
    "loop_in_a_body_with_an_unread_grown_carried_value": LOOP_SCENARIOS,
}


@pytest.mark.parametrize("oracle", list(ORACLES))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", list(FOUND))
def test_scenario_matches_both_oracles_at_every_level(name: str, level: str, oracle: str, tmp_path):
    made, runs = FOUND[name][name]()
    assert_matches_onnxruntime(made, runs, tmp_path, oracle=ORACLES[oracle], optimize=level)
