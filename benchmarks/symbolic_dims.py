"""Latency of jax2onnx's flax RNNs, converted with their symbolic batch and time dims kept and
with static `--input` shapes: ov-loops at "default" and "max" against onnxruntime and
`openvino.convert_model`.

    python -m benchmarks.symbolic_dims [--steps 1000] [--batches 1 16] [--only TEXT] [--rounds 15]

Rows: the flax.linen RNNs of the real-exports corpus (tests/models/exporters/manifest.json)
whose batch and time dims are symbolic, each run at T=--steps for every batch of --batches.
Columns: onnxruntime (one intra- and one inter-op thread), openvino.convert_model, ov-loops at
"default" and "max" as exported (dynamic B and T) and the same with `input` fixing every dim
to the run's ("static"). OpenVINO: CPU, INFERENCE_PRECISION_HINT=f32, one thread, one stream.
Every column is checked against onnxruntime once, warmed up, then timed in --rounds rounds,
the order rotated every round, by the process's CPU time (benchmarks/timing.py: one inference
thread each, so time spent waiting for a core on a shared machine is left out). Printed per
row: each loop's body size (ops other than Parameters, Results and Constants) and what the
optimisations did at "default" and "max", then
per column the median time per step in microseconds and the median and spread (lowest-highest)
of the per-round ratios to onnxruntime and to openvino.convert_model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import openvino as ov

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.loops import ATOL, RTOL, onnxruntime_runner, openvino_runner  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "models" / "exporters"
MODELS = (
    "jax_linen_lstm_carry_in",
    "jax_linen_gru_carry_in",
    "jax_linen_simple_carry_in",
    "jax_linen_lstm_carry_init",
    "jax_linen_gru_carry_init",
    "jax_linen_mgu_carry_init",
    "jax_linen_stacked_gru_lstm",
)
LEVELS = ("default", "max")
BASELINES = ("onnxruntime", "openvino")
SKIPPED = {"Parameter", "Result", "Constant"}


def manifest_entry(name: str) -> dict:
    """The corpus manifest's entry of model `name`."""
    entries = json.loads((CORPUS / "manifest.json").read_text())["models"]
    return next(entry for entry in entries if entry["name"] == name)


def feeds_for(entry: dict, steps: int, batch: int) -> dict[str, np.ndarray]:
    """Random f32 inputs of `entry`'s dims with T=`steps` and B=`batch` (seeded)."""
    rng = np.random.default_rng(0)
    sizes = {"T": steps, "B": batch}
    return {
        name: rng.standard_normal([sizes.get(dim, dim) for dim in dims]).astype(np.float32)
        for name, dims in entry["input_dims"].items()
    }


def static_input(feeds: dict[str, np.ndarray]) -> str:
    """`input` text fixing every input to its feed's shape."""
    return ",".join(f"{name}[{','.join(map(str, value.shape))}]" for name, value in feeds.items())


def body_sizes(model: ov.Model) -> list[int]:
    """Ops of each Loop body in `model` other than Parameters, Results and Constants."""
    return [
        sum(node.get_type_name() not in SKIPPED for node in op.get_function().get_ordered_ops())
        for op in model.get_ordered_ops()
        if op.get_type_name() == "Loop"
    ]


def converted(path: Path, feeds: dict) -> dict[str, ov.Model]:
    """Each OpenVINO column's model, with what became of its loops printed."""
    models = {"openvino": ov.convert_model(str(path))}
    for level in LEVELS:
        for suffix, shapes in (("", None), (" static", static_input(feeds))):
            conversion = ov_loops.translate(path, optimize=level, input=shapes)
            name = level + suffix
            models[name] = conversion.model
            applied = "; ".join(
                f"{loop.becomes}: {', '.join(loop.optimizations)}" for loop in conversion.loops
            )
            print(f"  {name:15} body ops {body_sizes(conversion.model)}: {applied}")
    return models


class _Request:
    """A call with the `infer(feeds)` of an infer request (benchmarks/timing.py); the feeds
    are bound in the call."""

    def __init__(self, call: Callable) -> None:
        self.call = call

    def infer(self, _feeds: dict) -> None:
        self.call()


def spread(values: list[float]) -> str:
    """Median (lowest-highest) of `values`."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def measure(name: str, steps: int, batch: int, args: argparse.Namespace) -> None:
    """Print one row: `name` at T=`steps`, B=`batch`."""
    path = CORPUS / f"{name}.onnx"
    feeds = feeds_for(manifest_entry(name), steps, batch)
    print(f"{name} T={steps} B={batch}")
    model = onnx.load(str(path))
    outputs = [output.name for output in model.graph.output]
    calls: dict[str, Callable] = {"onnxruntime": onnxruntime_runner(model, outputs, feeds)}
    for column, ov_model in converted(path, feeds).items():
        calls[column] = openvino_runner(ov_model, outputs, feeds)
    compare(calls)
    time_columns(calls, steps, args.rounds)


def compare(calls: dict[str, Callable]) -> None:
    """Print loudly each column whose outputs differ from the "onnxruntime" column's."""
    expected = calls["onnxruntime"]()
    for column, call in calls.items():
        if not all(np.allclose(a, b, rtol=RTOL, atol=ATOL) for a, b in zip(call(), expected)):
            print(f"  !!! MISMATCH: {column} differs from onnxruntime !!!")


def time_columns(calls: dict[str, Callable], steps: int, rounds: int) -> None:
    """Warm each column up, time `rounds` interleaved rounds (CPU time), print per column the
    median time per step and the per-round ratios to onnxruntime and openvino."""
    for call in calls.values():  # warm-up
        call()
    requests = {column: _Request(call) for column, call in calls.items()}
    samples = interleaved_seconds(requests, {}, rounds, "cpu")
    for column, seconds in samples.items():
        per_step = statistics.median(seconds) / steps * 1e6
        ratios = [
            spread([mine / theirs for mine, theirs in zip(seconds, samples[base])])
            for base in BASELINES
        ]
        print(
            f"  {column:15} {per_step:7.2f} us/step"
            f"  / onnxruntime {ratios[0]}  / openvino {ratios[1]}"
        )


def row_arguments(description: str, rounds: int) -> argparse.ArgumentParser:
    """The options of a benchmark of corpus rows: --steps, --batches, --only, --rounds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--only", default="", help="rows whose model name contains this text")
    parser.add_argument("--rounds", type=int, default=rounds)
    return parser


def measure_rows(names, measure_one: Callable, args: argparse.Namespace) -> None:
    """`measure_one(name, steps, batch, args)` for each of `names` containing --only, at each
    batch of --batches."""
    for name in names:
        if args.only in name:
            for batch in args.batches:
                measure_one(name, args.steps, batch, args)


def main() -> int:
    args = row_arguments(__doc__.splitlines()[0], 15).parse_args()
    measure_rows(MODELS, measure, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
