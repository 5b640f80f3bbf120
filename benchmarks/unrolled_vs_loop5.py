"""Full unrolling vs Loop-5 on an RNN-like ONNX Loop, CPU f32, one thread, interleaved.

    h_t = tanh(x_t W + h_{t-1} R + b),  x_t = Gather(X, iteration number), X [T, 1, H]

X's length is static, so the trip count is the constant T: `convert(..., unroll=T)` makes the
loop straight-line graph, the default conversion a Loop-5. Prints, per T, each form's median
latency, the spread (p10..p90) and the ratio unrolled / Loop-5 (below 1: unrolling is faster),
and checks that both give the same outputs.

    python benchmarks/unrolled_vs_loop5.py [--hidden 64] [--steps 4 16 64] [--rounds 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
from onnx import numpy_helper

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import CONFIG, rnn_loop_model  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402


def static_rnn(hidden: int, steps: int) -> onnx.ModelProto:
    """rnn_loop_model with X of the static shape [steps, 1, hidden] and the trip count the
    constant `steps` (an initializer in place of Shape(X)[0])."""
    model = rnn_loop_model(hidden)
    for graph_input in (model.graph.input[0], model.graph.output[1]):
        dims = graph_input.type.tensor_type.shape.dim
        for dim, size in zip(dims, (steps, 1, hidden)):
            dim.Clear()
            dim.dim_value = size
    kept = [node for node in model.graph.node if node.op_type == "Loop"]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    model.graph.initializer.append(numpy_helper.from_array(np.array(steps, np.int64), "steps"))
    return model


def forms(model: onnx.ModelProto, steps: int) -> dict[str, ov.Model]:
    """The Loop-5 and the unrolled conversion of `model`."""
    unrolled = ov_loops.translate(model, unroll=steps)
    assert [loop.becomes for loop in unrolled.loops] == ["straight-line graph"], unrolled.loops
    return {"loop5": ov_loops.convert(model), "unrolled": unrolled.model}


def measure(hidden: int, steps: int, rounds: int) -> dict[str, np.ndarray]:
    """Latency samples of both forms for T = steps (outputs compared first)."""
    rng = np.random.default_rng(steps)
    feeds = {
        "X": rng.standard_normal((steps, 1, hidden)).astype(np.float32),
        "h0": rng.standard_normal((1, hidden)).astype(np.float32),
    }
    core = ov.Core()
    requests = {
        name: core.compile_model(model, "CPU", CONFIG).create_infer_request()
        for name, model in forms(static_rnn(hidden, steps), steps).items()
    }
    outputs = {name: [np.copy(v) for v in r.infer(feeds).values()] for name, r in requests.items()}
    for got, expected in zip(outputs["unrolled"], outputs["loop5"]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    for request in requests.values():  # warm-up
        request.infer(feeds)
    return interleaved_seconds(requests, feeds, rounds)


def row(steps: int, samples: dict[str, np.ndarray]) -> str:
    """One printed row: medians (us), p10..p90 spreads and the ratio of medians."""
    parts = [f"T={steps:<4}"]
    for name, values in samples.items():
        p10, median, p90 = np.percentile(values * 1e6, [10, 50, 90])
        parts.append(f"{name} {median:9.1f} us ({p10:.1f}..{p90:.1f})")
    ratio = np.median(samples["unrolled"]) / np.median(samples["loop5"])
    parts.append(f"unrolled/loop5 {ratio:.2f}")
    return "  ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--steps", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"RNN H={args.hidden}, CPU f32, 1 thread, {args.rounds} interleaved rounds")
    for steps in args.steps:
        print(row(steps, measure(args.hidden, steps, args.rounds)))


if __name__ == "__main__":
    main()
