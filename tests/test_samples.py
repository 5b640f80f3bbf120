"""The bundled samples are what make_samples.py builds and convert to IR matching onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from ir_samples.make_samples import SAMPLES
from tests.harness import assert_matches_onnxruntime

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "ir_samples"


def test_bundled_samples_are_up_to_date():
    for name, build in SAMPLES.items():
        assert (SAMPLE_DIR / name).read_bytes() == build().SerializeToString(), name


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
