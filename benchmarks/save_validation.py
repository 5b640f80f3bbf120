"""What validating before writing costs `ov_loops.save`: per model, the time of
`openvino.save_model` alone, of `ov_loops.validate` on the written IR, and validation's peak
memory (the validating process's peak RSS above its peak after imports), on IRs with many Loops
and with big weights.

    python benchmarks/save_validation.py [--loops 100 500] [--weights-mb 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.validate_throughput import many_loops  # noqa: E402

VALIDATE_ALONE = """
import json, resource, sys, time
from ov_loops.ir.validate import validate
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
report = validate(sys.argv[1])
seconds = time.perf_counter() - start
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"seconds": seconds, "kib": grown, "errors": len(report.errors)}))
"""


def heavy_weights(megabytes: int) -> ov.Model:
    """A Loop adding a `megabytes` f32 constant (in its body) to its carried value 3 times."""
    count = megabytes * 2**20 // 4
    acc_in = ops.parameter([count], np.float32)
    weights = ops.constant(np.linspace(0, 1, count, dtype=np.float32))
    acc = ops.result(ops.add(acc_in, weights))
    body = ov.Model([acc, ops.result(ops.constant(True))], [acc_in], "body")
    acc0 = ops.parameter([count], np.float32, name="acc0")
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(acc_in, acc0.output(0), acc.output(0))
    return ov.Model([loop.get_iter_value(acc.output(0), -1)], [acc0], "heavy_weights")


def measure(name: str, model: ov.Model, scratch: Path, repeats: int) -> None:
    xml = scratch / f"{name}.xml"
    saves, validations, memory = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        ov.save_model(model, str(xml), compress_to_fp16=False)
        saves.append(time.perf_counter() - start)
        result = subprocess.run(
            [sys.executable, "-c", VALIDATE_ALONE, str(xml)],
            capture_output=True,
            text=True,
            check=True,
        )
        found = json.loads(result.stdout)
        assert found["errors"] == 0, found
        validations.append(found["seconds"])
        memory.append(found["kib"] / 1024)
    save, validation = statistics.median(saves), statistics.median(validations)
    xml_mb = xml.stat().st_size / 1e6
    bin_mb = xml.with_suffix(".bin").stat().st_size / 1e6
    print(
        f"{name:24} xml {xml_mb:7.1f} MB  bin {bin_mb:7.1f} MB  save_model {save:6.2f} s  "
        f"validate {validation:6.2f} s (+{100 * validation / save:4.0f}%)  "
        f"validate peak +{statistics.median(memory):6.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--weights-mb", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for count in args.loops:
            measure(f"{count} loops", many_loops(count), Path(scratch), args.repeats)
        weights = heavy_weights(args.weights_mb)
        measure(f"{args.weights_mb} MB weights", weights, Path(scratch), args.repeats)


if __name__ == "__main__":
    main()
