"""Pass: carried values that only grow by appending become concatenated outputs."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED, renumbered
from ov_loops.contract.spec import ConcatenatedOutput
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.shared_edits import (
    live_readers,
    split_last_values,
    used_elsewhere,
    without_merged,
)
from ov_loops.loopir.steps import PrependInitial
from ov_loops.record import Record


class _Append(Record):
    """A carried value (merged input `merged`) the body extends by `part` along `axis`."""

    __slots__ = ("merged", "axis", "part", "length")

    def __init__(self, merged: int, axis: int, part: ov.Output, length: int) -> None:
        self.merged = merged
        self.axis = axis
        self.part = part
        self.length = length


class StackAccumulators(LoopPass):
    """A carried value the body only extends, acc = Concat(acc, part) along `axis`, with no
    other body node reading acc, leaves the loop as a concatenated output of its parts; the
    initial value is prepended after the loop (`PrependInitial`)::

        acc = concat(acc, part, axis)  each iteration   ->   parts += [part]
        result: acc                                      ->   concat(initial, *parts, axis)

    A part of k > 1 rows along `axis` is stacked with an axis of its own, unsqueeze(part, axis),
    and the stack's two axes merged after the loop: Loop-5 (2026.4.1) refuses a concatenated
    output of part_size other than 1 ("Invalid start, stride, part_size, or end attribute
    values in Loop op")::

        parts += [unsqueeze(part, axis)]   ->   stack [.., count, k, ..] -> [.., count * k, ..]

    Appending copies the whole accumulator every iteration (quadratic in the trip count, and
    the CPU plugin's back-edge copy doubles it); a concatenated output writes each part once.
    The parts' lengths along `axis` must be static (a Concat of more than two inputs appends
    its parts joined: Concat(acc, p, q) appends Concat(p, q)), the carried value be a tensor.
    """

    name = "stack-accumulators"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        appends = _appends(loop)
        if not appends:
            return loop
        merged = loop.spec.merged_inputs
        results = list(loop.body.get_results())
        grown = {merged[a.merged].body_result: a for a in appends}
        for result, append in grown.items():
            results[result] = ops.result(_stacked_part(append))
        outputs, moved, taken = split_last_values(loop.spec, grown)
        stacked = {port: grown[result] for port, result in taken.items()}
        ports_of = {}
        for result, append in grown.items():
            ports_of[append.merged] = len(outputs)
            outputs.append(ConcatenatedOutput(UNNUMBERED, result, append.axis, 0, 1, 1, -1))
        spec = renumbered(loop.spec, loop.spec.inputs(), outputs)
        dropped = {merged[a.merged].body_parameter for a in appends}
        changed = loop.with_body(results, list(loop.body.get_parameters()), spec)
        changed = changed.replace(
            carried=without_merged(loop, {a.merged for a in appends}),
            results=tuple(_result(r, moved, stacked, ports_of) for r in loop.results),
        )
        return changed.without_parameters(dropped).noting(
            f"stacked {len(appends)} appended carried value(s)"
        )


def _stacked_part(append: _Append) -> ov.Output:
    """What the Loop concatenates for `append`: its part, with an axis of its own when the
    part has more than one row (part_size must be 1)."""
    if append.length == 1:
        return append.part
    return ops.unsqueeze(append.part, ops.constant(np.array([append.axis], np.int64))).output(0)


def _appends(loop: LoopIR) -> list[_Append]:
    """The carried values that qualify (see StackAccumulators)."""
    live = {node.get_instance_id() for node in loop.body.get_ordered_ops()}
    parameters = loop.body.get_parameters()
    whole = {value.merged[0] for value in loop.carried if len(value.merged) == 1}
    found = []
    for index, entry in enumerate(loop.spec.merged_inputs):
        parameter = parameters[entry.body_parameter]
        value = loop.body_value(entry.body_result)
        concat = value.get_node()
        if (
            index not in whole
            or concat.get_type_name() != "Concat"
            or concat.get_input_size() < 2
            or concat.input_value(0).get_node() != parameter
            or len(live_readers(parameter.output(0), live)) != 1
            or len(live_readers(value, live)) != 1  # the back edge's Result alone
            or used_elsewhere(loop, entry.body_result)
        ):
            continue
        append = _append(index, concat)
        if append is not None:
            found.append(append)
    return found


def _append(index: int, concat: ov.Node) -> _Append | None:
    """The append of `concat` = Concat(acc, *parts), its parts joined into one, when each
    part's length along the axis is static and their sum is not 0."""
    shape = concat.output(0).get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    axis = concat.get_attributes()["axis"] % shape.rank.get_length()
    parts = list(concat.input_values())[1:]
    dims = [part.get_partial_shape() for part in parts]
    if any(d.rank.is_dynamic or d[axis].is_dynamic for d in dims):
        return None
    length = sum(d[axis].get_length() for d in dims)
    if length == 0:
        return None
    part = parts[0] if len(parts) == 1 else ops.concat(parts, axis).output(0)
    return _Append(index, axis, part, length)


def _result(result: LoopResult, moved: dict, stacked: dict, ports_of: dict) -> LoopResult:
    """`result` reading its output's new port; an accumulator's reads its concatenated output,
    with the initial value prepended (and shaping the output after zero iterations)."""
    if result.port not in stacked:
        return result.replace(port=moved[result.port])
    append = stacked[result.port]
    initial = result.initial
    return LoopResult(
        ports_of[append.merged],
        initial=initial,
        empty_shape=_empty_stack_shape(initial, append),
        after=(PrependInitial(initial, append.axis, append.length),),
    )


def _empty_stack_shape(initial: ov.Output, append: _Append) -> ov.Output:
    """The shape of the stack after zero iterations: the initial value's with no rows along
    the axis, and the part's rows after it when parts are stacked with an axis of their own."""
    rank = initial.get_partial_shape().rank.get_length()
    keep = np.ones(rank, np.int64)
    keep[append.axis] = 0
    empty = ops.multiply(ops.shape_of(initial, ov.Type.i64), ops.constant(keep)).output(0)
    if append.length == 1:
        return empty
    rows = ops.constant(np.array([append.length], np.int64))
    order = [*range(append.axis + 1), rank, *range(append.axis + 1, rank)]
    joined = ops.concat([empty, rows], 0)
    return ops.gather(joined, ops.constant(np.array(order)), np.int64(0)).output(0)
