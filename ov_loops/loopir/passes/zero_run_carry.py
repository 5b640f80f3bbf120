"""Pass: a loop that may run zero times and carries a value whose shape the body changes takes
its zero-iteration run outside the Loop-5, in an If around it (lower/zero_run_branch.py)."""

from __future__ import annotations

import openvino as ov

from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.ovgraph import dimensions


class BranchZeroRunsOfReshapedCarries(LoopPass):
    """Mark (`zero_run_branch`) a loop that may run zero times (runtime trip count or
    condition) and carries a value the body returns with a static or bounded shape other than
    the one it enters with, or with a dim bounded below above a non-zero length it may enter
    with::

        branch if loop.may_run_zero and some carried value v has
            rank or a static or bounded-above dim of body_result(v) not of parameter(v),
                unless outer(v) has a static shape within body_result(v)'s bounds, or
            a dim d bounded above in outer(v) with 0 < len(d) < min(body_result(v).d) possible

    The lowering then emits `If(runs) { Loop-5 } else { its values after zero iterations }`
    (Loop-5 spec: a zero-iteration run's last values are the initial values, its stacked
    outputs empty), and no zero-iteration guards (cpu_guards.py): the Loop-5 runs at least once.

    OpenVINO's CPU plugin (2026.4.1) fails such a Loop, or the zero-iteration guard after it, on
    a run with zero iterations: "Can not clone with new dims. Descriptor's shape: {4} (or
    {3 - 5}, or {2 - ?}) is incompatible with provided dimensions: {2}" (OpenVINO's own
    frontend's IR too); with at least one iteration it runs. Reshaping the body's Result to a
    shape computed at run time did not help: the plugin infers the static shape again. A value
    growing by parts of k rows from a Parameter [?] returns [k..]: entering with 1..k-1 rows
    fails, entering empty runs (measured with k = 3: rows 0, 3 and 4 ran, 1 and 2 failed; so a
    value growing by one row runs whatever it enters with). A value entering with a dim
    OpenVINO cannot bound ([?], a value computed at run time) is not branched: the loops of
    that kind met so far (an inner loop's list of at least as many elements as it appends)
    run. A value entering with a static shape the body's bounds allow runs (an exported beam
    search, its beams entering as [3, 1] and returned as [3, 1..], at zero iterations too).
    """

    name = "branch-zero-runs"

    def run(self, loop: LoopIR) -> LoopIR:
        if not loop.may_run_zero or loop.zero_run_branch:
            return loop
        parameters = loop.body.get_parameters()
        for merged in loop.spec.merged_inputs:
            declared = parameters[merged.body_parameter].get_partial_shape()
            produced = loop.body_value(merged.body_result).get_partial_shape()
            entering = _entering_shape(loop.outer[merged.external_port])
            reshaped = _tighter(produced, declared) and not _fits(entering, produced)
            if reshaped or _shorter(entering, produced):
                return loop.replace(zero_run_branch=True)
        return loop


def _tighter(produced: ov.PartialShape, declared: ov.PartialShape) -> bool:
    """Whether `produced` fixes a rank, or fixes or bounds above a dim, that `declared` leaves
    open (a dim only bounded below, as a growing value's [1..], runs)."""
    if produced.rank.is_dynamic:
        return False
    if declared.rank.is_dynamic:
        return True
    return any(
        theirs.is_dynamic and mine.get_max_length() not in (-1, theirs.get_max_length())
        for mine, theirs in zip(dimensions(produced), dimensions(declared))
    )


def _fits(entering: ov.PartialShape, produced: ov.PartialShape) -> bool:
    """Whether `entering` is a static shape within the bounds of `produced`."""
    return entering.is_static and produced.rank.is_static and produced.compatible(entering)


def _shorter(entering: ov.PartialShape, produced: ov.PartialShape) -> bool:
    """Whether a value of shape `entering` may be non-empty with a dim bounded above and below
    the lower bound of that dim in `produced` (an empty value runs, an unbounded dim is not
    branched: see BranchZeroRunsOfReshapedCarries)."""
    if entering.rank.is_dynamic or produced.rank.is_dynamic or entering.rank != produced.rank:
        return False
    return any(
        theirs.get_max_length() > 0 and max(theirs.get_min_length(), 1) < mine.get_min_length()
        for theirs, mine in zip(dimensions(entering), dimensions(produced))
    )


def _entering_shape(outer: ov.Output) -> ov.PartialShape:
    """The shape a carried value enters with; for a state (`--stateful`: a ReadValue, maybe
    behind a Convert), its initial value's: on later calls it enters with what the loop left,
    a value the body returned or, after zero iterations, that initial value again."""
    node = outer.get_node()
    if node.get_type_name() == "Convert":
        node = node.input_value(0).get_node()
    if node.get_type_name() == "ReadValue" and node.get_input_size() == 1:
        return node.input_value(0).get_partial_shape()
    return outer.get_partial_shape()
