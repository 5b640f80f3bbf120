"""Conversion time of this checkout against a baseline tree, model by model.

    python -m benchmarks.conversion_time --baseline-src /path/to/old/tree [--rounds 15]
        [--repeats 3]

The models: the ONNX corpus of benchmarks/structure_corpus.py (scenarios, ONNX backend node tests
with a Loop or Scan, ir_samples, plugin-crash models among which 13 nested Loops) and the RNN
models of benchmarks/rnn_loop.py and rnn_scan.py. Each tree gets a long-lived worker process
(PYTHONPATH set to the tree) that reads the same serialised models and times `ov_loops.translate`
on request. After a warm-up (every model once in each worker), each round times every model in
both workers, in the order A B for one model and B A for the next, alternating between rounds;
a round's time is the fastest of --repeats back-to-back conversions (the machine may be shared).

Prints, per model, the median times and the ratio new/old of the medians with the spread (lowest
and highest per-round ratio), then the geometric mean of the ratios over all models.

Against `openvino.convert_model` instead, each conversion in a fresh process, interleaved, on
generated models (N sequential loops, nesting depth, big weights; benchmarks/fresh_conversion.py,
whose options follow `fresh`):

    python -m benchmarks.conversion_time fresh [--models seq10,seq1000,nest8] [--rounds 5]

On the rows of benchmarks/loops.py --quick (its models: benchmarks/loop_models.py, exports), in this
process: `ov_loops.convert` at none, default and max against `openvino.convert_model`, the order
rotated every round; ratios of CPU time (process time: the machine may be shared), medians with
their spread over the rounds:

    python -m benchmarks.conversion_time rows [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve()
TREE = HERE.parents[1]


class Worker:
    """A process converting models with the ov_loops of one tree, answering with seconds."""

    def __init__(self, tree: Path, models: dict[str, Path]) -> None:
        environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
        self._process = subprocess.Popen(
            [sys.executable, str(HERE), "--worker"],
            cwd=tree,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._ask({name: str(path) for name, path in models.items()})
        self.source = self._process.stdout.readline().strip()

    def _ask(self, message) -> None:
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def seconds(self, name: str, repeats: int = 1) -> float:
        """The fastest of `repeats` back-to-back conversions of the model `name`."""
        self._ask([name, repeats])
        answer = self._process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the worker for {self.source} died converting {name}")
        return float(answer)

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait()


def serve() -> None:
    """Worker side: read the model paths, then answer each [name, repeats] read with the
    fastest of `repeats` conversions of that model."""
    import onnx

    import ov_loops

    paths = json.loads(sys.stdin.readline())
    serialised = {name: Path(path).read_bytes() for name, path in paths.items()}
    print(Path(ov_loops.__file__).parent, flush=True)
    # The translation alone: optimize="none" in trees that optimise (older trees do not).
    takes_level = "optimize" in inspect.signature(ov_loops.translate).parameters
    unoptimized = {"optimize": "none"} if takes_level else {}
    for line in sys.stdin:
        name, repeats = json.loads(line)
        fastest = math.inf
        for _ in range(repeats):
            model = onnx.load_from_string(serialised[name])
            gc.collect()
            start = time.perf_counter()
            with contextlib.suppress(ov_loops.OvLoopsError):  # a refusal is timed like the rest
                ov_loops.translate(model, **unoptimized)
            fastest = min(fastest, time.perf_counter() - start)
        print(fastest, flush=True)


def write_models(directory: Path) -> dict[str, Path]:
    """Serialise every model timed into `directory`: name -> file."""
    from benchmarks.rnn_loop import rnn_loop_model
    from benchmarks.rnn_scan import rnn_scan_model
    from benchmarks.structure_corpus import onnx_corpus

    builders = dict(sorted(onnx_corpus().items()))
    builders["bench/rnn_loop_h256"] = lambda: rnn_loop_model(256)
    builders["bench/rnn_scan_h256"] = lambda: rnn_scan_model(256)
    paths = {}
    for index, (name, build) in enumerate(builders.items()):
        paths[name] = directory / f"{index}.onnx"
        paths[name].write_bytes(build().SerializeToString())
    return paths


def measure(
    new: Worker, old: Worker, names: list[str], rounds: int, repeats: int
) -> dict[str, tuple]:
    """name -> (new seconds per round, old seconds per round), after one warm-up each; a
    round's time is the fastest of `repeats` conversions."""
    for name in names:
        new.seconds(name)
        old.seconds(name)
    times = {name: ([], []) for name in names}
    for round_index in range(rounds):
        for index, name in enumerate(names):
            turns = [(new, times[name][0]), (old, times[name][1])]
            if (round_index + index) % 2:
                turns.reverse()
            for worker, samples in turns:
                samples.append(worker.seconds(name, repeats))
    return times


def geometric_mean(values) -> float:
    return math.exp(statistics.fmean(math.log(value) for value in values))


def report(times: dict[str, tuple]) -> None:
    """Print the table, then the geometric mean of the ratios new/old over all models and its
    spread (the lowest and highest geometric mean of one round's ratios)."""
    print(f"{'model':72} {'new ms':>9} {'old ms':>9} {'new/old':>7}  spread")
    ratios = []
    for name, (new, old) in times.items():
        ratios.append(statistics.median(new) / statistics.median(old))
        per_round = [n / o for n, o in zip(new, old)]
        print(
            f"{name[:72]:72} {statistics.median(new) * 1e3:9.2f} "
            f"{statistics.median(old) * 1e3:9.2f} {ratios[-1]:7.3f}  "
            f"{min(per_round):.3f}-{max(per_round):.3f}"
        )
    rounds = len(next(iter(times.values()))[0])
    per_round = [
        geometric_mean(new[index] / old[index] for new, old in times.values())
        for index in range(rounds)
    ]
    print(
        f"geometric mean of new/old over {len(times)} models: {geometric_mean(ratios):.3f}"
        f"  (per round {min(per_round):.3f}-{max(per_round):.3f})"
    )


def rows(rounds: int) -> int:
    """Print, per distinct model of loops.py's quick rows, convert_model's median CPU time and
    each level's median ratio to it with the lowest and highest per-round ratio."""
    import openvino as ov

    import ov_loops
    from benchmarks.loops import quick_rows, row_model

    ways = {
        level: partial(ov_loops.convert, optimize=level) for level in ("none", "default", "max")
    }
    ways["convert_model"] = lambda path: ov.convert_model(str(path))
    print(f"{'model':24} {'convert_model':>13}   " + "   ".join(f"{w:>18}" for w in list(ways)[:3]))
    models = {(row.cell, row.form, row.hidden, row.batch): row for row in quick_rows()}
    with tempfile.TemporaryDirectory(prefix="conversion-rows-") as scratch:
        for index, ((cell, form, hidden, batch), row) in enumerate(sorted(models.items())):
            (Path(scratch) / str(index)).mkdir()
            path, _ = row_model(row, Path(scratch) / str(index))  # written, or the corpus export
            times = {name: [] for name in ways}
            for convert in ways.values():  # warm-up
                convert(path)
            for round_index in range(rounds):
                order = (
                    list(ways)[round_index % len(ways) :] + list(ways)[: round_index % len(ways)]
                )
                for name in order:
                    started = time.process_time()
                    ways[name](path)
                    times[name].append(time.process_time() - started)
            base = times["convert_model"]
            cells = []
            for name in list(ways)[:3]:
                ratios = [mine / theirs for mine, theirs in zip(times[name], base)]
                median = statistics.median(ratios)
                cells.append(f"{median:6.2f} {min(ratios):5.2f}-{max(ratios):5.2f}")
            label = f"{cell} {form} H={hidden} B={batch}"
            print(f"{label:24} {statistics.median(base) * 1e3:10.1f} ms   " + "   ".join(cells))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["rows"]:
        return rows(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5)
    if sys.argv[1:2] == ["fresh"]:
        from benchmarks.fresh_conversion import main as fresh

        del sys.argv[1]
        return fresh("Conversion time per fresh process, against convert_model", "time")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", type=Path, help="root of the baseline checkout")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=3, help="conversions per timing (min)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve()
        return 0
    if args.baseline_src is None:
        parser.error("--baseline-src is required")
    with tempfile.TemporaryDirectory(prefix="conversion-time-") as scratch:
        models = write_models(Path(scratch))
        new = Worker(TREE, models)
        old = Worker(args.baseline_src.resolve(), models)
        print(f"new: {new.source}\nold: {old.source}\n{len(models)} models, {args.rounds} rounds")
        times = measure(new, old, list(models), args.rounds, args.repeats)
        new.close()
        old.close()
    report(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
