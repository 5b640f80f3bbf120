"""What a target that needs static loops (NPU) refuses: one line naming the loop and why."""

from __future__ import annotations

from ov_loops.errors import UnsupportedError, UnsupportedItem
from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.unroll import stops_early, trip_count_reason


def static_refusal(loop: LoopIR) -> str | None:
    """Why `loop` cannot run where every loop needs a constant trip count and static shapes
    (the NPU: openvinotoolkit/openvino#26357; its compiler unrolls Loops by their constant
    trip count and leaves early-exit Loops with concatenated outputs unsupported, E#124554)::

        trip count not a constant                     -> refused, saying what it is made of
        initial condition a run-time value            -> kept: the Loop-5 starts true and
                                                         the zero-iteration guards take a
                                                         false one (lower_to_loop5)
        an outer input or a body value of dynamic shape -> refused, naming it
        may stop early, with stacked outputs          -> refused (run-time length)
    """
    if loop.trip.constant is None:
        return trip_count_reason(loop)
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


def refuse_unless_static(loop: LoopIR, target: str) -> None:
    """Raise UnsupportedError (exit 1, one line naming the loop) when static_refusal says why."""
    reason = static_refusal(loop)
    if reason is not None:
        why = f"{target} needs static loops: {reason}"
        raise UnsupportedError([UnsupportedItem(loop.op, "", None, loop.path, why)])
