"""The ONNX reference agrees with onnxruntime on every Loop/Scan test model, and with the backend
cases' expected outputs; onnx.reference's own control flow does not (listed)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from ov_loops.errors import ConversionError
from ov_loops.reference.limits import Budget
from ov_loops.reference.onnx_reference import Trace, run_onnx
from tests import loop_scenarios
from tests.harness import assert_close
from tests.scenarios import SCENARIOS
from tests.test_conformance import LOOP_CASES, assert_outputs_close


def _expected(model, runs):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for entry in runs:
        feeds, expected = entry if isinstance(entry, tuple) else (entry, None)
        yield feeds, expected if expected is not None else session.run(None, feeds)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_reference_agrees_with_onnxruntime(name):
    model, runs = SCENARIOS[name]()
    for index, (feeds, expected) in enumerate(_expected(model, runs)):
        got = run_onnx(model, feeds)
        for k, value in enumerate(expected):
            assert_close(value, got[k], f"{name} run {index} output {k}", 1e-5, 1e-6)


@pytest.mark.parametrize("name", sorted(LOOP_CASES))
def test_reference_reproduces_backend_cases(name):
    case = LOOP_CASES[name]
    for inputs, outputs in case.data_sets:
        feeds = dict(zip([i.name for i in case.model.graph.input], inputs))
        got = run_onnx(case.model, feeds)
        assert_outputs_close(name, outputs, got, case.rtol, case.atol)


# onnx.reference's builtin Loop/Scan/If (onnx 1.23.2) disagree with onnxruntime on every
# scenario but these six (it vstacks scan outputs, runs no iteration without `cond`, lacks
# reverse and non-zero-axis Scans and Scan-8, fails on zero-length scans); ours agree on all.
# The test recomputes the set, so this stays true.
ONNX_REFERENCE_AGREES = {
    "scan_state_is_the_previous_element",
    "scan_swapped_states_and_unread_input",
    "scan_state_overwritten_by_an_unchanged_one",
    "loop_of_constants_with_if_stops_early",
    "loop_appended_carried_values_may_run_zero_times",  # no scan output, `cond` given
    "loop_carried_values_grown_by_parts_of_several_rows",  # the same
}


def _builtin_disagrees(model, runs) -> bool:
    for feeds, expected in _expected(model, runs):
        try:
            got = ReferenceEvaluator(model).run(None, feeds)
            for k, value in enumerate(expected):
                assert_close(value, np.asarray(got[k]), "", 1e-5, 1e-6)
        except Exception:  # any failure of the builtin counts as a disagreement
            return True
    return False


def test_onnx_reference_builtin_disagreements_are_as_listed():
    wrong = {name for name, build in SCENARIOS.items() if _builtin_disagrees(*build())}
    assert wrong == set(SCENARIOS) - ONNX_REFERENCE_AGREES


def test_iteration_limit_stops_an_unbounded_loop():
    model, _ = loop_scenarios.loop_no_trip_count_no_condition()
    feeds = {
        "x": np.array([1.0, 2.0], np.float32),
        "y0": np.zeros(2, np.float32),
        "limit": np.array(np.inf, np.float32),
    }
    with pytest.raises(ConversionError, match="limit of 50 iterations in total"):
        run_onnx(model, feeds, max_iterations=50)


def test_trace_records_carried_values_per_iteration():
    model, runs = loop_scenarios.loop_no_scan_outputs()
    trace = Trace()
    run_onnx(model, runs[0], trace=trace)
    ((per_iteration,),) = trace.runs.values()
    assert [int(values[0]) for values in per_iteration] == [3 * 2**k for k in range(1, 11)]


def _nested_feeds(runs, trips: int) -> dict:
    return {**runs[0], **{k: np.array(trips) for k in ("M", "middle_trips", "inner_trips")}}


def test_nested_loops_share_one_iteration_budget():
    """5 outer, 5 x 5 middle, 5 x 5 x 5 inner iterations: 155 in total."""
    model, runs = loop_scenarios.loop_nested_three_deep_with_captures()
    run_onnx(model, _nested_feeds(runs, 5), max_iterations=155)
    with pytest.raises(ConversionError, match="limit of 154 iterations in total"):
        run_onnx(model, _nested_feeds(runs, 5), max_iterations=154)


def test_loops_accumulated_outputs_share_one_element_budget():
    budget = Budget("R", max_live_elements=10)
    with budget.accumulating("Loop 'outer'") as outer:
        outer.add(np.zeros(6))
        with (
            pytest.raises(ConversionError, match="reach 11 elements, over the limit of 10"),
            budget.accumulating("Loop 'inner'") as inner,
        ):
            inner.add(np.zeros(5))
        assert budget.live_elements == 6  # the inner loop's outputs are released
    assert budget.live_elements == 0
    with pytest.raises(ConversionError, match="'big' computed a value of 11 elements"):
        Budget("R", max_value_elements=10).value("'big'", np.zeros(11))


def test_trace_stops_recording_at_its_element_bound():
    model, runs = loop_scenarios.loop_no_scan_outputs()
    trace = Trace(max_elements=5)
    run_onnx(model, runs[0], trace=trace)
    ((per_iteration,),) = trace.runs.values()
    assert trace.truncated and len(per_iteration) == 5  # of 10 iterations, one element each
