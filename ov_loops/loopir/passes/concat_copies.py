"""Pass: computed copies before Concats the CPU plugin would build in place (and the same for
Loop outputs in the converted model). Faults found by differential fuzzing
(tests/fuzz/differential.py; the regressions are in
tests/conversion/test_nested_control_flow.py)."""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass

VIEWS = {"Reshape", "Squeeze", "Unsqueeze", "Convert"}


class CopyCapturesIntoConcats(LoopPass):
    """Give each invariant body Parameter that reaches a Concat (directly or through views) a
    computed copy (`ovgraph.copy`) in place of the Parameter for all its readers::

        for input in invariant_inputs:
            if parameter reaches a Concat: body.uses(parameter) <- copy(parameter)

    The CPU plugin (2026.4.1) builds such a Concat in place and copies invariant inputs into
    the body only once; an elementwise op that then updates the Concat's output in place (e.g.
    `Concat(w, a) + ReduceSum(carried)`) leaves its result there, so the next iteration reads
    a stale, summed-into Concat: silently wrong values, and on a run with zero iterations after
    a shape change "Can not clone with new dims". Recomputed each iteration, the copy is fresh.
    """

    name = "copy-captures-into-concats"

    def run(self, loop: LoopIR) -> LoopIR:
        parameters = loop.body.get_parameters()
        for entry in loop.spec.invariant_inputs:
            _copy_if_it_reaches_a_concat(parameters[entry.body_parameter].output(0))
        return loop


def copy_loop_outputs_into_concats(model: ov.Model) -> None:
    """Give each Loop output that reaches a Concat (directly or through views) a computed copy,
    in `model` and in every Loop and If body in it.

    The CPU plugin (2026.4.1) lets such a Concat take the Loop's output in place; after an
    inference whose input shapes changed, the Concat's part from the Loop reads zeros or
    garbage while the Loop's own output is right (found by differential fuzzing). One copy per
    Loop output and inference, not per iteration.
    """
    for op in model.get_ordered_ops():
        kind = op.get_type_name()
        if kind == "Loop":
            copy_loop_outputs_into_concats(op.get_function())
            for output in op.outputs():
                _copy_if_it_reaches_a_concat(output)
        elif kind == "If":
            copy_loop_outputs_into_concats(op.get_then_body())
            copy_loop_outputs_into_concats(op.get_else_body())


def _copy_if_it_reaches_a_concat(value: ov.Output) -> None:
    """Feed every reader of `value` a computed copy (`ovgraph.copy`) when one reaches a Concat."""
    if not _reaches_concat(value):
        return
    readers = list(value.get_target_inputs())
    copied = ovgraph.copy(value)
    for reader in readers:
        reader.replace_source_output(copied)


def _reaches_concat(value: ov.Output) -> bool:
    for reader in value.get_target_inputs():
        node = reader.get_node()
        kind = node.get_type_name()
        if kind == "Concat" or (kind in VIEWS and _reaches_concat(node.output(0))):
            return True
    return False
