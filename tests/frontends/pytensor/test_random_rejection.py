"""Random variables drawn by rejection (gamma, poisson: a Loop-5 that draws again where a
proposal was refused) and those drawn from them (beta, chisquare, invgamma, gengamma, t,
dirichlet, negative_binomial, beta_binomial), and the multivariate normal (a Cholesky factor
computed in a Loop): each draw's empirical distribution against scipy's at 200k draws, batched
parameters, f32 and f64, the rng semantics (a fixed rng repeats, an updated one gives new
draws), draws inside a scan, out-of-domain parameters. Skipped without pytensor."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import openvino as ov  # noqa: E402
import openvino.opset15 as ops  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from scipy import stats  # noqa: E402

import ov_loops.pytensor  # noqa: E402, F401  (registers the mode)
from ov_loops.frontends.pytensor.multivariate import cholesky  # noqa: E402
from ov_loops.ovcore import core  # noqa: E402

DRAWS = 200_000
# Kolmogorov's distance of 200k draws: its standard deviation is below 0.0011, so 0.005 is a
# 4.5-sigma bound; the continuous draws carry f32 rounding too (the CPU computes in f32)
DISTANCE = 0.005


def _draw(make, seed=3, dtype="float64"):
    rng = pytensor.shared(np.random.default_rng(seed), name="rng")
    with pytensor.config.change_flags(floatX=dtype):
        variable = make(rng)
    return pytensor.function([], variable, mode="OPENVINO")()


def _distance(draws: np.ndarray, law) -> float:
    """Kolmogorov's distance between the draws' empirical CDF and `law`'s, for draws rounded
    to f32 (a draw v stands for [v - ulp, v + ulp], ulp = numpy.spacing(float32(v)): beta
    draws within 6e-8 of 1 are 1.0 in f32)."""
    values, counts = np.unique(draws, return_counts=True)
    after = np.cumsum(counts) / draws.size
    if hasattr(law.dist, "pmf"):
        return float(np.max(np.abs(after - law.cdf(values))))
    before = after - counts / draws.size
    ulp = np.spacing(np.abs(values).astype(np.float32)).astype(np.float64)
    return float(
        max(
            np.max(np.maximum(after - law.cdf(values + ulp), 0.0)),
            np.max(np.maximum(law.cdf(values - ulp) - before, 0.0)),
        )
    )


CONTINUOUS = {
    "gamma": (
        lambda r: pt.random.gamma(2.5, scale=1.5, rng=r, size=DRAWS),
        stats.gamma(2.5, scale=1.5),
    ),
    "gamma_below_1": (
        lambda r: pt.random.gamma(0.3, scale=2.0, rng=r, size=DRAWS),
        stats.gamma(0.3, scale=2.0),
    ),
    "gamma_small": (
        lambda r: pt.random.gamma(0.1, scale=1.0, rng=r, size=DRAWS),
        stats.gamma(0.1),
    ),
    "gamma_large": (
        lambda r: pt.random.gamma(400.0, scale=0.5, rng=r, size=DRAWS),
        stats.gamma(400.0, scale=0.5),
    ),
    "beta": (lambda r: pt.random.beta(0.5, 3.0, rng=r, size=DRAWS), stats.beta(0.5, 3.0)),
    "beta_small": (lambda r: pt.random.beta(0.1, 0.2, rng=r, size=DRAWS), stats.beta(0.1, 0.2)),
    "chisquare": (lambda r: pt.random.chisquare(3.0, rng=r, size=DRAWS), stats.chi2(3.0)),
    "invgamma": (
        lambda r: pt.random.invgamma(3.0, 2.0, rng=r, size=DRAWS),
        stats.invgamma(3.0, scale=2.0),
    ),
    "gengamma": (
        lambda r: pt.random.gengamma(2.0, 1.5, 3.0, rng=r, size=DRAWS),
        stats.gengamma(2.0 / 1.5, 1.5, scale=3.0),
    ),
    "t": (lambda r: pt.random.t(4.0, 1.0, 2.0, rng=r, size=DRAWS), stats.t(4.0, 1.0, 2.0)),
    "t_one_df": (lambda r: pt.random.t(1.0, 0.0, 1.0, rng=r, size=DRAWS), stats.t(1.0)),
    "vonmises": (
        lambda r: pt.random.vonmises(0.0, 4.0, rng=r, size=DRAWS),
        stats.vonmises(4.0),
    ),
    "vonmises_wide": (
        lambda r: pt.random.vonmises(0.0, 0.3, rng=r, size=DRAWS),
        stats.vonmises(0.3),
    ),
    "vonmises_narrow": (
        lambda r: pt.random.vonmises(0.0, 1e4, rng=r, size=DRAWS),
        stats.vonmises(1e4),
    ),
    "vonmises_uniform": (
        lambda r: pt.random.vonmises(0.0, 0.0, rng=r, size=DRAWS),
        stats.uniform(-np.pi, 2 * np.pi),
    ),
    "triangular": (
        lambda r: pt.random.triangular(-1.0, 2.0, 3.0, rng=r, size=DRAWS),
        stats.triang(0.75, loc=-1.0, scale=4.0),
    ),
    "truncexpon": (
        lambda r: pt.random.truncexpon(2.0, 1.0, 0.5, rng=r, size=DRAWS),
        stats.truncexpon(2.0, loc=1.0, scale=0.5),
    ),
    "wald": (
        lambda r: pt.random.wald(2.0, 0.5, rng=r, size=DRAWS),
        stats.invgauss(4.0, scale=0.5),
    ),
    "wald_wide": (
        lambda r: pt.random.wald(1.0, 1e-3, rng=r, size=DRAWS),
        stats.invgauss(1e3, scale=1e-3),
    ),
}
DISCRETE = {
    **{
        f"poisson_{lam:g}": (
            lambda r, lam=lam: pt.random.poisson(lam, rng=r, size=DRAWS),
            stats.poisson(lam),
        )
        for lam in (0.5, 3.0, 9.9, 10.0, 37.5, 1000.0, 1e6)
    },
    "negative_binomial": (
        lambda r: pt.random.negative_binomial(3, 0.4, rng=r, size=DRAWS),
        stats.nbinom(3, 0.4),
    ),
    "negative_binomial_wide": (
        lambda r: pt.random.negative_binomial(0.5, 0.01, rng=r, size=DRAWS),
        stats.nbinom(0.5, 0.01),
    ),
    "beta_binomial": (
        lambda r: pt.random.betabinom(10, 2.0, 3.0, rng=r, size=DRAWS),
        stats.betabinom(10, 2.0, 3.0),
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CONTINUOUS))
def test_continuous_draws_follow_their_distribution(name, dtype):
    make, law = CONTINUOUS[name]
    draws = _draw(make, dtype=dtype)
    assert draws.shape == (DRAWS,) and draws.dtype == dtype
    assert np.all(np.isfinite(draws))
    assert _distance(draws, law) < DISTANCE


def test_vonmises_draws_wrap_around_their_mean():
    draws = _draw(lambda r: pt.random.vonmises(3.0, 2.0, rng=r, size=DRAWS))
    assert draws.min() >= -np.pi and draws.max() < np.pi
    centred = np.mod(draws - 3.0 + np.pi, 2 * np.pi) - np.pi
    assert _distance(centred, stats.vonmises(2.0)) < DISTANCE


def test_gamma_draws_below_the_smallest_f32_are_zero():
    # the CPU computes in f32: a draw below its smallest normal number is 0 (or a denormal)
    draws = _draw(lambda r: pt.random.gamma(0.05, scale=1.0, rng=r, size=DRAWS))
    tiny = np.finfo(np.float32).tiny
    law = stats.gamma(0.05)
    assert abs(np.mean(draws < tiny) - law.cdf(tiny)) < 5 * np.sqrt(law.cdf(tiny) / DRAWS)
    above = draws[draws >= tiny]
    conditional = (law.cdf(np.sort(above)) - law.cdf(tiny)) / law.sf(tiny)
    assert np.max(np.abs(conditional - np.arange(1, above.size + 1) / above.size)) < DISTANCE


@pytest.mark.parametrize("name", list(DISCRETE))
def test_discrete_draws_follow_their_distribution(name):
    make, law = DISCRETE[name]
    draws = _draw(make)
    assert draws.shape == (DRAWS,) and draws.dtype == np.int64
    assert draws.min() >= 0
    assert _distance(draws, law) < DISTANCE
    assert abs(draws.mean() - law.mean()) < 5 * law.std() / np.sqrt(DRAWS)


def test_batched_parameters_without_size_and_with_it():
    alpha, lam = pt.dvector("alpha"), pt.dmatrix("lam")
    rng = pytensor.shared(np.random.default_rng(5), name="rng")
    one = pt.random.gamma(alpha, scale=2.0, rng=rng)
    many = pt.random.gamma(alpha, scale=2.0, rng=rng, size=(DRAWS // 10, 3))
    counts = pt.random.poisson(lam, rng=rng, size=(DRAWS // 10, 2, 3))
    function = pytensor.function([alpha, lam], [one, many, counts], mode="OPENVINO")
    alphas = np.array([0.3, 1.0, 6.0])
    lams = np.array([[0.0, 0.5, 9.99], [10.0, 250.0, 3e4]])  # both samplers in one draw
    single, draws, poissons = function(alphas, lams)
    assert single.shape == (3,) and draws.shape == (DRAWS // 10, 3)
    assert poissons.shape == (DRAWS // 10, 2, 3)
    for column, a in enumerate(alphas):
        assert _distance(draws[:, column], stats.gamma(a, scale=2.0)) < 2 * DISTANCE
    assert np.all(poissons[:, 0, 0] == 0)
    for (row, column), lam in np.ndenumerate(lams[:, :]):
        if lam > 0:
            assert _distance(poissons[:, row, column], stats.poisson(lam)) < 2 * DISTANCE


def test_a_fixed_rng_repeats_its_draws_and_an_updated_one_gives_new_ones():
    rng = pytensor.shared(np.random.default_rng(4), name="rng")
    draws = [
        pt.random.gamma(2.0, scale=1.0, rng=rng, size=50),
        pt.random.poisson(40.0, rng=rng, size=50),
        pt.random.multivariate_normal(np.zeros(2), np.eye(2), rng=rng, size=50),
    ]
    fixed = pytensor.function([], draws, mode="OPENVINO")
    for first, again in zip(fixed(), fixed()):
        np.testing.assert_array_equal(first, again)
    stream = pt.random.utils.RandomStream(seed=9)
    updated = pytensor.function(
        [],
        [
            stream.gamma(2.0, scale=1.0, size=50),
            stream.poisson(40.0, size=50),
            stream.beta(2.0, 2.0, size=50),
        ],
        mode="OPENVINO",
    )
    first, second = updated(), updated()
    assert not np.array_equal(first[0], second[0])
    assert not np.array_equal(first[1], second[1])
    assert not np.array_equal(first[2], second[2])


def test_rejection_draws_in_a_scan_differ_per_step_and_per_call():
    rng = pytensor.shared(np.random.default_rng(190), name="rng")

    def draw(generator):
        after_gamma, g = pt.random.gamma(0.7, scale=1.0, rng=generator, size=(3,)).owner.outputs
        after_poisson, k = pt.random.poisson(20.0, rng=after_gamma, size=(3,)).owner.outputs
        return [g, k], {generator: after_poisson}

    (gs, ks), updates = pytensor.scan(
        draw, outputs_info=[None, None], non_sequences=[rng], strict=True, n_steps=200
    )
    function = pytensor.function([], [gs, ks], updates=updates, mode="OPENVINO")
    (g1, k1), (g2, _) = function(), function()
    assert g1.shape == (200, 3) and k1.shape == (200, 3)
    assert len(np.unique(g1)) == 600 and not np.any(g1 == g2)
    assert _distance(g1.ravel(), stats.gamma(0.7)) < 0.06  # 600 draws: 1.5 / sqrt(600)
    assert abs(k1.mean() - 20.0) < 5 * np.sqrt(20.0 / 600)


def test_dirichlet_batched_and_with_size():
    alpha = pt.dmatrix("alpha")
    rng = pytensor.shared(np.random.default_rng(6), name="rng")
    many = pt.random.dirichlet(alpha, rng=rng, size=(DRAWS // 10, 2))
    one = pt.random.dirichlet(alpha, rng=rng)
    alphas = np.array([[1.0, 2.0, 0.5], [0.1, 0.1, 5.0]])
    draws, single = pytensor.function([alpha], [many, one], mode="OPENVINO")(alphas)
    assert draws.shape == (DRAWS // 10, 2, 3) and single.shape == (2, 3)
    np.testing.assert_allclose(draws.sum(-1), 1.0, atol=1e-6)
    for row, a in enumerate(alphas):
        for k in range(3):  # each component is beta(a_k, sum(a) - a_k)
            law = stats.beta(a[k], a.sum() - a[k])
            assert _distance(draws[:, row, k], law) < 2 * DISTANCE


COVARIANCE = np.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.5]])


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_has_its_mean_and_covariance(method):
    mean = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
    covariances = np.stack([COVARIANCE, np.diag([1.0, 4.0, 9.0])])
    rng = pytensor.shared(np.random.default_rng(7), name="rng")
    m, c = pt.dmatrix("mean"), pt.dtensor3("cov")
    many = pt.random.multivariate_normal(m, c, rng=rng, size=(DRAWS // 4, 2), method=method)
    one = pt.random.multivariate_normal(m, c, rng=rng, method=method)
    draws, single = pytensor.function([m, c], [many, one], mode="OPENVINO")(mean, covariances)
    assert draws.shape == (DRAWS // 4, 2, 3) and single.shape == (2, 3)
    for row in range(2):
        sample = draws[:, row]
        np.testing.assert_allclose(sample.mean(0), mean[row], atol=5 * 3 / np.sqrt(DRAWS // 4))
        variances = np.diag(covariances[row])
        spread = np.sqrt((np.outer(variances, variances) + covariances[row] ** 2) / len(sample))
        assert np.all(np.abs(np.cov(sample.T) - covariances[row]) < 5 * spread)
        standard = np.linalg.solve(np.linalg.cholesky(covariances[row]), (sample - mean[row]).T)
        assert _distance(standard[1], stats.norm()) < 2 * DISTANCE


def _cholesky_model(dims: int, dtype) -> ov.CompiledModel:
    cov = ops.parameter(ov.PartialShape.dynamic(dims), ov.Type(np.dtype(dtype)))
    factor = cholesky(cov.output(0))
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    return core().compile_model(ov.Model([factor], [cov]), "CPU", config)


def test_cholesky_loop_factors_batches_and_semidefinite_covariances():
    rng = np.random.default_rng(0)
    factors = rng.normal(size=(4, 6, 6)).astype(np.float32)
    covariances = factors @ factors.transpose(0, 2, 1) + 0.1 * np.eye(6, dtype=np.float32)
    compiled = _cholesky_model(3, np.float32)
    np.testing.assert_allclose(
        compiled(covariances)[0], np.linalg.cholesky(covariances), rtol=2e-4, atol=2e-4
    )
    singular = np.outer([1.0, 2.0, 0.0, -1.0], [1.0, 2.0, 0.0, -1.0]).astype(np.float32)
    factor = _cholesky_model(2, np.float32)(singular)[0]
    assert np.all(np.isfinite(factor))
    np.testing.assert_allclose(factor @ factor.T, singular, atol=1e-5)


def test_out_of_domain_parameters_give_nan_or_minus_one_and_stop():
    shape, lam = pt.dvector("shape"), pt.dvector("lam")
    rng = pytensor.shared(np.random.default_rng(8), name="rng")
    function = pytensor.function(
        [shape, lam],
        [pt.random.gamma(shape, scale=1.0, rng=rng), pt.random.poisson(lam, rng=rng)],
        mode="OPENVINO",
    )
    gammas, counts = function(
        np.array([-1.0, 0.0, np.nan, 2.0]), np.array([-1.0, np.nan, 0.0, 5.0])
    )
    assert np.all(np.isnan(gammas[:3])) and gammas[3] > 0
    np.testing.assert_array_equal(counts[:3], [-1, -1, 0])
    assert counts[3] >= 0


def test_the_rejection_loop_runs_again_after_a_call_needing_no_draws():
    lam = pt.dvector("lam")
    rng = pytensor.shared(np.random.default_rng(2), name="rng")
    function = pytensor.function(
        [lam], pt.random.poisson(lam, rng=rng, size=(DRAWS // 10, 2)), mode="OPENVINO"
    )
    wide = function(np.array([3.0, 500.0]))
    small = function(np.array([3.0, 4.0]))  # the large-lam loop: nothing to draw
    again = function(np.array([3.0, 500.0]))
    np.testing.assert_array_equal(wide, again)
    assert _distance(small[:, 1], stats.poisson(4.0)) < 2 * DISTANCE
    assert _distance(wide[:, 1], stats.poisson(500.0)) < 2 * DISTANCE


DRAWS_PRIOR = 600  # prior predictive draws: one call per draw, each some ms with its loops


def test_pymc_prior_predictive_draws_match_the_default_backend():
    pm = pytest.importorskip("pymc", reason="PyMC is not installed")
    with pm.Model():
        a = pm.Gamma("a", 2.0, 1.0)
        pm.Beta("b", 2.0, 5.0)
        pm.StudentT("x", nu=4, mu=0, sigma=a)
        pm.Poisson("k", mu=a * 3)
        pm.NegativeBinomial("nb", mu=3.0, alpha=2.0)
        pm.Dirichlet("d", a=np.ones(3))
        pm.MvNormal("mv", mu=np.zeros(2), cov=np.array([[1.0, 0.3], [0.3, 2.0]]))
        ours = pm.sample_prior_predictive(
            draws=DRAWS_PRIOR, random_seed=1, compile_kwargs={"mode": "OPENVINO"}
        ).prior
        numpy_draws = pm.sample_prior_predictive(draws=DRAWS_PRIOR, random_seed=1).prior
    for name in ("a", "b", "x", "k", "nb", "d", "mv"):
        mine = ours[name].values.reshape(DRAWS_PRIOR, -1)
        theirs = numpy_draws[name].values.reshape(DRAWS_PRIOR, -1)
        assert not np.array_equal(mine, theirs)  # our own draws, not numpy's
        for column in range(mine.shape[1]):  # two samples of one law (fixed seeds)
            assert stats.ks_2samp(mine[:, column], theirs[:, column]).pvalue > 1e-3, name
