"""Each ONNX Loop scenario converts, saves as clean IR and matches onnxruntime (CPU, f32)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import assert_matches_onnxruntime
from tests.loop_scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_onnxruntime(name, tmp_path):
    model, runs = SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(model, runs, tmp_path)
    assert conversion.loops, "no loop was reported"


@settings(max_examples=20, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            st.integers(min_value=-3, max_value=12),
            st.booleans(),
            st.floats(min_value=-5, max_value=60, allow_nan=False),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_sequence_of_trip_counts_and_conditions_matches_onnxruntime(runs, tmp_path_factory):
    """Random runs (zero, negative and condition-stopped ones among them) on one compiled model."""
    model, _ = SCENARIOS["loop_trip_count_and_condition"]()
    feeds = [
        {
            "x": np.array([1.0, 2.0], np.float32),
            "y0": np.array([0.5, -0.5], np.float32),
            "limit": np.array(limit, np.float32),
            "M": np.array(m, np.int64),
            "c0": np.array(c),
        }
        for m, c, limit in runs
    ]
    assert_matches_onnxruntime(model, feeds, tmp_path_factory.mktemp("hypothesis"))
