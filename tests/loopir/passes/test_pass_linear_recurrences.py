"""SolveLinearRecurrences: a loop of scalar steps whose carried values are linear recurrences
becomes one iteration over whole sequences (the IR-reference oracle of every pass is in
test_passes.py: the scenarios below compute the same before and after it)."""

from __future__ import annotations

import pytest

from ov_loops.contract.spec import LastValueOutput
from ov_loops.loopir.passes.linear_recurrences import SolveLinearRecurrences
from tests.loopir_scenarios import (
    linear_recurrence_of_one_step,
    linear_recurrences_of_scalars,
    outer_products_summed,
    recurrence_coupled_nonlinearly,
    recurrence_without_broadcasting,
)


@pytest.mark.parametrize(
    "build, steps", [(linear_recurrences_of_scalars, 7), (linear_recurrence_of_one_step, 1)]
)
def test_scalar_linear_recurrences_run_as_one_iteration(build, steps):
    loop, _, _ = build()
    after = SolveLinearRecurrences()(loop)
    assert after.trip.constant == 1 and after.spec.trip_count == 1
    assert not after.spec.merged_inputs and not after.carried
    assert after.spec.current_iteration is None and not after.spec.sliced_inputs
    assert all(isinstance(e, LastValueOutput) for e in after.spec.outputs())
    assert [r.port for r in after.results] == [r.port for r in loop.results]
    assert after.applied == (f"solved 3 linear recurrence(s) over {steps} steps",)
    kinds = {op.get_type_name() for op in after.body.get_ordered_ops()}
    assert ("CumSum" in kinds) == (steps > 1)  # acc and c add without a factor


@pytest.mark.parametrize(
    "build",
    [recurrence_coupled_nonlinearly, recurrence_without_broadcasting, outer_products_summed],
)
def test_other_loops_stay(build):
    """x = x r + acc * acc is not linear; x * r without broadcasting takes no sequence; a
    runtime trip count and [3, 2] values do not qualify."""
    loop, _, _ = build()
    assert SolveLinearRecurrences()(loop) is loop
