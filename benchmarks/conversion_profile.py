"""Where the CPU time of one conversion goes: each model converted in a fresh process, its CPU time
split by stage (exclusive: a stage's time excludes the stages it calls).

    python -m benchmarks.conversion_profile [--models seq100,seq1000,nest1,nest8] [--level default]
        [--rounds 3] [--cprofile 30]

Stages (the functions timed):

    load          load_model (read, ONNX rewrites, checker)
    placeholders  replace_loops (loops -> placeholders, every depth)
    frontend      Frontend.convert: OpenVINO's ONNX frontend, main graph and every body
    typing        body.converted_body: the body typed from the arriving values, checked, relaxed
    expand        the extension's own work per loop (layout, LoopIR built, report)
    simplify      SimplifyBody.run (MOC on the body)
    lower         lower.select.lower, but for simplify (passes, Loop-5, post-loop steps)
    finish        what the driver does once the graph is converted (normalize, rederived, ...)
    rest          the conversion call's CPU time minus the stages (imports inside the call, ...)

Models: the generated ones of benchmarks/generated_models.py by name (written once into
--directory) or .onnx paths. With --cprofile N the child also prints cProfile's N most expensive
functions by internal time (slower: the split is then for orientation only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()
TREE = HERE.parents[1]
STAGES = ("load", "placeholders", "frontend", "typing", "expand", "simplify", "lower", "finish")


class StageTimer:
    """Exclusive CPU time per stage: the innermost running stage is charged."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        self._since = 0.0

    def wrap(self, stage: str, function):
        def timed(*args, **kwargs):
            now = time.process_time()
            if self._stack:
                self.seconds[self._stack[-1]] += now - self._since
            self._stack.append(stage)
            self._since = now
            try:
                return function(*args, **kwargs)
            finally:
                now = time.process_time()
                self.seconds[self._stack.pop()] += now - self._since
                self._since = now

        return timed


def instrument(timer: StageTimer) -> None:
    """Wrap the functions of every stage where their callers look them up."""
    from ov_loops import api
    from ov_loops.conversion import driver, frontend
    from ov_loops.frontends.onnx.ops import body
    from ov_loops.loopir.passes import simplify

    api.load_model = timer.wrap("load", api.load_model)
    driver.replace_loops = timer.wrap("placeholders", driver.replace_loops)
    frontend.Frontend.convert = timer.wrap("frontend", frontend.Frontend.convert)
    body.converted_body = timer.wrap("typing", body.converted_body)
    driver.Converter._expand = timer.wrap("expand", driver.Converter._expand)
    simplify.SimplifyBody.run = timer.wrap("simplify", simplify.SimplifyBody.run)
    driver.lower = timer.wrap("lower", driver.lower)
    driver.Converter._converted = timer.wrap("finish", driver.Converter._converted)


def child(model: str, level: str, top: int) -> None:
    """In the fresh process: convert `model`, print {stage: seconds} and the total as JSON."""
    import cProfile
    import pstats

    import ov_loops

    timer = StageTimer()
    instrument(timer)
    profile = cProfile.Profile() if top else None
    started = time.process_time()
    if profile:
        profile.enable()
    ov_loops.translate(model, optimize=level)
    if profile:
        profile.disable()
    total = time.process_time() - started
    if profile:
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(top)
    print(json.dumps({"total": total, **timer.seconds}), flush=True)


def run(model: str, level: str, top: int, tree: Path) -> dict[str, float]:
    command = [sys.executable, str(HERE), "--child", model, level, str(top)]
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    if top:
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="seq100,seq1000,nest1,nest2,nest4,nest8")
    parser.add_argument("--level", default="default")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cprofile", type=int, default=0)
    parser.add_argument("--directory", type=Path, default=Path("/tmp/ov-loops-bench"))
    parser.add_argument("--tree", type=Path, default=TREE)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    sys.path.insert(0, str(TREE))
    from benchmarks.fresh_conversion import compile_tree, model_paths

    compile_tree(args.tree)
    paths = model_paths(args.models.split(","), args.directory)
    samples = {name: [] for name in paths}
    for _ in range(args.rounds):  # rounds outermost: the machine may be shared
        for name, path in paths.items():
            samples[name].append(run(path, args.level, args.cprofile, args.tree))
    columns = ("total", *STAGES, "rest")
    print(f"CPU seconds at {args.level}, median of {args.rounds} fresh processes (exclusive)")
    print(f"{'model':10} " + " ".join(f"{c:>12}" for c in columns))
    for name, runs in samples.items():
        for each in runs:
            each["rest"] = each["total"] - sum(each.get(stage, 0.0) for stage in STAGES)
        cells = [statistics.median(each.get(c, 0.0) for each in runs) for c in columns]
        print(f"{name:10} " + " ".join(f"{cell:12.3f}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
