"""Where the time of an H=256 recurrent loop goes on the CPU, and how fast its GEMMs can run.

    python benchmarks/rnn256.py [--part gemm step rows] [--rounds 21]

Part `gemm`: one-thread f32 GEMM throughput, Y_i = X W_i for C distinct constant W_i [K, N]
(so the weights come from L3, as a loop's do once other work ran), per (M, K, N):
OpenVINO's MatMul with constant weights (a FullyConnected: MLAS), the same followed by a Tanh
(fused into the FullyConnected, which then runs oneDNN's brgemm), the weights as a runtime
input (a oneDNN MatMul), the first from an IR saved with f16 weights (compress_to_fp16) and
read back, and onnxruntime's MatMul (MLAS). Printed: GFLOP/s of the median
time, the executor OpenVINO reports (PERF_COUNT) and the per-round ratios to onnxruntime.

Part `step`: Loop-5s built with OpenVINO's API, the RNN step h = tanh(h R + xw_t) with
xw = X W hoisted before the loop (one GEMM), H = 256, B = 1, T = 1008; a variant is a
"-"-joined list of flags: k<N> copies of the step per iteration (unrolled), d a dynamic T
(trip count from ShapeOf, X [?, 1, 256]), s the stacked output of every h (a Concat of the
copies' h in the body, a concatenated output), m each copy masked (Less and Select, as
masked unrolling emits; T is a multiple of every k, so no copy is masked off), and the forms
of R inside the step: f16 (an f16 Constant and a Convert), tb (transpose_b), inv (an
invariant input fed by a Constant), par (an invariant input fed by a model input). Printed:
us per step and the ratio to the first variant.

Part `rows`: the H=256 rows of benchmarks/loops.py --quick (RNN Loop and Scan B=1 T=1000;
LSTM Scan and GRU-lbr Loop B=16 T=100): OpenVINO's frontend, onnxruntime, ov-loops at none,
default and max, max with recognised cells kept as Loop-5s ("max-loop"), and the frontend's and
max's IRs saved with f16 weights and read back ("f16 IR", as `ovc` and `ov-loops convert`
write them by default); ratios to the frontend. Every column is checked against onnxruntime first.

CPU, INFERENCE_PRECISION_HINT=f32, one thread, one stream; onnxruntime one thread. Times are
the process's CPU time (benchmarks/timing.py, clock "cpu"); rounds interleaved, the order
shuffled every round (seeded); medians and the spread (lowest-highest) of per-round ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops  # noqa: E402
from benchmarks.loop_models import loop_feeds, loop_model  # noqa: E402
from ov_loops.lower import cell_cost  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
CORE = ov.Core()
# (M, K, N, distinct weights): the RNN step and its hoisted x W at T=1000, B=1; the LSTM and
# GRU steps at B=16 and their hoisted x W at T=100
SHAPES = (
    (1, 256, 256, 40),
    (1000, 256, 256, 2),
    (16, 256, 1024, 16),
    (16, 256, 768, 16),
    (1600, 256, 1024, 2),
)
STEP_VARIANTS = (
    "k16-d-s-m",
    "k16-d-s",
    "k16-d",
    "k16",
    "k1-d-s",
    "k8-d-s-m",
    "k48-d-s-m",
    "k16-d-s-m-f16",
    "k16-d-s-m-tb",
    "k16-d-s-m-inv",
    "k16-d-s-m-par",
)
ROWS = (("rnn", "loop", 1, 1000), ("rnn", "scan", 1, 1000))
ROWS += (("lstm", "scan", 16, 100), ("gru_lbr", "loop", 16, 100))
HIDDEN, STEPS = 256, 1008


def interleaved(calls: dict[str, Callable], rounds: int) -> dict[str, np.ndarray]:
    """CPU seconds per call, one sample per round, in an order shuffled every round."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    for turn in range(rounds):
        order = list(calls)
        random.Random(turn).shuffle(order)
        for name in order:
            start = time.process_time()
            calls[name]()
            samples[name].append(time.process_time() - start)
    return {name: np.array(values) for name, values in samples.items()}


def ratio_text(mine: np.ndarray, theirs: np.ndarray) -> str:
    """ "x0.45 (0.41-0.52)": the median and spread of per-round ratios."""
    ratios = mine / theirs
    return f"x{np.median(ratios):.2f} ({ratios.min():.2f}-{ratios.max():.2f})"


def onnxruntime_call(model: onnx.ModelProto, feeds: dict) -> Callable:
    """A call running `model` in a one-thread onnxruntime session."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options)
    return lambda: session.run(None, feeds)


def saved_f16(model: ov.Model) -> ov.Model:
    """`model` as an IR saved with f16 weights (compress_to_fp16, ovc's and ov-loops' default)
    reads back."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.xml"
        ov.save_model(model, path, compress_to_fp16=True)
        return CORE.read_model(path)


def gemm_model(m: int, k: int, n: int, weights: list[np.ndarray], form: str) -> ov.Model:
    """Y_i = X W_i as OpenVINO runs `form`: "fc", "fc+tanh", "runtime" (W_i model inputs) or
    "fc f16 IR" (saved with f16 weights, read back)."""
    if form == "fc f16 IR":
        return saved_f16(gemm_model(m, k, n, weights, "fc"))
    x = ops.parameter([m, k], ov.Type.f32, name="X")
    inputs, outputs = [x], []
    for index, w in enumerate(weights):
        if form == "runtime":
            right = ops.parameter([k, n], ov.Type.f32, name=f"W{index}")
            inputs.append(right)
        else:
            right = ops.constant(w)
        y = ops.matmul(x, right, False, False)
        outputs.append((ops.tanh(y) if form == "fc+tanh" else y).output(0))
    return ov.Model(outputs, inputs)


def gemm_onnx(m: int, k: int, weights: list[np.ndarray]) -> onnx.ModelProto:
    """The same GEMMs as an ONNX model of MatMuls with initializers."""
    n = weights[0].shape[1]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", f"W{i}"], [f"Y{i}"]) for i in range(len(weights))],
        "gemms",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [m, k])],
        [
            helper.make_tensor_value_info(f"Y{i}", TensorProto.FLOAT, [m, n])
            for i in range(len(weights))
        ],
        [numpy_helper.from_array(w, f"W{i}") for i, w in enumerate(weights)],
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 9
    return made


def executor(model: ov.Model, feeds: dict) -> str:
    """The implementation OpenVINO's CPU plugin runs the model's FullyConnected/MatMul with."""
    compiled = CORE.compile_model(model, "CPU", {**CONFIG, "PERF_COUNT": True})
    request = compiled.create_infer_request()
    request.infer(feeds)
    kinds = {"FullyConnected", "MatMul"}
    return ",".join(
        sorted({p.exec_type for p in request.get_profiling_info() if p.node_type in kinds})
    )


def gemm(rounds: int) -> None:
    """Part `gemm` (see the module)."""
    rng = np.random.default_rng(0)
    print("GEMM Y_i = X W_i, f32, one thread: GFLOP/s; ratio of times to onnxruntime")
    for m, k, n, count in SHAPES:
        weights = [(rng.standard_normal((k, n)) / 16).astype(np.float32) for _ in range(count)]
        feeds = {"X": rng.standard_normal((m, k)).astype(np.float32)}
        feeds |= {f"W{i}": w for i, w in enumerate(weights)}
        calls, kinds = {}, {}
        for form in ("fc", "fc+tanh", "runtime", "fc f16 IR"):
            made = gemm_model(m, k, n, weights, form)
            wanted = {p.get_friendly_name() for p in made.get_parameters()}
            own = {name: value for name, value in feeds.items() if name in wanted}
            kinds[form] = executor(made, own)
            request = CORE.compile_model(made, "CPU", CONFIG).create_infer_request()
            calls[form] = lambda r=request, f=own: r.infer(f)
        calls["onnxruntime"] = onnxruntime_call(gemm_onnx(m, k, weights), {"X": feeds["X"]})
        samples = interleaved(calls, rounds)
        flops = 2 * m * k * n * count
        cells = [
            f"{name} [{kinds.get(name, 'mlas')}] {flops / np.median(times) / 1e9:.0f} "
            f"{ratio_text(times, samples['onnxruntime'])}"
            for name, times in samples.items()
        ]
        print(f"  M={m} K={k} N={n} x{count}: " + "; ".join(cells), flush=True)


@dataclasses.dataclass(frozen=True)
class Step:
    """A variant of part `step`, parsed from its flags."""

    copies: int
    flags: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> Step:
        flags = frozenset(text.split("-"))
        (copies,) = [int(flag[1:]) for flag in flags if flag.startswith("k")]
        return cls(copies, flags)

    def weights(self, recurrent: np.ndarray) -> ov.Output:
        """R in the body as the variant writes it (an invariant input is added by `loop`)."""
        if "f16" in self.flags:
            return ops.convert(ops.constant(recurrent.astype(np.float16)), ov.Type.f32).output(0)
        if "tb" in self.flags:
            return ops.constant(np.ascontiguousarray(recurrent.T)).output(0)
        return ops.constant(recurrent).output(0)


def step_body(step: Step, recurrent: np.ndarray) -> tuple[ov.Model, list[ov.Output]]:
    """The body (parameters: xw chunk, h, iteration, n[, R]; results: condition, h[, hs])."""
    chunk = ops.parameter([step.copies, 1, HIDDEN], ov.Type.f32, name="xw")
    h_in = ops.parameter([1, HIDDEN], ov.Type.f32, name="h")
    iteration = ops.parameter([], ov.Type.i64, name="i")
    count = ops.parameter([], ov.Type.i64, name="n")
    parameters = [chunk, h_in, iteration, count]
    if {"inv", "par"} & step.flags:
        parameters.append(ops.parameter([HIDDEN, HIDDEN], ov.Type.f32, name="R"))
        weights = parameters[-1].output(0)
    else:
        weights = step.weights(recurrent)
    h, stacked = h_in.output(0), []
    for copy in range(step.copies):
        part = ops.squeeze(ops.slice(chunk, [copy], [copy + 1], [1], [0]), [0])
        new = ops.tanh(ops.add(ops.matmul(h, weights, False, "tb" in step.flags), part))
        if "m" in step.flags:
            index = ops.add(ops.multiply(iteration, np.int64(step.copies)), np.int64(copy))
            new = ops.select(ops.less(index, count), new, h)
        h = new.output(0)
        stacked.append(ops.unsqueeze(h, [0]).output(0))
    results = [ops.constant(True).output(0), h]
    if "s" in step.flags:
        results.append(ops.unsqueeze(ops.concat(stacked, 0), [0]).output(0))
    return ov.Model(results, parameters), results


def step_model(step: Step, projection: np.ndarray, recurrent: np.ndarray) -> ov.Model:
    """The Loop-5 of part `step` for `step`, with its hoisted x W."""
    x = ops.parameter([-1 if "d" in step.flags else STEPS, 1, HIDDEN], ov.Type.f32, name="X")
    h0 = ops.parameter([1, HIDDEN], ov.Type.f32, name="h0")
    inputs = [x, h0]
    xw = ops.matmul(x, ops.constant(projection), False, False)
    if "d" in step.flags:
        length = ops.gather(ops.shape_of(x), np.int64(0), np.int64(0))
    else:
        length = ops.constant(np.int64(STEPS))
    body, results = step_body(step, recurrent)
    loop = ops.loop(ops.divide(length, np.int64(step.copies)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([2, 0])
    parameters = body.get_parameters()
    loop.set_sliced_input(parameters[0], xw.output(0), 0, step.copies, step.copies, -1, 0)
    loop.set_merged_input(parameters[1], h0.output(0), results[1])
    loop.set_invariant_input(parameters[3], length.output(0))
    if "inv" in step.flags:
        loop.set_invariant_input(parameters[4], ops.constant(recurrent).output(0))
    if "par" in step.flags:
        inputs.append(ops.parameter([HIDDEN, HIDDEN], ov.Type.f32, name="R"))
        loop.set_invariant_input(parameters[4], inputs[-1].output(0))
    outputs = [loop.get_iter_value(results[1], -1)]
    if "s" in step.flags:
        chunks = loop.get_concatenated_slices(results[2], 0, 1, 1, -1, 0)
        outputs.append(ops.reshape(chunks, [-1, 1, HIDDEN], False).output(0))
    return ov.Model(outputs, inputs)


def steps(rounds: int, variants: list[str]) -> None:
    """Part `step` (see the module); each variant's last h checked against NumPy's."""
    rng = np.random.default_rng(0)
    projection, recurrent = (
        (rng.standard_normal((HIDDEN, HIDDEN)) / 16).astype(np.float32) for _ in "WR"
    )
    feeds = {"X": rng.standard_normal((STEPS, 1, HIDDEN)).astype(np.float32)}
    feeds |= {"h0": np.zeros((1, HIDDEN), np.float32), "R": recurrent}
    h, xw = feeds["h0"], feeds["X"] @ projection
    for t in range(STEPS):
        h = np.tanh(h @ recurrent + xw[t])
    calls = {}
    for variant in variants:
        made = step_model(Step.parse(variant), projection, recurrent)
        own = {p.get_friendly_name(): feeds[p.get_friendly_name()] for p in made.get_parameters()}
        request = CORE.compile_model(made, "CPU", CONFIG).create_infer_request()
        np.testing.assert_allclose(request.infer(own)[0], h, atol=2e-3, err_msg=variant)
        calls[variant] = lambda r=request, f=own: r.infer(f)
    samples = interleaved(calls, rounds)
    print(f"RNN step Loop-5s, H={HIDDEN} B=1 T={STEPS}, x W hoisted: us per step")
    first = samples[variants[0]]
    for name, times in samples.items():
        print(f"  {name:16} {np.median(times) / STEPS * 1e6:6.2f} us  {ratio_text(times, first)}")


def row_calls(model: onnx.ModelProto, feeds: dict) -> dict[str, Callable]:
    """A call per column of part `rows`, each checked against onnxruntime once."""
    reference = onnxruntime_call(model, feeds)
    expected = reference()
    made = {"openvino": ov.convert_model(io.BytesIO(model.SerializeToString()))}
    made |= {level: ov_loops.convert(model, optimize=level) for level in ("none", "default", "max")}
    made |= {f"{name} f16 IR": saved_f16(made[name]) for name in ("openvino", "max")}
    faster = cell_cost.sequence_is_faster  # lower/select.py imports it where it asks
    cell_cost.sequence_is_faster = lambda cell, loop: False
    try:
        made["max-loop"] = ov_loops.convert(model, optimize="max")
    finally:
        cell_cost.sequence_is_faster = faster
    calls = {}
    for name, converted in made.items():
        request = CORE.compile_model(converted, "CPU", CONFIG).create_infer_request()
        got = request.infer(feeds)
        tolerance = 3e-2 if name.endswith("f16 IR") else 1e-4  # f16 weights: ~1e-3 relative
        for index, want in enumerate(expected):
            np.testing.assert_allclose(
                got[index], want, rtol=tolerance, atol=tolerance, err_msg=name
            )
        calls[name] = lambda r=request: r.infer(feeds)
    calls["onnxruntime"] = reference
    return calls


def rows(rounds: int) -> None:
    """Part `rows` (see the module)."""
    print("H=256 rows: ratio to OpenVINO's frontend (openvino.convert_model)")
    for cell, form, batch, length in ROWS:
        model = loop_model(cell, form, HIDDEN, batch)
        samples = interleaved(row_calls(model, loop_feeds(cell, HIDDEN, batch, length)), rounds)
        baseline = samples["openvino"]
        cells = [f"openvino {np.median(baseline) * 1e3:.1f} ms"]
        cells += [
            f"{name} {ratio_text(t, baseline)}" for name, t in samples.items() if name != "openvino"
        ]
        print(f"  {cell} {form} B={batch} T={length}: " + "; ".join(cells), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", nargs="+", choices=("gemm", "step", "rows"), default=["gemm", "step", "rows"]
    )
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--variants", nargs="+", default=list(STEP_VARIANTS), help="part step")
    args = parser.parse_args()
    print(
        f"OpenVINO {ov.get_version()}, onnxruntime {ort.__version__}; "
        f"CPU time, {args.rounds} rounds"
    )
    if "gemm" in args.part:
        gemm(args.rounds)
    if "step" in args.part:
        steps(args.rounds, args.variants)
    if "rows" in args.part:
        rows(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
