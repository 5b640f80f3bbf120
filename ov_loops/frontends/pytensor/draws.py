"""What a RandomVariable's sampler reads (a Draw) and the translation that builds one.

    stream = mix(k);  next rng = mix(k ^ NEXT)            (k: the rng's i32 key)
    draw.unit()  = unit_uniforms(stream, shape) in [0, 1);  draw.open_unit() = 1 - unit in (0, 1]
    draw.part(j) = the same draw on the independent stream mix(stream ^ mix(j + 1))
    shape = size if given, else the parameters' batch shapes (without their core axes), broadcast

random.py's samplers and rejection.py's read a Draw; random.py registers them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor.type_other import NoneTypeT

from ov_loops.frontends.pytensor.dispatch import cast, element_type
from ov_loops.frontends.theano.random_streams import mix, standard_normals, unit_uniforms

NEXT = 0x2545F491


def substream(stream: ov.Output, salt: ov.Output | int) -> ov.Output:
    """An independent stream of `stream`: mix(stream ^ mix(salt + 1)) (salt an i32 value or an
    int)."""
    if isinstance(salt, int):
        salt = ops.constant(np.array(salt, np.int32)).output(0)
    salted = mix(ops.add(salt, ops.constant(np.array(1, np.int32))).output(0))
    return mix(ops.bitwise_xor(stream, salted).output(0))


class Draw:
    """What a sampler reads: the stream, the draw's shape (its batch shape: without the
    support's axes of a multivariate draw), its float type, parameters and the PyTensor node
    (whose Op's signature a multivariate sampler reads)."""

    def __init__(self, stream, shape: ov.Output, element: ov.Type, params: list, node=None):
        self.stream, self.shape, self.element, self.params = stream, shape, element, params
        self.node = node

    def number(self, value: float) -> ov.Output:
        return ops.constant(np.array(value, self.element.to_dtype())).output(0)

    def unit(self, shape: ov.Output | None = None) -> ov.Output:
        """u: uniforms on [0, 1) of the draw's shape (or `shape`)."""
        return unit_uniforms(self.stream, self.shape if shape is None else shape, self.element)

    def open_unit(self) -> ov.Output:
        """v = 1 - u: uniforms on (0, 1], whose logarithm is finite."""
        return ops.subtract(self.number(1.0), self.unit()).output(0)

    def normal(self) -> ov.Output:
        return standard_normals(self.stream, self.shape, self.element)

    def loc_scale(self, standard: ov.Output) -> ov.Output:
        loc, scale = self.params
        return ops.add(loc, ops.multiply(scale, standard)).output(0)

    def part(self, salt: int, params: list | None = None, shape: ov.Output | None = None) -> Draw:
        """The draw on an independent stream (`salt` tells the parts of one draw apart), with
        other parameters or shape if given."""
        return Draw(
            substream(self.stream, salt),
            self.shape if shape is None else shape,
            self.element,
            self.params if params is None else params,
            self.node,
        )

    def spread(self, value: ov.Output) -> ov.Output:
        """`value` broadcast to the draw's shape."""
        return ops.broadcast(value, self.shape).output(0)


def batch_shape(node, params: list[ov.Output]) -> ov.Output:
    """The shape of a draw without size: its parameters' shapes without their core axes (the
    Op's ndims_params), broadcast."""
    zero = ops.constant(np.array(0, np.int8)).output(0)
    broadcast = zero
    for param, variable, core in zip(params, node.inputs[2:], node.op.ndims_params):
        shape = ops.shape_of(param, ov.Type.i64)
        batch = ops.slice(shape, _i64(0), _i64(variable.type.ndim - core), _i64(1))
        broadcast = ops.add(broadcast, ops.broadcast(zero, batch)).output(0)
    return ops.shape_of(broadcast, ov.Type.i64).output(0)


def _i64(value: int) -> ov.Output:
    return ops.constant(np.array([value], np.int64)).output(0)


def draws(sample: Callable[[Draw], ov.Output], exact: bool = False):
    """A RandomVariable's translation: (next rng key, sample(Draw(...))), computed in the draw's
    float type (f32 for integer draws), the parameters cast to it (kept as they are if
    `exact`: a sampler that picks among their values)."""

    def translate(op, node, inputs):
        key, size, *params = inputs
        dtype = node.outputs[1].type.dtype
        computed = dtype if np.dtype(dtype).kind == "f" else "float32"
        if not exact:
            params = [cast(p, computed) for p in params]
        if isinstance(node.inputs[1].type, NoneTypeT):
            shape = batch_shape(node, params)
        else:
            shape = cast(size, np.int64)
        draw = Draw(mix(key), shape, element_type(computed), params, node)
        next_key = mix(ops.bitwise_xor(key, ops.constant(np.array(NEXT, np.int32))).output(0))
        return [next_key, cast(sample(draw), dtype)]

    return translate
