"""An ONNX LSTM/GRU/RNN op run over no time step gives its initial states (ov-loops' choice, as a
Loop's carried values; onnxruntime gives zeros): OpenVINO's CPU plugin left them unwritten, so
the final states were garbage or the previous run's (loopir/passes/empty_sequences.py)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import ov_loops
from tests.harness import compile_f32, run

B, H, F = 2, 4, 3  # batch, hidden, input features


def _recurrent(op: str):
    """Y, Y_h (and Y_c) of one `op` over X [T, B, F] from the states given as inputs."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    rng = np.random.default_rng(0)
    weights = [
        helper.make_tensor("W", T.FLOAT, [1, gates * H, F], rng.random(gates * H * F)),
        helper.make_tensor("R", T.FLOAT, [1, gates * H, H], rng.random(gates * H * H)),
    ]
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    finals = ["y_h", "y_c"] if op == "LSTM" else ["y_h"]
    node = helper.make_node(op, ["X", "W", "R", "", "", *states], ["y", *finals], hidden_size=H)
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node],
        op,
        [value("X", T.FLOAT, ["T", B, F])] + [value(s, T.FLOAT, [1, B, H]) for s in states],
        [value("y", T.FLOAT, None)] + [value(f, T.FLOAT, None) for f in finals],
        weights,
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    made.ir_version = 10
    return made, len(states)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("optimize", ["none", "max"])
def test_no_time_step_gives_the_initial_states(op, optimize):
    made, count = _recurrent(op)
    compiled = compile_f32(ov_loops.convert(made, optimize=optimize))
    rng = np.random.default_rng(1)
    for steps in (3, 0, 0):
        states = [rng.standard_normal((1, B, H)).astype(np.float32) for _ in range(count)]
        feeds = {"X": rng.standard_normal((steps, B, F)).astype(np.float32)}
        feeds.update(zip(["h0", "c0"], states))
        got = run(compiled, feeds)
        if steps == 0:
            for have, want in zip(got[1:], states):
                np.testing.assert_array_equal(have, want, err_msg=f"{op} T=0")
