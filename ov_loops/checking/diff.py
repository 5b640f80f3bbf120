"""Compare an output with its reference, element by element."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OutputDiff:
    """One output compared with its reference."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    max_abs_error: float
    max_rel_error: float
    mismatches: int
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.note


def diff(name: str, expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> OutputDiff:
    """Element-wise comparison: |got - expected| <= atol + rtol * |expected| (NaN equals NaN);
    integers with rtol = atol = 0 compare exactly."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.size == 0 and got.size == 0:
        return OutputDiff(name, got.shape, str(got.dtype), 0.0, 0.0, 0)
    if expected.shape != got.shape:
        return OutputDiff(
            name,
            got.shape,
            str(got.dtype),
            float("inf"),
            float("inf"),
            max(expected.size, got.size),
            f"shape differs from {expected.shape}",
        )
    if expected.dtype == np.bool_ or got.dtype == np.bool_:
        wrong = expected != got
        return OutputDiff(
            name,
            got.shape,
            str(got.dtype),
            float(wrong.any()),
            float(wrong.any()),
            int(wrong.sum()),
        )
    want = np.atleast_1d(expected.astype(np.float64))
    have = np.atleast_1d(got.astype(np.float64))
    with np.errstate(all="ignore"):  # infinities and NaNs are compared, not warned about
        error = np.where(want == have, 0.0, np.abs(have - want))  # equal infinities agree
        error[np.isnan(want) & np.isnan(have)] = 0.0
        error[np.isnan(error)] = np.inf  # NaN against a number
        relative = error / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
        wrong = ~(error <= atol + rtol * np.where(np.isfinite(want), np.abs(want), 0.0))
        relative = np.where(error == 0, 0.0, relative)
    relative[np.isnan(relative)] = np.inf
    if expected.dtype.kind in "iu" and got.dtype.kind in "iu" and rtol == atol == 0:
        wrong = np.atleast_1d(expected != got)  # exact, also past 2**53 where float64 rounds
    return OutputDiff(
        name, got.shape, str(got.dtype), float(error.max()), float(relative.max()), int(wrong.sum())
    )
