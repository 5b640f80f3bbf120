"""Pass: refuse carried values whose shape changes in a loop that may run zero times."""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import ConversionError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class RefuseZeroRunReshapedCarry(LoopPass):
    """Refuse a loop that may run zero times (runtime trip count or condition) and carries a
    value the body returns with a static or bounded shape other than the one it enters with.

    OpenVINO's CPU plugin (2026.4.1) fails such a Loop, or the zero-iteration guard after it, on
    a run with zero iterations: "Can not clone with new dims. Descriptor's shape: {4} (or
    {3 - 5}) is incompatible with provided dimensions: {2}" (OpenVINO's own frontend's IR too).
    Reshaping the body's Result to a shape computed at run time did not help: the plugin infers
    the static shape again.
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
            if _tighter(produced, declared):
                raise ConversionError(
                    f"{loop.path}: loop-carried value '{parameter.output(0).get_any_name()}' "
                    f"enters with another shape than the {produced} the body returns, and the "
                    "loop may run zero times: OpenVINO's CPU plugin cannot run that (Can not "
                    "clone with new dims)"
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
