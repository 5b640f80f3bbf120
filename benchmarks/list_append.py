"""A torch-style list-append loop: ov-loops vs openvino.convert_model vs onnxruntime.

    out = []; h = h0
    for t in range(T): h = tanh(X[t] W + h R + b); out.append(h)
    Y = torch.stack(out)

as TorchScript exports it at opset >= 13: SequenceEmpty, a Loop carrying the sequence
(SequenceInsert at the end), ConcatFromSequence(new_axis=1) after it. Prints each runtime's CPU
f32 single-thread latency (median and spread over interleaved rounds) and the ratios to
ov-loops. Targets: ov-loops no slower than the frontend, no slower than onnxruntime.

    python benchmarks/list_append.py [--hidden 64] [--steps 200] [--rounds 15]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
from onnx import TensorProto as T
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops  # noqa: E402
from benchmarks.rnn_cell import rnn_cell_nodes, rnn_weights  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


def list_append_model(hidden: int, seed: int = 0) -> onnx.ModelProto:
    """The RNN over X [T, 1, hidden] appending each h to a list, stacked after the loop."""
    sequence = helper.make_tensor_sequence_value_info
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
            *rnn_cell_nodes("x_t", "h_in", "h_out"),
            helper.make_node("SequenceInsert", ["out_in", "h_out"], ["out_out"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", T.INT64, []),
            helper.make_tensor_value_info("cond_in", T.BOOL, []),
            helper.make_tensor_value_info("h_in", T.FLOAT, [1, hidden]),
            sequence("out_in", T.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("keep", T.BOOL, []),
            helper.make_tensor_value_info("h_out", T.FLOAT, [1, hidden]),
            sequence("out_out", T.FLOAT, None),
        ],
    )
    main = helper.make_graph(
        [
            helper.make_node("Shape", ["X"], ["shape"], start=0, end=1),
            helper.make_node("Squeeze", ["shape"], ["steps"]),
            helper.make_node("SequenceEmpty", [], ["out0"], dtype=T.FLOAT),
            helper.make_node("Loop", ["steps", "", "h0", "out0"], ["h_last", "out"], body=body),
            helper.make_node("ConcatFromSequence", ["out"], ["Y"], axis=0, new_axis=1),
        ],
        "list_append",
        [
            helper.make_tensor_value_info("X", T.FLOAT, ["T", 1, hidden]),
            helper.make_tensor_value_info("h0", T.FLOAT, [1, hidden]),
        ],
        [helper.make_tensor_value_info("Y", T.FLOAT, ["T", 1, hidden])],
        rnn_weights(hidden, seed),
    )
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


class _OnnxRuntime:
    """An onnxruntime session (one thread) with an OpenVINO-like `infer`."""

    def __init__(self, data: bytes) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    def infer(self, feeds: dict) -> list:
        return self.session.run(None, feeds)


def _requests(data: bytes) -> dict:
    """Each runtime that accepts the model: ready to infer."""
    core = ov.Core()
    requests = {"ov-loops": core.compile_model(ov_loops.convert(data), "CPU", CONFIG)}
    try:
        frontend = ov.convert_model(io.BytesIO(data))
        requests["openvino"] = core.compile_model(frontend, "CPU", CONFIG)
    except Exception as exc:  # noqa: BLE001 - any refusal is the row's result
        print(f"  openvino.convert_model refused: {str(exc).splitlines()[-1][:100]}")
    requests = {name: model.create_infer_request() for name, model in requests.items()}
    requests["onnxruntime"] = _OnnxRuntime(data)
    return requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    data = list_append_model(args.hidden).SerializeToString()
    rng = np.random.default_rng(1)
    feeds = {
        "X": rng.standard_normal((args.steps, 1, args.hidden)).astype(np.float32),
        "h0": np.zeros((1, args.hidden), np.float32),
    }
    requests = _requests(data)
    expected = requests["onnxruntime"].infer(feeds)[0]
    print(f"list append H={args.hidden} T={args.steps}; CPU, f32, 1 thread")
    for name, request in requests.items():
        got = np.asarray(list(request.infer(feeds).values())[0] if name != "onnxruntime"
                         else request.infer(feeds)[0])  # fmt: skip
        print(f"  {name:12} max |y - onnxruntime| = {float(np.max(np.abs(got - expected))):.1e}")
    samples = interleaved_seconds(requests, feeds, args.rounds)
    ours = float(np.median(samples["ov-loops"]))
    for name, values in samples.items():
        low, high = np.percentile(values, [10, 90]) * 1e3
        median = float(np.median(values))
        print(
            f"  {name:12} {median * 1e3:8.2f} ms (p10-p90 {low:.2f}-{high:.2f})  "
            f"ov-loops/{name} {ours / median:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
