"""Where the static-shape speed of the flax RNN exports comes from: OpenVINO compiling static
shapes alone, or the loop passes that run when the shapes are static.

    python -m benchmarks.specialise_routes [--batch 1 16] [--steps 1000] [--rounds 40]

Rows: the jax2onnx flax exports of benchmarks/loops.py (EXPORTS_ROWS; batch and time dims
symbolic as exported) at each batch. Columns, all CPU with benchmarks/loops.CONFIG:
"dynamic" (`ov_loops.convert(optimize="max")` as it is), "reshaped" (that IR reshaped to the
row's shapes, as `ov_loops.compile` does for an IR: OpenVINO compiles static shapes, the loop
passes do not rerun), "specialised" (`ov_loops.compile(optimize="max")`: converted with the
row's shapes, the static-shape passes run) and onnxruntime. Each cell: median latency, the
median of the per-round ratios to onnxruntime and their spread (rounds interleaved, shuffled);
the first-call seconds of reshaped and specialised (model made + compiled) after them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import onnx
import openvino as ov

import ov_loops
from benchmarks.loops import (
    CONFIG,
    CORE,
    EXPORTS,
    EXPORTS_ROWS,
    exported_feeds,
    onnxruntime_runner,
    time_rounds,
)


def routes(name: str, feeds: dict) -> tuple[dict[str, Callable], dict[str, float]]:
    """A call per column, and the first-call seconds of reshaped and specialised."""
    path = EXPORTS / f"{name}.onnx"
    outputs = [output.name for output in onnx.load(path).graph.output]
    dynamic = ov_loops.convert(path, optimize="max")
    first: dict[str, float] = {}
    start = time.perf_counter()
    reshaped = dynamic.clone()
    reshaped.reshape({key: ov.PartialShape(list(value.shape)) for key, value in feeds.items()})
    compiled = {"dynamic": CORE.compile_model(dynamic, "CPU", CONFIG)}
    compiled["reshaped"] = CORE.compile_model(reshaped, "CPU", CONFIG)
    first["reshaped"] = time.perf_counter() - start
    specialised = ov_loops.compile(path, "CPU", CONFIG, optimize="max")
    start = time.perf_counter()
    specialised(feeds)
    first["specialised"] = time.perf_counter() - start
    calls = {column: (lambda model=model: model(feeds)) for column, model in compiled.items()}
    calls["specialised"] = lambda: specialised(feeds)
    calls["onnxruntime"] = onnxruntime_runner(onnx.load(path), outputs, feeds)
    return calls, first


def cell(samples: dict[str, list[float]], column: str) -> str:
    """Median latency, ratio to onnxruntime (spread)."""
    ratios = [a / b for a, b in zip(samples[column], samples["onnxruntime"])]
    median = statistics.median(samples[column]) * 1e3
    if column == "onnxruntime":
        return f"{median:.2f} ms"
    middle = statistics.median(ratios)
    return f"{median:.2f} ms ×{middle:.2f} ({min(ratios):.2f}–{max(ratios):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    columns = ("dynamic", "reshaped", "specialised", "onnxruntime")
    print(f"| row | {' | '.join(columns)} | first call: reshaped / specialised |")
    print("|---" * (len(columns) + 2) + "|")
    for cell_name, (name, hidden) in EXPORTS_ROWS.items():
        for batch in args.batch:
            feeds = exported_feeds(name, batch, args.steps)
            calls, first = routes(name, feeds)
            samples = time_rounds(calls, warmup=2, rounds=args.rounds, budget=0.0)
            row = f"{cell_name} H={hidden} B={batch} T={args.steps}"
            firsts = f"{first['reshaped']:.2f} s / {first['specialised']:.2f} s"
            print(f"| {row} | {' | '.join(cell(samples, c) for c in columns)} | {firsts} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
