"""Calibration of the cell lowering's cost model (ov_loops/lower/cell_cost.py): a recognised
cell as its *Sequence-5 op vs the same loop at optimize="max" and "default" without it
(hoisting, unrolling, Loop-5), vs openvino.convert_model's IR.

    python -m benchmarks.cell_lowering [--cells rnn,gru,gru_lbr,lstm] [--hidden 64,256,1024]
        [--batch 1,16] [--steps 100] [--rounds 15] [--clock wall|cpu] [--json OUT]

CPU, f32, one thread, one stream; the three compiled models run interleaved (the order rotated
every round, benchmarks/timing.py); each cell is the median latency and the spread
(lowest-highest) of the per-round ratios to convert_model's IR.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.loop_models import loop_feeds, loop_model  # noqa: E402
from benchmarks.timing import CLOCKS, interleaved_seconds  # noqa: E402
from ov_loops.conversion.driver import Converter  # noqa: E402
from ov_loops.frontends.onnx.load.load import load_model  # noqa: E402
from ov_loops.loopir.passes.pipeline import CPU, RECOGNIZE_CELLS, LoweringOptions  # noqa: E402

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
WITHOUT_CELLS = CPU.replace(skips=frozenset({RECOGNIZE_CELLS.name}))
FORCED = CPU


def compiled_models(cell: str, hidden: int, batch: int) -> dict[str, ov.CompiledModel]:
    """The sequence op (cost model bypassed), max and default without cells, and
    convert_model's IR."""
    from ov_loops.lower import cell_cost  # lower/select.py imports it where it asks

    model = loop_model(cell, "loop", hidden, batch)
    core = ov.Core()
    chosen = cell_cost.sequence_is_faster
    cell_cost.sequence_is_faster = lambda cell, loop: True
    try:
        forced = LoweringOptions(FORCED, "max")
        made = {"sequence": Converter(load_model(model), forced).convert().model}
    finally:
        cell_cost.sequence_is_faster = chosen
    for level in ("max", "default"):
        options = LoweringOptions(WITHOUT_CELLS, level)
        made[f"loop {level}"] = Converter(load_model(model), options).convert().model
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.onnx"
        path.write_bytes(model.SerializeToString())
        made["openvino"] = ov.convert_model(str(path))
    return {name: core.compile_model(m, "CPU", CONFIG) for name, m in made.items()}


def measure(cell: str, hidden: int, batch: int, steps: int, rounds: int, clock: str) -> dict:
    """Median latencies (ms) and ratios to the openvino column with their spread."""
    models = compiled_models(cell, hidden, batch)
    feeds = loop_feeds(cell, hidden, batch, steps)
    requests = {name: model.create_infer_request() for name, model in models.items()}
    outputs = {name: request.infer(feeds)[0].copy() for name, request in requests.items()}
    for name, got in outputs.items():
        np.testing.assert_allclose(got, outputs["openvino"], rtol=1e-3, atol=1e-3, err_msg=name)
    samples = interleaved_seconds(requests, feeds, rounds, clock)
    row = {"cell": cell, "hidden": hidden, "batch": batch, "steps": steps}
    for name, values in samples.items():
        ratio = values / samples["openvino"]
        row[name] = {
            "ms": float(np.median(values) * 1e3),
            "ratio": float(np.median(ratio)),
            "spread": [float(ratio.min()), float(ratio.max())],
        }
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="rnn,gru,gru_lbr,lstm")
    parser.add_argument("--hidden", default="64,256,1024")
    parser.add_argument("--batch", default="1,16")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for cell in args.cells.split(","):
        for hidden in map(int, args.hidden.split(",")):
            for batch in map(int, args.batch.split(",")):
                row = measure(cell, hidden, batch, args.steps, args.rounds, args.clock)
                rows.append(row)
                cells = "  ".join(
                    f"{name} x{row[name]['ratio']:.2f} ({row[name]['spread'][0]:.2f}-"
                    f"{row[name]['spread'][1]:.2f})"
                    for name in ("sequence", "loop max", "loop default")
                )
                print(
                    f"{cell:8} H={hidden:<5} B={batch:<3} openvino "
                    f"{row['openvino']['ms']:.2f} ms  {cells}",
                    flush=True,
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
