"""Validation throughput of `ov_loops.validate` on generated IRs of growing size (up to >= 50 MB)
with many Loop layers; prints MB/s per size and how time grows with size (linear: ~size ratio).

    python benchmarks/validate_throughput.py [--max-mb 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops  # noqa: E402

BODY_OPS = 40


def many_loops(count: int) -> ov.Model:
    """`count` Loop-5 layers side by side, each with a chain of BODY_OPS ops in its body."""
    x = ops.parameter([-1, 8], np.float32, name="x")
    h0 = ops.parameter([8], np.float32, name="h0")
    outputs = []
    for index in range(count):
        h_in = ops.parameter([8], np.float32)
        x_part = ops.parameter([1, 8], np.float32)
        value = ops.add(h_in, ops.squeeze(x_part, ops.constant(np.array([0], np.int64))))
        for step in range(BODY_OPS):
            value = ops.multiply(value, ops.constant(np.float32(1 + step / 100)))
        h_out = ops.result(value)
        keep = ops.result(ops.constant(True))
        stacked = ops.result(ops.unsqueeze(value, ops.constant(np.array([0], np.int64))))
        body = ov.Model([h_out, keep, stacked], [h_in, x_part], f"body_{index}")
        trip = ops.squeeze(
            ops.gather(ops.shape_of(x), ops.constant([0]), ops.constant(0)), ops.constant([0])
        )
        loop = ops.loop(trip, ops.constant(True))
        loop.set_function(body)
        loop.set_special_body_ports([-1, 1])
        loop.set_merged_input(h_in, h0.output(0), h_out.output(0))
        loop.set_sliced_input(x_part, x.output(0), 0, 1, 1, -1, 0)
        outputs.append(loop.get_iter_value(h_out.output(0), -1))
        outputs.append(loop.get_concatenated_slices(stacked.output(0), 0, 1, 1, -1, 0))
    return ov.Model(outputs, [x, h0], "many_loops")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=50.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / "probe.xml"
        ov.save_model(many_loops(10), str(probe))
        per_loop = probe.stat().st_size / 10
        rows = []
        for fraction in (0.25, 0.5, 1.0):
            count = int(args.max_mb * fraction * 1e6 / per_loop) + 1
            xml = Path(scratch) / f"ir_{count}.xml"
            ov.save_model(many_loops(count), str(xml))
            size = xml.stat().st_size / 1e6
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                report = ov_loops.validate(xml)
                times.append(time.perf_counter() - start)
            assert report.loops == count and not report.errors, report.summary()
            seconds = statistics.median(times)
            rows.append((size, seconds))
            print(f"{count:6d} loops {size:7.1f} MB  {seconds:6.2f} s  {size / seconds:6.1f} MB/s")
        (small_mb, small_s), (large_mb, large_s) = rows[0], rows[-1]
        print(
            f"size x{large_mb / small_mb:.2f} -> time x{large_s / small_s:.2f} "
            "(linear growth: the two ratios agree)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
