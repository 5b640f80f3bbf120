"""A Scan's mit-mot outputs (the gradient buffers `pytensor.grad` builds through a scan) as
sit-sot accumulators: the loop carries the few rows of the buffer that later steps still
change, not the whole buffer.

A mit-mot's buffer B (an outer input of length >= n_steps + high) is read at B[i + t] for t in
its input taps and written at B[i + t] for t in its output taps at step i (taps shifted so the
smallest input tap is 0, as Scan.perform indexes them). A step writes no row below i, so row i
is final after step i, and no step before i wrote a row from i + width on (width = the largest
output tap):

    window_i = rows i .. i + high of B as the steps before i left them
             = [carry_k for k < width] + [B[i + t] for t >= width]    (B's rows as sequences)
    step i:  inner inputs window_i[t] for t in the input taps;
             window_i[t] = the inner output of t, for t in the output taps;
             emitted_i = window_i[0]; carry_k = window_i[k + 1] for k < width
    carry_k starts as B[k]
    B after n steps = concat(emitted_0 .. emitted_n-1, carry_0 .. carry_width-1, B[n + width:])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.theano.arguments import OutputInfo

_ZERO = np.int64(0)
_END = np.iinfo(np.int64).max


def rows(buffer: ov.Output, start: ov.Output | int, stop: ov.Output | int) -> ov.Output:
    """buffer[start:stop] along axis 0."""
    bounds = [i64(v) if isinstance(v, int) else ops.unsqueeze(v, i64(0)) for v in (start, stop)]
    return ops.slice(buffer, *bounds, i64(1), i64(0)).output(0)


@dataclass(frozen=True)
class MitMot:
    """One mit-mot's taps, shifted so that the smallest input tap is 0."""

    in_taps: tuple[int, ...]
    out_taps: tuple[int, ...]

    @property
    def width(self) -> int:
        """How many rows the loop carries (the rows i .. i + width - 1 at step i)."""
        return max(self.out_taps)

    @property
    def sequence_taps(self) -> list[int]:
        """The input taps read from B's rows, never written before the step reads them."""
        return [t for t in self.in_taps if t >= self.width]


def mit_mots(op) -> list[MitMot]:
    """The mit-mots of a Scan Op; NotImplementedError for an output tap below its input taps."""
    found = []
    for in_taps, out_taps in zip(op.info.mit_mot_in_slices, op.info.mit_mot_out_slices):
        shift = -min(in_taps)
        if min(out_taps) + shift < 0:
            raise NotImplementedError(f"a mit-mot writing below the rows it reads ({out_taps})")
        found.append(MitMot(tuple(t + shift for t in in_taps), tuple(t + shift for t in out_taps)))
    return found


def _row(buffer: ov.Output, index: ov.Output | int) -> ov.Output:
    """buffer[index] (index along axis 0)."""
    position = ops.constant(np.int64(index)) if isinstance(index, int) else index
    return ops.gather(buffer, position, _ZERO).output(0)


def carries(mitmots: list[MitMot], buffers: list[ov.Output]) -> list[OutputInfo]:
    """scan's outputs_info of the carried rows, each a sit-sot whose last value is kept:
    carry_k of each mit-mot starts as B[k]."""
    return [
        OutputInfo(_row(buffer, k), [-1], last=True)
        for mitmot, buffer in zip(mitmots, buffers)
        for k in range(mitmot.width)
    ]


def sequences(mitmots: list[MitMot], buffers: list[ov.Output]) -> list[ov.Output]:
    """scan's sequences of the rows read before any step writes them: B[t:] for each
    sequence tap t of each mit-mot."""
    return [
        rows(buffer, tap, _END)
        for mitmot, buffer in zip(mitmots, buffers)
        for tap in mitmot.sequence_taps
    ]


def split(mitmots: list[MitMot], values: list, per_mitmot) -> tuple[list[list], list]:
    """`values` cut into one list per mit-mot (`per_mitmot(mitmot)` long each) and the rest."""
    groups = []
    for mitmot in mitmots:
        count = per_mitmot(mitmot)
        groups.append(values[:count])
        values = values[count:]
    return groups, values


def window(mitmot: MitMot, seq_rows: list[ov.Output], carried: list[ov.Output]) -> dict:
    """A step's window {t: row i + t} before it writes: its carry_k, then its sequence rows."""
    return {**dict(enumerate(carried)), **dict(zip(mitmot.sequence_taps, seq_rows))}


def written(mitmot: MitMot, rows: dict, outputs: list[ov.Output]) -> tuple[list, ov.Output]:
    """The window after the step writes `outputs` at the output taps: (the next carries, the
    emitted row i)."""
    rows = {**rows, **dict(zip(mitmot.out_taps, outputs))}
    return [rows[k + 1] for k in range(mitmot.width)], rows[0]


def final_buffer(
    buffer: ov.Output, width: int, emitted: ov.Output, carried: list, n_steps: ov.Output
) -> ov.Output:
    """B after n_steps: concat(emitted rows, final carries, B[n_steps + width:])."""
    start = ops.add(n_steps, ops.constant(np.int64(width))).output(0)
    parts = [emitted, *(ops.unsqueeze(c, i64(0)).output(0) for c in carried)]
    return ops.concat([*parts, rows(buffer, start, _END)], 0).output(0)
