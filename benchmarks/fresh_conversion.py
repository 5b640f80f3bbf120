"""One conversion per fresh process, against `openvino.convert_model` and `ovc`: time and peak
memory, interleaved, as ratios (conversion_time.py and conversion_memory.py print them).

    python -m benchmarks.fresh_conversion [--models seq10,seq100,nest8,big300] [--rounds 5]

Each round runs, per model, every method in its own process, in an order rotated from round to
round (the machine may be shared: compare within a round). Methods:

    none, default, max   ov_loops.translate(path, optimize=...) then ov_loops.save, the
                         caller holding the model while it saves
    cli                  the `ov-loops convert` CLI (`python -m ov_loops convert -q`), which
                         owns its model: ovc's counterpart (process CPU time only)
    convert_model        openvino.convert_model(path) then openvino.save_model
    ovc                  the `ovc` CLI that ships with openvino (process time only)

Time is the child's CPU time (process time: on a shared machine the wall time mostly measures
the other processes), in seconds, twice: the conversion call's (translate / convert_model) with
the modules it needs imported before (`import ov_loops.api`: openvino, onnx and ov_loops'
conversion modules; `import openvino`), and the imports plus the call (what a fresh process
pays; `import ov_loops` alone imports nothing: its names load on first use); peak memory the
child's peak RSS (`os.wait4`'s ru_maxrss: imports, conversion and writing the IR). The two
Python methods run in benchmarks/fresh_child.py, which imports nothing before them (this module
as the child had loaded modules openvino's import needs too: it favoured convert_model's
imports by 20-30 ms of CPU until 2026-11-29).
The tree's modules are compiled to bytecode once before measuring (`compileall`), as an
installed package is: with PYTHONDONTWRITEBYTECODE set, every child compiled ov_loops' 110
modules again, about 0.25 s of CPU time that convert_model, whose modules are installed
compiled, never paid. Models: the generated ones of benchmarks/generated_models.py by name
(written once into --directory, /tmp by default: a 3 GB one is not for the repository) or .onnx
paths (the models of benchmarks/models/ by default with --models bench).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
TREE = HERE.parents[1]
LEVELS = ("none", "default", "max")
METHODS = (*LEVELS, "cli", "convert_model", "ovc")
RATIOED = (*LEVELS, "cli")  # the methods whose ratios to the reference the tables print
WHOLE_PROCESS = ("cli", "ovc")  # timed as a whole process only: not in the time tables
FAILED: set[tuple[str, str, str]] = set()  # (method, model, last line of its error)
BENCH_MODELS = sorted(str(path) for path in (HERE.parent / "models").glob("*.onnx"))


def run(method: str, model: str, scratch: Path, tree: Path = TREE) -> tuple[float, float, float]:
    """(seconds of the call, of imports and call, peak RSS in MiB) of one conversion in a fresh
    process with the ov_loops of `tree`; for ovc both are the whole process's wall time, for cli
    its CPU time."""
    out = str(scratch / f"{method}.xml")
    if method == "ovc":
        command = [str(Path(sys.executable).parent / "ovc"), model, "--output_model", out]
    elif method == "cli":
        command = [sys.executable, "-m", "ov_loops", "convert", model, "-o", out, "-q"]
    else:
        command = [sys.executable, str(HERE.parent / "fresh_child.py"), method, model, out]
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, cwd=scratch
    )
    stdout = process.stdout.read()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    for written in scratch.iterdir():
        written.unlink()
    if process.returncode != 0:  # convert_model and ovc refuse sequences: no ratio to them
        FAILED.add((method, Path(model).stem, stderr.decode().strip().splitlines()[-1][:200]))
        return math.nan, math.nan, math.nan
    if method == "ovc":
        return wall, wall, usage.ru_maxrss / 1024
    if method == "cli":
        seconds = usage.ru_utime + usage.ru_stime
        return seconds, seconds, usage.ru_maxrss / 1024
    seconds, imports = map(float, stdout.decode().split())
    return seconds, imports + seconds, usage.ru_maxrss / 1024


WRITE_GENERATED = (  # python -c WRITE_GENERATED NAME DIRECTORY: prints the model's path
    "import sys; from pathlib import Path; from benchmarks.generated_models import write; "
    "print(write(sys.argv[1], Path(sys.argv[2])))"
)


def model_paths(names: list[str], directory: Path) -> dict[str, str]:
    """label -> path: generated models by name (written when missing, by a process of their
    own: a child's peak RSS counts the memory of the process it was started from, so a parent
    that had held big300 made every child's peak at least its size), paths as given."""
    paths = {}
    for name in names:
        if name == "bench":
            paths.update({Path(path).stem: path for path in BENCH_MODELS})
        elif name.endswith(".onnx"):
            paths[Path(name).stem] = name
        else:
            written = subprocess.run(
                [sys.executable, "-c", WRITE_GENERATED, name, str(directory)],
                cwd=TREE,
                check=True,
                capture_output=True,
                text=True,
            )
            paths[name] = written.stdout.strip()
    return paths


def compile_tree(tree: Path) -> None:
    """Write the bytecode of `tree`'s ov_loops (its __pycache__, which git ignores)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "compileall", "-q", str(tree / "ov_loops")]
    subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL)


def measure(paths: dict[str, str], methods: list[str], rounds: int, tree: Path = TREE) -> dict:
    """{model: {method: [run's triple per round]}}; progress on stderr."""
    compile_tree(tree)
    samples = {name: {method: [] for method in methods} for name in paths}
    with tempfile.TemporaryDirectory(prefix="fresh-conversion-") as scratch:
        for round_index in range(rounds):
            for model_index, (name, path) in enumerate(paths.items()):
                shift = (round_index + model_index) % len(methods)
                for method in methods[shift:] + methods[:shift]:
                    samples[name][method].append(run(method, path, Path(scratch), tree))
                print(f"round {round_index + 1}/{rounds}: {name}", file=sys.stderr, flush=True)
                print(json.dumps({name: samples[name]}), file=sys.stderr, flush=True)
    return samples


def table(samples: dict, which: int, against: str, methods: list[str], unit: str) -> None:
    """Medians of measure's `which` (0 call seconds, 1 imports and call, 2 MiB) per method,
    then each ov-loops level's median ratio to `against`, with its spread over the rounds
    (lowest-highest)."""
    levels = [method for method in methods if method in RATIOED]
    head = " ".join(f"{method:>13}" for method in methods)
    ratios = " ".join(f"{f'{level}/{against}':>20}" for level in levels)
    print(f"{'model':12} {head}   {ratios}   ({unit}; ratio median lowest-highest)")
    for name, by_method in samples.items():
        medians = [_median(s[which] for s in by_method[m]) for m in methods]
        cells = " ".join(f"{value:13.3f}" if unit == "s" else f"{value:13.0f}" for value in medians)
        shown = []
        for level in levels:
            per_round = [a[which] / b[which] for a, b in zip(by_method[level], by_method[against])]
            per_round = [ratio for ratio in per_round if not math.isnan(ratio)]
            if not per_round:
                shown.append("-")
                continue
            shown.append(
                f"{statistics.median(per_round):6.2f} {min(per_round):5.2f}-{max(per_round):5.2f}"
            )
        print(f"{name:12} {cells}   " + " ".join(f"{cell:>20}" for cell in shown))


def _median(values) -> float:
    values = [value for value in values if not math.isnan(value)]
    return statistics.median(values) if values else math.nan


def arguments(description: str, methods: tuple[str, ...]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--models", default="bench,seq10,seq100,seq300,seq1000,nest8,big300")
    parser.add_argument("--methods", default=",".join(methods))
    parser.add_argument("--rounds", type=int, default=5)
    scratch = Path(tempfile.gettempdir()) / "ov-loops-bench"
    parser.add_argument("--directory", type=Path, default=scratch, help="generated models")
    parser.add_argument("--tree", type=Path, default=TREE, help="the ov_loops checkout to run")
    return parser.parse_args()


def main(description: str = __doc__.splitlines()[0], tables: str = "time,memory") -> int:
    args = arguments(description, METHODS)
    sys.path.insert(0, str(TREE))  # the generated models (the child imports the tree's)
    methods = args.methods.split(",")
    paths = model_paths(args.models.split(","), args.directory)
    samples = measure(paths, methods, args.rounds, args.tree.resolve())
    fresh = f"{args.rounds} rounds, each conversion in a fresh process"
    if "time" in tables and "convert_model" in methods:  # the ratios' reference
        timed = [method for method in methods if method not in WHOLE_PROCESS]
        print(f"conversion call CPU time (its modules imported before), {fresh}")
        table(samples, 0, "convert_model", timed, "s")
        print(f"imports + conversion call CPU time, {fresh}")
        table(samples, 1, "convert_model", timed, "s")
    if "memory" in tables:
        against = "ovc" if "ovc" in methods else "convert_model"
        print(f"peak RSS, {fresh}")
        table(samples, 2, against, methods, "MiB")
    for method, model, error in sorted(FAILED):
        print(f"{model}: {method} failed: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
