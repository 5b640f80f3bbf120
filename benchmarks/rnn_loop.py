"""ov-loops vs openvino.convert_model on an RNN-like ONNX Loop, measured side by side.

    h_t = tanh(x_t W + h_{t-1} R + b),  H = 256, T = 1000 (x_t = Gather(X, iteration number))

Prints the ratios ov-loops / OpenVINO of conversion time and of CPU f32 single-thread inference
latency (medians over interleaved repeats). Targets: latency ratio <= 1.0, conversion <= 1.5.

    python benchmarks/rnn_loop.py [--hidden 256] [--steps 1000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import io
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
from benchmarks.rnn_cell import rnn_cell_nodes, rnn_weights  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


def rnn_loop_model(hidden: int, seed: int = 0, batch: int = 1) -> onnx.ModelProto:
    """The RNN over X [T, batch, hidden] from h0 [batch, hidden]: (h_last, hs)."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
            *rnn_cell_nodes("x_t", "h_in", "h_out"),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "rnn_body",
        [
            helper.make_tensor_value_info("i", T.INT64, []),
            helper.make_tensor_value_info("cond_in", T.BOOL, []),
            helper.make_tensor_value_info("h_in", T.FLOAT, [batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("keep", T.BOOL, []),
            helper.make_tensor_value_info("h_out", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("h_out", T.FLOAT, [batch, hidden]),
        ],
    )
    main = helper.make_graph(
        [
            helper.make_node("Shape", ["X"], ["shape"], start=0, end=1),
            helper.make_node("Squeeze", ["shape"], ["steps"]),
            helper.make_node("Loop", ["steps", "", "h0"], ["h_last", "hs"], body=body),
        ],
        "rnn",
        [
            helper.make_tensor_value_info("X", T.FLOAT, ["T", batch, hidden]),
            helper.make_tensor_value_info("h0", T.FLOAT, [batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("h_last", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("hs", T.FLOAT, ["T", batch, hidden]),
        ],
        rnn_weights(hidden, seed),
    )
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


def median_seconds(action, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    made = rnn_loop_model(args.hidden)
    data = made.SerializeToString()
    converters = {
        "openvino": lambda: ov.convert_model(io.BytesIO(data)),
        "ov-loops": lambda: ov_loops.convert(data),
    }
    conversion = {name: [] for name in converters}
    order = list(converters)
    for repeat in range(args.repeats):  # interleaved, alternating which goes first
        for name in order[repeat % 2 :] + order[: repeat % 2]:
            conversion[name].append(median_seconds(converters[name], 1))

    core = ov.Core()
    compiled = {
        name: core.compile_model(convert(), "CPU", CONFIG) for name, convert in converters.items()
    }
    rng = np.random.default_rng(1)
    feeds = {
        "X": rng.standard_normal((args.steps, 1, args.hidden)).astype(np.float32),
        "h0": np.zeros((1, args.hidden), np.float32),
    }
    requests = {name: model.create_infer_request() for name, model in compiled.items()}
    results = {name: request.infer(feeds) for name, request in requests.items()}
    ours, theirs = results["ov-loops"], results["openvino"]
    difference = max(float(np.max(np.abs(ours[i] - theirs[i]))) for i in range(2))

    latency = {name: [] for name in requests}
    order = list(requests)
    for repeat in range(args.repeats):  # interleaved, alternating which goes first
        for name in order[repeat % 2 :] + order[: repeat % 2]:
            latency[name].append(median_seconds(lambda r=requests[name]: r.infer(feeds), 1))

    def med(values):
        return statistics.median(values)

    print(
        f"RNN Loop H={args.hidden} T={args.steps}; CPU, f32, 1 thread; "
        f"max |ov-loops - openvino| = {difference:.2e}"
    )
    for name in converters:
        print(
            f"  {name:9} convert {med(conversion[name]) * 1e3:8.1f} ms   "
            f"infer {med(latency[name]) * 1e3:8.2f} ms "
            f"({med(latency[name]) / args.steps * 1e6:.2f} us/step)"
        )
    conversion_ratio = med(conversion["ov-loops"]) / med(conversion["openvino"])
    latency_ratio = med(latency["ov-loops"]) / med(latency["openvino"])
    print(f"conversion time ratio ov-loops/openvino: {conversion_ratio:.2f} (target <= 1.5)")
    print(f"inference latency ratio ov-loops/openvino: {latency_ratio:.2f} (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
