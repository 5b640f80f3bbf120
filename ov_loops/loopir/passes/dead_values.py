"""Pass: loop values that need no port of their own: carried values that never change, inputs
nothing reads."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import openvino as ov

from ov_loops import ovgraph
from ov_loops.contract import ports
from ov_loops.contract.spec import InvariantInput, MergedInput
from ov_loops.loopir.analysis import returned_unchanged, unchanged_carried, unread_parameters
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.shared_edits import inline_constant
from ov_loops.loopir.steps import AfterLoop
from ov_loops.record import Record


class RemoveDeadValues(LoopPass):
    """Give unchanged carried values invariant inputs and drop inputs nothing reads::

        for carried value whose back edges all return their own Parameter unchanged
                (directly or through Identity ops and Converts to the same type):
            its merged inputs -> invariant inputs (same outer value, same Parameter)
            a last-value output that returns such a Parameter -> its outer value (OuterValue)
            outer value a Constant: the Parameter's readers, and the readers of those Identity
                ops and Converts other than Results and nested Loops, read a copy of it
        for invariant and sliced inputs: if nothing reads the Parameter: drop the input

    An invariant input has no back edge: nothing is copied between iterations. The Loop-5
    output of an unchanged value stays (its Result reads the invariant Parameter, which Loop-5
    allows) but the graph reads the outer value itself, which is right after any number of
    iterations, zero included, and does not wait for the Loop. jax2onnx's Loops carry their
    weights unchanged: as body Constants (InlineConstantCaptures, which ran before, saw them
    carried) the CPU plugin pre-packs them and the cell lowering (lower/cells.py) reads them.

    Not done: carried values whose cycle feeds nothing but itself. Their last-value outputs may
    be read by the graph, and a LoopIR does not know which of its results the graph reads.
    A sliced input that is dropped no longer makes a Scan whose inputs differ in length fail.
    """

    name = "remove-dead-values"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        unchanged = unchanged_carried(loop)
        after = _as_invariants(loop, unchanged) if unchanged else loop
        for index in unchanged:
            _inline_if_constant(after, loop.spec.merged_inputs[index])
        spec = after.spec
        unread = unread_parameters(after, (*spec.invariant_inputs, *spec.sliced_inputs))
        if unread:
            after = after.without_parameters(unread)
        if unchanged:
            values = sum(1 for value in loop.carried if unchanged.issuperset(value.merged))
            after = after.noting(f"made {values} unchanged carried value(s) invariant")
        if unread:
            after = after.noting(f"dropped {len(unread)} unread input(s)")
        return after


def _inline_if_constant(loop: LoopIR, entry: MergedInput) -> None:
    """Readers of the Parameter of `entry` (an unchanged carried value), and readers other
    than Results and nested Loops of the Identity ops and same-type Converts after it, read a
    copy of its outer value when that is a Constant."""
    value = loop.outer[entry.external_port]
    if not ovgraph.is_constant(value):
        return
    shared = inline_constant(loop.body.get_parameters()[entry.body_parameter], value)
    pending = [] if shared is None else [shared]
    while pending:
        for target in pending.pop().get_target_inputs():
            node = target.get_node()
            if (
                node.get_type_name() in ("Result", "Loop")
                or returned_unchanged(node.output(0)) != shared.get_node()
            ):
                continue
            pending.append(node.output(0))
            for reader in list(node.output(0).get_target_inputs()):
                if reader.get_node().get_type_name() not in ("Result", "Loop"):
                    reader.replace_source_output(shared)


class OuterValue(Record):
    """The result is `value`, an outer value (a carried value that never changes)::

    value = outer value
    """

    __slots__ = ("value",)

    def __init__(self, value: ov.Output) -> None:
        self.value = value

    phase: ClassVar[int] = 0

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [ovgraph.passthrough(step.value) for _, step in items]


def _as_invariants(loop: LoopIR, unchanged: set[int]) -> LoopIR:
    """`loop` with the merged inputs at `unchanged` as invariant inputs (ports kept), their
    carried values gone and last-value outputs of their Parameters read from outside."""
    merged = loop.spec.merged_inputs
    made_invariant = {merged[index].external_port for index in unchanged}
    inputs = [
        InvariantInput(entry.external_port, entry.body_parameter)
        if entry.external_port in made_invariant
        else entry
        for entry in loop.spec.inputs()
    ]
    spec = ports.renumbered(loop.spec, inputs, loop.spec.outputs())
    kept = [index for index in range(len(merged)) if index not in unchanged]
    moved = {old: new for new, old in enumerate(kept)}
    carried = tuple(
        dataclasses.replace(value, merged=tuple(moved[index] for index in value.merged))
        for value in loop.carried
        if unchanged.isdisjoint(value.merged)
    )
    results = tuple(_read_outside(loop, unchanged, result) for result in loop.results)
    return loop.replace(spec=spec, carried=carried, results=results)


def _read_outside(loop: LoopIR, unchanged: set[int], result: LoopResult) -> LoopResult:
    """`result` read from outside the Loop (OuterValue) when it is the last value of a Parameter
    of the merged inputs at `unchanged`."""
    last_values = {entry.external_port: entry.body_result for entry in loop.spec.last_value_outputs}
    if result.port not in last_values:
        return result
    returned = returned_unchanged(loop.body_value(last_values[result.port]))
    parameters = loop.body.get_parameters()
    for index in unchanged:
        entry = loop.spec.merged_inputs[index]
        if returned == parameters[entry.body_parameter]:
            return result.with_step(OuterValue(loop.outer[entry.external_port]))
    return result
