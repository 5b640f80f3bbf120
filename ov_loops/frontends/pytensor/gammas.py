"""The random variables drawn from gamma draws (rejection.py's log_standard_gamma, log G with
G ~ gamma(a, 1); each G of one draw on an independent stream of it):

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

import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.rejection import log_standard_gamma, poisson


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
    """d.shape is the batch shape (dirichlet_batch_shape or size): the draw's appends K."""
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
