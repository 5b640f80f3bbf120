"""A PyMC model whose likelihood has a scan (an AR(1) process written with pytensor.scan): its
logp and dlogp compiled with mode="OPENVINO" equal the default backend's within f32 tolerance,
and pm.sample on it gives the default backend's posterior means within Monte Carlo error.
Skipped without PyMC (not in CI's test extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")
pm = pytest.importorskip("pymc", reason="PyMC is not installed")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

import ov_loops.pytensor  # noqa: E402, F401  (registers the OPENVINO mode)

STEPS = 60


def ar1_model(steps: int = STEPS) -> pm.Model:
    """x_t = rho x_{t-1} + sigma e_t from x_0 = 0, observed with noise 0.5."""
    rng = np.random.default_rng(0)
    observed = np.cumsum(rng.normal(0, 0.3, steps)) + rng.normal(0, 0.5, steps)
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        sigma = pm.HalfNormal("sigma", 1.0)
        innovations = pm.Normal("innovations", 0, 1, shape=steps)
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


def posterior(mode: str | None):
    """2 chains of 200 draws (after 200 tuning steps) of a 20-step AR(1) model on `mode`
    (None: the default backend)."""
    with ar1_model(steps=20):
        return pm.sample(
            draws=200,
            tune=200,
            chains=2,
            cores=1,
            random_seed=3,
            progressbar=False,
            compute_convergence_checks=False,
            **({"compile_kwargs": {"mode": mode}} if mode else {}),
        ).posterior


def test_sample_gives_the_default_backends_posterior_means():
    import arviz

    openvino, default = posterior("OPENVINO"), posterior(None)
    for name in ("rho", "sigma"):
        errors = [float(arviz.mcse(p, var_names=[name])[name]) for p in (openvino, default)]
        difference = abs(float(openvino[name].mean()) - float(default[name].mean()))
        assert difference < 4 * np.hypot(*errors), (name, difference, errors)
