"""The lowering's share of a conversion, per loop: CPU time of `lower.select.lower` and of
each pass of the pipeline, the post-loop steps, the Loop-5 node, LoopIR.check (with its count
of calls), in ms per loop, and the layers of the converted model (bodies included).

    python -m benchmarks.lowering_cost [--models seq300,nest8] [--optimize default]

One process, a first conversion of seq10 to import and warm up; then each model once (CPU
time, `time.process_time`, around each call: a wrapper, not a profiler, whose own cost is
about 1 us a call). For the whole conversion against `openvino.convert_model`, each in a
fresh process, see fresh_conversion.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from benchmarks.generated_models import write

Timings = dict[str, list]  # what -> [calls, seconds]


def _timed(owner, name: str, what: str, timings: Timings) -> None:
    """Replace `owner.name` by a wrapper adding its calls and CPU time to `timings[what]`."""
    original: Callable = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            entry = timings[what]
            entry[0] += 1
            entry[1] += time.process_time() - started

    setattr(owner, name, wrapper)


def instrument() -> Timings:
    """Wrap the lowering's parts (every pass's `run`), return where their times go."""
    from ov_loops.loopir import loop, steps
    from ov_loops.loopir.passes.pipeline import PIPELINE
    from ov_loops.lower import loop5, select

    timings: Timings = defaultdict(lambda: [0, 0.0])
    _timed(select, "lower", "lower (all of it)", timings)
    _timed(select, "lower_to_loop5", "lower_to_loop5", timings)
    _timed(loop5, "build_loop", "  build_loop", timings)
    _timed(loop5, "apply_steps", "  post-loop steps", timings)
    _timed(steps, "runs_zero", "    runs_zero", timings)
    _timed(loop.LoopIR, "check", "LoopIR.check", timings)
    for kind in PIPELINE:
        _timed(kind, "run", f"pass {kind.name}", timings)
    return timings


def layers(model) -> int:
    """Ops of `model` and of every body in it."""
    from ov_loops.ovgraph import all_ops

    return sum(1 for _ in all_ops(model))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="seq100,seq300,seq1000,nest8")
    parser.add_argument("--optimize", default="default")
    parser.add_argument("--directory", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    import ov_loops

    timings = instrument()
    ov_loops.translate(str(write("seq10", args.directory)), optimize=args.optimize)
    for name in args.models.split(","):
        timings.clear()
        started = time.process_time()
        converted = ov_loops.translate(str(write(name, args.directory)), optimize=args.optimize)
        total = time.process_time() - started
        loops = timings["lower (all of it)"][0]
        print(f"{name}: {total:.2f} s, {loops} loops, {layers(converted.model)} layers")
        for what, (calls, seconds) in sorted(timings.items(), key=lambda item: -item[1][1]):
            print(f"  {what:45} {calls:7d} calls {1000 * seconds / loops:8.3f} ms/loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
