"""ov_loops/bound_request.py: an infer request bound once to numpy buffers, run on values that
are copied into them (cast to the inputs' element types) or, from SHARED_BYTES on, shared; the
outputs are the bound buffers (or the request's own tensors when their shape is dynamic)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

from ov_loops.bound_request import SHARED_BYTES, BoundRequest
from ov_loops.ovcore import core

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": 0}


def _compiled(shape: list[int]) -> ov.CompiledModel:
    """y = 2 x and the indices of x's nonzero elements (an output of dynamic shape)."""
    x = ops.parameter(shape, ov.Type.f32, name="x")
    doubled = ops.multiply(x, ops.constant(np.float32(2.0)))
    model = ov.Model([ops.result(doubled), ops.result(ops.non_zero(x, "i64"))], [x])
    return core().compile_model(model, "CPU", CONFIG)


def test_values_are_cast_into_the_bound_buffers_which_the_next_run_rewrites():
    bound = BoundRequest(_compiled([2, 3]), [(2, 3)])
    assert bound.outputs[0] is not None and bound.outputs[1] is None  # NonZero: dynamic
    value = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    doubled, nonzero = (np.array(out) for out in bound.run([value]))
    np.testing.assert_array_equal(doubled, 2 * value)
    assert nonzero.shape == (2, 5)
    again = bound.run([np.ones((2, 3))])
    assert again[0] is bound.outputs[0]
    np.testing.assert_array_equal(bound.outputs[0], np.full((2, 3), 2.0))


def test_a_large_input_is_shared_not_copied():
    elements = SHARED_BYTES // 4
    bound = BoundRequest(_compiled([elements]), [(elements,)])
    assert bound.inputs == [None]
    for value in (np.arange(elements, dtype=np.float32), np.ones(elements)):
        np.testing.assert_array_equal(bound.run([value])[0], 2 * value)


def test_an_inference_error_is_raised():
    x = ops.parameter([-1], ov.Type.f32, name="x")
    shape = ops.parameter([2], ov.Type.i64, name="s")
    model = ov.Model([ops.result(ops.reshape(x, shape, False))], [x, shape])
    bound = BoundRequest(core().compile_model(model, "CPU", CONFIG), [(5,), (2,)])
    with pytest.raises(RuntimeError):
        bound.run([np.ones(5, np.float32), np.array([2, 3])])
