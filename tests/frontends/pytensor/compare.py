"""Run one PyTensor graph with mode="OPENVINO" and with PyTensor's default mode and compare
(f32 tolerance: the OpenVINO model computes in f32 on CPU, INFERENCE_PRECISION_HINT=f32)."""

from __future__ import annotations

import numpy as np
import pytensor

import ov_loops.pytensor  # noqa: F401  (registers the OPENVINO mode)

RTOL, ATOL = 1e-4, 1e-5


def compare(inputs, outputs, values, mode="OPENVINO", **kwargs):
    """The OPENVINO function and its outputs, asserted equal to the default mode's."""
    many = isinstance(outputs, (list, tuple))
    function = pytensor.function(inputs, outputs, mode=mode, **kwargs)
    reference = pytensor.function(inputs, outputs, **kwargs)
    got, expected = function(*values), reference(*values)
    if not many:
        got, expected = [got], [expected]
    assert len(got) == len(expected)
    for index, (value, wanted) in enumerate(zip(got, expected)):
        assert np.shape(value) == np.shape(wanted), (index, np.shape(value), np.shape(wanted))
        assert np.asarray(value).dtype == np.asarray(wanted).dtype, index
        np.testing.assert_allclose(value, wanted, rtol=RTOL, atol=ATOL, err_msg=f"output {index}")
    return function, got
