"""The multivariate normal: mean + L z, L the Cholesky factor of the covariance, z standard
normals, batched over the leading axes of mean, cov and size.

    L = 0;  for j < n:                                 (a Loop-5, rejection.while_loop)
        s = cov[..., :, j] - L @ L[..., j, :]          (columns >= j of L are still 0)
        L[..., i, j] = s_i / sqrt(s_j) for i >= j, where s_j > n eps cov_jj; else 0
    draw = mean + L @ z,   z: standard normals of shape size + (n,)

PyTensor's `method` (cholesky, eigh, svd) picks how numpy factors cov; any factor A with
A A^T = cov gives the same distribution, so all three use L. A pivot at or below
n eps cov_jj is a zero column: a semidefinite covariance (which eigh and svd accept and
numpy's cholesky refuses) to that precision.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.rejection import while_loop


def _scalar(value, element: ov.Type) -> ov.Output:
    return ops.constant(np.array(value, element.to_dtype())).output(0)


def _size(matrix: ov.Output) -> ov.Output:
    """The last dimension of `matrix`, an i64 scalar."""
    return ops.gather(ops.shape_of(matrix, ov.Type.i64), _scalar(-1, I64), _scalar(0, I64))


I64 = ov.Type.i64


def _cholesky_step(j, state, fixed):
    """Column j of L (the module docstring); (whether columns are left, [L])."""
    (factor,), (cov,) = state, fixed
    element, last = cov.get_element_type(), _scalar(-1, I64)
    n = _size(cov)
    row = ops.gather(factor, j, _scalar(-2, I64))
    product = ops.squeeze(ops.matmul(factor, ops.unsqueeze(row, last), False, False), last)
    s = ops.subtract(ops.gather(cov, j, last), product)
    pivot = ops.gather(s, j, last)
    epsilon = ops.multiply(
        ops.convert(n, element), _scalar(np.finfo(element.to_dtype()).eps, element)
    )
    floor = ops.multiply(epsilon, ops.abs(ops.gather(ops.gather(cov, j, last), j, last)))
    inverse = ops.divide(_scalar(1.0, element), ops.sqrt(pivot))
    scale = ops.select(ops.greater(pivot, floor), inverse, _scalar(0.0, element))
    positions = ops.range(_scalar(0, I64), n, _scalar(1, I64), I64)
    below = ops.convert(ops.greater_equal(positions, j), element)
    column = ops.multiply(ops.multiply(s, ops.unsqueeze(scale, last)), below)
    this = ops.convert(ops.equal(positions, j), element)
    factor = ops.add(factor, ops.multiply(ops.unsqueeze(column, last), this))
    left = ops.less(ops.add(j, _scalar(1, I64)), n)
    return left.output(0), [factor.output(0)]


def cholesky(cov: ov.Output) -> ov.Output:
    """The lower Cholesky factor of a batch of covariance matrices (the module docstring)."""
    zeros = ops.multiply(cov, _scalar(0.0, cov.get_element_type())).output(0)
    return while_loop([zeros], [cov], _cholesky_step, 2**31 - 1)[0]


def multivariate_normal(d: Draw) -> ov.Output:
    mean, cov = d.params
    last = _scalar(-1, I64)
    shape = ops.concat([d.shape, ops.unsqueeze(_size(cov), _scalar(0, I64))], 0).output(0)
    z = ops.unsqueeze(d.part(0, shape=shape).normal(), last)
    return ops.add(mean, ops.squeeze(ops.matmul(cholesky(cov), z, False, False), last)).output(0)
