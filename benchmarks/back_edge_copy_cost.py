"""The cost of the back-edge copy on the bench RNN (benchmarks/rnn_loop.py): ov-loops with a copy
on every back edge (the old CopyBackEdges) vs with copies only where a back edge can alias
(the current rule), CPU f32, one thread, interleaved runs.

    python benchmarks/back_edge_copy_cost.py [--hidden 256] [--steps 1000] [--repeats 21]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import openvino as ov

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.rnn_loop import CONFIG, rnn_loop_model  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402
from ov_loops.loopir.passes.back_edges import CopyBackEdges  # noqa: E402


def copies(model: ov.Model) -> int:
    """How many back-edge copies (Maximum(v, v)) the model's Loop bodies hold."""
    count = 0
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Loop":
            for inner in op.get_function().get_ordered_ops():
                sources = [value.get_node() for value in inner.input_values()]
                count += inner.get_type_name() == "Maximum" and sources[0] == sources[1]
    return count


def converted(data: bytes, copy_every_back_edge: bool) -> ov.Model:
    if not copy_every_back_edge:
        return ov_loops.convert(data)
    always = staticmethod(lambda value, loop: True)
    with mock.patch.object(CopyBackEdges, "needs_copy", always):
        return ov_loops.convert(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()

    data = rnn_loop_model(args.hidden).SerializeToString()
    models = {"every": converted(data, True), "needed": converted(data, False)}
    core = ov.Core()
    requests = {
        name: core.compile_model(made, "CPU", CONFIG).create_infer_request()
        for name, made in models.items()
    }
    rng = np.random.default_rng(1)
    feeds = {
        "X": rng.standard_normal((args.steps, 1, args.hidden)).astype(np.float32),
        "h0": np.zeros((1, args.hidden), np.float32),
    }
    results = {name: request.infer(feeds) for name, request in requests.items()}
    difference = max(
        float(np.max(np.abs(results["every"][i] - results["needed"][i]))) for i in range(2)
    )
    latency = interleaved_seconds(requests, feeds, args.repeats)  # A B, B A, ...

    print(
        f"RNN Loop H={args.hidden} T={args.steps}; CPU, f32, 1 thread; {args.repeats} repeats; "
        f"max |every - needed| = {difference:.2e}"
    )
    for name, samples in latency.items():
        quartiles = statistics.quantiles(samples, n=4)
        print(
            f"  copies on {name:6} back edges ({copies(models[name])}): median "
            f"{statistics.median(samples) * 1e3:7.2f} ms, quartiles {quartiles[0] * 1e3:.2f}"
            f"-{quartiles[2] * 1e3:.2f} ms, min {min(samples) * 1e3:.2f} ms"
        )
    ratios = [new / old for old, new in zip(latency["every"], latency["needed"])]
    print(f"needed/every per pair: median {statistics.median(ratios):.3f},")
    quartiles = statistics.quantiles(ratios, n=4)
    print(f"  quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
