"""Linear algebra, batched over leading axes as Blockwise applies them (blas.py dispatches a
Blockwise of these Ops to them). OpenVINO has an Inverse op, and no triangular solve or
factorisation: the solves multiply by an inverse, the Cholesky factor is
multivariate.cholesky's Loop, the determinants determinants.py's elimination Loop.

    MatrixInverse(A)      = Inverse(A)
    Solve(A, b)           = Inverse(S) @ b,  S = A (assume_a "gen"); for "sym", "her", "pos"
                            the symmetric matrix of A's lower (lower=True) or upper triangle;
                            for "tridiagonal" A's three middle diagonals
    SolveTriangular(A, b) = Inverse(T) @ b,  T = tril(A) (lower) or triu(A), its diagonal 1
                            if unit_diagonal                 (scipy's trtrs reads T only)
    CholeskySolve(C, b)   = Inverse(T) @ (Inverse(T)ᵀ @ b) if not lower, else
                            Inverse(T)ᵀ @ (Inverse(T) @ b);   T = triu(C) or tril(C)
    Cholesky(A)           = L = cholesky(tril(A)) (lower), or cholesky(tril(Aᵀ))ᵀ (upper: A's
                            upper triangle); all NaN when a pivot is not positive (scipy's
                            potrf failing: a matrix not positive definite to f32 precision)
    ExtractDiag(x)        = numpy.diagonal(x, offset, axis1, axis2)
    FillDiagonal(a, v)    = a with a[i, i, ...] = v     Eye(n, m, k) = numpy.eye(n, m, k)
    (b a matrix, or a vector when b_ndim == 1)

The eigen- and singular-value decompositions and the other factorisations have no
translation: they are named among the Ops without one.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor.basic import ExtractDiag, Eye
from pytensor.tensor.extra_ops import FillDiagonal

from ov_loops.frontends.pytensor.determinants import Det, SLogDet
from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate
from ov_loops.frontends.pytensor.multivariate import cholesky

try:  # PyTensor 3 (its slinalg and nlinalg names are deprecated)
    from pytensor.tensor.linalg import (
        Cholesky,
        CholeskySolve,
        MatrixInverse,
        Solve,
        SolveTriangular,
    )
except ImportError:  # PyTensor 2
    from pytensor.tensor.nlinalg import MatrixInverse
    from pytensor.tensor.slinalg import Cholesky, CholeskySolve, Solve, SolveTriangular

# The Ops whose translations batch over leading axes.
BATCHED_OPS = (MatrixInverse, Solve, SolveTriangular, CholeskySolve, Cholesky, Det, SLogDet)


def transposed(value: ov.Output) -> ov.Output:
    """`value` with its last two axes swapped."""
    rank = value.get_partial_shape().rank.get_length()
    order = [*range(rank - 2), rank - 1, rank - 2]
    return ops.transpose(value, i64(*order)).output(0)


def _triangle(matrix: ov.Output, lower: bool, diagonal: str = "keep") -> ov.Output:
    """tril(matrix) or triu(matrix) over the last two axes, its diagonal kept, "one" or
    "zero"."""
    size = ops.gather(ops.shape_of(matrix, ov.Type.i64), _index(-1), _index(0))
    positions = ops.range(_index(0), size, _index(1), ov.Type.i64)
    rows, columns = ops.unsqueeze(positions, i64(1)), ops.unsqueeze(positions, i64(0))
    on = ops.equal(rows, columns)
    kept = ops.logical_or((ops.greater if lower else ops.less)(rows, columns), on)
    if diagonal != "keep":
        kept = ops.logical_xor(kept, on)
    zero = _zero(matrix)
    triangle = ops.select(kept, matrix, zero)
    if diagonal == "one":
        return ops.add(triangle, ops.convert_like(on, matrix)).output(0)
    return triangle.output(0)


def _tridiagonal(matrix: ov.Output) -> ov.Output:
    """`matrix` with the entries off its three middle diagonals 0 (|i - j| > 1)."""
    size = ops.gather(ops.shape_of(matrix, ov.Type.i64), _index(-1), _index(0))
    positions = ops.range(_index(0), size, _index(1), ov.Type.i64)
    rows, columns = ops.unsqueeze(positions, i64(1)), ops.unsqueeze(positions, i64(0))
    near = ops.less_equal(ops.abs(ops.subtract(rows, columns)), _index(1))
    return ops.select(near, matrix, _zero(matrix)).output(0)


def _apply(matrix: ov.Output, rhs: ov.Output, b_ndim: int) -> ov.Output:
    """matrix @ rhs, rhs a batch of vectors when b_ndim == 1."""
    if b_ndim == 1:
        product = ops.matmul(matrix, ops.unsqueeze(rhs, i64(-1)), False, False)
        return ops.squeeze(product, i64(-1)).output(0)
    return ops.matmul(matrix, rhs, False, False).output(0)


def _inverse(matrix: ov.Output) -> ov.Output:
    return ops.inverse(matrix, False).output(0)


def _typed(node, inputs: list[ov.Output]) -> list[ov.Output]:
    dtype = node.outputs[0].type.dtype
    return [cast(value, dtype) for value in inputs]


@ov_translate.register(MatrixInverse)
def _matrix_inverse(op, node, inputs):
    return [_inverse(*_typed(node, inputs))]


@ov_translate.register(Solve)
def _solve(op, node, inputs):
    matrix, rhs = _typed(node, inputs)
    if op.assume_a in ("sym", "her", "pos"):
        strict = transposed(_triangle(matrix, op.lower, "zero"))
        matrix = ops.add(_triangle(matrix, op.lower), strict).output(0)
    elif op.assume_a == "tridiagonal":  # scipy's gtsv reads the three diagonals only
        matrix = _tridiagonal(matrix)
    elif op.assume_a != "gen":
        raise NotImplementedError(f"Solve with assume_a={op.assume_a!r}")
    return [_apply(_inverse(matrix), rhs, op.b_ndim)]


@ov_translate.register(SolveTriangular)
def _solve_triangular(op, node, inputs):
    matrix, rhs = _typed(node, inputs)
    triangle = _triangle(matrix, op.lower, "one" if op.unit_diagonal else "keep")
    return [_apply(_inverse(triangle), rhs, op.b_ndim)]


@ov_translate.register(CholeskySolve)
def _cholesky_solve(op, node, inputs):
    factor, rhs = _typed(node, inputs)
    inverse = _inverse(_triangle(factor, op.lower))
    first, second = (transposed(inverse), inverse) if op.lower else (inverse, transposed(inverse))
    return [_apply(first, _apply(second, rhs, op.b_ndim), op.b_ndim)]


@ov_translate.register(Cholesky)
def _cholesky(op, node, inputs):
    (matrix,) = _typed(node, inputs)
    factor = cholesky(_triangle(matrix if op.lower else transposed(matrix), True))
    pivots = diagonal(factor, 0, -2, -1)
    positive = ops.reduce_logical_and(ops.greater(pivots, _zero(factor)), i64(-1), False)
    nan = ops.constant(np.array(np.nan, factor.get_element_type().to_dtype()))
    checked = ops.select(ops.unsqueeze(positive, i64(-1, -2)), factor, nan).output(0)
    return [checked if op.lower else transposed(checked)]


def _index(value: int) -> ov.Output:
    """An i64 scalar Constant."""
    return ops.constant(np.int64(value)).output(0)


def _zero(value: ov.Output) -> ov.Output:
    return ops.constant(np.array(0, value.get_element_type().to_dtype())).output(0)


def diagonal(value: ov.Output, offset: int, axis1: int, axis2: int) -> ov.Output:
    """numpy.diagonal(value, offset, axis1, axis2): the axes moved last, flattened, and the
    diagonal's positions start + k (columns + 1) gathered, k < its length.

    At least one position is gathered (clamped into the matrix), then sliced to the length:
    the CPU plugin of OpenVINO 2026.4.1 dies of SIGFPE compiling a Gather whose static
    output is empty (an empty diagonal of an input of static shape)."""
    rank = value.get_partial_shape().rank.get_length()
    first, second = axis1 % rank, axis2 % rank
    order = [axis for axis in range(rank) if axis not in (first, second)] + [first, second]
    moved = ops.transpose(value, i64(*order))
    shape = ops.shape_of(moved, ov.Type.i64)
    rows, columns = (ops.gather(shape, _index(axis), _index(0)) for axis in (-2, -1))
    if offset >= 0:
        length, start = ops.minimum(rows, ops.subtract(columns, _index(offset))), _index(offset)
    else:
        length = ops.minimum(ops.add(rows, _index(offset)), columns)
        start = ops.multiply(_index(-offset), columns)
    length = ops.maximum(length, _index(0))
    step = ops.add(columns, _index(1))
    stop = ops.add(start, ops.multiply(ops.maximum(length, _index(1)), step))
    last = ops.subtract(ops.multiply(rows, columns), _index(1))
    positions = ops.maximum(ops.minimum(ops.range(start, stop, step, ov.Type.i64), last), _index(0))
    batch = ops.slice(shape, i64(0), i64(-2), i64(1))
    flat = ops.reshape(moved, ops.concat([batch, i64(-1)], 0), False)
    gathered = ops.gather(flat, positions, _index(-1))
    end = ops.unsqueeze(length, _index(0))
    return ops.slice(gathered, i64(0), end, i64(1), i64(-1)).output(0)


@ov_translate.register(ExtractDiag)
def _extract_diag(op, node, inputs):
    return [diagonal(inputs[0], op.offset, op.axis1, op.axis2)]


def _positions(size: ov.Output, axis: int, rank: int) -> ov.Output:
    """range(size) along `axis` of a tensor of `rank` axes (length 1 on the others)."""
    positions = ops.range(_index(0), size, _index(1), ov.Type.i64)
    others = [other for other in range(rank) if other != axis]
    return ops.unsqueeze(positions, i64(*others)).output(0) if others else positions.output(0)


@ov_translate.register(FillDiagonal)
def _fill_diagonal(op, node, inputs):
    matrix, value = _typed(node, inputs)
    rank = node.inputs[0].type.ndim
    shape = ops.shape_of(matrix, ov.Type.i64)
    sizes = [ops.gather(shape, _index(axis), _index(0)) for axis in range(rank)]
    first = _positions(sizes[0], 0, rank)
    on = ops.equal(first, _positions(sizes[1], 1, rank))
    for axis in range(2, rank):
        on = ops.logical_and(on, ops.equal(first, _positions(sizes[axis], axis, rank)))
    return [ops.select(on, value, matrix).output(0)]


@ov_translate.register(Eye)
def _eye(op, node, inputs):
    rows, columns, offset = (cast(value, np.int64) for value in inputs)
    difference = ops.subtract(_positions(columns, 1, 2), _positions(rows, 0, 2))
    return [cast(ops.equal(difference, offset).output(0), op.dtype)]
