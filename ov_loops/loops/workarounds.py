"""Body rewrites that keep emitted Loops clear of CPU plugin faults found by differential fuzzing
(tests/fuzz/differential.py; the regressions are in tests/test_nested_control_flow.py)."""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import ConversionError
from ov_loops.loops import guards


def refuse_zero_run_reshaped_carry(loop, parameters: list, results: list, merged_inputs) -> None:
    """Refuse a loop that may run zero times (runtime trip count or condition) and carries a
    value the body reads and returns with a static shape other than the one it enters with.

    OpenVINO's CPU plugin (2026.4.1) fails such a Loop on a run with zero iterations: "Can not
    clone with new dims. Descriptor's shape: {4} is incompatible with provided dimensions: {2}"
    (its own ONNX frontend's IR too). Making the body's Result dynamic did not help.
    """
    for merged, name in zip(merged_inputs, loop.carried_inputs):
        parameter = parameters[merged.body_parameter]
        produced = results[merged.body_result].get_input_partial_shape(0)
        if parameter.output(0).get_target_inputs() and _more_static(
            produced, parameter.get_partial_shape()
        ):
            raise ConversionError(
                f"{loop.path}: loop-carried value '{name}' is read by the body and returned with "
                f"static shape {produced} but enters with another shape, and the loop may run "
                "zero times: OpenVINO's CPU plugin cannot run that (Can not clone with new dims)"
            )


def _more_static(produced: ov.PartialShape, declared: ov.PartialShape) -> bool:
    """Whether `produced` fixes a rank or dim that `declared` leaves open."""
    if produced.rank.is_dynamic:
        return False
    if declared.rank.is_dynamic:
        return True
    return any(mine.is_static and theirs.is_dynamic for mine, theirs in zip(produced, declared))


VIEWS = {"Reshape", "Squeeze", "Unsqueeze", "Convert"}


def copy_invariants_into_concats(parameters: list, invariant: list[int]) -> None:
    """Give each invariant body Parameter that reaches a Concat (directly or through views) a
    computed copy (`guards.copy`) in place of the Parameter for all its readers.

    The CPU plugin (2026.4.1) builds such a Concat in place and copies invariant inputs into
    the body only once; an elementwise op that then updates the Concat's output in place (e.g.
    `Concat(w, a) + ReduceSum(carried)`) leaves its result there, so the next iteration reads
    a stale, summed-into Concat: silently wrong values, and on a run with zero iterations after
    a shape change "Can not clone with new dims". Recomputed each iteration, the copy is fresh.
    """
    for index in invariant:
        value = parameters[index].output(0)
        if not _reaches_concat(value):
            continue
        readers = list(value.get_target_inputs())
        copied = guards.copy(value)
        for reader in readers:
            reader.replace_source_output(copied)


def _reaches_concat(value: ov.Output) -> bool:
    for reader in value.get_target_inputs():
        node = reader.get_node()
        kind = node.get_type_name()
        if kind == "Concat" or (kind in VIEWS and _reaches_concat(node.output(0))):
            return True
    return False
