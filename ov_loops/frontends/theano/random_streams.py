"""Theano's RandomStreams on OpenVINO: draws from a counter-based generator, so that a draw made
inside a scan's fn differs on every step and every call, and a seed reproduces them.

Semantics (Theano's scan guide, "Using shared variables - Gibbs sampling": a RandomStreams(seed)
whose draws inside fn change on every step, and whose updates make the next call continue; here
in 32-bit unsigned arithmetic, wrapping, `>>` logical)::

    def mix(h):                                        # murmur3's 32-bit finaliser, a bijection
        h ^= h >> 16; h *= 0x85EBCA6B; h ^= h >> 13; h *= 0xC2B2AE35; h ^= h >> 16
        return h

    key = mix(mix(seed) ^ (GOLDEN * (draw + 1)))       # draw: 0, 1, ... in the order of the calls
    counter = shared(0)                                # one per draw, a persistent state
    bits[e] = mix(mix(key ^ mix(counter)) + GOLDEN * e)    # e: element index, row-major
    counter += 1                                       # once per scan step, or per call outside
    uniform = low + (high - low) * (bits >> 8) / 2**24            # [low, high)
    normal = avg + std * sqrt(-2 ln(1 - u1)) cos(2 pi u2)         # Box-Muller, u1 u2 uniform
    binomial = sum(u_k < p for k < n)                             # n uniforms per element

A draw's counter is a shared variable whose default update adds 1 (an rt_info mark on its node):
a scan finds the counters of the draws its fn made in the graph fn returns and carries them
(step t reads counter0 + t) and returns its final value among its updates, which
`function(..., updates=updates)` stores, so the next call continues the sequence; made outside, it
is a default update that `function` applies once per call. `reset_state()` restarts every
counter: the draws of the first call again. OpenVINO's own RandomUniform is not used: inside a
Loop it gives different values per iteration, but the same ones on every inference call
(tests/frontends/theano/test_random_streams.py measures it).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.theano.shared_variables import fresh_name, shared, shared_variable

GOLDEN = 0x9E3779B9
_MIX = ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None))


def _i32(value: int) -> ov.Output:
    """A 32-bit unsigned constant, as the i32 with the same bits (OpenVINO's CPU wraps i32)."""
    return ops.constant(np.array(value, np.uint32).view(np.int32)).output(0)


def _shift_right(h: ov.Output, bits: int) -> ov.Output:
    """Logical right shift of i32 bits by `bits` >= 8, exactly, in fast CPU kernels: the low
    `bits` bits cleared leave at most 24 significant bits, which f32 holds exactly, and scaling
    by 2**-bits is exact too. (The CPU plugin runs BitwiseRightShift as a scalar reference
    kernel, 11 to 14 times slower; its i32 Divide computes in float and is inexact above 2**24.)"""
    top = ops.bitwise_and(h, _i32((0xFFFFFFFF << bits) & 0xFFFFFFFF))
    scaled = ops.multiply(ops.convert(top, ov.Type.f32), ops.constant(np.float32(2.0**-bits)))
    shifted = ops.convert(scaled, ov.Type.i32)  # an integer in [-2**(31-bits), 2**(31-bits))
    return ops.bitwise_and(shifted, _i32((1 << (32 - bits)) - 1)).output(0)


def mix(h: ov.Output) -> ov.Output:
    """mix(h) of the module docstring, on i32 tensors."""
    for shift, multiplier in _MIX:
        h = ops.bitwise_xor(h, _shift_right(h, shift)).output(0)
        if multiplier is not None:
            h = ops.multiply(h, _i32(multiplier)).output(0)
    return h


def _mix_numpy(h: int) -> int:
    """mix(h) in Python integers (keys are computed when the draw is built)."""
    for shift, multiplier in _MIX:
        h ^= h >> shift
        if multiplier is not None:
            h = (h * multiplier) & 0xFFFFFFFF
    return h


def _shape(size) -> ov.Output:
    """A draw's shape as an i64 vector: a tuple of ints, or a shape value (ops.shape_of(x))."""
    if isinstance(size, (ov.Output, ov.Node)):
        value = size if isinstance(size, ov.Output) else size.output(0)
        return ops.convert(value, ov.Type.i64).output(0)
    return ops.constant(np.array([int(d) for d in size], np.int64).reshape(-1)).output(0)


def _value(value, dtype: ov.Type) -> ov.Output:
    """A parameter of a distribution (a number or a value) in the draw's element type."""
    if isinstance(value, (ov.Output, ov.Node)):
        return ops.convert(value, dtype).output(0)
    return ops.constant(np.array(value, dtype.to_dtype())).output(0)


class RandomStreams:
    """Theano's RandomStreams(seed): `uniform`, `normal` and `binomial` draws of a given size,
    each with its own counter (see the module docstring), usable inside a scan's fn."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self._draws = 0

    def uniform(self, size, low=0.0, high=1.0, dtype=np.float32) -> ov.Output:
        """Uniform on [low, high); `low`/`high` numbers or values broadcast to `size`."""
        element = ov.Type(np.dtype(dtype))
        unit = self._unit(_shape(size), element)
        low_value = _value(low, element)
        span = ops.subtract(_value(high, element), low_value)
        return ops.add(low_value, ops.multiply(unit, span)).output(0)

    def normal(self, size, avg=0.0, std=1.0, dtype=np.float32) -> ov.Output:
        """Normal with mean `avg` and standard deviation `std` (Box-Muller on two uniforms)."""
        element = ov.Type(np.dtype(dtype))
        standard = standard_normals(self._stream(), _shape(size), element)
        return ops.add(_value(avg, element), ops.multiply(standard, _value(std, element))).output(0)

    def binomial(self, size, n: int = 1, p=0.5, dtype=np.int64) -> ov.Output:
        """Binomial(n, p) counts: n uniforms per element compared with `p` (a number or a value
        broadcast to `size`). dtype int64 as Theano's; OpenVINO does not upcast it in arithmetic
        with floats: pass dtype=np.float32 for that."""
        uniforms = self._unit(ops.concat([_shape([n]), _shape(size)], 0).output(0), ov.Type.f32)
        hits = ops.convert(ops.less(uniforms, _value(p, ov.Type.f32)), ov.Type.i32)
        counts = ops.reduce_sum(hits, _index(0), False)
        return ops.convert(counts, ov.Type(np.dtype(dtype))).output(0)

    def _unit(self, shape: ov.Output, element: ov.Type) -> ov.Output:
        """Uniforms on [0, 1) of `shape`, from this draw's key and a new counter."""
        return unit_uniforms(self._stream(), shape, element)

    def _stream(self) -> ov.Output:
        """A new draw's stream: mix(key ^ mix(counter)), its counter a new shared variable."""
        self._draws += 1
        key = _mix_numpy(_mix_numpy(self.seed & 0xFFFFFFFF) ^ (GOLDEN * self._draws & 0xFFFFFFFF))
        counter = shared(np.int32(0), fresh_name(f"random/{self.seed}/{self._draws}"))
        shared_variable(counter).default_increment = 1  # a scan whose fn draws carries it
        return mix(ops.bitwise_xor(_i32(key), mix(counter.output(0))).output(0))


def unit_uniforms(stream: ov.Output, shape: ov.Output, element: ov.Type) -> ov.Output:
    """Uniforms on [0, 1) of `shape` (an i64 vector) from a stream (an i32 scalar):
    bits[e] = mix(stream + GOLDEN * e), (bits >> 8) / 2**24 (the module docstring)."""
    count = ops.reduce_prod(shape, _index(0), False)
    elements = ops.range(_index(0), count, _index(1), ov.Type.i32)
    bits = mix(ops.add(stream, ops.multiply(elements, _i32(GOLDEN))).output(0))
    top = ops.convert(_shift_right(bits, 8), ov.Type.f32)  # 24 bits: exact in f32
    unit = ops.multiply(top, ops.constant(np.float32(2.0**-24)))
    return ops.convert(ops.reshape(unit, shape, False), element).output(0)


def standard_normals(stream: ov.Output, shape: ov.Output, element: ov.Type) -> ov.Output:
    """Standard normals of `shape` from a stream: Box-Muller on a pair of uniforms per element."""
    pair = unit_uniforms(stream, ops.concat([_shape([2]), shape], 0).output(0), element)
    first, second = (ops.gather(pair, _index(k), _index(0)) for k in (0, 1))
    one = _value(1.0, element)
    radius = ops.sqrt(ops.multiply(_value(-2.0, element), ops.log(ops.subtract(one, first))))
    angle = ops.multiply(second, _value(2 * np.pi, element))
    return ops.multiply(radius, ops.cos(angle)).output(0)


def _index(value: int) -> ov.Output:
    return ops.constant(np.int64(value)).output(0)
