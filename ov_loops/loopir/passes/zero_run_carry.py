"""Pass: refuse carried values whose shape changes in a loop that may run zero times."""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import ConversionError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class RefuseZeroRunReshapedCarry(LoopPass):
    """Refuse a loop that may run zero times (runtime trip count or condition) and carries a
    value the body returns with a static or bounded shape other than the one it enters with,
    or with a dim bounded below above a non-zero length it may enter with::

        refuse if loop.may_run_zero and some carried value v has
            rank or a static or bounded-above dim of body_result(v) not of parameter(v),
                unless outer(v) has a static shape within body_result(v)'s bounds, or
            a dim d bounded above in outer(v) with 0 < len(d) < min(body_result(v).d) possible

    OpenVINO's CPU plugin (2026.4.1) fails such a Loop, or the zero-iteration guard after it, on
    a run with zero iterations: "Can not clone with new dims. Descriptor's shape: {4} (or
    {3 - 5}, or {2 - ?}) is incompatible with provided dimensions: {2}" (OpenVINO's own
    frontend's IR too). Reshaping the body's Result to a shape computed at run time did not
    help: the plugin infers the static shape again. A value growing by parts of k rows from
    a Parameter [?] returns [k..]: entering with 1..k-1 rows fails, entering empty runs
    (measured with k = 3: rows 0, 3 and 4 ran, 1 and 2 failed; so a value growing by one row
    runs whatever it enters with). A value entering with a dim OpenVINO cannot bound ([?], a
    value computed at run time) is not refused: the loops of that kind met so far (an inner
    loop's list of at least as many elements as it appends) run. A value entering with a
    static shape the body's bounds allow runs (an exported beam search, its beams entering as
    [3, 1] and returned as [3, 1..], at zero iterations too).
    """

    name = "refuse-zero-run-reshaped-carry"

    def run(self, loop: LoopIR) -> LoopIR:
        if not loop.may_run_zero:
            return loop
        parameters = loop.body.get_parameters()
        for merged in loop.spec.merged_inputs:
            parameter = parameters[merged.body_parameter]
            declared = parameter.get_partial_shape()
            produced = loop.body_value(merged.body_result).get_partial_shape()
            entering = _entering_shape(loop.outer[merged.external_port])
            if _tighter(produced, declared) and not _fits(entering, produced):
                how = "with another shape than"
            elif _shorter(entering, produced):
                how = f"as {entering}, shorter than"
            else:
                continue
            raise ConversionError(
                f"{loop.path}: loop-carried value '{parameter.output(0).get_any_name()}' "
                f"enters {how} the {produced} the body returns, and the loop may run zero "
                "times: OpenVINO's CPU plugin cannot run that (Can not clone with new dims)"
            )
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
        for mine, theirs in zip(produced, declared)
    )


def _fits(entering: ov.PartialShape, produced: ov.PartialShape) -> bool:
    """Whether `entering` is a static shape within the bounds of `produced`."""
    return entering.is_static and produced.rank.is_static and produced.compatible(entering)


def _shorter(entering: ov.PartialShape, produced: ov.PartialShape) -> bool:
    """Whether a value of shape `entering` may be non-empty with a dim bounded above and below
    the lower bound of that dim in `produced` (an empty value runs, an unbounded dim is not
    refused: see RefuseZeroRunReshapedCarry)."""
    if entering.rank.is_dynamic or produced.rank.is_dynamic or entering.rank != produced.rank:
        return False
    return any(
        theirs.get_max_length() > 0 and max(theirs.get_min_length(), 1) < mine.get_min_length()
        for theirs, mine in zip(entering, produced)
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
