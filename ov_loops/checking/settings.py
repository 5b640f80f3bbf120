"""What a check was asked for: the device, the generated inputs' shapes and seed, tolerances."""

from __future__ import annotations

from dataclasses import dataclass


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
