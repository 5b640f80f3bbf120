"""Random variables (PyTensor's RandomVariable) on the counter-based generator of the Theano
frontend's RandomStreams (its `mix`, `unit_uniforms`, `standard_normals`).

A PyTensor random generator is an i32 key in the model (generators.py). A RandomVariable with
rng key k and parameters p draws

    stream = mix(k);  next rng = mix(k ^ NEXT)
    u = unit_uniforms(stream, shape) in [0, 1);  v = 1 - u in (0, 1];  z = standard_normals(...)
    normal(loc, scale) = loc + scale z         uniform(low, high) = low + (high - low) u
    lognormal(m, s) = exp(m + s z)             halfnormal(loc, scale) = loc + scale |z|
    exponential(scale) = -scale log v          weibull(k) = (-log v) ** (1 / k)
    pareto(b, scale) = scale v ** (-1 / b)     gumbel(loc, scale) = loc - scale log(-log v)
    logistic(loc, scale) = loc + scale log(v / u)   (u = 0: a draw of +inf, probability 2**-24)
    cauchy(loc, scale) = loc + scale tan(pi (u - 1/2));  halfcauchy = loc + scale tan(pi u / 2)
    laplace(loc, scale) = loc - scale sign(w) log(1 - 2 |w|),  w = u - 1/2
    integers(low, high) = low + floor((high - low) u)      bernoulli(p) = u < p
    triangular(l, m, r) = u < (m - l) / (r - l) ? l + sqrt(u (r - l)(m - l))
                                                : r - sqrt((1 - u)(r - l)(r - m))
    truncexpon(b, loc, scale) = loc - scale log(1 - u (1 - exp(-b)))
    wald(m, s) = x if u' <= m / (m + x) else m^2 / x,   y = m z^2,
        x = m - m (y - sqrt(y^2 + 4 s y)) / (2 s) = m (1 - 2 y / (y + sqrt(y^2 + 4 s y)))
        (Michael, Schucany and Haas; z, u' of two parts of the draw; the second form exact
        in floats where y >> s)
    geometric(p) = max(1, ceil(log v / log(1 - p)))
    binomial(n, p) = sum(u_j < p for j < n), u_j: max(n) uniforms per element
    categorical(p) = count(cumsum(p, -1) < u), at most K - 1   (numpy.searchsorted, left)
    multinomial(n, p)_k = #{j < n: categorical(p) of u_j is k}, u_j: max(n) uniforms per element
    shape = size if given, else the parameters' batch shapes broadcast (categorical: p's
    without its last axis)

computed in the draw's float type (f32 for integer draws). Draws depend only on the key: the
same rng gives the same draws (as in PyTensor, a function without an rng update repeats its
draws), and the next rng, stored by an update (a RandomStream's default update, or a scan
carrying it), gives new ones. The numbers differ from the default mode's (numpy's), as the JAX
and Numba backends' do.

gamma (gammas.py) and poisson (poisson.py) draw by rejection, in a Loop-5 (rejection.py);
beta, invgamma, gengamma, t, dirichlet, negative_binomial and beta_binomial from gamma draws
(gammas.py);
multivariate_normal from a Cholesky factor (multivariate.py); hypergeometric one item at a
time in a Loop-5 (hypergeometric.py); permutation and choice without replacement by sorting
random keys (choices.py; choice with replacement is a categorical or integers draw indexing its
array, as PyTensor builds it).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor.random import basic as ptr

from ov_loops.frontends.pytensor import choices, gammas, multivariate
from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate
from ov_loops.frontends.pytensor.draws import Draw, draws
from ov_loops.frontends.pytensor.hypergeometric import hypergeometric
from ov_loops.frontends.pytensor.poisson import poisson
from ov_loops.frontends.pytensor.vonmises import von_mises


def _uniform(d: Draw) -> ov.Output:
    low, high = d.params
    return ops.add(low, ops.multiply(ops.subtract(high, low), d.unit())).output(0)


def _integers(d: Draw) -> ov.Output:
    low, high = d.params
    return ops.add(low, ops.floor(ops.multiply(ops.subtract(high, low), d.unit()))).output(0)


def _exponential(d: Draw) -> ov.Output:
    return ops.multiply(ops.negative(d.params[0]), ops.log(d.open_unit())).output(0)


def _weibull(d: Draw) -> ov.Output:
    exponent = ops.divide(d.number(1.0), d.params[0])
    return ops.power(ops.negative(ops.log(d.open_unit())), exponent).output(0)


def _pareto(d: Draw) -> ov.Output:
    b, scale = d.params
    exponent = ops.divide(d.number(-1.0), b)
    return ops.multiply(scale, ops.power(d.open_unit(), exponent)).output(0)


def _gumbel(d: Draw) -> ov.Output:
    return d.loc_scale(ops.negative(ops.log(ops.negative(ops.log(d.open_unit())))).output(0))


def _logistic(d: Draw) -> ov.Output:
    v = d.open_unit()
    return d.loc_scale(ops.log(ops.divide(v, ops.subtract(d.number(1.0), v))).output(0))


def _cauchy(d: Draw) -> ov.Output:
    angle = ops.multiply(ops.subtract(d.unit(), d.number(0.5)), d.number(np.pi))
    return d.loc_scale(ops.tan(angle).output(0))


def _halfcauchy(d: Draw) -> ov.Output:
    return d.loc_scale(ops.tan(ops.multiply(d.unit(), d.number(np.pi / 2))).output(0))


def _laplace(d: Draw) -> ov.Output:
    w = ops.subtract(d.unit(), d.number(0.5))
    tail = ops.log(ops.subtract(d.number(1.0), ops.multiply(d.number(2.0), ops.abs(w))))
    return d.loc_scale(ops.negative(ops.multiply(ops.sign(w), tail)).output(0))


def _triangular(d: Draw) -> ov.Output:
    left, mode, right = d.params
    u, width = d.unit(), ops.subtract(right, left)
    rising, falling = ops.subtract(mode, left), ops.subtract(right, mode)
    low = ops.add(left, ops.sqrt(ops.multiply(u, ops.multiply(width, rising))))
    rest = ops.subtract(d.number(1.0), u)
    high = ops.subtract(right, ops.sqrt(ops.multiply(rest, ops.multiply(width, falling))))
    return ops.select(ops.less(u, ops.divide(rising, width)), low, high).output(0)


def _truncexpon(d: Draw) -> ov.Output:
    b, loc, scale = d.params
    mass = ops.subtract(d.number(1.0), ops.exp(ops.negative(b)))
    standard = ops.negative(ops.log(ops.subtract(d.number(1.0), ops.multiply(d.unit(), mass))))
    return ops.add(loc, ops.multiply(scale, standard)).output(0)


def _wald(d: Draw) -> ov.Output:
    mean, scale = d.params
    n = d.part(0).normal()
    y = ops.multiply(mean, ops.multiply(n, n))
    root = ops.sqrt(
        ops.add(ops.multiply(y, y), ops.multiply(ops.multiply(d.number(4.0), scale), y))
    )
    share = ops.divide(ops.multiply(d.number(2.0), y), ops.add(y, root))
    x = ops.multiply(mean, ops.subtract(d.number(1.0), share))
    small = ops.less_equal(d.part(1).unit(), ops.divide(mean, ops.add(mean, x)))
    return ops.select(small, x, ops.divide(ops.multiply(mean, mean), x)).output(0)


def _bernoulli(d: Draw) -> ov.Output:
    return ops.less(d.unit(), d.params[0]).output(0)


def _geometric(d: Draw) -> ov.Output:
    failures = ops.log(ops.subtract(d.number(1.0), d.params[0]))
    trials = ops.ceiling(ops.divide(ops.log(d.open_unit()), failures))
    return ops.maximum(trials, d.number(1.0)).output(0)


def _binomial(d: Draw) -> ov.Output:
    n, p = (ops.unsqueeze(param, i64(-1)) for param in d.params)
    most = ops.reduce_max(ops.reshape(n, i64(-1), False), i64(0), True)
    trials = ops.range(d.number(0.0), ops.squeeze(most, i64(0)), d.number(1.0), d.element)
    units = d.unit(ops.concat([d.shape, cast(most.output(0), np.int64)], 0).output(0))
    hits = ops.logical_and(ops.less(units, p), ops.less(trials, n))
    return ops.reduce_sum(ops.convert(hits, d.element), i64(-1), False).output(0)


def _category(totals: ov.Output, units: ov.Output, element: ov.Type) -> ov.Output:
    """count(totals < u), at most K - 1, for each u of `units` (totals: cumulative
    probabilities, K on the last axis, broadcasting against `units`)."""
    below = ops.less(totals, ops.unsqueeze(units, i64(-1)))
    count = ops.reduce_sum(ops.convert(below, element), i64(-1), False)
    last = ops.gather(ops.shape_of(totals, ov.Type.i64), i64(-1), i64(0))
    return ops.minimum(count, ops.convert(ops.subtract(last, i64(1)), element)).output(0)


def _categorical(d: Draw) -> ov.Output:
    totals = ops.cumsum(d.params[0], ops.constant(np.int64(-1)))
    return _category(totals, d.unit(), d.element)


def _multinomial(d: Draw) -> ov.Output:
    n, p = d.params
    most = ops.reduce_max(ops.reshape(n, i64(-1), False), i64(0), True)
    units = d.unit(ops.concat([d.shape, cast(most.output(0), np.int64)], 0).output(0))
    totals = ops.unsqueeze(ops.cumsum(p, ops.constant(np.int64(-1))), i64(-2))
    categories = _category(totals, units, d.element)  # batch + [max(n)]
    trials = ops.range(d.number(0.0), ops.squeeze(most, i64(0)), d.number(1.0), d.element)
    drawn = ops.less(trials, ops.unsqueeze(n, i64(-1)))
    last = ops.gather(ops.shape_of(p, ov.Type.i64), i64(-1), i64(0))
    indices = ops.range(
        d.number(0.0), ops.convert(ops.squeeze(last, i64(0)), d.element), d.number(1.0), d.element
    )
    hits = ops.logical_and(
        ops.equal(ops.unsqueeze(categories, i64(-1)), indices), ops.unsqueeze(drawn, i64(-1))
    )
    return ops.reduce_sum(ops.convert(hits, d.element), i64(-2), False).output(0)


_SAMPLERS = {
    ptr.NormalRV: lambda d: d.loc_scale(d.normal()),
    ptr.UniformRV: _uniform,
    ptr.LogNormalRV: lambda d: ops.exp(d.loc_scale(d.normal())).output(0),
    ptr.HalfNormalRV: lambda d: d.loc_scale(ops.abs(d.normal()).output(0)),
    ptr.ExponentialRV: _exponential,
    ptr.WeibullRV: _weibull,
    ptr.ParetoRV: _pareto,
    ptr.GumbelRV: _gumbel,
    ptr.LogisticRV: _logistic,
    ptr.CauchyRV: _cauchy,
    ptr.HalfCauchyRV: _halfcauchy,
    ptr.LaplaceRV: _laplace,
    ptr.IntegersRV: _integers,
    ptr.BernoulliRV: _bernoulli,
    ptr.GeometricRV: _geometric,
    ptr.BinomialRV: _binomial,
}


def _beta_binomial(d: Draw) -> ov.Output:
    n, a, b = d.params
    return _binomial(d.part(1, [n, gammas.beta(d.part(0), a, b)]))


_SAMPLERS.update(
    {
        ptr.GammaRV: gammas.gamma,
        ptr.BetaRV: gammas.beta,
        ptr.InvGammaRV: gammas.invgamma,
        ptr.GenGammaRV: gammas.gengamma,
        ptr.StudentTRV: gammas.student_t,
        ptr.NegBinomialRV: gammas.negative_binomial,
        ptr.BetaBinomialRV: _beta_binomial,
        ptr.PoissonRV: lambda d: poisson(d, d.params[0]),
        ptr.TriangularRV: _triangular,
        ptr.TruncExponentialRV: _truncexpon,
        ptr.WaldRV: _wald,
        ptr.VonMisesRV: von_mises,
        ptr.CategoricalRV: _categorical,
        ptr.DirichletRV: gammas.dirichlet,
        ptr.MvNormalRV: multivariate.multivariate_normal,
        ptr.MultinomialRV: _multinomial,
        ptr.HyperGeometricRV: hypergeometric,
    }
)
for _op, _sample in _SAMPLERS.items():
    ov_translate.register(_op)(draws(_sample))
ov_translate.register(ptr.PermutationRV)(draws(choices.permutation, exact=True))
ov_translate.register(ptr.ChoiceWithoutReplacement)(
    draws(choices.choice_without_replacement, exact=True)
)
