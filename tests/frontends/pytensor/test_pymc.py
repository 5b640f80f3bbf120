"""A PyMC model whose likelihood has a scan (an AR(1) process written with pytensor.scan): its
logp and dlogp compiled with mode="OPENVINO" equal the default backend's within f32 tolerance,
and pm.sample runs on it. Skipped without PyMC (not in CI's test extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")
pm = pytest.importorskip("pymc", reason="PyMC is not installed")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

import ov_loops.pytensor  # noqa: E402, F401  (registers the OPENVINO mode)

STEPS = 60


def ar1_model() -> pm.Model:
    """x_t = rho x_{t-1} + sigma e_t from x_0 = 0, observed with noise 0.5."""
    rng = np.random.default_rng(0)
    observed = np.cumsum(rng.normal(0, 0.3, STEPS)) + rng.normal(0, 0.5, STEPS)
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        sigma = pm.HalfNormal("sigma", 1.0)
        innovations = pm.Normal("innovations", 0, 1, shape=STEPS)
        xs = pytensor.scan(
            lambda e, previous, r, s: r * previous + s * e,
            sequences=[innovations],
            outputs_info=[pt.zeros(())],
            non_sequences=[rho, sigma],
            return_updates=False,
        )
        pm.Normal("y", xs, 0.5, observed=observed)
    return model


def test_logp_and_dlogp_equal_the_default_backend():
    model = ar1_model()
    rng = np.random.default_rng(1)
    start = model.initial_point()
    points = [start, {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in start.items()}]
    logp, dlogp = model.compile_logp(mode="OPENVINO"), model.compile_dlogp(mode="OPENVINO")
    logp_c, dlogp_c = model.compile_logp(), model.compile_dlogp()
    for point in points:
        np.testing.assert_allclose(logp(point), logp_c(point), rtol=1e-5)
        np.testing.assert_allclose(dlogp(point), dlogp_c(point), rtol=1e-4, atol=1e-4)


def test_sample_runs_on_the_openvino_mode():
    with ar1_model():
        trace = pm.sample(
            draws=50,
            tune=50,
            chains=1,
            random_seed=3,
            progressbar=False,
            compute_convergence_checks=False,
            compile_kwargs={"mode": "OPENVINO"},
        )
    rho = trace.posterior["rho"].values
    assert rho.shape == (1, 50) and np.all(np.abs(rho) < 1) and len(np.unique(rho)) > 5
