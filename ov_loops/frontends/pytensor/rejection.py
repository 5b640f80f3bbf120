"""Random variables drawn again until accepted, the rejection loop a Loop-5:

    repeat_until(done, state, step, bound):     # done: a bool per element, state: tensors
        i = 0
        do:                                     # once at least (below)
            done, state = step(i, done, state); i += 1    # step changes only where not done
        while any(not done) and i < bound

Each iteration draws on the stream mix(stream ^ mix(i + 1)) for every element; the elements
already accepted keep their value. The bound makes the loop finite whatever the parameters;
an element still not accepted after it keeps its initial value (NaN, or -1 for counts), with
the probabilities below. The first iteration runs whatever `done` is: a Loop whose initial
condition folds to false gets wrong output shapes from OpenVINO (shared notes on Loop-5), and a
step leaves the elements done as they are.

    gamma(alpha, 1), Marsaglia and Tsang (2000), alpha' = alpha + 1 if alpha < 1 else alpha:
        d = alpha' - 1/3;  c = 1 / sqrt(9 d)
        repeat: x normal, u uniform in (0, 1], v = (1 + c x)^3
        until v > 0 and log u < x^2 / 2 + d - d v + d log v;   G' = d v
        G = G' u0^(1 / alpha) if alpha < 1 (u0 uniform in (0, 1]), else G'
    (acceptance >= 0.951 per try: not accepted after BOUND = 64 tries, probability < 0.049**64
    < 1e-83 per element). log G is what the derived draws use (log_standard_gamma).

    poisson(lam), lam < 10: Knuth's product of uniforms: the count of uniforms v_1, v_2, ...
        in (0, 1] multiplied before the product is <= exp(-lam), minus one (SMALL_BOUND = 256
        factors: P(poisson(10) >= 255) < 1e-250)
    poisson(lam), lam >= 10: Hormann's PTRS (1993), transformed rejection with squeeze, as
        numpy draws it; its acceptance test -lam + k log lam - log k! computed as Loader's
        -stirlerr(k) - bd0(k, lam) - log(2 pi k) / 2, which f32 holds at large lam (BOUND tries,
        acceptance > 0.89 per try)

Parameters out of the domain (alpha <= 0, lam < 0, NaN) are done from the start: NaN, -1.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.pytensor.draws import Draw, substream

BOUND = 64
SMALL_BOUND = 256
SMALL_LAMBDA = 10.0
_LOOP, _BOOST = 101, 102  # salts of a draw's loop streams and of gamma's boost uniforms

Step = Callable[..., tuple[ov.Output, list[ov.Output]]]


def _body_parameter(value: ov.Output) -> ov.Node:
    rank = value.get_partial_shape().rank
    shape = ov.PartialShape.dynamic(rank) if rank.is_static else ov.PartialShape.dynamic()
    return ops.parameter(shape, value.get_element_type())


def _any_left(done: ov.Output) -> ov.Output:
    left = ops.logical_not(ops.reshape(done, i64(-1), False))
    return ops.reduce_logical_or(left, i64(0), False).output(0)


def repeat_until(
    done: ov.Output, state: list[ov.Output], fixed: list[ov.Output], step: Step, bound: int
) -> list[ov.Output]:
    """The Loop-5 of the module docstring: step(i, done, state, fixed) -> (done, state), i an
    i32 scalar, `fixed` the values the body reads (invariant inputs); returns the final state."""
    iteration = ops.parameter(ov.PartialShape([]), ov.Type.i64)
    carried = [_body_parameter(value) for value in (done, *state)]
    invariant = [_body_parameter(value) for value in fixed]
    next_done, next_state = step(
        ops.convert(iteration, ov.Type.i32).output(0),
        carried[0].output(0),
        [parameter.output(0) for parameter in carried[1:]],
        [parameter.output(0) for parameter in invariant],
    )
    results = [ops.result(value) for value in (_any_left(next_done), next_done, *next_state)]
    body = ov.Model(results, [iteration, *carried, *invariant], "rejection")
    loop = ops.loop(ops.constant(np.int64(bound)).output(0), ops.constant(True).output(0))
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    for parameter, value, result in zip(carried, (done, *state), results[1:]):
        loop.set_merged_input(parameter, value, result.output(0))
    for parameter, value in zip(invariant, fixed):
        loop.set_invariant_input(parameter, value)
    return [loop.get_iter_value(result.output(0), -1) for result in results[2:]]


def _tries(stream: ov.Output, like: ov.Output, i: ov.Output) -> Draw:
    """Iteration i's draw: the stream's loop stream i, the shape of `like`."""
    shape = ops.shape_of(like, ov.Type.i64).output(0)
    return Draw(substream(stream, i), shape, like.get_element_type(), [])


def _where(condition, then, otherwise) -> ov.Output:
    return ops.select(condition, then, otherwise).output(0)


def log_standard_gamma(d: Draw, alpha: ov.Output) -> ov.Output:
    """log G, G ~ gamma(alpha, 1), of the draw's shape (the module docstring)."""
    alpha = d.spread(alpha)
    small = ops.less(alpha, d.number(1.0))
    boosted = _where(small, ops.add(alpha, d.number(1.0)), alpha)
    shift = ops.subtract(boosted, d.number(1.0 / 3.0)).output(0)
    slope = ops.divide(d.number(1.0), ops.sqrt(ops.multiply(shift, d.number(9.0)))).output(0)

    def step(i, done, state, fixed):
        stream, shift, slope = fixed
        tries = _tries(stream, shift, i)
        x, u = tries.part(0).normal(), tries.part(1).open_unit()
        t = ops.add(tries.number(1.0), ops.multiply(slope, x))
        v = ops.multiply(ops.multiply(t, t), t)
        bound = ops.add(
            ops.multiply(ops.multiply(x, x), tries.number(0.5)),
            ops.multiply(shift, ops.add(ops.subtract(tries.number(1.0), v), ops.log(v))),
        )
        ok = ops.logical_and(ops.greater(v, tries.number(0.0)), ops.less(ops.log(u), bound))
        value = _where(ops.logical_or(done, ops.logical_not(ok)), state[0], ops.multiply(shift, v))
        return ops.logical_or(done, ok).output(0), [value]

    invalid = ops.logical_not(ops.greater(alpha, d.number(0.0))).output(0)
    start = d.spread(d.number(np.nan))
    (value,) = repeat_until(invalid, [start], [d.part(_LOOP).stream, shift, slope], step, BOUND)
    boost = ops.divide(ops.log(d.part(_BOOST).open_unit()), alpha)
    return ops.add(ops.log(value), _where(small, boost, d.number(0.0))).output(0)


def poisson(d: Draw, lam: ov.Output) -> ov.Output:
    """Poisson(lam) counts (as floats) of the draw's shape (the module docstring)."""
    lam = d.spread(lam)
    valid = ops.greater_equal(lam, d.number(0.0))
    small = ops.less(lam, d.number(SMALL_LAMBDA))
    stream = d.part(_LOOP).stream
    by_product = _knuth(d, ops.logical_not(ops.logical_and(valid, small)), lam, stream)
    large = ops.logical_and(valid, ops.logical_not(small))
    clamped = ops.maximum(lam, d.number(SMALL_LAMBDA)).output(0)
    by_ptrs = _ptrs(d, ops.logical_not(large).output(0), clamped, substream(stream, -1))
    return _where(valid, _where(small, by_product, by_ptrs), d.number(-1.0))


def _knuth(d: Draw, done: ov.Output, lam: ov.Output, stream: ov.Output) -> ov.Output:
    def step(i, done, state, fixed):
        count, product = state
        stream, limit = fixed
        product = _where(done, product, ops.multiply(product, _tries(stream, limit, i).open_unit()))
        stop = ops.logical_or(done, ops.less_equal(product, limit))
        return stop.output(0), [_where(stop, count, ops.add(count, d.number(1.0))), product]

    start = [d.spread(d.number(0.0)), d.spread(d.number(1.0))]
    limit = ops.exp(ops.negative(lam)).output(0)
    return repeat_until(done.output(0), start, [stream, limit], step, SMALL_BOUND)[0]


def _ptrs(d: Draw, done: ov.Output, lam: ov.Output, stream: ov.Output) -> ov.Output:
    def step(i, done, state, fixed):
        stream, lam = fixed
        tries = _tries(stream, lam, i)
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
            ops.less(k, n(0.0)),
            ops.logical_and(ops.less(us, n(0.013)), ops.greater(v, us)),
        )
        hat = ops.add(ops.divide(a, ops.multiply(us, us)), b)
        log_ratio = ops.subtract(ops.log(ops.multiply(v, inverse_alpha)), ops.log(hat))
        tested = ops.logical_and(
            ops.logical_and(ops.logical_not(rejected), ops.greater(us, n(0.0))),
            ops.less_equal(log_ratio, _log_poisson_pmf(tries, k, lam)),
        )
        ok = ops.logical_or(quick, tested)
        value = _where(ops.logical_or(done, ops.logical_not(ok)), state[0], k)
        return ops.logical_or(done, ok).output(0), [value]

    return repeat_until(done, [d.spread(d.number(0.0))], [stream, lam], step, BOUND)[0]


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
    stirlerr = _where(ops.less(k1, n(15.5)), ops.gather(table, index, i64(0)), series)
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
    bd0 = _where(ops.less(ops.abs(v), n(0.1)), near, far)
    half_log = ops.multiply(n(0.5), ops.log(ops.multiply(n(2 * math.pi), k1)))
    positive = ops.negative(ops.add(ops.add(stirlerr, bd0), half_log))
    return _where(ops.less(k, n(0.5)), ops.negative(lam), positive)
