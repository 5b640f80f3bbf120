"""A loop the passes at level max leave with one iteration (passes/linear_recurrences.py)
becomes its body inlined in the graph, not a Loop-5 (lower/select.py); the IR reference of the
result against that of the loop as it is."""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ops
import pytest

from ov_loops.loopir.passes.pipeline import CPU, LoweringOptions
from ov_loops.lower.loop5 import lower_to_loop5
from ov_loops.lower.select import lower
from tests.harness import assert_close
from tests.loopir.passes.test_passes import _reference_outputs
from tests.loopir_scenarios import (
    linear_recurrence_of_one_step,
    linear_recurrences_of_scalars,
    unrolling_loop,
)


@pytest.mark.parametrize("build", [linear_recurrences_of_scalars, linear_recurrence_of_one_step])
def test_solved_recurrences_are_inlined_at_max(build, tmp_path):
    loop, parameters, feeds = build()
    expected = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "a.xml")
    loop, parameters, feeds = build()
    lowered = lower(loop, LoweringOptions(CPU, "max"))
    assert "inlined its one iteration" in lowered.applied
    assert lowered.spec is None
    graph = ov.Model([ops.result(value) for value in lowered.values], parameters)
    kinds = {op.get_type_name() for op in graph.get_ordered_ops()}
    assert "Loop" not in kinds  # the replaced loop only in the If's branch, if any
    assert ("If" in kinds) == (loop.trip.constant > 1)  # one step: no products to guard
    got = _reference_outputs(lowered.values, parameters, feeds, tmp_path / "b.xml")
    for index, (want, have) in enumerate(zip(expected, got)):
        assert have.shape == want.shape, f"output {index}"
        assert_close(want, have, f"output {index}", 1e-5, 1e-5)


def test_a_loop_stays_a_loop_at_default():
    loop, _, _ = linear_recurrences_of_scalars()
    lowered = lower(loop, LoweringOptions(CPU, "default"))
    assert "inlined its one iteration" not in lowered.applied and lowered.spec is not None


def test_a_loop_unrolled_by_its_whole_trip_count_stays_a_loop(tmp_path):
    """UnrollIterations leaves a 4-step loop one iteration of 4 copies, whose stacked outputs
    its steps reshape: inlining it broke them (PyTensor's RNN gradient at T=4: "Argument
    shapes are inconsistent" in a Concat of [1,3] and [1,4,3])."""
    loop, parameters, feeds = unrolling_loop(4, False)
    expected = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "a.xml")
    loop, parameters, feeds = unrolling_loop(4, False)
    lowered = lower(loop, LoweringOptions(CPU, "max"))
    assert "unrolled x4" in lowered.applied and lowered.spec is not None
    got = _reference_outputs(lowered.values, parameters, feeds, tmp_path / "b.xml")
    for index, (want, have) in enumerate(zip(expected, got)):
        assert_close(want, have, f"output {index}", 1e-6, 1e-6)
