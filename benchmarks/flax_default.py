"""Latency of jax2onnx's flax RNNs at ov-loops' "default" level, symbolic B and T kept, against
onnxruntime and `openvino.convert_model` (issue 23: default <= 1.0 of onnxruntime and <= 0.5
of OpenVINO's frontend), and what each of default's body passes for dynamic shapes gives.

    python -m benchmarks.flax_default [--steps 1000] [--batches 1 16] [--only TEXT]
        [--rounds 21] [--without merge-shared-matmuls ...]

Rows: the flax.linen RNNs of benchmarks/loops.py's exported rows (tests/models/exporters), at
T=--steps for each batch of --batches. Columns: onnxruntime (one thread), openvino.convert_model,
ov-loops "none", "default", "default" without the passes named by --without (by default the
passes this benchmark was written for: what default gave before them), and "B static":
"default" with `input` fixing B to the run's (T stays dynamic: the Loop-5's dynamic path
without a dynamic body, the floor the body passes work towards), then for the one-cell rows the
hand-built lower bounds of benchmarks/cell_floor.py (the cell math alone, fused gate weights)
with B and T dynamic ("floor"), B static ("floor B static") and, for the LSTM, h and c in one
back edge ("floor packed"). OpenVINO: CPU,
INFERENCE_PRECISION_HINT=f32, one thread, one stream. Every column is checked against
onnxruntime once, warmed up, then timed in --rounds rounds, the order rotated every round, by
the process's CPU time (benchmarks/timing.py). Printed per row: each column's Loop body sizes
(ops other than Parameters, Results and Constants), then the median time per step in
microseconds and the median and spread (lowest-highest) of the per-round ratios to onnxruntime
and to openvino.convert_model.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import openvino as ov

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.cell_floor import floor_model  # noqa: E402
from benchmarks.loops import (  # noqa: E402
    CONFIG,
    CORE,
    EXPORTS_ROWS,
    onnxruntime_runner,
    openvino_runner,
)
from benchmarks.symbolic_dims import (  # noqa: E402
    CORPUS,
    body_sizes,
    compare,
    feeds_for,
    manifest_entry,
    measure_rows,
    row_arguments,
    time_columns,
)
from ov_loops.conversion.driver import Converter  # noqa: E402
from ov_loops.frontends.onnx.load.load import load_model  # noqa: E402
from ov_loops.loopir.passes.pipeline import CPU, LoweringOptions  # noqa: E402

NEW_PASSES = ("merge-shared-matmuls", "pack-carried-values")
# corpus model: (cell, inputs, hidden) of its one loop, for the floor columns
CELLS = {
    "jax_linen_lstm_carry_init": ("lstm", 4, 8),
    "jax_linen_gru_carry_init": ("gru", 4, 8),
    "jax_linen_simple_carry_init": ("simple", 4, 8),
}


def floor_calls(name: str, steps: int, batch: int) -> dict[str, Callable]:
    """The floor columns of row `name` (none for a model not in CELLS)."""
    if name not in CELLS:
        return {}
    cell, inputs, hidden = CELLS[name]
    rng = np.random.default_rng(0)
    feeds = {
        "x": rng.standard_normal((steps, batch, inputs)).astype(np.float32),
        "h0": np.zeros((batch, hidden), np.float32),
    }
    variants = {"floor": (-1, False), "floor B static": (batch, False)}
    if cell == "lstm":
        variants["floor packed"] = (-1, True)
    calls = {}
    for column, (rows, packed) in variants.items():
        made = floor_model(cell, inputs, hidden, rows, packed)
        request = CORE.compile_model(made, "CPU", CONFIG).create_infer_request()
        calls[column] = lambda request=request: request.infer(feeds)
    return calls


def batch_static(feeds: dict[str, np.ndarray], entry: dict) -> str:
    """`input` text fixing each input's batch dim "B" to its feed's, other dims left dynamic."""
    shapes = []
    for (name, value), dims in zip(feeds.items(), entry["input_dims"].values()):
        sizes = [str(size) if dim == "B" else "?" for size, dim in zip(value.shape, dims)]
        shapes.append(f"{name}[{','.join(sizes)}]")
    return ",".join(shapes)


def converted(path: Path, feeds: dict, entry: dict, without: tuple[str, ...]) -> dict:
    """Each OpenVINO column's model."""
    skipping = LoweringOptions(CPU.replace(skips=frozenset(without)), "default")
    return {
        "openvino": ov.convert_model(str(path)),
        "none": ov_loops.convert(path, optimize="none"),
        f"default -{len(without)}": Converter(load_model(str(path)), skipping).convert().model,
        "default": ov_loops.convert(path, optimize="default"),
        "B static": ov_loops.convert(path, optimize="default", input=batch_static(feeds, entry)),
    }


def measure(name: str, steps: int, batch: int, args: argparse.Namespace) -> None:
    """Print one row: `name` at T=`steps`, B=`batch`."""
    path = CORPUS / f"{name}.onnx"
    entry = manifest_entry(name)
    feeds = feeds_for(entry, steps, batch)
    print(f"{name} T={steps} B={batch}")
    model = onnx.load(str(path))
    outputs = [output.name for output in model.graph.output]
    calls: dict[str, Callable] = {"onnxruntime": onnxruntime_runner(model, outputs, feeds)}
    for column, ov_model in converted(path, feeds, entry, tuple(args.without)).items():
        print(f"  {column:12} body ops {body_sizes(ov_model)}")
        calls[column] = openvino_runner(ov_model, outputs, feeds)
    compare(calls)
    calls |= floor_calls(name, steps, batch)  # not compared: random weights
    time_columns(calls, steps, args.rounds)


def main() -> int:
    parser = row_arguments(__doc__.splitlines()[0], 21)
    parser.add_argument("--without", nargs="+", default=list(NEW_PASSES))
    args = parser.parse_args()
    measure_rows([name for name, _ in EXPORTS_ROWS.values()], measure, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
