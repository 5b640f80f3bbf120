"""Random variables on the OPENVINO mode: normal and uniform draws from the rng's key, the
other distributions an inverse CDF or a count of uniforms gives (each draw's empirical
distribution against scipy's), the rng update semantics (an updated rng gives new draws, a
fixed one repeats them) and draws inside a scan. Skipped without pytensor."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from scipy import stats  # noqa: E402

DRAWS = 200_000


def test_normal_and_uniform_draws_have_their_distributions_and_change_every_call():
    stream = pt.random.utils.RandomStream(seed=11)
    loc, scale = pt.dscalar("loc"), pt.dscalar("scale")
    normal = stream.normal(loc, scale, size=(DRAWS,))
    uniform = stream.uniform(-1.0, 3.0, size=(DRAWS // 1000, 1000))
    function = pytensor.function([loc, scale], [normal, uniform], mode="OPENVINO")
    first, second = function(1.0, 2.0), function(1.0, 2.0)
    draws, units = first
    assert draws.shape == (DRAWS,) and units.shape == (DRAWS // 1000, 1000)
    assert abs(draws.mean() - 1.0) < 5 * 2.0 / np.sqrt(DRAWS)
    assert abs(draws.std() - 2.0) < 0.02
    assert abs(np.mean(draws < 1.0) - 0.5) < 0.01
    assert units.min() >= -1.0 and units.max() < 3.0
    assert abs(units.mean() - 1.0) < 5 * (4 / np.sqrt(12)) / np.sqrt(DRAWS)
    histogram = np.histogram(units, bins=8, range=(-1, 3))[0] / DRAWS
    np.testing.assert_allclose(histogram, 1 / 8, atol=0.005)
    assert not np.any(first[0] == second[0]) and not np.any(first[1] == second[1])


def test_a_fixed_rng_repeats_its_draws_and_broadcasts_its_parameters():
    rng = pytensor.shared(np.random.default_rng(4), name="rng")
    loc = pt.dvector("loc")
    function = pytensor.function([loc], pt.random.normal(loc, 1e-3, rng=rng), mode="OPENVINO")
    centres = np.array([0.0, 10.0, 20.0])
    first = function(centres)
    np.testing.assert_array_equal(first, function(centres))
    np.testing.assert_allclose(first, centres, atol=0.01)
    assert len(set(first - centres)) == 3


def test_draws_in_a_scan_differ_per_step_and_per_call_with_the_rng_update():
    rng = pytensor.shared(np.random.default_rng(190), name="rng")

    def draw(generator):
        next_generator, x = pt.random.normal(rng=generator, size=(2,)).owner.outputs
        return x, {generator: next_generator}

    xs, updates = pytensor.scan(
        draw, outputs_info=[None], non_sequences=[rng], strict=True, n_steps=10
    )
    function = pytensor.function([], xs, updates=updates, mode="OPENVINO")
    first, second = function(), function()
    assert first.shape == (10, 2)
    assert len(np.unique(first)) == 20
    assert not np.any(first == second)
    repeat = pytensor.function([], xs, mode="OPENVINO")
    np.testing.assert_array_equal(repeat(), repeat())


CONTINUOUS = [
    (lambda r: r.lognormal(0.5, 0.7), stats.lognorm(0.7, scale=np.exp(0.5))),
    (lambda r: r.halfnormal(1.0, 2.0), stats.halfnorm(1.0, 2.0)),
    (lambda r: r.exponential(3.0), stats.expon(scale=3.0)),
    (lambda r: r.weibull(1.7), stats.weibull_min(1.7)),
    (lambda r: r.pareto(2.5, 1.5), stats.pareto(2.5, scale=1.5)),
    (lambda r: r.gumbel(1.0, 2.0), stats.gumbel_r(1.0, 2.0)),
    (lambda r: r.logistic(-1.0, 0.5), stats.logistic(-1.0, 0.5)),
    (lambda r: r.cauchy(2.0, 0.5), stats.cauchy(2.0, 0.5)),
    (lambda r: r.halfcauchy(0.0, 2.0), stats.halfcauchy(0.0, 2.0)),
    (lambda r: r.laplace(1.0, 3.0), stats.laplace(1.0, 3.0)),
]
DISCRETE = [
    (lambda r: r.integers(-3, 7), stats.randint(-3, 7)),
    (lambda r: r.bernoulli(0.3), stats.bernoulli(0.3)),
    (lambda r: r.geometric(0.25), stats.geom(0.25)),
    (lambda r: r.binomial(12, 0.35), stats.binom(12, 0.35)),
]


def _sample(make):
    rng = pytensor.shared(np.random.default_rng(3), name="rng")
    variable = make(_Bound(rng))
    return pytensor.function([], variable, mode="OPENVINO")()


class _Bound:
    """pt.random's functions with the rng and the size bound."""

    def __init__(self, rng, size=(DRAWS,)):
        self.rng, self.size = rng, size

    def __getattr__(self, name):
        function = getattr(pt.random, name)
        return lambda *args: function(*args, rng=self.rng, size=self.size)


@pytest.mark.parametrize(
    "make, law", CONTINUOUS, ids=lambda v: getattr(getattr(v, "dist", None), "name", "")
)
def test_continuous_draws_follow_their_distribution(make, law):
    draws = np.sort(_sample(make))
    assert draws.shape == (DRAWS,) and draws.dtype == np.float64
    empirical = np.arange(1, DRAWS + 1) / DRAWS
    assert np.max(np.abs(law.cdf(draws) - empirical)) < 0.01  # Kolmogorov's distance


@pytest.mark.parametrize(
    "make, law", DISCRETE, ids=lambda v: getattr(getattr(v, "dist", None), "name", "")
)
def test_discrete_draws_follow_their_distribution(make, law):
    draws = _sample(make)
    assert draws.dtype == np.int64
    values, counts = np.unique(draws, return_counts=True)
    assert np.all(law.pmf(values) > 0)
    np.testing.assert_allclose(counts / DRAWS, law.pmf(values), atol=0.005)


def test_binomial_and_categorical_broadcast_their_parameters():
    rng = pytensor.shared(np.random.default_rng(8), name="rng")
    n, p = pt.lvector("n"), pt.dmatrix("p")
    binomial = pt.random.binomial(n, 0.5, rng=rng, size=(DRAWS // 10, 3))
    categorical = pt.random.categorical(p, rng=rng, size=(DRAWS // 10, 2))
    one = pt.random.categorical(p, rng=rng)
    trials, probabilities = np.array([1, 4, 0]), np.array([[0.2, 0.5, 0.3], [0.9, 0.0, 0.1]])
    function = pytensor.function([n, p], [binomial, categorical, one], mode="OPENVINO")
    counts, picks, single = function(trials, probabilities)
    assert counts.shape == (DRAWS // 10, 3)
    np.testing.assert_allclose(counts.mean(axis=0), trials * 0.5, atol=0.02)
    assert counts[:, 0].max() == 1 and counts[:, 1].max() == 4 and counts[:, 2].max() == 0
    assert picks.shape == (DRAWS // 10, 2) and single.shape == (2,)
    for row, wanted in enumerate(probabilities):
        frequencies = np.bincount(picks[:, row], minlength=3) / len(picks)
        np.testing.assert_allclose(frequencies, wanted, atol=0.01)
