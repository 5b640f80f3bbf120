"""Det and SLogDet by Gaussian elimination with partial pivoting (LAPACK's getrf, which
numpy's det and slogdet call), one column a step of a Loop-5, batched over leading axes:

    sign = 1;  logabs = 0
    for j < n:                                           (rejection.while_loop)
        p = argmax_{i >= j} |M[i, j]|;  swap rows j and p (sign = -sign if p != j)
        pivot = M[j, j];  sign *= sign(pivot);  logabs += log |pivot|
        M[i, :] -= M[i, j] / pivot * M[j, :]   for i > j   (0 times the row if pivot = 0)
    SLogDet(M) = (sign, logabs)     Det(M) = sign exp(logabs)

A singular matrix has a zero pivot: sign 0, logabs -inf, det 0 (as numpy's).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate
from ov_loops.frontends.pytensor.rejection import while_loop

try:  # PyTensor 3 (its nlinalg names are deprecated)
    from pytensor.tensor.linalg import Det, SLogDet
except ImportError:  # PyTensor 2
    from pytensor.tensor.nlinalg import Det, SLogDet


def _scalar(value, like: ov.Output | None = None) -> ov.Output:
    dtype = np.int64 if like is None else like.get_element_type().to_dtype()
    return ops.constant(np.array(value, dtype)).output(0)


def _pivoted(matrix: ov.Output, j: ov.Output, batch: int) -> tuple[ov.Output, ov.Output]:
    """`matrix` with row j swapped with the row of the largest |entry| of column j at or
    below j, and whether they differ."""
    size = ops.gather(ops.shape_of(matrix, ov.Type.i64), _scalar(-1), _scalar(0))
    positions = ops.range(_scalar(0), size, _scalar(1), ov.Type.i64)
    column = ops.abs(ops.gather(matrix, j, _scalar(-1)))
    candidates = ops.select(ops.greater_equal(positions, j), column, _scalar(-1.0, matrix))
    top = ops.topk(candidates, _scalar(1), -1, "max", "value", ov.Type.i64, True).output(1)
    order = ops.select(
        ops.equal(positions, j), top, ops.select(ops.equal(positions, top), j, positions)
    )
    swapped = ops.not_equal(ops.squeeze(top, i64(-1)), j)
    return ops.gather(matrix, order, _scalar(batch), batch).output(0), swapped.output(0)


def _eliminate(batch: int):
    """The Loop's body: column j (the module docstring)."""

    def body(j, carried, fixed):
        matrix, sign, logabs = carried
        matrix, swapped = _pivoted(matrix, j, batch)
        row = ops.gather(matrix, j, _scalar(-2))
        pivot = ops.gather(row, j, _scalar(-1))
        sign = ops.multiply(ops.select(swapped, ops.negative(sign), sign), ops.sign(pivot))
        logabs = ops.add(logabs, ops.log(ops.abs(pivot)))
        size = ops.gather(ops.shape_of(matrix, ov.Type.i64), _scalar(-1), _scalar(0))
        below = ops.greater(ops.range(_scalar(0), size, _scalar(1), ov.Type.i64), j)
        nonzero = ops.not_equal(pivot, _zero(pivot))
        usable = ops.logical_and(below, ops.unsqueeze(nonzero, i64(-1)))
        safe = ops.select(nonzero, pivot, _scalar(1.0, pivot))
        column = ops.gather(matrix, j, _scalar(-1))
        ratio = ops.divide(column, ops.unsqueeze(safe, i64(-1)))
        factor = ops.select(usable, ratio, _zero(pivot))
        update = ops.multiply(ops.unsqueeze(factor, i64(-1)), ops.unsqueeze(row, i64(-2)))
        matrix = ops.subtract(matrix, update)
        go_on = ops.less(ops.add(j, _scalar(1)), size)
        return go_on.output(0), [matrix.output(0), sign.output(0), logabs.output(0)]

    return body


def _zero(value: ov.Output) -> ov.Output:
    return _scalar(0.0, value)


def slogdet(matrix: ov.Output, batch: int) -> tuple[ov.Output, ov.Output]:
    """(sign, log |det|) of a batch of square matrices with `batch` leading axes."""
    corner = ops.gather(ops.gather(matrix, _scalar(0), _scalar(-1)), _scalar(0), _scalar(-1))
    zeros = ops.multiply(corner, _zero(matrix)).output(0)
    sign = ops.add(zeros, _scalar(1.0, matrix)).output(0)
    _, sign, logabs = while_loop([matrix, sign, zeros], [], _eliminate(batch), 2**31 - 1)
    return sign, logabs


def _batch(node) -> int:
    return node.inputs[0].type.ndim - 2


@ov_translate.register(SLogDet)
def _slogdet(op, node, inputs):
    matrix = cast(inputs[0], node.outputs[0].type.dtype)
    return list(slogdet(matrix, _batch(node)))


@ov_translate.register(Det)
def _det(op, node, inputs):
    matrix = cast(inputs[0], node.outputs[0].type.dtype)
    sign, logabs = slogdet(matrix, _batch(node))
    return [ops.multiply(sign, ops.exp(logabs)).output(0)]
