"""Rules of ops whose output shape depends on a constant input: Unsqueeze, Slice,
ConstantOfShape (opset 13+: axes, starts, ends and shapes are inputs).

onnx reads such an input's value only when the node's own graph holds it (an initializer or a
Constant node's tensor: NodeContext.constant); with data propagation on, it may also read
values propagated from Shape ops: there, where the input is not such a constant, these rules
are unsure. Semantics from the ONNX operator docs (https://onnx.ai/onnx/operators/) and onnx's
inference functions (onnx/defs/tensor/defs.cc, generator/defs.cc).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.inference.graphs import NodeContext
from ov_loops.frontends.onnx.proto.inference.kinds import Dim, Tensor, Unsure

T = schema.TensorProto


def _ints(ctx: NodeContext, index: int) -> list[int] | None:
    """The int64 (or int32) values of constant input `index`; None when not constant."""
    tensor = ctx.constant(index)
    if tensor is None:
        if ctx.data_prop:
            raise Unsure("a shape input data propagation may know")
        return None
    if tensor.data_type not in (T.INT32, T.INT64) or tensor.data_location != tensor.DEFAULT:
        raise Unsure("a constant input of another type")
    return [int(v) for v in helpers.to_array(tensor).reshape(-1)]


def unsqueeze(ctx: NodeContext) -> list:
    """Unsqueeze-13: dims of 1 inserted at `axes` (in [-r', r'-1], r' the output's rank, no
    repeats); no shape when the axes are not constant."""
    data = ctx.tensor(0)
    if data.shape is None or len(ctx.inputs) < 2:
        return [Tensor(data.elem)]
    axes = _ints(ctx, 1)
    if axes is None:
        return [Tensor(data.elem)]
    rank = len(data.shape) + len(axes)
    if any(not -rank <= axis < rank for axis in axes):
        raise Unsure("Unsqueeze axes out of range")
    inserted = {axis % rank for axis in axes}
    if len(inserted) != len(axes):
        raise Unsure("Unsqueeze axes repeated")
    rest = iter(data.shape)
    return [Tensor(data.elem, tuple(1 if i in inserted else next(rest) for i in range(rank)))]


def slice_(ctx: NodeContext) -> list:
    """Slice-13: per sliced axis, a number dim becomes the length of numpy's slice
    [start:end:step] of it (starts and ends clamped), a symbol unknown; other dims kept. All
    dims unknown when starts, ends, or axes or steps given with a shape, are not constant (as
    onnx: axes or steps of no known shape count as not given)."""
    data = ctx.tensor(0)
    if data.shape is None:
        return [Tensor(data.elem)]
    rank = len(data.shape)
    if not rank:
        raise Unsure("Slice of a scalar")
    starts, ends = _ints(ctx, 1), _ints(ctx, 2)
    given = [_ints(ctx, index) if _has_shape(ctx, index) else [] for index in (3, 4)]
    if starts is None or ends is None or None in given:
        return [Tensor(data.elem, (None,) * rank)]
    axes = given[0] or list(range(len(starts)))
    steps = given[1] or [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps) or 0 in steps:
        raise Unsure("Slice inputs of different lengths, or a step of 0")
    if any(not -rank <= axis < rank for axis in axes) or len({a % rank for a in axes}) < len(axes):
        raise Unsure("Slice axes out of range or repeated")
    dims: list[Dim] = list(data.shape)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        dim = dims[axis % rank]
        if isinstance(dim, int):
            dims[axis % rank] = len(range(*slice(start, end, step).indices(dim)))
        else:
            dims[axis % rank] = None
    return [Tensor(data.elem, tuple(dims))]


def _has_shape(ctx: NodeContext, index: int) -> bool:
    """Whether input `index` is given and its type has a shape (onnx's hasInputShape)."""
    if index >= len(ctx.inputs) or not ctx.node.input[index]:
        return False
    value = ctx.inputs[index]
    return isinstance(value, Tensor) and value.shape is not None


def constant_of_shape(ctx: NodeContext) -> list:
    """ConstantOfShape: `value`'s element type (default float); the shape the constant
    input holds, else as many unknown dims as its length when that is a number."""
    value = ctx.attr("value")
    elem = T.FLOAT if value is None else getattr(value, "data_type", 0)
    shape = ctx.tensor(0)
    if not elem:
        raise Unsure("ConstantOfShape's value")
    dims = _ints(ctx, 0)
    if dims is not None:
        if any(dim < 0 for dim in dims) or shape.shape is None or len(shape.shape) != 1:
            raise Unsure("ConstantOfShape of a negative dim")
        return [Tensor(elem, tuple(dims))]
    if shape.shape is not None and len(shape.shape) == 1 and isinstance(shape.shape[0], int):
        return [Tensor(elem, (None,) * shape.shape[0])]
    if shape.shape is not None and len(shape.shape) != 1:
        raise Unsure("ConstantOfShape of a shape not a vector")
    return [Tensor(elem)]


RULES = {"Unsqueeze": unsqueeze, "Slice": slice_, "ConstantOfShape": constant_of_shape}
