"""Latency of the RNN Loop sample converted as it is (dynamic T) and with `--input X[T,1,16]`.

With the static shape the trip count `Shape(X)[0]` folds to a constant: the Loop-5 loses its
runtime trip-count guard and zero-iteration guards and its shapes are static. CPU, f32, one
thread, interleaved rounds (benchmarks/timing.py); prints medians, quartiles and the per-round
ratio static / dynamic.

    python benchmarks/static_input_shapes.py [--steps 1000] [--rounds 60]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import openvino as ov

import ov_loops
from benchmarks.timing import interleaved_seconds

SAMPLE = Path(__file__).resolve().parent.parent / "ir_samples" / "rnn_loop.onnx"
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    models = {
        "dynamic": ov_loops.translate(SAMPLE),
        "static": ov_loops.translate(SAMPLE, input=f"X[{args.steps},1,16]"),
    }
    for name, conversion in models.items():
        print(f"{name}: {conversion.loops[0].summary()}")
    core = ov.Core()
    requests = {
        name: core.compile_model(conversion.model, "CPU", CONFIG).create_infer_request()
        for name, conversion in models.items()
    }
    rng = np.random.default_rng(0)
    feeds = {
        "X": rng.standard_normal((args.steps, 1, 16)).astype(np.float32),
        "h0": np.zeros((1, 16), np.float32),
    }
    results = {name: [v.copy() for v in r.infer(feeds).values()] for name, r in requests.items()}
    for dynamic, static in zip(results["dynamic"], results["static"]):
        np.testing.assert_allclose(static, dynamic, rtol=1e-5, atol=1e-6)
    samples = interleaved_seconds(requests, feeds, args.rounds)
    for name, seconds in samples.items():
        q1, median, q3 = np.percentile(seconds * 1e3, [25, 50, 75])
        print(f"{name}: median {median:.2f} ms (quartiles {q1:.2f}-{q3:.2f})")
    q1, median, q3 = np.percentile(samples["static"] / samples["dynamic"], [25, 50, 75])
    print(f"static / dynamic per round: median {median:.2f} (quartiles {q1:.2f}-{q3:.2f})")


if __name__ == "__main__":
    main()
