"""Memory and time of many conversions in one process (a conversion service's view).

Converts a model of 10 side-by-side Loops (each with a nested Loop: 20 loops) again and again and
prints, per batch, the process's RSS, the objects the collector tracks and the median time per
conversion. Flat columns mean nothing of a conversion outlives it.

    python benchmarks/conversion_memory.py [--loops 10] [--batches 8] [--per-batch 20]

Peak memory of one conversion against `ovc` and `openvino.convert_model`, each conversion in a
fresh process, interleaved (benchmarks/fresh_conversion.py; its options follow `fresh`):

    python benchmarks/conversion_memory.py fresh [--models bench,seq1000,big300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops  # noqa: E402
from tests.onnx_builders import side_by_side_loops  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def main() -> None:
    if sys.argv[1:2] == ["fresh"]:
        from benchmarks.fresh_conversion import main as fresh

        del sys.argv[1]
        sys.exit(fresh("Peak RSS of one conversion per fresh process, against ovc", "memory"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=10)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--per-batch", type=int, default=20)
    args = parser.parse_args()
    data = side_by_side_loops(args.loops).SerializeToString()
    print(f"{'conversions':>11} {'RSS MiB':>8} {'objects':>8} {'ms/conversion (median)':>23}")
    for batch in range(args.batches):
        times = []
        for _ in range(args.per_batch):
            start = time.perf_counter()
            ov_loops.convert(data)
            times.append(time.perf_counter() - start)
        gc.collect()
        done = (batch + 1) * args.per_batch
        print(
            f"{done:11d} {rss_mib():8.1f} {len(gc.get_objects()):8d} "
            f"{statistics.median(times) * 1000:23.1f}"
        )


if __name__ == "__main__":
    main()
