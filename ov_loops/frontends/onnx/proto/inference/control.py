"""Rules of the control-flow ops Loop and If, whose subgraphs are inferred in turn.

Semantics from the ONNX operator docs (Loop, If: https://onnx.ai/onnx/operators/) and onnx's
LoopInferenceFunction and IfInferenceFunction (onnx/defs/controlflow/utils.cc).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.inference.graphs import NodeContext
from ov_loops.frontends.onnx.proto.inference.kinds import (
    Sequence,
    Tensor,
    Type,
    Unsure,
    union_shape,
)

T = schema.TensorProto


def _elem_only(value: Type | None) -> Type:
    """The type without its shape (onnx's ClearShape); the element type must be known."""
    if isinstance(value, Tensor) and value.elem:
        return Tensor(value.elem)
    if isinstance(value, Sequence) and value.elem is not None and value.elem.elem:
        return Sequence(Tensor(value.elem.elem))
    raise Unsure("a loop-carried value of unknown type")


def loop(ctx: NodeContext) -> list:
    """Loop: the body gets (int64 iteration number, the cond input's type, each carried
    value's type without its shape); a carried output is as _state_output says, a scan output
    stacks the body output's shape under an unknown iteration dim."""
    body = ctx.attr("body")
    states = [_elem_only(value) for value in ctx.inputs[2:]]
    cond = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    outputs = ctx.subgraph(body, [Tensor(T.INT64), cond, *states])
    if len(outputs) != len(ctx.node.output) + 1:
        raise Unsure("a Loop body's outputs differ in number from the Loop's")
    found: list[Type | None] = []
    for index, value in enumerate(outputs[1:]):
        if index < len(states):
            found.append(_state_output(ctx.inputs[2 + index], value))
            continue
        if not isinstance(value, Tensor) or not value.elem:
            raise Unsure("a scan output that is not a typed tensor")
        found.append(Tensor(value.elem, None if value.shape is None else (None, *value.shape)))
    return found


def _state_output(initial: Type, body_output: Type | None) -> Type:
    """A carried value's final type: a tensor's element type; a sequence's whole type (onnx
    propagates a sequence input's type to the output, element shape included), checked
    against the body output's element type."""
    if body_output is None or type(body_output) is not type(initial):
        raise Unsure("a carried value whose body output has another kind")
    if _elem_only(body_output) != _elem_only(initial):
        raise Unsure("a carried value whose body output has another element type")
    return initial if isinstance(initial, Sequence) else _elem_only(initial)


def if_(ctx: NodeContext) -> list:
    """If: output i is then_branch's output i, shape dims it shares with else_branch's (a
    differing rank: unknown); both branches of one type."""
    branches = [ctx.attr("then_branch"), ctx.attr("else_branch")]
    then, other = (ctx.subgraph(branch, []) for branch in branches)
    if len(then) != len(other) or len(then) != len(ctx.node.output):
        raise Unsure("If branches' outputs differ in number")
    found: list[Type | None] = []
    for first, second in zip(then, other):
        if not isinstance(first, Tensor) or not isinstance(second, Tensor):
            raise Unsure("If branch outputs that are not both tensors")
        if first.elem != second.elem:
            raise Unsure("If branches of different element types")
        found.append(Tensor(first.elem, union_shape(second.shape, first.shape)))
    return found


RULES = {"Loop": loop, "If": if_}
