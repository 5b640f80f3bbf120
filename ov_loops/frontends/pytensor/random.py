"""Random variables (PyTensor's RandomVariable: normal and uniform) on the counter-based
generator of the Theano frontend's RandomStreams (its `mix`, `unit_uniforms`, `standard_normals`).

A PyTensor random generator is an i32 key in the model (generators.py). A RandomVariable with
rng key k and parameters p draws

    stream = mix(k);  next rng = mix(k ^ NEXT)
    normal(loc, scale)  = loc + scale * standard_normals(stream, shape)
    uniform(low, high)  = low + (high - low) * unit_uniforms(stream, shape)
    shape = size if given, else the parameters' broadcast shape

so draws depend only on the key: the same rng gives the same draws (as in PyTensor, a function
without an rng update repeats its draws), and the next rng, stored by an update (a
RandomStream's default update, or a scan carrying it), gives new ones. The numbers differ from
the default mode's (numpy's), as the JAX and Numba backends' do.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor.random import basic as ptr
from pytensor.tensor.type_other import NoneTypeT

from ov_loops.frontends.pytensor.dispatch import cast, element_type, ov_translate
from ov_loops.frontends.theano.random_streams import mix, standard_normals, unit_uniforms

NEXT = 0x2545F491


def _shape(node, size: ov.Output, params: list[ov.Output]) -> ov.Output:
    """The draw's shape: `size`, or the parameters' broadcast shape when size is None."""
    if not isinstance(node.inputs[1].type, NoneTypeT):
        return cast(size, np.int64)
    broadcast = params[0]
    for param in params[1:]:
        broadcast = ops.add(broadcast, param).output(0)
    return ops.shape_of(broadcast, ov.Type.i64).output(0)


def _draws(sample):
    """A RandomVariable's translation: (next rng key, sample(stream, shape, element, params))."""

    def translate(op, node, inputs):
        key, size, *params = inputs
        draws = node.outputs[1]
        element = element_type(draws.type.dtype)
        params = [cast(p, draws.type.dtype) for p in params]
        stream = mix(key)
        value = sample(stream, _shape(node, size, params), element, params)
        next_key = mix(ops.bitwise_xor(key, ops.constant(np.array(NEXT, np.int32))).output(0))
        return [next_key, value]

    return translate


def _normal(stream, shape, element, params):
    loc, scale = params
    return ops.add(loc, ops.multiply(scale, standard_normals(stream, shape, element))).output(0)


def _uniform(stream, shape, element, params):
    low, high = params
    unit = unit_uniforms(stream, shape, element)
    return ops.add(low, ops.multiply(ops.subtract(high, low), unit)).output(0)


ov_translate.register(ptr.NormalRV)(_draws(_normal))
ov_translate.register(ptr.UniformRV)(_draws(_uniform))
