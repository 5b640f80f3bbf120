"""Regenerate the bundled ONNX samples: python ir_samples/make_samples.py"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.rnn_loop import rnn_loop_model  # noqa: E402

SAMPLES = {"rnn_loop.onnx": lambda: rnn_loop_model(hidden=16, seed=0)}


def main() -> None:
    for name, build in SAMPLES.items():
        (HERE / name).write_bytes(build().SerializeToString())
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
