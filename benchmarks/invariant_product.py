"""Loop-invariant code motion on an ONNX Loop that computes the same product every iteration.

    h = tanh(h @ (W1 @ W2)),  W1, W2 graph inputs (H x H),  H = 256, T = 1000

ov-loops at optimize "none" (the product in the body, T times) and "default" (the product
computed once before the Loop, HoistInvariantComputation). CPU, f32, one thread; runs
interleaved A B B A ...; prints each level's median and spread (min, quartiles, max) of the
latency and the median of the per-round ratios.

    python benchmarks/invariant_product.py [--hidden 256] [--steps 1000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import CONFIG  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

LEVELS = ("none", "default")


def invariant_product_model(hidden: int) -> onnx.ModelProto:
    """An ONNX Loop of M iterations: h = tanh(h @ (W1 @ W2)) with W1, W2 graph inputs; the
    last h."""
    f32 = TensorProto.FLOAT
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["W1", "W2"], ["P"]),
            helper.make_node("MatMul", ["h_in", "P"], ["hp"]),
            helper.make_node("Tanh", ["hp"], ["h_out"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", f32, [1, hidden]),
        ],
        [
            helper.make_tensor_value_info("keep", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", f32, [1, hidden]),
        ],
    )
    square = [hidden, hidden]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "h0"], ["h_last"], body=body)],
        "invariant_product",
        [
            helper.make_tensor_value_info("M", TensorProto.INT64, []),
            helper.make_tensor_value_info("h0", f32, [1, hidden]),
            helper.make_tensor_value_info("W1", f32, square),
            helper.make_tensor_value_info("W2", f32, square),
        ],
        [helper.make_tensor_value_info("h_last", f32, [1, hidden])],
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


def spread(samples: list[float]) -> str:
    """min / lower quartile / median / upper quartile / max, in ms."""
    low, median, high = statistics.quantiles(samples, n=4)
    values = (min(samples), low, median, high, max(samples))
    return " / ".join(f"{value * 1e3:.2f}" for value in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    made = invariant_product_model(args.hidden)
    core = ov.Core()
    requests = {}
    for level in LEVELS:
        conversion = ov_loops.translate(made, optimize=level)
        print(f"{level:8}: {conversion.loops[0].summary()}")
        compiled = core.compile_model(conversion.model, "CPU", CONFIG)
        requests[level] = compiled.create_infer_request()
    rng = np.random.default_rng(0)
    scale = 1.0 / args.hidden
    feeds = {
        "M": np.array(args.steps, np.int64),
        "h0": rng.standard_normal((1, args.hidden)).astype(np.float32),
        "W1": rng.standard_normal((args.hidden, args.hidden)).astype(np.float32) * scale**0.5,
        "W2": rng.standard_normal((args.hidden, args.hidden)).astype(np.float32) * scale**0.5,
    }
    outputs = {level: request.infer(feeds)[0].copy() for level, request in requests.items()}
    difference = float(np.max(np.abs(outputs["none"] - outputs["default"])))

    latency = interleaved_seconds(requests, feeds, args.rounds)  # A B, then B A

    print(
        f"h = tanh(h @ (W1 @ W2)), H={args.hidden}, T={args.steps}; CPU, f32, 1 thread; "
        f"{args.rounds} interleaved rounds; max |none - default| = {difference:.2e}"
    )
    print("latency ms: min / q1 / median / q3 / max")
    for level in LEVELS:
        print(f"  {level:8} {spread(latency[level])}")
    ratios = [slow / fast for slow, fast in zip(latency["none"], latency["default"])]
    low, median, high = statistics.quantiles(ratios, n=4)
    print(f"speedup none/default per round: median {median:.1f}x (quartiles {low:.1f}-{high:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
