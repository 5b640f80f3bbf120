"""Level max's op budget: the loops of a model share OP_BUDGET ops of unrolled copies, so an
IR at max has at most about OP_BUDGET ops more than at default (unroll_iterations.py); a
model of a few loops is unrolled as before."""

from __future__ import annotations

import pytest

from benchmarks.generated_models import sequential_loops
from ov_loops.api import translate
from ov_loops.loopir.passes.unroll_iterations import OP_BUDGET


def _ops(model) -> int:
    """Every op of `model` and of its bodies."""
    return sum(
        1 + (_ops(op.get_function()) if op.get_type_name() == "Loop" else 0)
        for op in model.get_ordered_ops()
    )


def _converted(loops: int, optimize: str):
    return translate(sequential_loops(loops).SerializeToString(), optimize=optimize)


@pytest.mark.parametrize(
    ("loops", "said"),
    [
        (16, "optimized: unrolled x16, copies past the trip count masked"),
        (40, "optimized: unrolled x9 (op budget), copies past the trip count masked"),
        (100, "not unrolled: op budget"),
    ],
)
def test_the_loops_of_a_model_share_the_op_budget(loops, said):
    """Each loop (a counter and a scan output) gets OP_BUDGET / loops ops: 16 loops keep
    x16, 40 are cut to x9, 100 are left whole and say why."""
    at_max, at_default = _converted(loops, "max"), _converted(loops, "default")
    assert all(loop.summary().endswith(said) for loop in at_max.loops), at_max.loops[0].summary()
    assert _ops(at_max.model) - _ops(at_default.model) <= OP_BUDGET
    if loops == 100:
        assert _ops(at_max.model) == _ops(at_default.model)
