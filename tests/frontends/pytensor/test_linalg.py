"""Linear algebra on the OPENVINO mode against PyTensor's default mode (f32 tolerance):
Cholesky (both triangles, batched, NaN where scipy's potrf fails), the triangular, symmetric
and Cholesky solves (reading one triangle of the matrix, as LAPACK does), diagonals,
determinants (pivoting, batched, singular), and the gradients through them that a
multivariate normal's log density builds. Skipped without pytensor."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

from tests.frontends.pytensor.compare import compare  # noqa: E402

RNG = np.random.default_rng(25)


def _spd(*batch: int, n: int = 5) -> np.ndarray:
    """Well-conditioned symmetric positive definite matrices."""
    factors = RNG.normal(size=(*batch, n, n))
    return factors @ np.swapaxes(factors, -1, -2) + n * np.eye(n)


def _with_noise_above(matrix: np.ndarray) -> np.ndarray:
    """`matrix` with its strict upper triangle replaced by values LAPACK must not read."""
    noisy = matrix.copy()
    rows, columns = np.triu_indices(matrix.shape[-1], 1)
    noisy[..., rows, columns] = 1e3 * RNG.normal(size=noisy[..., rows, columns].shape)
    return noisy


def test_cholesky_of_either_triangle_batched_and_not():
    a, batch = pt.dmatrix("a"), pt.dtensor3("batch")
    outputs = [pt.linalg.cholesky(a), pt.linalg.cholesky(a, lower=False)]
    compare([a], outputs, [_spd()])
    compare([a], pt.linalg.cholesky(a), [_with_noise_above(_spd())])
    compare([batch], pt.linalg.cholesky(batch), [_spd(3)])


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_in_the_default_mode():
    batch = pt.dtensor3("batch")
    matrices = _spd(2)
    matrices[1, 2, 2] = -1.0
    got = pytensor.function([batch], pt.linalg.cholesky(batch), mode="OPENVINO")(matrices)
    np.testing.assert_allclose(got[0], np.linalg.cholesky(matrices[0]), rtol=1e-4, atol=1e-5)
    assert np.all(np.isnan(got[1]))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solves_read_their_triangle_only(lower, unit_diagonal):
    a, b, c = pt.dmatrix("a"), pt.dvector("b"), pt.dmatrix("c")
    matrix = _with_noise_above(np.linalg.cholesky(_spd()))
    matrix = matrix if lower else matrix.T
    outputs = [
        pt.linalg.solve_triangular(a, b, lower=lower, unit_diagonal=unit_diagonal),
        pt.linalg.solve_triangular(a, c, lower=lower, unit_diagonal=unit_diagonal, trans=1),
    ]
    compare([a, b, c], outputs, [matrix, RNG.normal(size=5), RNG.normal(size=(5, 3))])


@pytest.mark.parametrize("assume_a", ["sym", "pos"])
@pytest.mark.parametrize("lower", [True, False])
def test_symmetric_solves_read_one_triangle(assume_a, lower):
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    matrix = _with_noise_above(_spd())
    matrix = matrix if lower else matrix.T
    solve = pt.linalg.solve(a, b, assume_a=assume_a, lower=lower)
    compare([a, b], solve, [matrix, RNG.normal(size=(5, 2))])


def test_cholesky_solve_and_batched_triangular_solve():
    c, b, batch, rhs = pt.dmatrix("c"), pt.dvector("b"), pt.dtensor3("batch"), pt.dtensor3("rhs")
    factor = np.linalg.cholesky(_spd())
    outputs = [pt.linalg.cho_solve((c, True), b), pt.linalg.cho_solve((c.T, False), b)]
    compare([c, b], outputs, [factor, RNG.normal(size=5)])
    triangular = pt.linalg.solve_triangular(batch, rhs, lower=True)
    compare([batch, rhs], triangular, [np.linalg.cholesky(_spd(4)), RNG.normal(size=(4, 5, 2))])


@pytest.mark.parametrize("offset", [-2, 0, 1, 3])
def test_diagonals_of_any_offset_and_axes(offset):
    x = pt.dtensor3("x")
    outputs = [pt.diagonal(x, offset, 1, 2), pt.diagonal(x, offset, 2, 0)]
    compare([x], outputs, [RNG.normal(size=(3, 4, 6))])


def test_multivariate_normal_log_density_and_its_gradient():
    x, mean, cov = pt.dvector("x"), pt.dvector("mean"), pt.dmatrix("cov")
    factor = pt.linalg.cholesky(cov)
    z = pt.linalg.solve_triangular(factor, x - mean, lower=True)
    logp = -0.5 * pt.sum(z**2) - pt.sum(pt.log(pt.diagonal(factor)))
    outputs = [logp, *pytensor.grad(logp, [mean, cov])]
    compare([x, mean, cov], outputs, [RNG.normal(size=5), RNG.normal(size=5), _spd()])


def test_determinants_pivot_and_batch():
    a, batch = pt.dmatrix("a"), pt.dtensor3("batch")
    matrix = RNG.normal(size=(5, 5))
    matrix[0, 0] = 0.0  # the elimination must swap rows
    sign, logabs = pt.linalg.slogdet(a)
    outputs = [pt.linalg.det(a), sign, logabs, *pytensor.grad(pt.linalg.det(a) + logabs, [a])]
    compare([a], outputs, [matrix])
    compare([batch], pt.linalg.det(batch), [RNG.normal(size=(3, 4, 4))])


def test_determinants_of_a_singular_matrix_are_numpys():
    a = pt.dmatrix("a")
    singular = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])
    det, (sign, logabs) = pt.linalg.det(a), pt.linalg.slogdet(a)
    got = pytensor.function([a], [det, sign, logabs], mode="OPENVINO")(singular)
    assert got[0] == 0.0 and got[1] == 0.0 and got[2] == -np.inf


def test_filled_diagonals_and_identity_matrices():
    a, t, n = pt.dmatrix("a"), pt.dtensor3("t"), pt.lscalar("n")
    compare([a], pt.fill_diagonal(a, 7.0), [RNG.normal(size=(3, 5))])
    compare([a], pt.fill_diagonal(a, 7.0), [RNG.normal(size=(5, 3))])
    compare([t], pt.fill_diagonal(t, 2.0), [RNG.normal(size=(3, 3, 3))])
    compare([n], [pt.eye(n, 4, 1), pt.eye(n, k=-1), pt.eye(n, dtype="int32")], [3])


def test_gradient_of_a_unit_diagonal_triangular_solve():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    solved = pt.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True)
    matrix = _with_noise_above(np.linalg.cholesky(_spd()))
    compare([a, b], pytensor.grad(solved.sum(), [a, b]), [matrix, RNG.normal(size=5)])


def test_tridiagonal_solve_reads_three_diagonals():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    matrix = RNG.normal(size=(5, 5)) + 4 * np.eye(5)
    solve = pt.linalg.solve(a, b, assume_a="tridiagonal")
    compare([a, b], solve, [matrix, RNG.normal(size=(5, 2))])
