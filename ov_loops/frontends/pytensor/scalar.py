"""Scalar Ops (what an Elemwise applies to each element, and a Composite's nodes), translated
on whole tensors: OpenVINO's elementwise ops broadcast as numpy does, as Elemwise does.

    arithmetic (add, mul, true_div, pow, exp, tanh, ...): inputs cast to the output's dtype
    comparisons and logic: inputs cast to their common dtype, a boolean result
    switch(c, a, b): c as a boolean, a and b cast to the output's dtype
    gammaln, psi: series of f32 accuracy for x > 0 (OpenVINO has no such op)
    cast, identity: the input (the walk casts every value to its variable's dtype)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor import scalar as ps
from pytensor.scalar import math as psm

from ov_loops.frontends.pytensor.dispatch import cast, inner_ops, ov_translate, translate_graph


def _const_like(value: ov.Output, number: float) -> ov.Output:
    """`number` as a scalar Constant of `value`'s element type."""
    return ops.constant(np.array(number, value.get_element_type().to_dtype())).output(0)


def _fold(binary: Callable) -> Callable:
    """An n-ary op from a binary one (Add and Mul take any number of inputs)."""

    def apply(*values):
        result = values[0]
        for value in values[1:]:
            result = binary(result, value)
        return result

    return apply


def _log1mexp(x):
    return ops.log(ops.subtract(_const_like(x, 1.0), ops.exp(x)))


_SHIFT = 7  # the series below are accurate to f32 from 7 on


def _shifted(x, series):
    """series(x + 7) and the 7 terms x, x + 1, ..., x + 6 the recurrences subtract."""
    terms = [ops.add(x, _const_like(x, k)) if k else x for k in range(_SHIFT)]
    return series(ops.add(x, _const_like(x, _SHIFT))), terms


def _powers(y, exponents, coefficients):
    return _fold(ops.add)(
        *(
            ops.divide(_const_like(y, c), ops.power(y, _const_like(y, e)))
            for c, e in zip(coefficients, exponents)
        )
    )


def _gammaln(x):
    """log Gamma(x) for x > 0: Stirling's series at x + 7, then
    log Gamma(x) = log Gamma(x + 7) - sum(log(x + k), k < 7)."""

    def stirling(y):
        main = ops.subtract(ops.multiply(ops.subtract(y, _const_like(y, 0.5)), ops.log(y)), y)
        series = _powers(y, (1, 3, 5, 7), (1 / 12, -1 / 360, 1 / 1260, -1 / 1680))
        return ops.add(ops.add(main, _const_like(y, 0.5 * np.log(2 * np.pi))), series)

    value, terms = _shifted(x, stirling)
    return ops.subtract(value, _fold(ops.add)(*(ops.log(t) for t in terms)))


def _digamma(x):
    """psi(x) for x > 0: the asymptotic series at x + 7, then
    psi(x) = psi(x + 7) - sum(1 / (x + k), k < 7)."""

    def asymptotic(y):
        series = _powers(y, (1, 2, 4, 6, 8), (-1 / 2, -1 / 12, 1 / 120, -1 / 252, 1 / 240))
        return ops.add(ops.log(y), series)

    value, terms = _shifted(x, asymptotic)
    ones = [ops.divide(_const_like(t, 1.0), t) for t in terms]
    return ops.subtract(value, _fold(ops.add)(*ones))


def _trunc(x):
    return ops.multiply(ops.sign(x), ops.floor(ops.abs(x)))


def _int_div(a, b):
    if a.get_element_type().is_real():
        return ops.floor(ops.divide(a, b))
    return ops.divide(ops.subtract(a, ops.floor_mod(a, b)), b)  # exact: floor, not truncation


def _second(a, b):
    """fill(a, b): b broadcast to the shape of a (and of b)."""
    return ops.broadcast(b, ops.shape_of(a, ov.Type.i64), "bidirectional")


def _bitwise(logical, bitwise):
    def apply(a, b):
        return (logical if a.get_element_type() == ov.Type.boolean else bitwise)(a, b)

    return _fold(apply)


def _invert(x):
    return ops.logical_not(x) if x.get_element_type() == ov.Type.boolean else ops.bitwise_not(x)


# Ops computed in the output's dtype.
ARITHMETIC: dict[type, Callable] = {
    ps.Add: _fold(ops.add),
    ps.Mul: _fold(ops.multiply),
    ps.Sub: ops.subtract,
    ps.TrueDiv: ops.divide,
    ps.IntDiv: _int_div,
    ps.Mod: ops.floor_mod,
    ps.Pow: ops.power,
    ps.Maximum: ops.maximum,
    ps.Minimum: ops.minimum,
    ps.Neg: ops.negative,
    ps.Abs: ops.abs,
    ps.Sign: ops.sign,
    ps.Ceil: ops.ceiling,
    ps.Floor: ops.floor,
    ps.Trunc: _trunc,
    ps.RoundHalfToEven: lambda x: ops.round(x, "half_to_even"),
    ps.RoundHalfAwayFromZero: lambda x: ops.round(x, "half_away_from_zero"),
    ps.Reciprocal: lambda x: ops.divide(_const_like(x, 1.0), x),
    ps.Exp: ops.exp,
    ps.Exp2: lambda x: ops.power(_const_like(x, 2.0), x),
    ps.Expm1: lambda x: ops.subtract(ops.exp(x), _const_like(x, 1.0)),
    ps.Log: ops.log,
    ps.Log2: lambda x: ops.divide(ops.log(x), _const_like(x, np.log(2.0))),
    ps.Log10: lambda x: ops.divide(ops.log(x), _const_like(x, np.log(10.0))),
    ps.Log1p: lambda x: ops.log(ops.add(x, _const_like(x, 1.0))),
    ps.Sqr: lambda x: ops.multiply(x, x),
    ps.Sqrt: ops.sqrt,
    ps.Cos: ops.cos,
    ps.Sin: ops.sin,
    ps.Tan: ops.tan,
    ps.ArcCos: ops.acos,
    ps.ArcSin: ops.asin,
    ps.ArcTan: ops.atan,
    ps.Cosh: ops.cosh,
    ps.Sinh: ops.sinh,
    ps.Tanh: ops.tanh,
    ps.ArcCosh: ops.acosh,
    ps.ArcSinh: ops.asinh,
    ps.ArcTanh: ops.atanh,
    ps.Clip: lambda x, low, high: ops.minimum(ops.maximum(x, low), high),
    ps.Second: _second,
    ps.Identity: lambda x: x,
    ps.Cast: lambda x: x,
    psm.Erf: ops.erf,
    psm.Erfc: lambda x: ops.subtract(_const_like(x, 1.0), ops.erf(x)),
    psm.Sigmoid: ops.sigmoid,
    psm.Softplus: ops.softplus,
    psm.Log1mexp: _log1mexp,
    psm.GammaLn: _gammaln,
    psm.Psi: _digamma,
}

# Ops computed in their inputs' common dtype.
COMPARISONS: dict[type, Callable] = {
    ps.LT: ops.less,
    ps.GT: ops.greater,
    ps.LE: ops.less_equal,
    ps.GE: ops.greater_equal,
    ps.EQ: ops.equal,
    ps.NEQ: ops.not_equal,
    ps.IsNan: ops.is_nan,
    ps.IsInf: ops.is_inf,
    ps.AND: _bitwise(ops.logical_and, ops.bitwise_and),
    ps.OR: _bitwise(ops.logical_or, ops.bitwise_or),
    ps.XOR: _bitwise(ops.logical_xor, ops.bitwise_xor),
    ps.Invert: _invert,
}


def _output(value) -> ov.Output:
    """An op's Node or Output as an Output."""
    return value if isinstance(value, ov.Output) else value.output(0)


def _arithmetic(function: Callable) -> Callable:
    def translate(op, node, inputs):
        dtype = node.outputs[0].type.dtype
        return [_output(function(*(cast(value, dtype) for value in inputs)))]

    return translate


def _comparison(function: Callable) -> Callable:
    def translate(op, node, inputs):
        dtype = np.result_type(*(variable.type.dtype for variable in node.inputs))
        return [_output(function(*(cast(value, dtype) for value in inputs)))]

    return translate


for _op, _function in ARITHMETIC.items():
    ov_translate.register(_op)(_arithmetic(_function))
for _op, _function in COMPARISONS.items():
    ov_translate.register(_op)(_comparison(_function))


@ov_translate.register(ps.Switch)
def _switch(op, node, inputs):
    condition, *branches = inputs
    dtype = node.outputs[0].type.dtype
    return [ops.select(cast(condition, bool), *(cast(b, dtype) for b in branches)).output(0)]


@ov_translate.register(ps.Composite)
def _composite(op, node, inputs):
    return translate_graph(op.fgraph, inputs)


@inner_ops.register(ps.Composite)
def _composite_ops(op):
    return [inner.op for inner in op.fgraph.toposort()]
