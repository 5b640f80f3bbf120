"""Inference latency of loops converted with optimize="none" vs optimize="max", side by side.

Models: the RNN Loop of rnn_loop.py (H = 64 and 256, T = 1000) and a tiny body, x = x + 1
(T = 10000 as a runtime trip count), with and without a stacked output. CPU, f32, one thread;
the two compiled models run interleaved (none max max none ...). Prints per model the medians,
the median of the per-round ratios max/none and their quartiles (the spread).

    python benchmarks/optimize_levels.py [--rounds 21] [--levels none max]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto as T
from onnx import helper

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import CONFIG, rnn_loop_model  # noqa: E402


def tiny_loop_model(stacked: bool) -> onnx.ModelProto:
    """x = x + 1 for M iterations (M a runtime input); the last x, and the stack of x."""
    outputs = [helper.make_tensor_value_info("x_out", T.FLOAT, [4])]
    if stacked:
        outputs.append(helper.make_tensor_value_info("x_part", T.FLOAT, [4]))
    body = helper.make_graph(
        [
            helper.make_node("Add", ["x_in", "one"], ["x_out"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
            *([helper.make_node("Identity", ["x_out"], ["x_part"])] if stacked else []),
        ],
        "tiny_body",
        [
            helper.make_tensor_value_info("i", T.INT64, []),
            helper.make_tensor_value_info("cond_in", T.BOOL, []),
            helper.make_tensor_value_info("x_in", T.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("keep", T.BOOL, []), *outputs],
        [helper.make_tensor("one", T.FLOAT, [], [1.0])],
    )
    results = ["x_last", "xs"] if stacked else ["x_last"]
    main = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x0"], results, body=body)],
        "tiny",
        [
            helper.make_tensor_value_info("M", T.INT64, []),
            helper.make_tensor_value_info("x0", T.FLOAT, [4]),
        ],
        [
            helper.make_tensor_value_info("x_last", T.FLOAT, [4]),
            *([helper.make_tensor_value_info("xs", T.FLOAT, ["T", 4])] if stacked else []),
        ],
    )
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


def cases() -> dict[str, tuple[onnx.ModelProto, dict]]:
    rng = np.random.default_rng(1)
    made = {}
    for hidden in (64, 256):
        feeds = {
            "X": rng.standard_normal((1000, 1, hidden)).astype(np.float32),
            "h0": np.zeros((1, hidden), np.float32),
        }
        made[f"rnn H={hidden} T=1000"] = (rnn_loop_model(hidden), feeds)
    tiny = {"M": np.array(10000, np.int64), "x0": np.zeros(4, np.float32)}
    made["x + 1, T=10000"] = (tiny_loop_model(False), tiny)
    made["x + 1 stacked, T=10000"] = (tiny_loop_model(True), tiny)
    return made


def timed(request: ov.InferRequest, feeds: dict) -> float:
    start = time.perf_counter()
    request.infer(feeds)
    return time.perf_counter() - start


def measure(made: onnx.ModelProto, feeds: dict, levels: list[str], rounds: int) -> dict:
    """Per level: its samples (seconds), and `applied` (what optimisations did)."""
    core = ov.Core()
    requests, applied, outputs = {}, {}, {}
    for level in levels:
        conversion = ov_loops.translate(made, optimize=level)
        applied[level] = [loop.optimizations for loop in conversion.loops]
        compiled = core.compile_model(conversion.model, "CPU", CONFIG)
        requests[level] = compiled.create_infer_request()
        outputs[level] = [np.array(v) for v in requests[level].infer(feeds).values()]
    for values in zip(*outputs.values()):
        for value in values[1:]:
            np.testing.assert_allclose(value, values[0], rtol=1e-5, atol=1e-5)
    samples = {level: [] for level in levels}
    for repeat in range(rounds):  # interleaved, alternating which goes first: A B B A ...
        order = levels if repeat % 2 == 0 else levels[::-1]
        for level in order:
            samples[level].append(timed(requests[level], feeds))
    return {"samples": samples, "applied": applied}


def quartiles(values: list[float]) -> tuple[float, float]:
    low, _, high = statistics.quantiles(values, n=4)
    return low, high


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--levels", nargs=2, default=["none", "max"])
    args = parser.parse_args()
    base, other = args.levels
    print(f"CPU, f32, 1 thread; {args.rounds} interleaved rounds; ratio = {other}/{base}")
    for name, (made, feeds) in cases().items():
        result = measure(made, feeds, args.levels, args.rounds)
        samples = result["samples"]
        ratios = [b / a for a, b in zip(samples[base], samples[other])]
        low, high = quartiles(ratios)
        medians = {level: statistics.median(samples[level]) * 1e3 for level in args.levels}
        print(
            f"  {name:24} {base} {medians[base]:8.2f} ms  {other} {medians[other]:8.2f} ms  "
            f"ratio {statistics.median(ratios):.3f} (quartiles {low:.3f}-{high:.3f}, "
            f"min-max {min(ratios):.3f}-{max(ratios):.3f})  {other}: {result['applied'][other]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
