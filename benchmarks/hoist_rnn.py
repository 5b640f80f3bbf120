"""What hoisting sliced computation buys on the bench RNNs: ov-loops optimize="none" vs
"default" vs openvino.convert_model, CPU f32 single-thread latency, interleaved.

    h_t = tanh(x_t W + h_{t-1} R + b),  H = 256, T = 1000, batch 1 and 16

Scan slices X (x_t W hoists into one MatMul before the Loop); the Loop benchmark reads x_t by
Gather(X, i), which is no sliced input (nothing hoists there). Each round runs the three in a
rotated order; ratios are per round (A / B of the same round), reported as the median and the
25th..75th percentiles over the rounds.

    python benchmarks/hoist_rnn.py [--hidden 256] [--steps 1000] [--batch 1 16] [--rounds 25]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import rnn_loop_model  # noqa: E402
from benchmarks.rnn_scan import rnn_scan_model  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
MODELS = {"scan": rnn_scan_model, "loop": rnn_loop_model}
RATIOS = (("default", "none"), ("default", "openvino"), ("none", "openvino"))


def compiled_requests(core: ov.Core, data: bytes) -> dict[str, ov.InferRequest]:
    """An infer request per conversion of the ONNX model `data`."""
    models = {
        "none": ov_loops.convert(data, optimize="none"),
        "default": ov_loops.convert(data, optimize="default"),
        "openvino": ov.convert_model(io.BytesIO(data)),
    }
    return {
        name: core.compile_model(model, "CPU", CONFIG).create_infer_request()
        for name, model in models.items()
    }


def interleaved_seconds(requests: dict, feeds: dict, rounds: int) -> dict[str, np.ndarray]:
    """Latency samples of each request, one per round, the order rotated every round."""
    samples = {name: [] for name in requests}
    order = list(requests)
    for round_ in range(rounds):
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            start = time.perf_counter()
            requests[name].infer(feeds)
            samples[name].append(time.perf_counter() - start)
    return {name: np.array(values) for name, values in samples.items()}


def largest_difference(requests: dict, feeds: dict) -> float:
    """The largest |output - openvino's output| over the other conversions and outputs."""
    results = {name: request.infer(feeds) for name, request in requests.items()}
    expected = results.pop("openvino")
    return max(
        float(np.max(np.abs(got[index] - expected[index])))
        for got in results.values()
        for index in range(2)
    )


def report(label: str, samples: dict[str, np.ndarray], steps: int) -> None:
    for name, values in samples.items():
        low, mid, high = np.percentile(values, [25, 50, 75]) * 1e3
        print(f"  {label} {name:8} {mid:8.2f} ms [{low:.2f}..{high:.2f}]")
    for ours, theirs in RATIOS:
        low, mid, high = np.percentile(samples[ours] / samples[theirs], [25, 50, 75])
        print(f"  {label} {ours}/{theirs} {mid:.3f} [{low:.3f}..{high:.3f}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    core = ov.Core()
    print(
        f"RNN H={args.hidden} T={args.steps}; CPU, f32, 1 thread; {args.rounds} interleaved "
        "rounds; medians [25th..75th percentile]"
    )
    rng = np.random.default_rng(1)
    for model in args.models:
        for batch in args.batch:
            data = MODELS[model](args.hidden, batch=batch).SerializeToString()
            requests = compiled_requests(core, data)
            feeds = {
                "X": rng.standard_normal((args.steps, batch, args.hidden)).astype(np.float32),
                "h0": np.zeros((batch, args.hidden), np.float32),
            }
            label = f"{model} B={batch}"
            print(f"  {label} max |ov-loops - openvino| {largest_difference(requests, feeds):.1e}")
            report(label, interleaved_seconds(requests, feeds, args.rounds), args.steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
