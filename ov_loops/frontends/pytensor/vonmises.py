"""von Mises draws by Best and Fisher's rejection (1979), as numpy draws them, in
rejection.py's loop:

    q = sqrt(1 + 4 kappa^2);  r = 1 + q;  rho = (r - sqrt(2 r)) / (2 kappa)
    s = (1 + rho^2) / (2 rho)
    repeat: u, v uniform;  z = cos(pi u);  w = (1 + s z) / (s + z);  y = kappa (s - w)
    until y (2 - y) - v > 0 or log(y / v) + 1 - y >= 0
    draw = wrap(mu + sign(u' - 1/2) acos(w)) to [-pi, pi)        (u' a third uniform)

computed in forms f32 holds at large kappa, where s and w are within 1 / kappa of 1:
    1 - rho = (1 + 1 / (q + 2 kappa) + sqrt(2 r)) / (r + sqrt(2 r));  s - 1 = (1 - rho)^2 / (2 rho)
    1 - z = 2 sin(pi u / 2)^2;  1 - w = (s - 1)(1 - z) / (s + z);  y = kappa ((s - 1) + (1 - w))
    acos(w) = 2 asin(sqrt((1 - w) / 2))
Each try is accepted with probability 0.65 or more (the limit of large kappa): an element is
not accepted after BOUND = 64 tries (then NaN) with probability < 0.35**64 < 1e-29. kappa < 0
or NaN: NaN, done from the start; kappa < 1e-8 (numpy's threshold, 0 included): acos(w) = pi u,
uniform angles.
"""

from __future__ import annotations

import math

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.rejection import repeat_until, where

BOUND = 64
_LOOP, _SIGN = 105, 106  # the salts of the loop's stream and of the sign's uniforms


def _best_fisher(tries: Draw, state: list, params: list) -> tuple[ov.Output, list]:
    """One try of every element left: (accepted, [acos(w) where accepted])."""
    (value,), (kappa, s1) = state, params
    n = tries.number
    half_angle = ops.multiply(tries.part(0).unit(), n(math.pi / 2))
    one_minus_z = ops.multiply(n(2.0), ops.power(ops.sin(half_angle), n(2.0)))
    s_plus_z = ops.subtract(ops.add(s1, n(2.0)), one_minus_z)
    one_minus_w = ops.divide(ops.multiply(s1, one_minus_z), s_plus_z)
    y = ops.multiply(kappa, ops.add(s1, one_minus_w))
    v = tries.part(1).open_unit()
    squeeze = ops.greater(ops.multiply(y, ops.subtract(n(2.0), y)), v)
    log_test = ops.add(ops.log(ops.divide(y, v)), ops.subtract(n(1.0), y))
    uniform = ops.less(kappa, n(1e-8))
    ok = ops.logical_or(uniform, ops.logical_or(squeeze, ops.greater_equal(log_test, n(0.0))))
    angle = ops.multiply(n(2.0), ops.asin(ops.sqrt(ops.multiply(one_minus_w, n(0.5)))))
    drawn = where(uniform, ops.multiply(half_angle, n(2.0)), angle)
    return ok.output(0), [where(ok, drawn, value)]


def _s_minus_one(d: Draw, kappa: ov.Output) -> ov.Output:
    """s - 1 of the module docstring."""
    n = d.number
    q = ops.sqrt(ops.add(n(1.0), ops.multiply(n(4.0), ops.multiply(kappa, kappa))))
    r = ops.add(n(1.0), q)
    root = ops.sqrt(ops.multiply(n(2.0), r))
    r_minus = ops.add(n(1.0), ops.divide(n(1.0), ops.add(q, ops.multiply(n(2.0), kappa))))
    one_minus_rho = ops.divide(ops.add(r_minus, root), ops.add(r, root))
    rho = ops.subtract(n(1.0), one_minus_rho)
    square = ops.multiply(one_minus_rho, one_minus_rho)
    return ops.divide(square, ops.multiply(n(2.0), rho)).output(0)


def von_mises(d: Draw) -> ov.Output:
    mu, kappa = (d.spread(p) for p in d.params)
    invalid = ops.logical_not(ops.greater_equal(kappa, d.number(0.0))).output(0)
    start = [d.spread(d.number(np.nan))]
    params = [kappa, _s_minus_one(d, kappa)]
    (acos_w,) = repeat_until(d.part(_LOOP).stream, invalid, start, params, _best_fisher, BOUND)
    negative = ops.less(d.part(_SIGN).unit(), d.number(0.5))
    angle = ops.add(mu, where(negative, ops.negative(acos_w), acos_w))
    shifted = ops.floor_mod(ops.add(angle, d.number(math.pi)), d.number(2 * math.pi))
    return ops.subtract(shifted, d.number(math.pi)).output(0)
