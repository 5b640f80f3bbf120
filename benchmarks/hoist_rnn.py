"""What hoisting sliced computation buys on the bench RNNs: ov-loops optimize="none" vs
"default" vs openvino.convert_model, CPU f32 single-thread latency, interleaved.

    h_t = tanh(x_t W + h_{t-1} R + b),  H = 256, T = 1000, batch 1 and 16

Scan slices X; the Loop's Gather(X, i) becomes a sliced input too. "default" hoists x_t W into
one MatMul before the Loop when x_t has at most MAX_ROWS_PER_PART rows (batch 1, not 16);
"forced" is the pass run with every batching rule counted heavy (it hoists at batch 16 too).
Each round runs the conversions in a rotated order; ratios are per round (A / B of the same
round), reported as the median and the 25th..75th percentiles over the rounds.

The model scan-elementwise (not run by default) is the Scan RNN with x_t W replaced by x_t * b,
elementwise work alone, which "default" leaves in the body and "forced" hoists.

    python benchmarks/hoist_rnn.py [--hidden 256] [--steps 1000] [--batch 1 16] [--rounds 25]
                                   [--models scan loop scan-elementwise]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import openvino as ov

import ov_loops
from ov_loops.loopir.passes import hoist_sliced

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import rnn_loop_model  # noqa: E402
from benchmarks.rnn_scan import rnn_scan_model  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


def elementwise_scan_model(hidden: int, batch: int = 1):
    """The Scan RNN with its x_t W replaced by x_t * b: h = tanh(x_t * b + h R + b)."""
    made = rnn_scan_model(hidden, batch=batch)
    (body,) = [
        attribute.g for attribute in made.graph.node[0].attribute if attribute.name == "body"
    ]
    projection = body.node[0]
    assert projection.op_type == "MatMul" and projection.input[1] == "W"
    projection.op_type, projection.input[1] = "Mul", "b"
    return made


def forced_conversion(data: bytes) -> ov.Model:
    """ov-loops' "default" conversion with every batching rule counted heavy."""
    rules = dict(hoist_sliced.RULES)
    try:
        for name, rule in rules.items():
            hoist_sliced.RULES[name] = rule.replace(heavy=lambda node: True)
        return ov_loops.convert(data, optimize="default")
    finally:
        hoist_sliced.RULES.update(rules)


CONVERSIONS = {
    "none": lambda data: ov_loops.convert(data, optimize="none"),
    "default": lambda data: ov_loops.convert(data, optimize="default"),
    "openvino": lambda data: ov.convert_model(io.BytesIO(data)),
    "forced": forced_conversion,
}


OURS_AND_THEIRS = (
    ("default", "none"),
    ("forced", "none"),
    ("default", "openvino"),
    ("none", "openvino"),
)
# model name -> (ONNX model builder, conversions run, ratios reported)
MODELS = {
    "scan": (rnn_scan_model, ("openvino", "none", "default", "forced"), OURS_AND_THEIRS),
    "loop": (rnn_loop_model, ("openvino", "none", "default", "forced"), OURS_AND_THEIRS),
    "scan-elementwise": (elementwise_scan_model, ("default", "forced"), (("forced", "default"),)),
}


def compiled_requests(core: ov.Core, data: bytes, names) -> dict[str, ov.InferRequest]:
    """An infer request per conversion (of CONVERSIONS) of the ONNX model `data`."""
    return {
        name: core.compile_model(CONVERSIONS[name](data), "CPU", CONFIG).create_infer_request()
        for name in names
    }


def largest_difference(requests: dict, feeds: dict) -> float:
    """The largest |output - the first conversion's output| over the others and the outputs."""
    results = [request.infer(feeds) for request in requests.values()]
    expected = results.pop(0)
    return max(
        float(np.max(np.abs(got[index] - expected[index]))) for got in results for index in range(2)
    )


def report(label: str, samples: dict[str, np.ndarray], ratios) -> None:
    """Each conversion's median latency and the medians of the per-round `ratios`."""
    for name, values in samples.items():
        low, mid, high = np.percentile(values, [25, 50, 75]) * 1e3
        print(f"  {label} {name:8} {mid:8.2f} ms [{low:.2f}..{high:.2f}]")
    for ours, theirs in ratios:
        low, mid, high = np.percentile(samples[ours] / samples[theirs], [25, 50, 75])
        print(f"  {label} {ours}/{theirs} {mid:.3f} [{low:.3f}..{high:.3f}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--models", nargs="+", default=["scan", "loop"], choices=list(MODELS))
    args = parser.parse_args()
    core = ov.Core()
    print(
        f"RNN H={args.hidden} T={args.steps}; CPU, f32, 1 thread; {args.rounds} interleaved "
        "rounds; medians [25th..75th percentile]"
    )
    rng = np.random.default_rng(1)
    for model in args.models:
        for batch in args.batch:
            build, names, ratios = MODELS[model]
            requests = compiled_requests(
                core, build(args.hidden, batch=batch).SerializeToString(), names
            )
            feeds = {
                "X": rng.standard_normal((args.steps, batch, args.hidden)).astype(np.float32),
                "h0": np.zeros((batch, args.hidden), np.float32),
            }
            label = f"{model} B={batch}"
            difference = largest_difference(requests, feeds)
            print(f"  {label} max |{' - '.join(names)}| {difference:.1e}")
            report(label, interleaved_seconds(requests, feeds, args.rounds), ratios)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
