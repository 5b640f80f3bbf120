"""Edits and analyses of a LoopIR that several passes share: the body's live readers of a
value, whether a body Result feeds more than a last value, output entries and carried values
without some of them, a body Parameter's readers fed a Constant."""

from __future__ import annotations

import dataclasses

import openvino as ov

from ov_loops.contract.spec import LastValueOutput
from ov_loops.loopir.loop import LoopIR


def split_last_values(spec, taken) -> tuple[list, dict[int, int], dict[int, int]]:
    """The output entries of `spec` but the last values of the body Results `taken`, each
    kept output's new port by its old one, and the taken outputs' body Results by their
    ports."""
    outputs, moved, found = [], {}, {}
    for entry in spec.outputs():
        if isinstance(entry, LastValueOutput) and entry.body_result in taken:
            found[entry.external_port] = entry.body_result
        else:
            moved[entry.external_port] = len(outputs)
            outputs.append(entry)
    return outputs, moved, found


def live_readers(value: ov.Output, live: set[int]) -> list:
    """The inputs reading `value` in nodes of the body (`live`: their instance ids)."""
    return [r for r in value.get_target_inputs() if r.get_node().get_instance_id() in live]


def used_elsewhere(loop: LoopIR, result: int) -> bool:
    """Whether body Result `result` is a concatenated output or the execution condition."""
    spec = loop.spec
    return spec.execution_condition == result or any(
        entry.body_result == result for entry in spec.concatenated_outputs
    )


def without_merged(loop: LoopIR, gone: set[int]) -> tuple:
    """`loop`'s carried values but those of the merged inputs `gone`, the others' merged
    inputs renumbered as the spec will number them without those."""
    kept = [index for index in range(len(loop.spec.merged_inputs)) if index not in gone]
    moved = {old: new for new, old in enumerate(kept)}
    return tuple(
        dataclasses.replace(value, merged=tuple(moved[index] for index in value.merged))
        for value in loop.carried
        if gone.isdisjoint(value.merged)
    )


def inline_constant(parameter: ov.Node, value: ov.Output) -> ov.Output | None:
    """Feed every reader of `parameter` a copy of the Constant `value` (one per nested Loop);
    the copy the other readers share, if any."""

    def copy() -> ov.Node:
        return ov.op.Constant(value.get_node().get_tensor_view(), shared_memory=False)

    shared = None
    for target in parameter.output(0).get_target_inputs():
        if target.get_node().get_type_name() == "Loop":
            constant = copy()
        else:
            shared = shared or copy()
            constant = shared
        target.replace_source_output(constant.output(0))
    return None if shared is None else shared.output(0)
