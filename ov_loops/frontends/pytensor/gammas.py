"""Gamma draws by rejection (rejection.py's loop) and the random variables drawn from them.

    log_standard_gamma(alpha) = log G, G ~ gamma(alpha, 1): Marsaglia and Tsang (2000), with
    alpha' = alpha + 1 if alpha < 1 else alpha:
        d = alpha' - 1/3;  c = 1 / sqrt(9 d)
        repeat: x normal, u uniform in (0, 1], v = (1 + c x)^3
        until v > 0 and log u < x^2 / 2 + d - d v + d log v;   G' = d v
        G = G' u0^(1 / alpha) if alpha < 1 (u0 uniform in (0, 1]), else G'
    Each try is accepted with probability 0.951 or more (alpha' = 1; 0.989 at 3): an element
    is not accepted after BOUND = 64 tries (then NaN) with probability < 0.049**64 < 1e-83.
    alpha <= 0 or NaN: NaN, done from the start.

The draws from gammas (each G of one draw on an independent stream of it):

    gamma(a, scale)         = scale exp(log G(a))
    beta(a, b)              = sigmoid(log G(a) - log G(b))              (= Ga / (Ga + Gb))
    invgamma(a, scale)      = scale exp(-log G(a))                      (= scale / G)
    gengamma(alpha, p, l)   = l exp(log G(alpha / p) / p)
    t(df, loc, scale)       = loc + scale z exp((log df - log 2 - log G(df / 2)) / 2)
                                                   (= z / sqrt(chi2(df) / df), chi2 = 2 G(df / 2))
    dirichlet(a)            = softmax(log G(a), last axis)              (= G / sum(G))
    negative_binomial(n, p) = poisson(G(n) (1 - p) / p)
    (chisquare(df) is PyTensor's gamma(df / 2, 2): no Op of its own)

Working in log G keeps the draws of small shape parameters exact where G itself underflows.
Out of the domain (log G NaN) the draws are NaN: `_exp` keeps a NaN, as the CPU plugin's Exp
does not (it gives +inf for NaN).
"""

from __future__ import annotations

import math

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.poisson import poisson
from ov_loops.frontends.pytensor.rejection import repeat_until, where

BOUND = 64
_LOOP, _BOOST = 101, 102  # the salts of a gamma draw's loop stream and of its boost uniforms


def _marsaglia_tsang(tries: Draw, state: list, params: list) -> tuple[ov.Output, list]:
    """One try of every element left: (accepted, G' where accepted)."""
    (value,), (shift, slope) = state, params
    x, u = tries.part(0).normal(), tries.part(1).open_unit()
    t = ops.add(tries.number(1.0), ops.multiply(slope, x))
    v = ops.multiply(ops.multiply(t, t), t)
    log_v = ops.log(v)
    bound = ops.add(
        ops.multiply(ops.multiply(x, x), tries.number(0.5)),
        ops.multiply(shift, ops.add(ops.subtract(tries.number(1.0), v), log_v)),
    )
    ok = ops.logical_and(ops.greater(v, tries.number(0.0)), ops.less(ops.log(u), bound))
    return ok.output(0), [where(ok, ops.multiply(shift, v), value)]


def log_standard_gamma(d: Draw, alpha: ov.Output) -> ov.Output:
    """log G, G ~ gamma(alpha, 1), of the draw's shape (the module docstring)."""
    alpha = d.spread(alpha)
    small = ops.less(alpha, d.number(1.0))
    boosted = where(small, ops.add(alpha, d.number(1.0)), alpha)
    shift = ops.subtract(boosted, d.number(1.0 / 3.0)).output(0)
    slope = ops.divide(d.number(1.0), ops.sqrt(ops.multiply(shift, d.number(9.0)))).output(0)
    invalid = ops.logical_not(ops.greater(alpha, d.number(0.0))).output(0)
    start = d.spread(d.number(np.nan))
    stream = d.part(_LOOP).stream
    (value,) = repeat_until(stream, invalid, [start], [shift, slope], _marsaglia_tsang, BOUND)
    boost = ops.divide(ops.log(d.part(_BOOST).open_unit()), alpha)
    return ops.add(ops.log(value), where(small, boost, d.number(0.0))).output(0)


def _exp(value: ov.Output) -> ov.Output:
    """exp(value), NaN where value is NaN."""
    return ops.select(ops.is_nan(value), value, ops.exp(value)).output(0)


def gamma(d: Draw) -> ov.Output:
    alpha, scale = d.params
    return ops.multiply(scale, _exp(log_standard_gamma(d, alpha))).output(0)


def beta(d: Draw, a: ov.Output | None = None, b: ov.Output | None = None) -> ov.Output:
    """beta(a, b) of the draw's parameters (or of `a`, `b`)."""
    a, b = d.params[-2:] if a is None else (a, b)
    gap = ops.subtract(log_standard_gamma(d.part(0), a), log_standard_gamma(d.part(1), b))
    return ops.sigmoid(gap).output(0)


def invgamma(d: Draw) -> ov.Output:
    alpha, scale = d.params
    return ops.multiply(scale, _exp(ops.negative(log_standard_gamma(d, alpha)).output(0))).output(0)


def gengamma(d: Draw) -> ov.Output:
    alpha, power, scale = d.params
    log_g = log_standard_gamma(d, ops.divide(alpha, power).output(0))
    return ops.multiply(scale, _exp(ops.divide(log_g, power).output(0))).output(0)


def student_t(d: Draw) -> ov.Output:
    df, loc, scale = d.params
    log_g = log_standard_gamma(d.part(1), ops.multiply(df, d.number(0.5)).output(0))
    log_ratio = ops.subtract(ops.log(df), ops.add(log_g, d.number(math.log(2.0))))
    standard = ops.multiply(
        d.part(0).normal(), _exp(ops.multiply(log_ratio, d.number(0.5)).output(0))
    )
    return ops.add(loc, ops.multiply(scale, standard)).output(0)


def dirichlet(d: Draw) -> ov.Output:
    """d.shape is the batch shape (alpha's without its last axis, or size): the draw's appends K."""
    (alpha,) = d.params
    categories = ops.gather(ops.shape_of(alpha, ov.Type.i64), i64(-1), i64(0))
    shape = ops.concat([d.shape, categories], 0).output(0)
    log_g = log_standard_gamma(d.part(0, shape=shape), alpha)
    return ops.softmax(log_g, -1).output(0)


def negative_binomial(d: Draw) -> ov.Output:
    n, p = d.params
    odds = ops.divide(ops.subtract(d.number(1.0), p), p)
    lam = ops.multiply(_exp(log_standard_gamma(d.part(0), n)), odds).output(0)
    return poisson(d.part(1), lam)
