"""Latency of recurrent ONNX loops: ov-loops at each optimisation level vs OpenVINO vs onnxruntime.

    python -m benchmarks.loops [--quick | --full] [--only TEXT] [--rounds N | --budget 3]
        [--warmup 2] [--conversion-rounds 3] [--json OUT]

Rows are loops (benchmarks/loop_models.py): RNN, GRU (linear_before_reset 0 and 1) and LSTM
cells as Loop and Scan, loops shaped like jax2onnx, tf2onnx and torch's exports, and real
jax2onnx exports of flax RNNs from the corpus (tests/models/exporters; form "jax2onnx", batch
and time dims symbolic as exported, H as exported), for H, B and T from the grid (--full) or a
small subset (--quick, the default; about three minutes).
Columns: `ov_loops.convert(model, optimize=...)` with "max", "default" and "none" (a cell
marked [LSTMSequence] etc. where the loop became that op: lower/cells.py), "specialised"
(`ov_loops.compile(model, optimize="max")`: converted and compiled for the row's shapes on its
first call, whose time is its own column, "1st call", not in the latency),
`openvino.convert_model(path)` and onnxruntime. OpenVINO runs on CPU with
INFERENCE_PRECISION_HINT=f32, INFERENCE_NUM_THREADS=1, NUM_STREAMS=1; onnxruntime with one
intra- and one inter-op thread.

Row by row: the model is converted by each converter (timed, --conversion-rounds interleaved
rounds), every column's outputs are checked once against onnxruntime (a mismatch beyond f32
tolerance is printed loudly and marked in the table), each column is warmed up, then each
round runs every column once, in an order shuffled each round (seeded; --rounds, or as many as
fit in --budget seconds per row at the warm-up's pace, 5 to 60). A cell is the median
latency of one inference, the median of the per-round ratios to the openvino column and their
spread (lowest-highest); the specialised cell also gives the ratio to onnxruntime ("ort×").
The "convert" column is the ratio of the fastest conversion times
ov_loops.convert / openvino.convert_model for max, default, none, then the same ratios to
openvino.Core.read_model (the ONNX frontend without convert_model's own Python work: argument
handling, telemetry, MOC transformations).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.loop_models import loop_feeds, loop_model  # noqa: E402

EXPORTS = Path(__file__).resolve().parents[1] / "tests" / "models" / "exporters"
EXPORTED = "jax2onnx"  # the form of rows read from the real-exports corpus
# cell name: (corpus model, H as exported)
EXPORTS_ROWS = {
    "flax_lstm": ("jax_linen_lstm_carry_init", 8),
    "flax_gru": ("jax_linen_gru_carry_init", 8),
    "flax_simple": ("jax_linen_simple_carry_init", 8),
    "flax_stacked": ("jax_linen_stacked_gru_lstm", 8),
}

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
LEVELS = ("max", "default", "none")
BASELINE = "openvino"
FRONTEND = "read_model"  # OpenVINO's ONNX frontend alone: conversion times only
SPECIALISED = "specialised"  # ov_loops.compile: compiled for the row's shapes on first call
COLUMNS = (*LEVELS, SPECIALISED, BASELINE, "onnxruntime")
HEADINGS = {level: f"ov-loops {level}" for level in LEVELS} | {
    SPECIALISED: "ov_loops.compile (max)",
    BASELINE: "openvino.convert_model",
    "onnxruntime": "onnxruntime",
}
CORE = ov.Core()
MIN_ROUNDS, MAX_ROUNDS = 5, 60
RTOL, ATOL = 1e-4, 1e-4  # f32 after up to a thousand recurrent steps
EXPORTER_ROWS = (("jax", "gru_lbr"), ("tf", "lstm"), ("tf_concat", "lstm"), ("torch", "lstm"))


@dataclass(frozen=True)
class Row:
    """One loop of the table: a cell in a form at a size."""

    cell: str
    form: str
    hidden: int
    batch: int
    steps: int

    @property
    def name(self) -> str:
        """E.g. "lstm loop H=256 B=1 T=100"."""
        return f"{self.cell} {self.form} H={self.hidden} B={self.batch} T={self.steps}"


def full_rows() -> list[Row]:
    """Every cell as Loop and Scan, and every exporter-shaped loop, over the whole grid."""
    shapes = list(itertools.product((64, 256, 1024), (1, 16), (100, 1000)))
    pairs = [
        (cell, form) for cell in ("rnn", "gru", "gru_lbr", "lstm") for form in ("loop", "scan")
    ]
    pairs += [(cell, form) for form, cell in EXPORTER_ROWS]
    rows = [Row(cell, form, *shape) for cell, form in pairs for shape in shapes]
    exported = itertools.product(EXPORTS_ROWS.items(), (1, 16), (100, 1000))
    return rows + [Row(cell, EXPORTED, hidden, b, t) for (cell, (_, hidden)), b, t in exported]


def quick_rows() -> list[Row]:
    """A subset that runs in about two minutes: every cell and form once, mostly small."""
    rows = [Row(cell, "loop", 64, 1, 100) for cell in ("rnn", "gru", "gru_lbr", "lstm")]
    rows += [Row(cell, "scan", 64, 1, 100) for cell in ("rnn", "gru_lbr")]
    rows += [Row(cell, form, 64, 16, 100) for form, cell in EXPORTER_ROWS]
    rows += [Row("rnn", "loop", 256, 1, 1000), Row("lstm", "scan", 256, 16, 100)]
    rows += [Row("rnn", "scan", 256, 1, 1000), Row("rnn", "loop", 1024, 1, 100)]
    rows += [Row("lstm", "loop", 256, 1, 100)]
    rows += [Row("gru_lbr", "loop", 256, 16, 100)]
    rows += [Row(cell, EXPORTED, hidden, 1, 1000) for cell, (_, hidden) in EXPORTS_ROWS.items()]
    return rows


@dataclass
class Measured:
    """What one row's run found: times in seconds, errors and differences by column."""

    row: Row
    conversion: dict[str, list[float]] = field(default_factory=dict)
    latency: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    difference: dict[str, float] = field(default_factory=dict)
    mismatched: list[str] = field(default_factory=list)
    lowered: dict[str, str] = field(default_factory=dict)  # by level: "Loop" or a *Sequence op
    first_call: float | None = None  # seconds of the specialised column's first call


def lowering(model: ov.Model) -> str:
    """What computes the loop in `model`: its *Sequence ops, or "Loop"."""
    sequences = {op.get_type_name() for op in model.get_ordered_ops()}
    return ", ".join(sorted(kind for kind in sequences if kind.endswith("Sequence"))) or "Loop"


def converters(path: Path) -> dict[str, Callable[[], ov.Model]]:
    """The ways to an openvino.Model of the ONNX file at `path` (read_model for timing only)."""
    made: dict[str, Callable[[], ov.Model]] = {
        level: lambda level=level: ov_loops.convert(path, optimize=level) for level in LEVELS
    }
    made[BASELINE] = lambda: ov.convert_model(str(path))
    made[FRONTEND] = lambda: CORE.read_model(str(path))
    return made


def shuffled(names: list[str], turn: int) -> list[str]:
    """`names` in round `turn`'s order: a permutation seeded by `turn`.

    Rotating the order would leave each name after the same neighbour (cyclically) in every
    round, and what ran just before (onnxruntime's memory traffic, say) shows in a latency.
    """
    order = list(names)
    random.Random(turn).shuffle(order)
    return order


def convert_all(path: Path, rounds: int, measured: Measured) -> dict[str, ov.Model]:
    """Each converter's model of `path`, its times in measured.conversion, failures in errors."""
    models, ways = {}, converters(path)
    for turn in range(rounds):
        for name in shuffled([name for name in ways if name not in measured.errors], turn):
            start = time.perf_counter()
            try:
                models[name] = ways[name]()
            except Exception as error:  # a converter refusing the model is a result, not a crash
                measured.errors[name] = f"conversion: {last_line(error)}"
                continue
            measured.conversion.setdefault(name, []).append(time.perf_counter() - start)
    return {name: model for name, model in models.items() if name not in measured.errors}


def last_line(error: Exception) -> str:
    """The last non-empty line of an exception's message, shortened."""
    lines = [line for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    return lines[-1].strip()[:100]


def onnxruntime_runner(model: onnx.ModelProto, outputs: list[str], feeds: dict) -> Callable:
    """A call running `model` in a single-threaded onnxruntime session."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: not the exports' unused initializers
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda: session.run(outputs, feeds)


def openvino_runner(model: ov.Model, outputs: list[str], feeds: dict) -> Callable:
    """A call running `model` compiled for CPU with CONFIG, returning `outputs` in order."""
    compiled = CORE.compile_model(model, "CPU", CONFIG)
    request = compiled.create_infer_request()
    ports = [compiled.output(name) for name in outputs]

    def run() -> list[np.ndarray]:
        results = request.infer(feeds)
        return [results[port] for port in ports]

    return run


def specialised_runner(path: Path, outputs: list[str], feeds: dict, measured: Measured) -> Callable:
    """A call running `ov_loops.compile(path)` at max with CONFIG, after its first call (timed
    into measured.first_call: the conversion and compilation for the feeds' shapes)."""
    compiled = ov_loops.compile(path, "CPU", CONFIG, optimize="max")
    start = time.perf_counter()
    compiled(feeds)
    measured.first_call = time.perf_counter() - start

    def run() -> list[np.ndarray]:
        results = compiled(feeds)
        return [results[name] for name in outputs]

    return run


def runners(
    path: Path, models: dict[str, ov.Model], feeds: dict, measured: Measured
) -> dict[str, Callable]:
    """A call per column (in COLUMNS order) that compiled; failures go to measured.errors."""
    model = onnx.load(path)
    outputs = [output.name for output in model.graph.output]
    made = {}
    for name in COLUMNS:
        try:
            if name == "onnxruntime":
                made[name] = onnxruntime_runner(model, outputs, feeds)
            elif name == SPECIALISED:
                made[name] = specialised_runner(path, outputs, feeds, measured)
            elif name in models:
                made[name] = openvino_runner(models[name], outputs, feeds)
        except Exception as error:
            measured.errors[name] = f"compilation: {last_line(error)}"
    return made


def check_outputs(calls: dict[str, Callable], measured: Measured) -> None:
    """Run each column once; record its largest difference from onnxruntime and mismatches."""
    if "onnxruntime" not in calls:
        print(f"!!! UNCHECKED {measured.row.name}: onnxruntime failed !!!", file=sys.stderr)
        return
    expected = calls["onnxruntime"]()
    for name, call in calls.items():
        if name == "onnxruntime":
            continue
        try:
            got = call()
        except Exception as error:
            measured.errors[name] = f"inference: {last_line(error)}"
            continue
        measured.difference[name] = max(
            float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(got, expected)
        )
        if not all(np.allclose(a, b, rtol=RTOL, atol=ATOL) for a, b in zip(got, expected)):
            measured.mismatched.append(name)
            print(
                f"!!! MISMATCH {measured.row.name}: {HEADINGS[name]} differs from onnxruntime "
                f"by up to {measured.difference[name]:.2e} !!!",
                file=sys.stderr,
                flush=True,
            )
    for name in measured.errors:
        calls.pop(name, None)


def time_rounds(
    calls: dict[str, Callable], warmup: int, rounds: int | None, budget: float
) -> dict[str, list[float]]:
    """Warm every call up, then per round time each once, in an order shuffled every round.

    Without `rounds`, as many rounds as fit in `budget` seconds at the pace of the last warm-up
    round, at least MIN_ROUNDS and at most MAX_ROUNDS.
    """
    pace = 0.0
    for _ in range(max(warmup, 1 if rounds is None else 0)):
        start = time.perf_counter()
        for call in calls.values():
            call()
        pace = time.perf_counter() - start
    if rounds is None:
        rounds = min(MAX_ROUNDS, max(MIN_ROUNDS, int(budget / max(pace, 1e-9))))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for turn in range(rounds):
        for name in shuffled(list(calls), turn):
            start = time.perf_counter()
            calls[name]()
            samples[name].append(time.perf_counter() - start)
    return samples


def row_model(row: Row, scratch: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """The ONNX file of `row` (written into `scratch`, or the corpus export) and its feeds."""
    if row.form != EXPORTED:
        path = scratch / "model.onnx"
        onnx.save(loop_model(row.cell, row.form, row.hidden, row.batch), path)
        return path, loop_feeds(row.cell, row.hidden, row.batch, row.steps)
    name, _ = EXPORTS_ROWS[row.cell]
    return EXPORTS / f"{name}.onnx", exported_feeds(name, row.batch, row.steps)


def exported_feeds(name: str, batch: int, steps: int) -> dict[str, np.ndarray]:
    """Inputs of corpus model `name` as the manifest gives their dims, B and T (the symbolic
    batch and time dims of jax2onnx's exports) set: N(0, 1) floats."""
    manifest = json.loads((EXPORTS / "manifest.json").read_text())
    (entry,) = [entry for entry in manifest["models"] if entry["name"] == name]
    rng = np.random.default_rng(0)
    sizes = {"B": batch, "T": steps}
    return {
        input_name: rng.standard_normal([sizes.get(dim, dim) for dim in dims]).astype(np.float32)
        for input_name, dims in entry["input_dims"].items()
    }


def measure_row(row: Row, args: argparse.Namespace, scratch: Path) -> Measured:
    """Convert, check and time one row."""
    measured = Measured(row)
    path, feeds = row_model(row, scratch)
    models = convert_all(path, args.conversion_rounds, measured)
    measured.lowered = {name: lowering(made) for name, made in models.items() if name in LEVELS}
    calls = runners(path, models, feeds, measured)
    del models
    check_outputs(calls, measured)
    measured.latency = time_rounds(calls, args.warmup, args.rounds, args.budget)
    del calls
    gc.collect()
    return measured


def ratios(measured: Measured, name: str, baseline: str = BASELINE) -> list[float]:
    """Per-round latency ratios of column `name` to the baseline (empty if either is missing)."""
    mine, theirs = measured.latency.get(name, []), measured.latency.get(baseline, [])
    return [a / b for a, b in zip(mine, theirs)] if mine and theirs else []


def conversion_ratio(measured: Measured, level: str, baseline: str = BASELINE) -> float | None:
    """Fastest conversion of ov_loops at `level` over openvino's fastest, if both converted.

    The fastest, not the median: a few conversions on a shared machine are mostly noise above
    the fastest.
    """
    mine, theirs = measured.conversion.get(level), measured.conversion.get(baseline)
    if level in measured.errors or baseline in measured.errors or not mine or not theirs:
        return None
    return min(mine) / min(theirs)


def cell_text(measured: Measured, name: str) -> str:
    """A table cell: median latency, ratio to openvino (spread), or why there is none."""
    if name in measured.errors:
        return f"fails ({measured.errors[name].split(':')[0]})"
    median = statistics.median(measured.latency[name])
    text = f"{median * 1e3:.3g} ms"
    per_round = ratios(measured, name)
    if per_round and name != BASELINE:
        middle, low, high = statistics.median(per_round), min(per_round), max(per_round)
        text += f" ×{middle:.2f} ({low:.2f}–{high:.2f})"
    to_onnxruntime = ratios(measured, name, "onnxruntime")
    if name == SPECIALISED and to_onnxruntime:
        middle, low, high = (f(to_onnxruntime) for f in (statistics.median, min, max))
        text += f" ort×{middle:.2f} ({low:.2f}–{high:.2f})"
    if measured.lowered.get(name, "Loop") != "Loop":
        text += f" [{measured.lowered[name]}]"
    return text + (" MISMATCH" if name in measured.mismatched else "")


def table(results: list[Measured]) -> str:
    """The markdown table of all rows."""
    headings = [
        "loop",
        *(HEADINGS[name] for name in COLUMNS),
        "1st call",
        "convert × max/default/none: convert_model; read_model",
    ]
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    for measured in results:
        conversion = "; ".join(
            "/".join(
                "–" if value is None else f"{value:.2f}"
                for value in (conversion_ratio(measured, level, baseline) for level in LEVELS)
            )
            for baseline in (BASELINE, FRONTEND)
        )
        first = "–" if measured.first_call is None else f"{measured.first_call * 1e3:.0f} ms"
        cells = [measured.row.name, *(cell_text(measured, name) for name in COLUMNS), first]
        cells.append(conversion)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def as_json(measured: Measured) -> dict:
    """One row's measurements as plain data."""
    summary = {baseline: {} for baseline in (BASELINE, "onnxruntime")}
    for baseline, name in itertools.product(summary, COLUMNS):
        per_round = ratios(measured, name, baseline)
        if per_round and name != baseline:
            summary[baseline][name] = {
                "median": statistics.median(per_round),
                "min": min(per_round),
                "max": max(per_round),
            }
    return {
        "row": measured.row.name,
        **vars(measured.row),
        "latency_s": measured.latency,
        "median_latency_s": {k: statistics.median(v) for k, v in measured.latency.items()},
        "ratio_to_openvino": summary[BASELINE],
        "ratio_to_onnxruntime": summary["onnxruntime"],
        "specialised_first_call_s": measured.first_call,
        "conversion_s": measured.conversion,
        "conversion_ratio": {
            baseline: {level: conversion_ratio(measured, level, baseline) for level in LEVELS}
            for baseline in (BASELINE, FRONTEND)
        },
        "max_abs_difference_vs_onnxruntime": measured.difference,
        "mismatched": measured.mismatched,
        "lowered": measured.lowered,
        "errors": measured.errors,
    }


def parse_arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    subset = parser.add_mutually_exclusive_group()
    subset.add_argument("--quick", action="store_true", help="a small subset (the default)")
    subset.add_argument("--full", action="store_true", help="the whole grid (hours)")
    parser.add_argument("--only", metavar="TEXT", help="the rows whose name contains TEXT")
    parser.add_argument("--rounds", type=int, help="timed rounds per row (default: --budget)")
    parser.add_argument(
        "--budget",
        type=float,
        default=3.0,
        help=f"seconds of timed rounds per row, {MIN_ROUNDS} to {MAX_ROUNDS} rounds (default 3)",
    )
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs per column first")
    parser.add_argument("--conversion-rounds", type=int, default=3, help="timed conversions")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    return parser.parse_args()


def main() -> int:
    args = parse_arguments()
    rows = full_rows() if args.full else quick_rows()
    rows = [row for row in rows if args.only is None or args.only in row.name]
    rounds = args.rounds or f"{args.budget:g} s of"
    print(
        f"{len(rows)} loops; CPU, f32, 1 thread, 1 stream; {rounds} rounds after {args.warmup} "
        f"warm-up runs; OpenVINO {ov.get_version()}, onnxruntime {ort.__version__}",
        flush=True,
    )
    started, results = time.perf_counter(), []
    with tempfile.TemporaryDirectory(prefix="ov-loops-bench-") as scratch:
        for row in rows:
            results.append(measure_row(row, args, Path(scratch)))
            differences = ", ".join(
                f"{name} {value:.1e}" for name, value in results[-1].difference.items()
            )
            done = max(map(len, results[-1].latency.values()), default=0)
            print(
                f"  {row.name}: {done} rounds; max |diff| vs onnxruntime: {differences}", flush=True
            )
    elapsed = time.perf_counter() - started
    print()
    print(table(results))
    mismatches = sum(len(measured.mismatched) for measured in results)
    print(f"\n{len(rows)} loops in {elapsed:.0f} s; {mismatches} mismatch(es) with onnxruntime")
    if args.json:
        document = {"config": CONFIG, "arguments": {**vars(args), "json": str(args.json)}}
        document["seconds"] = elapsed
        document["rows"] = [as_json(measured) for measured in results]
        args.json.write_text(json.dumps(document, indent=1))
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
