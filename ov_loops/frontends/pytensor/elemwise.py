"""Elemwise (its scalar Op on whole tensors, scalar.py), DimShuffle, reductions (CAReduce and
its Sum/Prod/Max/Min/All/Any, Argmax), cumulative sums and Softmax/LogSoftmax.

    Elemwise(s)(x, ...)          = s(x, ...) with numpy broadcasting (same rank in PyTensor)
    DimShuffle(order)(x)         = x without the dropped length-1 axes, transposed to the kept
                                   axes' order, with a length-1 axis at each 'x'
    CAReduce(s, axis)(x)         = s folded over `axis` (None: every axis)
    CumOp(axis, "add")(x)        = numpy.cumsum(x, axis) (axis None: of x flattened)
    Softmax(axis)(x)             = exp(x) / sum(exp(x), axis)   (axis None: every axis)
    SoftmaxGrad(axis)(dy, sm)    = (dy - sum(dy * sm, axis)) * sm
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor import scalar as ps
from pytensor.tensor import math as ptm
from pytensor.tensor import special
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from pytensor.tensor.extra_ops import CumOp
from pytensor.tensor.special import LogSoftmax, Softmax

from ov_loops.frontends.pytensor.dispatch import cast, inner_ops, ov_translate


def axes_constant(axes) -> ov.Output:
    """A list of axes as an i64 Constant."""
    return ops.constant(np.array(list(axes), np.int64).reshape(-1)).output(0)


@ov_translate.register(Elemwise)
def _elemwise(op, node, inputs):
    return ov_translate(op.scalar_op, node, inputs)


@inner_ops.register(Elemwise)
def _elemwise_ops(op):
    return [op.scalar_op]


@ov_translate.register(DimShuffle)
def _dimshuffle(op, node, inputs):
    (value,) = inputs
    kept = [axis for axis in op.new_order if axis != "x"]
    dropped = [axis for axis in range(op.input_ndim) if axis not in kept]
    if dropped:
        value = ops.squeeze(value, axes_constant(dropped)).output(0)
    remaining = [axis for axis in range(op.input_ndim) if axis in kept]
    order = [remaining.index(axis) for axis in kept]
    if order != sorted(order):
        value = ops.transpose(value, axes_constant(order)).output(0)
    added = [index for index, axis in enumerate(op.new_order) if axis == "x"]
    if added:
        value = ops.unsqueeze(value, axes_constant(added)).output(0)
    return [value]


_REDUCTIONS = {
    ps.Add: ops.reduce_sum,
    ps.Mul: ops.reduce_prod,
    ps.Maximum: ops.reduce_max,
    ps.Minimum: ops.reduce_min,
    ps.AND: ops.reduce_logical_and,
    ps.OR: ops.reduce_logical_or,
}


def _reduction_axes(op, node) -> list[int]:
    ndim = node.inputs[0].type.ndim
    return list(range(ndim)) if op.axis is None else [a % ndim for a in op.axis]


@ov_translate.register(CAReduce)
def _careduce(op, node, inputs):
    reduce = _REDUCTIONS.get(type(op.scalar_op))
    if reduce is None:
        raise NotImplementedError(f"{op}: no OpenVINO reduction for {op.scalar_op}")
    dtype = getattr(op, "acc_dtype", None) or node.outputs[0].type.dtype
    if reduce in (ops.reduce_logical_and, ops.reduce_logical_or):
        dtype = bool
    axes = _reduction_axes(op, node)
    if not axes:
        return [inputs[0]]
    return [reduce(cast(inputs[0], dtype), axes_constant(axes), False).output(0)]


@ov_translate.register(CumOp)
def _cumsum(op, node, inputs):
    if op.mode != "add":
        raise NotImplementedError("a cumulative product (OpenVINO has no op for it)")
    (value,) = inputs
    axis = op.axis
    if axis is None:
        value, axis = ops.reshape(value, axes_constant([-1]), False).output(0), 0
    return [ops.cumsum(value, ops.constant(np.int64(axis))).output(0)]


@ov_translate.register(ptm.Argmax)
def _argmax(op, node, inputs):
    (value,) = inputs
    axes = _reduction_axes(op, node)
    if len(axes) != 1:  # numpy's argmax over several axes: over their flattened product
        kept = [a for a in range(node.inputs[0].type.ndim) if a not in axes]
        value = ops.transpose(value, axes_constant(kept + axes)).output(0)
        shape = ops.shape_of(value, ov.Type.i64)
        flat = ops.concat(
            [
                ops.gather(shape, axes_constant(range(len(kept))), 0),
                ops.constant(np.array([-1], np.int64)),
            ],
            0,
        )
        value, axes = ops.reshape(value, flat, False).output(0), [len(kept)]
    top = ops.topk(value, np.int64(1), axes[0], "max", "index", ov.Type.i64)
    return [ops.squeeze(top.output(1), axes_constant(axes)).output(0)]


def _softmax_axes(op, node) -> list[int]:
    """The axes Softmax normalises over: an int (PyTensor 2.x), a tuple (3.x) or None (all)."""
    ndim = node.inputs[0].type.ndim
    axis = op.axis
    if axis is None:
        return list(range(ndim))
    return [a % ndim for a in (axis if isinstance(axis, (tuple, list)) else [axis])]


def _stable(value, axes):
    """value - max(value over axes), and exp of it summed over axes (kept as length 1)."""
    shifted = ops.subtract(value, ops.reduce_max(value, axes_constant(axes), True))
    return shifted, ops.reduce_sum(ops.exp(shifted), axes_constant(axes), True)


def _normalised(single, combine):
    """A Softmax-like translation: OpenVINO's op over one axis, else `combine(x - max, sum of
    exp(x - max))` over several."""

    def translate(op, node, inputs):
        axes = _softmax_axes(op, node)
        if len(axes) == 1:
            return [single(inputs[0], axes[0]).output(0)]
        return [combine(*_stable(inputs[0], axes)).output(0)]

    return translate


ov_translate.register(Softmax)(
    _normalised(ops.softmax, lambda shifted, total: ops.divide(ops.exp(shifted), total))
)
ov_translate.register(LogSoftmax)(
    _normalised(ops.log_softmax, lambda shifted, total: ops.subtract(shifted, ops.log(total)))
)


def _softmax_grad(op, node, inputs):
    gradient, softmax = inputs
    axes = axes_constant(range(node.inputs[0].type.ndim) if op.axis is None else [op.axis])
    weighted = ops.reduce_sum(ops.multiply(gradient, softmax), axes, True)
    return [ops.multiply(ops.subtract(gradient, weighted), softmax).output(0)]


if hasattr(special, "SoftmaxGrad"):  # PyTensor 2.x; 3.x differentiates Softmax symbolically
    ov_translate.register(special.SoftmaxGrad)(_softmax_grad)
