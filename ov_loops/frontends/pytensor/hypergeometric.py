"""The hypergeometric draw: the number of good items among nsample drawn without replacement
from an urn of ngood good and nbad bad items, drawn one at a time in a Loop-5.

    good = ngood;  total = ngood + nbad                        (per element, f32 counts)
    for j < max(nsample):                                      (rejection.while_loop)
        u = unit_uniforms(part j of the stream, shape)
        drawn = j < nsample;  is_good = drawn and u total < good
        good -= is_good;  total -= drawn
    draw = ngood - good

Each step draws a good item with probability good / total, the urn's: the distribution is
exact (counts up to 2**24), at one step per item of the largest sample (numpy's HRUA
rejection method takes fewer for large samples).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.draws import Draw
from ov_loops.frontends.pytensor.rejection import while_loop


def _step(draw: Draw):
    """The Loop's body: one item drawn from every urn with some left to draw."""

    def body(j, carried, fixed):
        good, total = carried
        stream, samples, shape = fixed
        step = Draw(stream, shape, draw.element, []).part(ops.convert(j, ov.Type.i32).output(0))
        drawn = ops.less(ops.convert(j, draw.element), samples)
        is_good = ops.logical_and(drawn, ops.less(ops.multiply(step.unit(), total), good))
        good = ops.subtract(good, ops.convert(is_good, draw.element))
        total = ops.subtract(total, ops.convert(drawn, draw.element))
        most = ops.reduce_max(ops.reshape(samples, _i64(-1), False), _i64(0), False)
        go_on = ops.less(ops.convert(ops.add(j, _scalar(1)), draw.element), most)
        return go_on.output(0), [good.output(0), total.output(0)]

    return body


def _i64(*values: int) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)


def _scalar(value: int) -> ov.Output:
    return ops.constant(np.int64(value)).output(0)


def hypergeometric(d: Draw) -> ov.Output:
    ngood, nbad, nsample = (d.spread(param) for param in d.params)
    total = ops.add(ngood, nbad).output(0)
    good, _ = while_loop([ngood, total], [d.stream, nsample, d.shape], _step(d), 2**31 - 1)
    return ops.subtract(ngood, good).output(0)
