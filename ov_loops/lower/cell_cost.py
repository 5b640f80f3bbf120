"""When a recognised cell runs faster as its *Sequence-5 op than as an optimised Loop-5.

The model predicts both latencies as ratios to `openvino.convert_model`'s IR of the same loop
(a Loop or TensorIterator of the step, 1.0) and picks the lower::

    sequence = SEQUENCE[kind][H nearest on a log scale][batch class]
    loop     = LOOP[kind][H][batch class]        batch static (hoisting, unrolling apply)
             = DYNAMIC_LOOP                      batch dynamic (neither applies)
    choose the *Sequence-5 op  iff  sequence < loop

Batch classes: "one" for a static batch of at most 4 rows, "many" otherwise (16 measured).
Calibration (`python -m benchmarks.cell_lowering --rounds 11`, CPU AMD EPYC 2 cores shared, f32,
one thread, T = 100; medians of interleaved per-round ratios, spreads up to +-0.3 at B = 16):
the tables below. OpenVINO's CPU plugin runs a GRU without linear_before_reset 1.1-3.5x slower
than the frontend's IR, so it never wins; RNN and LSTM lose at H = 1024 with one row, where the
hoisted input projection (one GEMM for every step) beats the op's per-step projection.
DYNAMIC_LOOP: the exporter-shaped rows of benchmarks/loops.py at optimize="max" (x1.09-1.13).
"""

from __future__ import annotations

import math

from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.cells import Cell

HIDDEN = (64, 256, 1024)
# (kind, linear_before_reset) -> per HIDDEN: (one row, many rows) ratio to convert_model's IR
SEQUENCE = {
    ("RNN", False): ((0.33, 0.76), (0.55, 1.01), (0.96, 1.09)),
    ("GRU", False): ((1.27, 1.14), (1.56, 1.13), (3.45, 1.99)),
    ("GRU", True): ((0.36, 0.72), (0.73, 0.90), (1.01, 1.17)),
    ("LSTM", False): ((0.27, 0.60), (0.34, 0.86), (0.42, 1.05)),
}
LOOP = {
    ("RNN", False): ((0.48, 0.81), (0.58, 1.07), (0.61, 1.19)),
    ("GRU", False): ((0.64, 0.92), (0.63, 1.10), (0.50, 0.88)),
    ("GRU", True): ((0.55, 0.94), (0.65, 1.04), (0.52, 1.03)),
    ("LSTM", False): ((0.44, 0.65), (0.43, 0.97), (0.37, 1.04)),
}
DYNAMIC_LOOP = 1.1
FEW_ROWS = 4


class CellLowering:
    """The cell lowering as the target profiles see it: a name to skip it by, and its level."""

    name = "recognize-cells"
    level = "max"


def predicted(cell: Cell, batch: int | None) -> tuple[float, float]:
    """(sequence, loop): the predicted latencies as ratios to convert_model's IR, for `batch`
    rows (None: a dynamic batch)."""
    weights = cell.weights
    kind = (weights.kind, weights.linear_before_reset)
    size = min(range(len(HIDDEN)), key=lambda i: abs(math.log2(HIDDEN[i] / cell.hidden)))
    rows = 0 if batch is not None and batch <= FEW_ROWS else 1
    loop = LOOP[kind][size][rows] if batch is not None else DYNAMIC_LOOP
    return SEQUENCE[kind][size][rows], loop


def sequence_is_faster(cell: Cell, loop: LoopIR) -> bool:
    """Whether `cell` is predicted to run faster as its *Sequence-5 op (see the module)."""
    state = loop.outer[cell.state_ports[0]].get_partial_shape()
    batch = state[0].get_length() if state[0].is_static else None
    sequence, looped = predicted(cell, batch)
    return sequence < looped
