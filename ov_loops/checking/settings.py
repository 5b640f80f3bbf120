"""What a check was asked for: the device, the generated inputs' shapes and seed, tolerances."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEOUT = 1800.0
"""Seconds the device worker may stay silent in one stage (start-up, compile, inference,
convert_model) before it is stopped and the check fails in one line (`check --timeout`)."""


@dataclass(frozen=True)
class Settings:
    """The options of one check (see `ov_loops.checking.check`)."""

    device: str
    shapes: dict[str, tuple[int, ...]]
    seed: int
    rtol: float
    atol: float
    precision: str
    max_iterations: int
    compress_to_fp16: bool = False  # how the divergence locator saves its instrumented model
    timeout: float | None = DEFAULT_TIMEOUT  # of the device worker's silence (None: no limit)
