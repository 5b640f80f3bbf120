"""Regenerate the bundled samples: python ir_samples/make_samples.py

- rnn_loop.onnx: an RNN-like ONNX Loop (H = 16), from benchmarks/rnn_loop.py.
- rnn_scan.onnx: an RNN-like ONNX Scan (H = 16), from benchmarks/rnn_scan.py, with
  rnn_scan.inputs.npz and rnn_scan.expected.npz: outputs computed in numpy, independently of any
  runtime (h_t = tanh(x_t W + h_{t-1} R + b)).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.rnn_loop import rnn_loop_model  # noqa: E402
from benchmarks.rnn_scan import rnn_scan_model  # noqa: E402

HIDDEN = 16
STEPS = 12


def rnn_scan_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2026)
    return {
        "h0": rng.standard_normal((1, HIDDEN)).astype(np.float32),
        "X": rng.standard_normal((STEPS, 1, HIDDEN)).astype(np.float32),
    }


def rnn_scan_expected(model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The RNN in float64 numpy, from the model's own weights."""
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    h = inputs["h0"].astype(np.float64)
    states = []
    for x_t in inputs["X"].astype(np.float64):
        h = np.tanh(x_t @ weights["W"] + h @ weights["R"] + weights["b"])
        states.append(h)
    return {"h_last": h.astype(np.float32), "hs": np.stack(states).astype(np.float32)}


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def samples() -> dict[str, bytes]:
    scan = rnn_scan_model(hidden=HIDDEN, seed=0)
    inputs = rnn_scan_inputs()
    return {
        "rnn_loop.onnx": rnn_loop_model(hidden=HIDDEN, seed=0).SerializeToString(),
        "rnn_scan.onnx": scan.SerializeToString(),
        "rnn_scan.inputs.npz": _npz(inputs),
        "rnn_scan.expected.npz": _npz(rnn_scan_expected(scan, inputs)),
    }


def main() -> None:
    for name, data in samples().items():
        (HERE / name).write_bytes(data)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
