"""Linear algebra OpenVINO has an op for, batched over leading axes as Blockwise applies them
(blas.py dispatches a Blockwise of these to them): MatrixInverse and the general Solve.

    MatrixInverse(A) = Inverse(A)
    Solve(A, b)      = Inverse(A) @ b    (b a matrix, or a vector when b_ndim == 1;
                                          assume_a "gen" only: the symmetric and positive
                                          forms read one triangle of A)

Cholesky, the triangular and the other solves, eigen- and singular-value decompositions have
no OpenVINO op: they are named among the Ops without a translation.
"""

from __future__ import annotations

import openvino.opset15 as ops
from pytensor.tensor.nlinalg import MatrixInverse
from pytensor.tensor.slinalg import Solve

from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate


@ov_translate.register(MatrixInverse)
def _inverse(op, node, inputs):
    dtype = node.outputs[0].type.dtype
    return [ops.inverse(cast(inputs[0], dtype), False).output(0)]


@ov_translate.register(Solve)
def _solve(op, node, inputs):
    if op.assume_a != "gen":
        raise NotImplementedError(f"Solve with assume_a={op.assume_a!r} (only 'gen')")
    dtype = node.outputs[0].type.dtype
    matrix, rhs = (cast(value, dtype) for value in inputs)
    inverse = ops.inverse(matrix, False)
    if op.b_ndim == 1:
        product = ops.matmul(inverse, ops.unsqueeze(rhs, i64(-1)), False, False)
        return [ops.squeeze(product, i64(-1)).output(0)]
    return [ops.matmul(inverse, rhs, False, False).output(0)]
