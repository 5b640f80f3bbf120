"""Matrix products: Dot and Dot22, the Blockwise of Dot (matmul) and of linalg.py's Ops,
BatchedDot, and the BLAS forms Gemm, Gemv and Ger.

    Dot(x, y) = numpy.dot for vectors and matrices      Blockwise(Dot) = numpy.matmul
    Blockwise(linalg.BATCHED_OPS) = linalg.py's translations, batched
    Blockwise(any other Op, a Scan say) = a Loop over the batch (blockwise.py)
    Gemm(z, a, x, y, b) = b * z + a * dot(x, y)         Gemv(y, a, A, x, b) = b * y + a * A @ x
    Ger(A, a, x, y) = A + a * outer(x, y)
"""

from __future__ import annotations

import openvino.opset15 as ops
from pytensor.tensor import blas
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.math import Dot

from ov_loops.frontends.pytensor.blockwise import looped
from ov_loops.frontends.pytensor.dispatch import cast, inner_ops, ov_translate
from ov_loops.frontends.pytensor.linalg import BATCHED_OPS


def _matmul(node, x, y):
    dtype = node.outputs[0].type.dtype
    return ops.matmul(cast(x, dtype), cast(y, dtype), False, False).output(0)


@ov_translate.register(Dot)
@ov_translate.register(blas.Dot22)
@ov_translate.register(blas.BatchedDot)
def _dot(op, node, inputs):
    return [_matmul(node, *inputs)]


BATCHED_CORE_OPS = (Dot, *BATCHED_OPS)  # their translations batch over leading axes


@ov_translate.register(Blockwise)
def _blockwise(op, node, inputs):
    if not isinstance(op.core_op, BATCHED_CORE_OPS):
        return looped(op, node, inputs)
    return ov_translate(op.core_op, node, inputs)


@inner_ops.register(Blockwise)
def _blockwise_ops(op):
    return [op.core_op]


def _scaled(scale, value):
    return ops.multiply(cast(scale, value.get_element_type().to_dtype()), value)


@ov_translate.register(blas.Gemm)
def _gemm(op, node, inputs):
    z, a, x, y, b = inputs
    return [ops.add(_scaled(b, z), _scaled(a, _matmul(node, x, y))).output(0)]


@ov_translate.register(blas.Gemv)
def _gemv(op, node, inputs):
    y, a, matrix, x, b = inputs
    return [ops.add(_scaled(b, y), _scaled(a, _matmul(node, matrix, x))).output(0)]


@ov_translate.register(blas.Ger)
def _ger(op, node, inputs):
    matrix, a, x, y = inputs
    outer = ops.multiply(ops.unsqueeze(x, ops.constant(1)), ops.unsqueeze(y, ops.constant(0)))
    return [ops.add(matrix, _scaled(a, outer.output(0))).output(0)]
