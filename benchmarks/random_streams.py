"""Cost of RandomStreams' counter-based uniforms against OpenVINO's RandomUniform: CPU, f32, one
thread, interleaved runs; prints the median latency and the 10th-90th percentile spread of each.

    python benchmarks/random_streams.py [--size 1000000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


def models(size: int) -> dict[str, ov.Model]:
    """One model per generator, each drawing `size` uniforms on [0, 1) per call."""
    streams = ov_loops.RandomStreams(1)
    shape = ops.constant(np.array([size], np.int64))
    zero, one = ops.constant(np.float32(0)), ops.constant(np.float32(1))
    openvino_draw = ops.random_uniform(shape, zero, one, "f32", 1, 2)
    return {
        "RandomStreams": ov_loops.function([], streams.uniform((size,))),
        "RandomUniform": ov.Model([ops.result(openvino_draw)], []),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=30)
    arguments = parser.parse_args()
    core = ov.Core()
    requests = {
        name: core.compile_model(model, "CPU", CONFIG).create_infer_request()
        for name, model in models(arguments.size).items()
    }
    for request in requests.values():
        request.infer({})  # warm up
    samples = interleaved_seconds(requests, {}, arguments.rounds)
    for name, seconds in samples.items():
        low, median, high = np.percentile(seconds * 1e3, [10, 50, 90])
        print(
            f"{name:14s} {arguments.size} uniforms: median {median:.2f} ms ({low:.2f}-{high:.2f})"
        )


if __name__ == "__main__":
    main()
