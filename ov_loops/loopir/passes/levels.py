"""Optimisation levels (imports nothing heavy: the CLI offers them before loading OpenVINO).

none     CPU-plugin workarounds only: the loop as the frontend wrote it
default  optimisations that never make a loop slower
max      also those that trade IR size for speed (e.g. unrolling)
"""

from __future__ import annotations

from typing import Literal, cast

from ov_loops.errors import InputError

OptimizeLevel = Literal["none", "default", "max"]
OPTIMIZE_LEVELS: tuple[OptimizeLevel, ...] = ("none", "default", "max")


def check_optimize_level(level: object) -> OptimizeLevel:
    """`level` if it is one of OPTIMIZE_LEVELS; InputError naming the choices otherwise."""
    if level not in OPTIMIZE_LEVELS:
        choices = ", ".join(OPTIMIZE_LEVELS)
        raise InputError(f"optimize: unknown level {level!r} (choose one of {choices})")
    return cast(OptimizeLevel, level)
