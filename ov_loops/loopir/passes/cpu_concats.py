"""Body rewrites that keep emitted Loops clear of CPU plugin faults found by differential fuzzing
(tests/fuzz/differential.py; the regressions are in tests/test_nested_control_flow.py)."""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.errors import ConversionError


def refuse_zero_run_reshaped_carry(loop, parameters: list, results: list, merged_inputs) -> None:
    """Refuse a loop that may run zero times (runtime trip count or condition) and carries a
    value the body returns with a static or bounded shape other than the one it enters with.

    OpenVINO's CPU plugin (2026.4.1) fails such a Loop, or the zero-iteration guard after it, on
    a run with zero iterations: "Can not clone with new dims. Descriptor's shape: {4} (or
    {3 - 5}) is incompatible with provided dimensions: {2}" (OpenVINO's own frontend's IR too).
    Reshaping the body's Result to a shape computed at run time did not help: the plugin infers
    the static shape again.
    """
    for merged, name in zip(merged_inputs, loop.carried_inputs):
        declared = parameters[merged.body_parameter].get_partial_shape()
        produced = results[merged.body_result].get_input_partial_shape(0)
        if _tighter(produced, declared):
            raise ConversionError(
                f"{loop.path}: loop-carried value '{name}' enters with another shape than the "
                f"{produced} the body returns, and the loop may run zero times: OpenVINO's CPU "
                "plugin cannot run that (Can not clone with new dims)"
            )


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


VIEWS = {"Reshape", "Squeeze", "Unsqueeze", "Convert"}


def copy_invariants_into_concats(parameters: list, invariant: list[int]) -> None:
    """Give each invariant body Parameter that reaches a Concat (directly or through views) a
    computed copy (`ovgraph.copy`) in place of the Parameter for all its readers.

    The CPU plugin (2026.4.1) builds such a Concat in place and copies invariant inputs into
    the body only once; an elementwise op that then updates the Concat's output in place (e.g.
    `Concat(w, a) + ReduceSum(carried)`) leaves its result there, so the next iteration reads
    a stale, summed-into Concat: silently wrong values, and on a run with zero iterations after
    a shape change "Can not clone with new dims". Recomputed each iteration, the copy is fresh.
    """
    for index in invariant:
        _copy_if_it_reaches_a_concat(parameters[index].output(0))


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
