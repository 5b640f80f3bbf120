"""When a recognised cell runs faster as its *Sequence-5 op than as an optimised Loop-5.

The model predicts both latencies as ratios to `openvino.convert_model`'s IR of the same loop
(a Loop or TensorIterator of the step, 1.0) and picks the lower::

    sequence = SEQUENCE[kind][H nearest on a log scale][batch class]
    loop     = LOOP[kind][H][batch class]        batch static (hoisting, unrolling apply)
             = DYNAMIC_LOOP                      batch dynamic (neither applies)
    choose the *Sequence-5 op  iff  sequence < loop

Batch classes: "one" for a static batch of at most 4 rows, "many" otherwise (16 measured).
Calibration: `python -m benchmarks.cell_lowering` (CPU AMD EPYC, 2 cores shared with other
work, load 1-6; f32, one thread, T = 100), twice over the grid (11 and 7 interleaved rounds)
and once more at H = 64, B = 1 (31 rounds); each table entry is the median of the runs'
median per-round ratios (spreads reach +-0.3 and more under load). OpenVINO's CPU plugin runs
a GRU without linear_before_reset 1.1-3x slower than the frontend's IR, so it never wins; RNN,
LSTM and GRU with linear_before_reset lose at H = 1024 with one row (and GRU lbr at H = 256),
where the hoisted input projection (one GEMM for all steps) and unrolling beat the op's
per-step kernels. The many-rows Loop entries of RNN, GRU lbr and LSTM at H = 256 and 1024
were measured again once unrolling masked fewer copies of heavy bodies
(loopir/passes/unroll_iterations.py, `masked_limit`): `--clock cpu`, medians of two runs at
H = 256 (11 and 9 rounds), one at 1024 (9), load 5-6; RNN at H = 256 was x1.01 / x1.05 as the
op, x0.99 / x0.93 as the Loop. GRU lbr at H = 256, 16 rows: both entries are the medians of
those two runs and an A/B run of the IRs before and after (x1.01 / x0.93 / x0.94 as the op,
x0.95 / x0.99 / x1.01 as the Loop).
RNN at H = 256 with one row, both entries again from one run (`--clock cpu`, 11 rounds,
load 6-9): x0.68 as the op, x0.57 as the Loop (T = 1000: x0.57 and x0.45), so the Loop-5
(hoisted x W, unrolled x16) is chosen there.
DYNAMIC_LOOP: the exporter-shaped rows of benchmarks/loops.py at
optimize="max" before this lowering (x1.09-1.13: no hoisting or unrolling on a dynamic batch).
"""

from __future__ import annotations

import math

from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.cells import Cell

HIDDEN = (64, 256, 1024)
# (kind, linear_before_reset) -> per HIDDEN: (one row, many rows) ratio to convert_model's IR
SEQUENCE = {
    ("RNN", False): ((0.33, 0.72), (0.68, 0.99), (0.97, 1.20)),
    ("GRU", False): ((1.28, 1.08), (1.51, 1.15), (2.97, 2.06)),
    ("GRU", True): ((0.37, 0.71), (0.73, 0.94), (1.04, 1.19)),
    ("LSTM", False): ((0.27, 0.57), (0.36, 0.85), (0.39, 1.08)),
}
LOOP = {
    ("RNN", False): ((0.48, 0.83), (0.57, 0.96), (0.55, 0.99)),
    ("GRU", False): ((0.66, 0.78), (0.65, 1.11), (0.49, 1.01)),
    ("GRU", True): ((0.62, 0.98), (0.52, 0.99), (0.42, 1.01)),
    ("LSTM", False): ((0.51, 0.71), (0.41, 0.99), (0.35, 0.98)),
}
DYNAMIC_LOOP = 1.1
FEW_ROWS = 4


def predicted(cell: Cell, batch: int | None) -> tuple[float, float]:
    """(sequence, loop): the predicted latencies as ratios to convert_model's IR, for `batch`
    rows (None: a dynamic batch)."""
    weights = cell.weights
    kind = (weights.kind, weights.linear_before_reset)
    size = min(range(len(HIDDEN)), key=lambda i: abs(math.log2(HIDDEN[i] / cell.hidden)))
    rows = 0 if batch is not None and batch <= FEW_ROWS else 1
    loop = LOOP[kind][size][rows] if batch is not None else DYNAMIC_LOOP
    return SEQUENCE[kind][size][rows], loop


def predicted_for(cell: Cell, loop: LoopIR) -> tuple[float, float]:
    """(sequence, loop) as `predicted` says for the batch of `loop`'s state."""
    state = loop.outer[cell.state_ports[0]].get_partial_shape()
    return predicted(cell, state[0].get_length() if state[0].is_static else None)


def sequence_is_faster(cell: Cell, loop: LoopIR) -> bool:
    """Whether `cell` is predicted to run faster as its *Sequence-5 op (see the module)."""
    sequence, looped = predicted_for(cell, loop)
    return sequence < looped


def kept_as_loop(cell: Cell, loop: LoopIR) -> str:
    """The report's reason for keeping a recognised cell a Loop-5."""
    sequence, looped = predicted_for(cell, loop)
    return f"kept a Loop-5 over {cell.op} (predicted x{looped:.2f} vs x{sequence:.2f})"
