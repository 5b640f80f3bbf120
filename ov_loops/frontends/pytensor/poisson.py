"""Poisson draws (rejection.py's loop; gammas.py's negative binomial draws one too):

poisson(lam), lam < 10: the inverse transform of one uniform u in [0, 1) per element:
    p_k = exp(k log lam - lam - log k!),  F_k = p_0 + ... + p_k:   the least k with u < F_k
    F_0 ... F_15 at once (TERMS = 16, P(poisson(10) >= 16) = 0.049), then for the elements
    beyond them:  k = 15;  while u >= F_k: k += 1, p_k = p_(k-1) lam / k, F_k = F_(k-1) + p_k
    up to k = 256 (P(poisson(10) >= 256) < 1e-250). F is summed in f32 (2e-6 off the CDF at
    most); where it stops growing (F + p == F, with u beyond it: probability below 2e-6) the
    count is k.
poisson(lam), lam >= 10: Hormann's PTRS (1993), transformed rejection with squeeze, as
    numpy draws it; its acceptance test -lam + k log lam - log k! computed as Loader's
    -stirlerr(k) - bd0(k, lam) - log(2 pi k) / 2, which f32 holds at large lam. Each try is
    accepted with probability 0.75 or more (lam = 10; 0.89 at 1e4): an element is not
    accepted after BOUND = 64 tries (then -1) with probability < 0.25**64 < 1e-38.
lam < 0 or NaN: -1, done from the start. Counts are floats here (the translation casts).
"""

from __future__ import annotations

import math

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.rejection import repeat_until, where

BOUND = 64
TERMS = 16
SMALL_BOUND = 256 - TERMS
SMALL_LAMBDA = 10.0
_SMALL, _LARGE = 103, 104  # the salts of the two loops' streams


def poisson(d: Draw, lam: ov.Output) -> ov.Output:
    """Poisson(lam) counts (as floats) of the draw's shape (the module docstring)."""
    lam = d.spread(lam)
    valid = ops.greater_equal(lam, d.number(0.0))
    small = ops.less(lam, d.number(SMALL_LAMBDA))
    by_inverse = _small(d, lam, ops.logical_not(ops.logical_and(valid, small)).output(0))
    not_large = ops.logical_not(ops.logical_and(valid, ops.logical_not(small))).output(0)
    clamped = ops.maximum(lam, d.number(SMALL_LAMBDA)).output(0)
    nothing = [d.spread(d.number(-1.0))]
    by_ptrs = repeat_until(d.part(_LARGE).stream, not_large, nothing, [clamped], _ptrs, BOUND)
    return where(valid, where(small, by_inverse, by_ptrs[0]), d.number(-1.0))


_LOG_FACTORIALS = np.array([math.lgamma(k + 1) for k in range(TERMS)])


def _small(d: Draw, lam: ov.Output, done: ov.Output) -> ov.Output:
    """The inverse transform: its first TERMS terms at once, the loop for the rest."""
    u = d.part(_SMALL).unit()
    dtype = d.element.to_dtype()
    ks = ops.constant(np.arange(TERMS, dtype=dtype))
    log_lam = ops.log(ops.maximum(lam, d.number(np.finfo(dtype).tiny)))
    log_terms = ops.subtract(
        ops.multiply(ops.unsqueeze(log_lam, i64(-1)), ks),
        ops.add(ops.unsqueeze(lam, i64(-1)), ops.constant(_LOG_FACTORIALS.astype(dtype))),
    )
    terms = ops.exp(log_terms)
    cdf = ops.cumsum(terms, ops.constant(np.int64(-1)))
    below = ops.convert(ops.less_equal(cdf, ops.unsqueeze(u, i64(-1))), d.element)
    counted = ops.reduce_sum(below, i64(-1), False).output(0)
    last = [
        ops.squeeze(ops.gather(v, i64(TERMS - 1), i64(-1)), i64(-1)).output(0) for v in (terms, cdf)
    ]
    inside = ops.less(u, last[1])
    start = [d.spread(d.number(TERMS - 1.0)), *last]
    done = ops.logical_or(done, inside).output(0)
    (tail, _, _) = repeat_until(d.stream, done, start, [u, lam], _inverse, SMALL_BOUND)
    return where(inside, counted, tail)


def _inverse(tries: Draw, state: list, params: list) -> tuple[ov.Output, list]:
    """One step of the inverse transform for every element left: (stopped, [k, p, F])."""
    (k, term, cdf), (u, lam) = state, params
    after = ops.add(k, tries.number(1.0))
    next_term = ops.multiply(term, ops.divide(lam, after))
    next_cdf = ops.add(cdf, next_term)
    stop = ops.logical_or(ops.less(u, cdf), ops.equal(next_cdf, cdf))
    moved = [where(stop, old, new) for old, new in zip(state, (after, next_term, next_cdf))]
    return stop.output(0), moved


def _ptrs(tries: Draw, state: list, params: list) -> tuple[ov.Output, list]:
    """One PTRS try of every element left: (accepted, [k where accepted])."""
    (value,), (lam,) = state, params
    n = tries.number
    b = ops.add(n(0.931), ops.multiply(n(2.53), ops.sqrt(lam)))
    a = ops.add(n(-0.059), ops.multiply(n(0.02483), b))
    inverse_alpha = ops.add(n(1.1239), ops.divide(n(1.1328), ops.subtract(b, n(3.4))))
    vr = ops.subtract(n(0.9277), ops.divide(n(3.6224), ops.subtract(b, n(2.0))))
    u = ops.subtract(tries.part(0).unit(), n(0.5))
    v = tries.part(1).unit()
    us = ops.subtract(n(0.5), ops.abs(u))
    slope = ops.add(ops.divide(ops.multiply(n(2.0), a), us), b)
    k = ops.floor(ops.add(ops.multiply(slope, u), ops.add(lam, n(0.43))))
    quick = ops.logical_and(ops.greater_equal(us, n(0.07)), ops.less_equal(v, vr))
    rejected = ops.logical_or(
        ops.logical_or(ops.less(k, n(0.0)), ops.less_equal(us, n(0.0))),
        ops.logical_and(ops.less(us, n(0.013)), ops.greater(v, us)),
    )
    hat = ops.add(ops.divide(a, ops.multiply(us, us)), b)
    log_ratio = ops.subtract(ops.log(ops.multiply(v, inverse_alpha)), ops.log(hat))
    tested = ops.logical_and(
        ops.logical_not(rejected), ops.less_equal(log_ratio, _log_poisson_pmf(tries, k, lam))
    )
    ok = ops.logical_or(quick, tested)
    return ok.output(0), [where(ok, k, value)]


# stirlerr(k) = log k! - ((k + 1/2) log k - k + log(2 pi) / 2), exactly for k < 16
_STIRLERR = np.array(
    [0.0]
    + [
        math.lgamma(k + 1) - ((k + 0.5) * math.log(k) - k + 0.5 * math.log(2 * math.pi))
        for k in range(1, 16)
    ]
)


def _log_poisson_pmf(d: Draw, k: ov.Output, lam: ov.Output) -> ov.Output:
    """log(lam^k exp(-lam) / k!) for integers k >= 0 (k < 0: any value), in Loader's form:
    -stirlerr(k) - bd0(k, lam) - log(2 pi k) / 2 (k >= 1), -lam (k = 0);
    bd0(k, lam) = k log(k / lam) + lam - k, by its series in v = (k - lam) / (k + lam) when
    |v| < 0.1: (k - lam) v + 2 k (v^3/3 + v^5/5 + v^7/7 + v^9/9)."""
    n = d.number
    k1 = ops.maximum(k, n(1.0))
    table = ops.constant(_STIRLERR.astype(d.element.to_dtype()))
    index = ops.convert(ops.minimum(k1, n(15.0)), ov.Type.i32)
    square = ops.multiply(k1, k1)
    series = ops.divide(
        ops.subtract(
            n(1.0 / 12),
            ops.divide(ops.subtract(n(1.0 / 360), ops.divide(n(1.0 / 1260), square)), square),
        ),
        k1,
    )
    stirlerr = where(ops.less(k1, n(15.5)), ops.gather(table, index, i64(0)), series)
    gap = ops.subtract(k1, lam)
    v = ops.divide(gap, ops.add(k1, lam))
    v2 = ops.multiply(v, v)
    tail = n(1.0 / 9)
    for power in (7, 5, 3):
        tail = ops.add(n(1.0 / power), ops.multiply(v2, tail))
    near = ops.add(
        ops.multiply(gap, v),
        ops.multiply(ops.multiply(n(2.0), k1), ops.multiply(ops.multiply(v, v2), tail)),
    )
    far = ops.subtract(ops.multiply(k1, ops.log(ops.divide(k1, lam))), gap)
    bd0 = where(ops.less(ops.abs(v), n(0.1)), near, far)
    half_log = ops.multiply(n(0.5), ops.log(ops.multiply(n(2 * math.pi), k1)))
    positive = ops.negative(ops.add(ops.add(stirlerr, bd0), half_log))
    return where(ops.less(k, n(0.5)), ops.negative(lam), positive)
