"""What one iteration of OpenVINO's CPU Loop costs, and the RNN loops at each lowering.

Part `overhead`: Loop-5s built directly with OpenVINO's API (no ov-loops), T iterations of

    h = chain_k(h + x_t)     k operations: an elementwise chain (Multiply, Add, Tanh), an
                             exporter-like chain (Tanh, then [rows, -1] from ShapeOf and a
                             Reshape to it), or h @ W then k - 2 elementwise ones

with h [B, H] carried by a back edge that keeps its shape, x sliced along axis 0, and each
body in three shape modes: "static" (B and T static, a constant trip count), "dyn-T" (T
dynamic: trip count ShapeOf(X)[0], the body static) and "dyn-BT" (B too: the body is
dynamic); each with and without a concatenated output of h. Printed: us per iteration, the
median over interleaved rounds (the six variants of a body rotated every round), and its
spread (max - min of the rounds over the median).

Part `rnn`: the RNN Loop and Scan of benchmarks/rnn_loop.py and rnn_scan.py (H=256 B=1, T
dynamic) as OpenVINO's frontend, onnxruntime and ov-loops at "none", "default" and "max" run
them; ratios to the frontend and to onnxruntime of the per-round latencies, medians and spreads.

CPU, f32, one thread (INFERENCE_NUM_THREADS=1, NUM_STREAMS=1; onnxruntime one thread); times
are the process's CPU time (benchmarks/timing.py, clock "cpu").

    python benchmarks/iteration_cost.py [--part overhead rnn] [--steps 1000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import CONFIG, rnn_loop_model  # noqa: E402
from benchmarks.rnn_scan import rnn_scan_model  # noqa: E402
from ov_loops.conversion.driver import Converter  # noqa: E402
from ov_loops.frontends.onnx.load.load import load_model  # noqa: E402
from ov_loops.loopir.passes.pipeline import CPU, RECOGNIZE_CELLS, LoweringOptions  # noqa: E402

MODES = ("static", "dyn-T", "dyn-BT")
BODIES = (
    *(("elementwise", size) for size in (5, 20, 80)),
    *(("shape", size) for size in (5, 20, 80)),
    ("matmul", 5),
)
LEVELS = ("none", "default", "max")
WITHOUT_CELLS = CPU.replace(skips=frozenset({RECOGNIZE_CELLS.name}))


def _chain(value: ov.Output, count: int) -> ov.Output:
    """`count` elementwise operations on `value`, cycling Multiply, Add, Tanh (bounded)."""
    half, tenth = ops.constant(np.float32(0.5)), ops.constant(np.float32(0.1))
    for index in range(count):
        kind = index % 3
        if kind == 0:
            value = ops.multiply(value, half).output(0)
        elif kind == 1:
            value = ops.add(value, tenth).output(0)
        else:
            value = ops.tanh(value).output(0)
    return value


def _shape_chain(value: ov.Output, count: int) -> ov.Output:
    """About `count` operations on `value` the way exporters write them: cycles of a Tanh and
    a Reshape to [rows, -1] computed from ShapeOf (ShapeOf, Gather, Concat, Reshape)."""
    zero, rest = ops.constant(np.int64([0])), ops.constant(np.int64([-1]))
    for _ in range(max(1, count // 5)):
        rows = ops.gather(ops.shape_of(value), zero, ops.constant(np.int64(0)))
        value = ops.reshape(ops.tanh(value), ops.concat([rows, rest], 0), False).output(0)
    return value


def loop_model(kind: str, size: int, hidden: int, mode: str, stacked: bool, steps: int, batch: int):
    """The Loop-5 of the module docstring (k = `size` operations in the body)."""
    rows = -1 if mode == "dyn-BT" else batch
    length = steps if mode == "static" else -1
    x = ops.parameter([length, rows, hidden], ov.Type.f32, "X")
    h0 = ops.parameter([rows, hidden], ov.Type.f32, "h0")
    for parameter, name in ((x, "X"), (h0, "h0")):
        parameter.output(0).set_names({name})
    h_in = ops.parameter([rows, hidden], ov.Type.f32, "h_in")
    x_t = ops.parameter([1, rows, hidden], ov.Type.f32, "x_t")
    value = ops.add(h_in, ops.squeeze(x_t, ops.constant(np.int64(0)))).output(0)
    if kind == "matmul":
        weights = np.random.default_rng(0).standard_normal((hidden, hidden)) / np.sqrt(hidden)
        value = ops.matmul(value, ops.constant(weights.astype(np.float32)), False, False)
        value = _chain(value.output(0), size - 2)  # Add, MatMul, then size - 2 more
    elif kind == "shape":
        value = _shape_chain(value, size - 1)
    else:
        value = _chain(value, size - 1)
    h_out = ops.result(value)
    keep = ops.result(ops.constant(True))
    body = ov.Model([keep, h_out], [h_in, x_t], "body")
    if mode == "static":
        trip = ops.constant(np.int64(steps))
    else:
        trip = ops.gather(ops.shape_of(x), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    loop = ops.loop(trip, ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(x_t, x.output(0), 0, 1, 1, -1, 0)
    loop.set_merged_input(h_in, h0.output(0), h_out.output(0))
    outputs = [loop.get_iter_value(h_out.output(0), -1)]
    if stacked:
        outputs.append(loop.get_concatenated_slices(h_out.output(0), 0, 1, 1, -1, 0))
    return ov.Model(outputs, [x, h0], "loop")


def interleaved(calls: dict[str, Callable], rounds: int) -> dict[str, list[float]]:
    """Seconds per call, one sample per round, the order rotated every round."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    order = list(calls)
    for round_ in range(rounds):
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            start = _now()
            calls[name]()
            samples[name].append(_now() - start)
    return samples


def _now() -> float:
    """The process's CPU time: on a shared machine, time spent waiting for a core is left out
    (one inference thread, so CPU time is its run time)."""
    return time.process_time()


def spread(values: list[float]) -> float:
    """(max - min) / median."""
    return (max(values) - min(values)) / statistics.median(values)


def overhead(args) -> None:
    core = ov.Core()
    rng = np.random.default_rng(1)
    print(
        f"Loop-5 per-iteration cost, T={args.steps}, B={args.batch}; us per iteration, median "
        f"(spread) of {args.rounds} interleaved rounds"
    )
    for hidden in args.hidden:
        feeds = {
            "X": rng.standard_normal((args.steps, args.batch, hidden)).astype(np.float32),
            "h0": np.zeros((args.batch, hidden), np.float32),
        }
        for kind, size in BODIES:
            calls = {}
            for mode in MODES:
                for stacked in (False, True):
                    made = loop_model(kind, size, hidden, mode, stacked, args.steps, args.batch)
                    request = core.compile_model(made, "CPU", CONFIG).create_infer_request()
                    request.infer(feeds)
                    calls[f"{mode}{'+concat' if stacked else ''}"] = lambda r=request, f=feeds: (
                        r.infer(f)
                    )
            samples = interleaved(calls, args.rounds)
            cells = "  ".join(
                f"{name} {statistics.median(v) / args.steps * 1e6:6.2f} ({spread(v):.2f})"
                for name, v in samples.items()
            )
            print(f"  H={hidden:3} {kind:11} k={size:2}: {cells}")


def _ort_call(data: bytes, feeds: dict) -> Callable:
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return lambda: session.run(None, feeds)


def rnn_calls(data: bytes, feeds: dict, variants: dict[str, ov.Model]) -> dict[str, Callable]:
    """One call per column: ov-loops' variants, the frontend's IR, onnxruntime; each checked
    against onnxruntime once."""
    core = ov.Core()
    models = {**variants, "openvino": ov.convert_model(io.BytesIO(data))}
    calls = {}
    reference = _ort_call(data, feeds)()
    for name, made in models.items():
        request = core.compile_model(made, "CPU", CONFIG).create_infer_request()
        got = request.infer(feeds)
        error = max(float(np.max(np.abs(got[i] - reference[i]))) for i in range(2))
        if error > 1e-4:
            raise SystemExit(f"{name}: max |diff| vs onnxruntime {error:.1e}")
        calls[name] = lambda r=request: r.infer(feeds)
    calls["onnxruntime"] = _ort_call(data, feeds)
    return calls


def ratios(samples: dict[str, list[float]], base: str) -> dict[str, tuple[float, float]]:
    """Per column: the median and spread of the per-round ratios to column `base`."""
    out = {}
    for name, values in samples.items():
        each = [value / other for value, other in zip(values, samples[base])]
        out[name] = (statistics.median(each), max(each) - min(each))
    return out


# (form, hidden, batch, batch symbolic): the target rows, then a symbolic batch (the
# body has dynamic shapes: no masked unrolling, the split into two Loop-5s instead)
RNN_ROWS = (
    ("Loop", 256, 1, False),
    ("Scan", 256, 1, False),
    ("Loop", 8, 16, True),
    ("Scan", 64, 16, True),
)


def _variants(data: bytes) -> tuple[dict[str, ov.Model], dict[str, str]]:
    """ov-loops' model at each level, and at max without cells (the Loop-5 the cost model
    weighed against the *Sequence-5 op); what each did to the loop."""
    variants, applied = {}, {}
    for level in LEVELS:
        conversions = {level: ov_loops.translate(data, optimize=level)}
        if level == "max":
            options = LoweringOptions(WITHOUT_CELLS, level)
            conversions["max-loop"] = Converter(load_model(data), options).convert()
        for name, conversion in conversions.items():
            variants[name] = conversion.model
            applied[name] = "; ".join(
                loop.summary().split("; optimized: ")[-1] for loop in conversion.loops
            )
    return variants, applied


def rnn(args) -> None:
    print(
        f"RNN, T={args.steps} dynamic; {args.rounds} interleaved rounds; ratio median (spread) "
        "to the frontend | to onnxruntime; us/step"
    )
    for form, hidden, batch, symbolic in RNN_ROWS:
        build = rnn_loop_model if form == "Loop" else rnn_scan_model
        data = build(hidden, batch="B" if symbolic else batch).SerializeToString()
        rng = np.random.default_rng(1)
        feeds = {
            "X": rng.standard_normal((args.steps, batch, hidden)).astype(np.float32),
            "h0": np.zeros((batch, hidden), np.float32),
        }
        variants, applied = _variants(data)
        samples = interleaved(rnn_calls(data, feeds, variants), args.rounds)
        to_frontend, to_ort = ratios(samples, "openvino"), ratios(samples, "onnxruntime")
        row = f"{form} H={hidden} B={batch}{' (B dynamic)' if symbolic else ''}"
        for name in samples:
            step = statistics.median(samples[name]) / args.steps * 1e6
            note = f"  [{applied[name]}]" if name in applied and args.applied else ""
            print(
                f"  {row} {name:11} {to_frontend[name][0]:.2f} ({to_frontend[name][1]:.2f}) | "
                f"{to_ort[name][0]:.2f} ({to_ort[name][1]:.2f})  {step:7.2f} us/step{note}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", nargs="+", default=["overhead", "rnn"])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--hidden", type=int, nargs="+", default=[8, 256])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--applied", action="store_true", help="print what each level did")
    args = parser.parse_args()
    if "overhead" in args.part:
        overhead(args)
    if "rnn" in args.part:
        rnn(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
