"""The bundled samples are what make_samples.py builds and convert to IR matching their oracles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

import ov_loops
from ir_samples.make_samples import samples
from tests.harness import assert_matches_onnxruntime, compile_f32, run, save_and_reload

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "ir_samples"


def test_bundled_samples_are_up_to_date():
    for name, data in samples().items():
        assert (SAMPLE_DIR / name).read_bytes() == data, name


def test_rnn_loop_sample_matches_onnxruntime(tmp_path):
    model = onnx.load(str(SAMPLE_DIR / "rnn_loop.onnx"))
    rng = np.random.default_rng(3)
    runs = [
        {
            "X": rng.standard_normal((steps, 1, 16)).astype(np.float32),
            "h0": rng.standard_normal((1, 16)).astype(np.float32),
        }
        for steps in (20, 0, 7)
    ]
    assert_matches_onnxruntime(model, runs, tmp_path)


def test_rnn_scan_sample_matches_its_expected_outputs(tmp_path):
    """Expected outputs were computed in float64 numpy, not by a runtime."""
    conversion = ov_loops.translate(SAMPLE_DIR / "rnn_scan.onnx")
    assert [loop.op for loop in conversion.loops] == ["Scan"]
    compiled = compile_f32(save_and_reload(conversion.model, tmp_path)[0])
    inputs = dict(np.load(SAMPLE_DIR / "rnn_scan.inputs.npz"))
    expected = np.load(SAMPLE_DIR / "rnn_scan.expected.npz")
    h_last, hs = run(compiled, inputs)
    np.testing.assert_allclose(h_last, expected["h_last"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hs, expected["hs"], rtol=1e-5, atol=1e-5)
