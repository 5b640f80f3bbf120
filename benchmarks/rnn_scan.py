"""RNN-like ONNX Scan: ov-loops vs openvino.convert_model vs onnxruntime, interleaved in one run.

    h_t = tanh(x_t W + h_{t-1} R + b),  H = 256, T = 100 and 1000 (Scan over axis 0 of X)

OpenVINO's frontend turns the Scan into a TensorIterator, ov-loops into a Loop-5. Prints CPU
f32 single-thread latency per step of each and the ratios; target ov-loops / OpenVINO <= 1.0.

    python benchmarks/rnn_scan.py [--hidden 256] [--steps 100 1000] [--repeats 30]
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
import onnxruntime as ort
import openvino as ov
from onnx import TensorProto as T
from onnx import helper

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_cell import rnn_cell_nodes, rnn_weights  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


def rnn_scan_model(hidden: int, seed: int = 0, batch: int = 1) -> onnx.ModelProto:
    """The RNN over X [T, batch, hidden] from h0 [batch, hidden]: (h_last, hs)."""
    body = helper.make_graph(
        [
            *rnn_cell_nodes("x_t", "h_in", "h_out"),
            helper.make_node("Identity", ["h_out"], ["y_t"]),
        ],
        "rnn_cell",
        [
            helper.make_tensor_value_info("h_in", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("x_t", T.FLOAT, [batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("h_out", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("y_t", T.FLOAT, [batch, hidden]),
        ],
    )
    main = helper.make_graph(
        [helper.make_node("Scan", ["h0", "X"], ["h_last", "hs"], body=body, num_scan_inputs=1)],
        "rnn_scan",
        [
            helper.make_tensor_value_info("h0", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("X", T.FLOAT, ["T", batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("h_last", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("hs", T.FLOAT, ["T", batch, hidden]),
        ],
        rnn_weights(hidden, seed),
    )
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 16)])
    made.ir_version = 10
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    made = rnn_scan_model(args.hidden)
    data = made.SerializeToString()
    core = ov.Core()
    runners = {
        "ov-loops": core.compile_model(
            ov_loops.convert(data), "CPU", CONFIG
        ).create_infer_request(),
        "openvino": core.compile_model(
            ov.convert_model(io.BytesIO(data)), "CPU", CONFIG
        ).create_infer_request(),
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    print(
        f"RNN Scan H={args.hidden}; CPU, f32, 1 thread; medians of {args.repeats} interleaved runs"
    )
    for steps in args.steps:
        feeds = {
            "X": rng.standard_normal((steps, 1, args.hidden)).astype(np.float32),
            "h0": np.zeros((1, args.hidden), np.float32),
        }
        calls = {
            "ov-loops": lambda r=runners["ov-loops"], f=feeds: r.infer(f),
            "openvino": lambda r=runners["openvino"], f=feeds: r.infer(f),
            "onnxruntime": lambda f=feeds: session.run(None, f),
        }
        reference = session.run(None, feeds)
        for name in ("ov-loops", "openvino"):
            got = calls[name]()
            error = max(float(np.max(np.abs(got[i] - reference[i]))) for i in range(2))
            print(f"  T={steps} {name}: max |diff| vs onnxruntime {error:.1e}")
        samples = {name: [] for name in calls}
        order = list(calls)
        for repeat in range(args.repeats):  # rotate the order: none always follows another
            for name in order[repeat % len(order) :] + order[: repeat % len(order)]:
                call = calls[name]
                start = time.perf_counter()
                call()
                samples[name].append(time.perf_counter() - start)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        for name, value in medians.items():
            print(
                f"  T={steps} {name:12} {value * 1e3:8.2f} ms  {value / steps * 1e6:6.2f} us/step"
            )
        print(
            f"  T={steps} ratio ov-loops/openvino {medians['ov-loops'] / medians['openvino']:.2f} "
            f"(target <= 1.0); ov-loops/onnxruntime "
            f"{medians['ov-loops'] / medians['onnxruntime']:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
