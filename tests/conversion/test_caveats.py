"""The warning for ONNX recurrent ops given `sequence_lens` when shapes are dynamic: the CPU
plugin then ignores the lengths (measured here, also through openvino.convert_model)."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
import openvino as ov
import pytest
from onnx import TensorProto, numpy_helper

import ov_loops

HIDDEN, FEATURES, BATCH, STEPS = 4, 3, 2, 5
LENGTHS = np.array([3, 5], np.int32)


def _lstm(dims: list) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal((1, 4 * HIDDEN, n)).astype(np.float32), name)
        for name, n in (("W", FEATURES), ("R", HIDDEN))
    ]
    node = h.make_node("LSTM", ["x", "W", "R", "", "lengths"], ["y", "y_h"], hidden_size=HIDDEN)
    inputs = [
        h.make_tensor_value_info("x", TensorProto.FLOAT, dims),
        h.make_tensor_value_info("lengths", TensorProto.INT32, dims[1:2]),
    ]
    outputs = [h.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("y", "y_h")]
    graph = h.make_graph([node], "lstm", inputs, outputs, weights)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)], ir_version=8)


def _state_error(model: ov.Model, source: onnx.ModelProto) -> float:
    x = np.random.default_rng(1).standard_normal((STEPS, BATCH, FEATURES)).astype(np.float32)
    feeds = {"x": x, "lengths": LENGTHS}
    session = ort.InferenceSession(source.SerializeToString())
    expected = session.run(["y_h"], feeds)[0]
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return float(np.abs(compiled(feeds)[compiled.output("y_h")] - expected).max())


@pytest.mark.parametrize("dims", [["S", "B", FEATURES], [STEPS, BATCH, FEATURES]])
def test_sequence_lengths_warned_where_the_cpu_ignores_them(dims, caplog):
    source = _lstm(dims)
    with caplog.at_level(logging.WARNING, logger="ov_loops"):
        model = ov_loops.convert(source)
    warned = [r.getMessage() for r in caplog.records if "sequence_lens" in r.getMessage()]
    wrong = _state_error(model, source) > 1e-4
    assert wrong == (dims[0] == "S")  # what the warning is about, still so on this OpenVINO
    assert len(warned) == (1 if wrong else 0)
    if warned:
        assert warned[0].startswith("main/LSTM_0: sequence_lens with dynamic shapes")
