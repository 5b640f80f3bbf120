"""Shapes and tensor construction: Shape, Shape_i, SpecifyShape, Reshape, Alloc, AllocEmpty,
MakeVector, scalar <-> tensor, Join, Split, ARange, and the Ops that only pass a value on
(DeepCopyOp, ViewOp, OutputGuard; CheckAndRaise/Assert, whose checks OpenVINO cannot raise).

    Alloc(v, *shape)        = v broadcast to shape          AllocEmpty(*shape) = zeros(shape)
    Reshape(x, shape)       = numpy.reshape (-1 inferred)   MakeVector(*s) = [s, ...]
    Join(axis, *xs)         = numpy.concatenate             Split(x, axis, sizes) = pieces
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.compile.ops import DeepCopyOp, TypeCastingOp
from pytensor.raise_op import CheckAndRaise
from pytensor.tensor import basic as ptb
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape

from ov_loops import ovgraph
from ov_loops.frontends.pytensor.dispatch import cast, element_type, ov_translate


def shape_vector(scalars: list[ov.Output]) -> ov.Output:
    """Scalar sizes as one i64 vector."""
    if not scalars:
        return ops.constant(np.zeros(0, np.int64)).output(0)
    parts = [ops.unsqueeze(cast(s, np.int64), ops.constant(np.int64(0))) for s in scalars]
    return ops.concat(parts, 0).output(0)


def static_int(variable) -> int:
    """The value of a PyTensor Constant holding an integer (axis arguments)."""
    data = getattr(variable, "data", None)
    if data is None:
        raise NotImplementedError(f"{variable} must be a constant")
    return int(data)


def _identity(op, node, inputs):
    return [inputs[0]]


for _op in (
    DeepCopyOp,
    TypeCastingOp,
    CheckAndRaise,
    SpecifyShape,
    ptb.TensorFromScalar,
    ptb.ScalarFromTensor,
):
    ov_translate.register(_op)(_identity)


@ov_translate.register(Shape)
def _shape(op, node, inputs):
    return [ops.shape_of(inputs[0], ov.Type.i64).output(0)]


@ov_translate.register(Shape_i)
def _shape_i(op, node, inputs):
    return [ovgraph.length(inputs[0], op.i).output(0)]


@ov_translate.register(Reshape)
def _reshape(op, node, inputs):
    value, shape = inputs
    return [ops.reshape(value, cast(shape, np.int64), False).output(0)]


@ov_translate.register(ptb.Alloc)
def _alloc(op, node, inputs):
    value, *shape = inputs
    return [ops.broadcast(value, shape_vector(shape)).output(0)]


@ov_translate.register(ptb.AllocEmpty)
def _alloc_empty(op, node, inputs):
    zero = ops.constant(np.zeros((), np.dtype(op.dtype)))
    return [ops.broadcast(zero, shape_vector(inputs)).output(0)]


@ov_translate.register(ptb.MakeVector)
def _make_vector(op, node, inputs):
    if not inputs:
        return [ops.constant(np.zeros(0, np.dtype(op.dtype))).output(0)]
    zero = ops.constant(np.int64(0))
    return [ops.concat([ops.unsqueeze(cast(v, op.dtype), zero) for v in inputs], 0).output(0)]


@ov_translate.register(ptb.Join)
def _join(op, node, inputs):
    axis = static_int(node.inputs[0]) % node.outputs[0].type.ndim
    dtype = node.outputs[0].type.dtype
    return [ops.concat([cast(v, dtype) for v in inputs[1:]], axis).output(0)]


@ov_translate.register(ptb.Split)
def _split(op, node, inputs):
    value, axis, sizes = inputs
    split = ops.variadic_split(value, axis, cast(sizes, np.int64))
    return [split.output(k) for k in range(op.len_splits)]


@ov_translate.register(ptb.ARange)
def _arange(op, node, inputs):
    start, stop, step = (cast(v, op.dtype) for v in inputs)
    return [ops.range(start, stop, step, element_type(op.dtype)).output(0)]
