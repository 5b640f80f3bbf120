"""PyMC's multivariate normal models on mode="OPENVINO": the logp and dlogp of an MvNormal
with an LKJ Cholesky covariance (Cholesky, triangular solves, cumulative sums, diagonals in the
graph) and of one given a covariance built from parameters equal the default backend's within
f32 tolerance. Skipped without PyMC (not in CI's test extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")
pm = pytest.importorskip("pymc", reason="PyMC is not installed")

import ov_loops.pytensor  # noqa: E402, F401  (registers the OPENVINO mode)

COVARIANCE = np.array([[1.0, 0.5, 0.2], [0.5, 2.0, 0.3], [0.2, 0.3, 1.5]])


def _data() -> np.ndarray:
    return np.random.default_rng(0).multivariate_normal([0.0, 1.0, 2.0], COVARIANCE, size=50)


def _assert_logp_and_dlogp_match(model: pm.Model) -> None:
    rng = np.random.default_rng(1)
    start = model.initial_point()
    point = {name: value + 0.2 * rng.normal(size=np.shape(value)) for name, value in start.items()}
    for compile_function in (model.compile_logp, model.compile_dlogp):
        got = compile_function(mode="OPENVINO")(point)
        expected = compile_function()(point)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.max(np.abs(expected)))


def test_mvnormal_with_an_lkj_cholesky_covariance():
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov(
            "chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0), compute_corr=True
        )
        mu = pm.Normal("mu", 0, 5, shape=3)
        pm.MvNormal("y", mu=mu, chol=chol, observed=_data())
    _assert_logp_and_dlogp_match(model)


def test_mvnormal_with_a_covariance_of_parameters():
    with pm.Model() as model:
        sd = pm.HalfNormal("sd", 1.0, shape=3)
        cov = pm.math.stack(
            [[sd[0] ** 2 + 1, 0.3, 0.1], [0.3, sd[1] ** 2 + 1, 0.2], [0.1, 0.2, sd[2] ** 2 + 1]]
        )
        pm.MvNormal("y", mu=np.zeros(3), cov=cov, observed=_data())
    _assert_logp_and_dlogp_match(model)
