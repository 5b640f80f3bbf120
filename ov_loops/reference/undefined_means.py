"""ReduceMean for the ONNX reference, where ONNX leaves a mean over zero elements undefined
(onnx/onnx#5568: "ReduceMean({}) = Undefined").

    mean(x, axes) = sum(x, axes) / count   where count = elements reduced into each value
                  = 0                       where count = 0 (no elements: OpenVINO's answer,
                                            and onnxruntime's for a full reduction)

numpy's 0/0 = NaN (with a RuntimeWarning) would make `check` call a device MISMATCH for an
answer the spec allows; the choice is stated in docs/pitfalls.md (semantics chosen)."""

from __future__ import annotations

import math

import numpy as np
from onnx.reference.ops._op import OpRunReduceNumpy


class ReduceMean(OpRunReduceNumpy):
    """Every opset's ReduceMean (axes an attribute before opset 18, an input from 18)."""

    def _run(self, data, axes=None, keepdims=1, noop_with_empty_axes=0):
        axes = self.handle_axes(axes, noop_with_empty_axes)  # () reduces nothing
        if isinstance(axes, int):
            axes = (axes,)
        keepdims = bool(keepdims)
        total = np.sum(data, axis=axes, keepdims=keepdims, dtype=data.dtype)
        reduced = range(data.ndim) if axes is None else [a % data.ndim for a in axes]
        count = math.prod(data.shape[a] for a in reduced)
        mean = np.zeros_like(total) if count == 0 else total / data.dtype.type(count)
        return (np.asarray(mean, dtype=data.dtype),)
