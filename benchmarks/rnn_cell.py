"""The RNN cell both RNN benchmarks (and the bundled samples) use: h = tanh(x W + h R + b)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def rnn_weights(hidden: int, seed: int) -> list[onnx.TensorProto]:
    """Initializers W, R ([hidden, hidden]) and b ([1, hidden])."""
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(hidden)
    weights = [
        numpy_helper.from_array(
            (rng.standard_normal((hidden, hidden)) * scale).astype(np.float32), name
        )
        for name in ("W", "R")
    ]
    bias = rng.standard_normal((1, hidden)).astype(np.float32) * 0.1
    return [*weights, numpy_helper.from_array(bias, "b")]


def rnn_cell_nodes(x_t: str, h_in: str, h_out: str) -> list[onnx.NodeProto]:
    """h_out = tanh(x_t W + h_in R + b)."""
    return [
        helper.make_node("MatMul", [x_t, "W"], ["xw"]),
        helper.make_node("MatMul", [h_in, "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["pre"]),
        helper.make_node("Tanh", ["pre"], [h_out]),
    ]
