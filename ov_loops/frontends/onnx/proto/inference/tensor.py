"""Rules of tensor ops that move or multiply dims: Constant, Shape, Gather, Gemm, MatMul,
Concat.

Semantics from the ONNX operator docs (https://onnx.ai/onnx/operators/) and onnx's inference
functions (onnx/defs/generator/defs.cc, tensor/defs.cc, math/defs.cc).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.inference.elementwise import broadcast
from ov_loops.frontends.onnx.proto.inference.graphs import NodeContext
from ov_loops.frontends.onnx.proto.inference.kinds import Dim, Tensor, Unsure

T = schema.TensorProto


def constant(ctx: NodeContext) -> list:
    """Constant: the type and dims of its one attribute: `value` (a dense tensor),
    `value_float`/`value_int` (a scalar), `value_floats`/`value_ints` (a 1-D tensor)."""
    names = ctx.attr_names()
    if len(names) != 1:
        raise Unsure("Constant without exactly one value")
    (name,) = names
    value = ctx.attr(name)
    if name == "value" and not isinstance(value, (int, float, tuple)):
        if value.data_location != value.DEFAULT or not value.data_type:
            raise Unsure("Constant of external or untyped data")
        return [Tensor(value.data_type, tuple(value.dims))]
    scalars = {"value_float": T.FLOAT, "value_int": T.INT64}
    lists = {"value_floats": T.FLOAT, "value_ints": T.INT64}
    if name in scalars:
        return [Tensor(scalars[name], ())]
    if name in lists and isinstance(value, tuple):
        return [Tensor(lists[name], (len(value),))]
    raise Unsure(f"Constant's {name}")


def shape(ctx: NodeContext) -> list:
    """Shape: an int64 vector of the input's rank; Shape-15 of `end` - `start` (clamped,
    negative ones counted from the end); unknown length when the rank is."""
    value = ctx.tensor(0)
    if value.shape is None:
        return [Tensor(T.INT64, (None,))]
    rank = len(value.shape)
    start, end = int(ctx.attr("start", 0)), int(ctx.attr("end", rank))
    if ctx.opset < 15 and ctx.attr_names():
        raise Unsure("Shape-13 with attributes")
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return [Tensor(T.INT64, (max(end - start, 0),))]


def gather(ctx: NodeContext) -> list:
    """Gather: data's element type; shape data[:axis] + indices + data[axis+1:]."""
    data, indices = ctx.tensor(0), ctx.tensor(1)
    if data.shape is None or indices.shape is None:
        return [Tensor(data.elem)]
    rank = len(data.shape)
    axis = int(ctx.attr("axis", 0))
    if rank < 1 or not -rank <= axis < rank:
        raise Unsure("Gather axis out of range")
    axis %= rank
    dims = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    return [Tensor(data.elem, dims)]


def gemm(ctx: NodeContext) -> list:
    """Gemm: A's element type; shape (M, N), M = A's dim 0 (dim 1 when transA), N = B's dim
    1 (dim 0 when transB), unknown when that input's shape is; A and B of rank 2, their inner
    dims equal when both are numbers (C is not checked)."""
    a, b = ctx.tensor(0), ctx.tensor(1)
    if any(value.shape is not None and len(value.shape) != 2 for value in (a, b)):
        raise Unsure("Gemm of inputs not of rank 2")
    trans_a, trans_b = bool(ctx.attr("transA", 0)), bool(ctx.attr("transB", 0))
    if a.shape is not None and b.shape is not None:
        inner = (a.shape[0 if trans_a else 1], b.shape[1 if trans_b else 0])
        if all(isinstance(dim, int) for dim in inner) and inner[0] != inner[1]:
            raise Unsure("Gemm of mismatched inner dims")
    rows = None if a.shape is None else a.shape[1 if trans_a else 0]
    columns = None if b.shape is None else b.shape[0 if trans_b else 1]
    return [Tensor(a.elem, (rows, columns))]


def matmul(ctx: NodeContext) -> list:
    """MatMul: numpy.matmul's shape: 1-D operands promoted to matrices (and the added dim
    dropped), the batch dims broadcast, inner dims that must agree when both are known."""
    a, b = ctx.tensor(0), ctx.tensor(1)
    if a.shape is None or b.shape is None:
        return [Tensor(a.elem)]
    if not a.shape or not b.shape:
        raise Unsure("MatMul of a scalar")
    left = (1, *a.shape) if len(a.shape) == 1 else a.shape
    right = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    inner = (left[-1], right[-2])
    if all(isinstance(dim, int) for dim in inner) and inner[0] != inner[1]:
        raise Unsure("MatMul of mismatched inner dims")
    dims: tuple[Dim, ...] = broadcast([left[:-2], right[:-2]])
    if len(a.shape) != 1:
        dims += (left[-2],)
    if len(b.shape) != 1:
        dims += (right[-1],)
    return [Tensor(a.elem, dims)]


def concat(ctx: NodeContext) -> list:
    """Concat: input 0's element type; along `axis` the sum of the inputs' dims (unknown
    when one is), elsewhere their common dim (a value wins over a symbol; the first symbol
    wins); all inputs of one rank."""
    values = [ctx.tensor(index) for index in range(len(ctx.inputs))]
    if any(value.shape is None for value in values):
        return [Tensor(values[0].elem)]
    rank = len(values[0].shape)
    axis = ctx.attr("axis")
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise Unsure("Concat axis missing or out of range")
    axis %= rank
    if len(values) == 1:
        return [values[0]]
    if any(len(value.shape) != rank for value in values):
        raise Unsure("Concat of inputs of different ranks")
    dims: list[Dim] = []
    for index in range(rank):
        column = [value.shape[index] for value in values]
        if index == axis:
            known = all(isinstance(dim, int) for dim in column)
            dims.append(sum(column) if known else None)
            continue
        numbers = {dim for dim in column if isinstance(dim, int)}
        if len(numbers) > 1:
            raise Unsure("Concat of mismatched dims")
        symbols = [dim for dim in column if isinstance(dim, str)]
        dims.append(numbers.pop() if numbers else (symbols[0] if symbols else None))
    return [Tensor(values[0].elem, tuple(dims))]


RULES = {
    "Constant": constant,
    "Shape": shape,
    "Gather": gather,
    "Gemm": gemm,
    "MatMul": matmul,
    "Concat": concat,
}
