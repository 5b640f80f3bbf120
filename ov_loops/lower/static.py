"""What a target that needs static loops (NPU) refuses: one line naming the loop and why."""

from __future__ import annotations

from ov_loops.contract.spec import TRIP_COUNT_UNBOUNDED
from ov_loops.errors import UnsupportedError, UnsupportedItem
from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.stateful import is_top_level
from ov_loops.lower.unroll import stops_early
from ov_loops.ovgraph import MAX_FOLDED_DEPTH, NOT_FOLDED, upstream


def static_refusal(loop: LoopIR) -> str | None:
    """Why `loop` cannot run where every loop needs a constant trip count and static shapes
    (the NPU: openvinotoolkit/openvino#26357; its compiler unrolls Loops by their constant
    trip count and leaves early-exit Loops with concatenated outputs unsupported, E#124554)::

        trip count not a constant                     -> refused, saying what it is made of
        initial condition a run-time value            -> refused (it may run zero times)
        an outer input or a body value of dynamic shape -> refused, naming it
        may stop early, with stacked outputs          -> refused (run-time length)
    """
    if loop.trip.constant is None:
        return _trip_count_refusal(loop)
    if loop.start.runtime:
        return "its initial condition is a run-time value"
    for port, value in sorted(loop.outer.items()):
        if not value.get_partial_shape().is_static:
            return f"its input {port} has the dynamic shape {value.get_partial_shape()}"
    for op in loop.body.get_ordered_ops():
        for output in op.outputs():
            if not output.get_partial_shape().is_static:
                shape = output.get_partial_shape()
                return f"its body value {op.get_friendly_name()} has the dynamic shape {shape}"
    if stops_early(loop) and loop.spec.concatenated_outputs:
        return "it may stop early, so its stacked outputs' length is known only at run time"
    return None


def _trip_count_refusal(loop: LoopIR) -> str:
    """What a trip count that is not a constant is made of: no count at all, the values of
    inputs (not their shapes: the walk stops at ShapeOf), dynamic shapes, the results of ops
    only run time knows, or constants in more ops than folding goes through."""
    if loop.trip.source == TRIP_COUNT_UNBOUNDED:
        return "it has no trip count: M is absent or at least 2**31-1, it runs until its condition"
    nodes = list(upstream([loop.trip.value], lambda node: node.get_type_name() != "ShapeOf"))
    kinds = {node.get_type_name(): node.get_friendly_name() for node in nodes}
    inputs = [node for node in nodes if node.get_type_name() == "Parameter"]
    if inputs and not is_top_level(loop.path):
        return "its trip count depends on run-time values of the enclosing graph"
    if inputs:
        named = ", ".join(sorted(f"'{node.get_friendly_name()}'" for node in inputs))
        return (
            f"its trip count depends on the run-time value of input {named}, not on shapes: "
            f"make {named} an initializer of the ONNX model"
        )
    if "ShapeOf" in kinds:
        return "its trip count is computed from a dynamic shape: give static input shapes"
    late = sorted(kind for kind in kinds if kind in NOT_FOLDED)
    if late:
        return f"its trip count is computed at run time by {late[0]} {kinds[late[0]]}"
    return (
        f"its trip count is computed from constants in a way not folded: over {MAX_FOLDED_DEPTH} "
        "ops deep, or an op that cannot be evaluated"
    )


def refuse_unless_static(loop: LoopIR, target: str) -> None:
    """Raise UnsupportedError (exit 1, one line naming the loop) when static_refusal says why."""
    reason = static_refusal(loop)
    if reason is not None:
        why = f"{target} needs static loops: {reason}"
        raise UnsupportedError([UnsupportedItem(loop.op, "", None, loop.path, why)])
