"""Pass: OpenVINO's own graph simplification (its MOC transformations, as `openvino.convert_model`
runs them) on loop bodies.

MOC folds constants and the ShapeOf of static dims, removes no-op Converts and duplicate
nodes, and fuses what the CPU plugin would otherwise execute op by op: bodies of exporters'
loops hold much shape arithmetic. It runs on a copy, and the copy is kept only when every Loop
in it still has a consistent port map (`LoopSpec.check` of the spec read from the node): MOC's
pruning of unread body Parameters left a nested Loop's current_iteration pointing at the wrong
Parameter (OpenVINO 2026.4.1; found by tests/loopir/passes/test_pass_unroll.py's random bodies). On
a body it may prune or renumber its nested Loops' ports, so the driver reads every Loop's spec again
afterwards (conversion.report.rederived). It runs before the CPU workarounds, which it must not see:
e.g. it would drop a Convert to the same type.

MOC costs about 10 ms of CPU on any body, however small (benchmarks/conversion_time.py), and
more for each body nested in it: a body it has nothing for (`loopir/moc_inert.py`) skips it.
In a nest of loops that leaves one MOC, on the outermost body: a nested loop's body does not
wait for MOC to prune the outputs of the Loops nested in it that nothing reads (that MOC does
it for every depth), and its outcome is kept when it removes ops from the body or, as many
there, from the bodies nested in it. The digests of bodies MOC left unchanged
(`ovgraph.structure_digest`: everything but names) are remembered, so a body like one already
seen (many loops of one form) skips it; a body MOC changed runs it every time, for its own
names."""

from __future__ import annotations

import openvino as ov
from openvino._offline_transformations import apply_moc_transformations

from ov_loops.contract.spec import SpecError
from ov_loops.heap import release_freed_heap
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.moc_inert import moc_inert
from ov_loops.loopir.passes import base
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.read_back import loop_nodes, spec_of
from ov_loops.ovgraph import all_ops, structure_digest

MAX_REMEMBERED = 4096  # digests of bodies MOC left unchanged, kept per process (oldest dropped)
_UNCHANGED: dict[bytes, None] = {}


class SimplifyBody(LoopPass):
    """The body after OpenVINO's MOC transformations, when they keep it sound::

    body = moc(copy of body)    # same Parameters and Results, in the same order
    """

    name = "simplify-body"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        if moc_inert(loop.body, deferred=loop.in_loop_body):
            if base.CHECKS:
                _check_inert(loop)
            return loop
        digest = structure_digest(loop.body)
        if digest in _UNCHANGED:
            return loop
        body = simplified(loop.body)
        count, nested = _counts(loop.body)
        left, nested_left = (count, nested) if body is None else _counts(body)
        # fewer ops, or as many and fewer in its nested bodies (pairs compare in this order)
        fewer = (left, nested_left) < (count, nested)
        if body is None or _ports(body) != _ports(loop.body) or not fewer:
            _remember(digest)
            return loop
        if left >= count:  # only its nested bodies lost ops (pruned ports of nested Loops)
            return loop.replace(body=body).noting(
                f"simplified nested bodies ({nested} -> {nested_left} ops)"
            )
        return loop.replace(body=body).noting(f"simplified body ({count} -> {left} ops)")


def simplified(model: ov.Model) -> ov.Model | None:
    """A copy of `model` with Identity ops that feed no Result bypassed (MOC keeps Identity-16,
    which the ONNX frontend makes of ONNX Identity), then OpenVINO's MOC transformations with
    constant folding; None when a Loop in it no longer has a consistent port map. The heap
    freed before (the frontend's conversions of the body and those nested in it) is given back
    first: MOC's scratch and, the first time, its code pages would add to it (heap.py)."""
    release_freed_heap()
    copy = model.clone()
    for op in copy.get_ordered_ops():
        readers = op.output(0).get_target_inputs() if op.get_output_size() == 1 else ()
        if op.get_type_name() == "Identity" and not any(
            reader.get_node().get_type_name() == "Result" for reader in readers
        ):  # a Result keeps its Identity: the model's output keeps its own tensor name
            op.output(0).replace(op.input_value(0))
    apply_moc_transformations(copy, cf=True)
    try:
        for loop in loop_nodes(copy):
            body = loop.get_function()
            spec_of(loop).check(len(body.get_parameters()), len(body.get_results()))
    except SpecError:
        return None
    return copy


def _counts(body: ov.Model) -> tuple[int, int]:
    """The ops of `body` itself, and those of the bodies nested in it."""
    count = len(body.get_ordered_ops())
    return count, sum(1 for _ in all_ops(body)) - count


def _check_inert(loop: LoopIR) -> None:
    """Raise unless MOC leaves `loop`'s body, found inert, no op fewer (its nested bodies too,
    unless those are left to an enclosing body's MOC)."""
    body = simplified(loop.body)
    if body is None:
        return
    before, after = _counts(loop.body), _counts(body)
    shrunk = after[0] < before[0] or (not loop.in_loop_body and after[1] < before[1])
    if shrunk:
        raise AssertionError(f"MOC shrinks a body found inert: {before} -> {after} ops")


def _remember(digest: bytes | None) -> None:
    """Remember that MOC leaves a body of `digest` unchanged (None: not remembered)."""
    if digest is None:
        return
    if len(_UNCHANGED) >= MAX_REMEMBERED:
        del _UNCHANGED[next(iter(_UNCHANGED))]
    _UNCHANGED[digest] = None


def _ports(body: ov.Model) -> list[str]:
    nodes = [*body.get_parameters(), *body.get_results()]
    return [node.get_friendly_name() for node in nodes]
