"""A torch-style list-append loop: ov-loops vs openvino.convert_model vs onnxruntime.

The model is what torch.onnx.export (TorchScript) gives for

    outs = []
    for t in range(X.shape[0]):
        h = tanh(X[t] W + h R + b)
        outs.append(h)
    torch.stack(outs)          # form "stack": [T, B, H]; form "cat": torch.cat(outs, 1), [B, T*H]

(SequenceEmpty, a Loop carrying h and the list, SequenceInsert, ConcatFromSequence). ov-loops
turns the list into a scan output
(ov_loops/frontends/onnx/rewrites/sequences/sequence_appends.py). Each row runs
ov-loops at every optimisation level, OpenVINO's own frontend and onnxruntime on CPU, f32, one
thread, interleaved (benchmarks/timing.py), every runtime reading the numpy inputs in place; it
prints the median latency, the spread (interquartile range / median) and the ratios ov-loops /
openvino and ov-loops / onnxruntime (targets: both <= 1.0).

    python benchmarks/sequence_loops.py [--hidden 64 256] [--steps 100 1000] [--batch 1 16]
                                        [--forms stack cat] [--rounds 30] [--clock wall|cpu]
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
from benchmarks.timing import CLOCKS, interleaved_seconds  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
LEVELS = ("none", "default", "max")
# "max static": at max with X's shape given (--input X[T,B,H]): the trip count becomes constant
VARIANTS = (*LEVELS, "max static")
COLUMNS = (*(f"ov-loops {variant}" for variant in VARIANTS), "openvino", "onnxruntime")
FORMS = {"stack": {"axis": 0, "new_axis": 1}, "cat": {"axis": 1, "new_axis": 0}}


def list_loop_model(hidden: int, batch: int, form: str) -> onnx.ModelProto:
    """The list-append RNN over X [T, batch, hidden] from h0: (h_last, stacked or cat list)."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "t"], ["x_t"], axis=0),
            *rnn_cell_nodes("x_t", "h_in", "h_out"),
            helper.make_node("SequenceInsert", ["outs_in", "h_out"], ["outs_out"]),
            helper.make_node("Identity", ["cond_in"], ["keep"]),
        ],
        "list_body",
        [
            helper.make_tensor_value_info("t", T.INT64, []),
            helper.make_tensor_value_info("cond_in", T.BOOL, []),
            helper.make_tensor_value_info("h_in", T.FLOAT, None),
            helper.make_tensor_sequence_value_info("outs_in", T.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("keep", T.BOOL, []),
            helper.make_tensor_value_info("h_out", T.FLOAT, None),
            helper.make_tensor_sequence_value_info("outs_out", T.FLOAT, None),
        ],
    )
    true = helper.make_tensor("true", T.BOOL, [], [True])
    main = helper.make_graph(
        [
            helper.make_node("Shape", ["X"], ["shape"]),
            helper.make_node("Gather", ["shape", "zero"], ["steps"], axis=0),
            helper.make_node("Constant", [], ["go"], value=true),
            helper.make_node("SequenceEmpty", [], ["outs0"], dtype=T.FLOAT),
            helper.make_node("Loop", ["steps", "go", "h0", "outs0"], ["h_last", "outs"], body=body),
            helper.make_node("ConcatFromSequence", ["outs"], ["hs"], **FORMS[form]),
        ],
        "list_rnn",
        [
            helper.make_tensor_value_info("X", T.FLOAT, ["T", batch, hidden]),
            helper.make_tensor_value_info("h0", T.FLOAT, [batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("h_last", T.FLOAT, [batch, hidden]),
            helper.make_tensor_value_info("hs", T.FLOAT, None),
        ],
        [*rnn_weights(hidden, seed=0), onnx.numpy_helper.from_array(np.array(0), "zero")],
    )
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 10
    return made


class OnnxRuntimeRequest:
    """onnxruntime with one thread, with an OpenVINO request's `infer(feeds)`."""

    def __init__(self, model: onnx.ModelProto) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def infer(self, feeds: dict) -> list[np.ndarray]:
        return self.session.run(None, feeds)


class OpenVinoRequest:
    """An OpenVINO request whose `infer(feeds)` reads the numpy inputs in place, as
    onnxruntime's `run` does (OpenVINO's `infer` copies them by default: for X [100, 16, 256],
    about as long as a tenth of the inference)."""

    def __init__(self, compiled: ov.CompiledModel) -> None:
        self.request = compiled.create_infer_request()

    def infer(self, feeds: dict):
        return self.request.infer(feeds, share_inputs=True)


def requests(model: onnx.ModelProto, x_shape: tuple[int, ...]) -> dict:
    """One inference request per column (`x_shape`: X's shape for the "max static" one)."""
    core = ov.Core()
    converted = {f"ov-loops {level}": ov_loops.convert(model, optimize=level) for level in LEVELS}
    static_x = "X[" + ",".join(map(str, x_shape)) + "]"
    converted["ov-loops max static"] = ov_loops.convert(model, optimize="max", input=static_x)
    converted["openvino"] = ov.convert_model(io.BytesIO(model.SerializeToString()))
    made = {
        name: OpenVinoRequest(core.compile_model(converted_model, "CPU", CONFIG))
        for name, converted_model in converted.items()
    }
    made["onnxruntime"] = OnnxRuntimeRequest(model)
    return made


def outputs_of(request, feeds: dict) -> list[np.ndarray]:
    result = request.infer(feeds)
    return list(result) if isinstance(result, list) else list(result.values())


def mismatches(calls: dict, feeds: dict) -> list[str]:
    """Columns whose outputs differ from onnxruntime's (rtol 1e-4, atol 1e-5: f32)."""
    expected = outputs_of(calls["onnxruntime"], feeds)
    wrong = []
    for name, request in calls.items():
        got = outputs_of(request, feeds)
        if any(
            want.shape != have.shape or not np.allclose(have, want, rtol=1e-4, atol=1e-5)
            for want, have in zip(expected, got)
        ):
            wrong.append(name)
    return wrong


def measure(hidden: int, steps: int, batch: int, form: str, rounds: int, clock: str) -> str:
    """One row: medians (ms), spread (IQR / median) per column, and the ratios."""
    model = list_loop_model(hidden, batch, form)
    rng = np.random.default_rng(1)
    feeds = {
        "X": rng.standard_normal((steps, batch, hidden)).astype(np.float32),
        "h0": np.zeros((batch, hidden), np.float32),
    }
    calls = requests(model, feeds["X"].shape)
    wrong = mismatches(calls, feeds)
    interleaved_seconds(calls, feeds, 2)  # warm-up
    samples = interleaved_seconds(calls, feeds, rounds, clock)
    medians = {name: float(np.median(values)) for name, values in samples.items()}
    cells = []
    for name in COLUMNS:
        low, high = np.percentile(samples[name], [25, 75])
        mark = " MISMATCH" if name in wrong else ""
        cells.append(f"{medians[name] * 1e3:9.3f} ±{(high - low) / medians[name]:4.0%}{mark}")
    ratios = [
        f"{medians[f'ov-loops {variant}'] / medians[baseline]:.2f}"
        for baseline in ("openvino", "onnxruntime")
        for variant in VARIANTS
    ]
    label = f"{form} H={hidden} T={steps} B={batch}"
    return f"{label:24} " + " ".join(cells) + "   " + " ".join(ratios)


def heading() -> str:
    columns = " ".join(f"{name:>15}" for name in COLUMNS)
    ratios = "ratios vs openvino (none default max static), vs onnxruntime (the same)"
    return f"{'row (ms, ±IQR/median)':24} {columns}   {ratios}"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--forms", nargs="+", choices=sorted(FORMS), default=["stack", "cat"])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    print(f"CPU, f32, 1 thread; interleaved rounds: {args.rounds}; {args.clock} clock")
    print(heading())
    for form in args.forms:
        for hidden in args.hidden:
            for steps in args.steps:
                for batch in args.batch:
                    row = measure(hidden, steps, batch, form, args.rounds, args.clock)
                    print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
