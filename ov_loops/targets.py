"""Device targets: the profile a `--target` name and an `--unroll` count choose, and their CLI
arguments (`add_target_arguments`, one of the conversion options of `convert_options.py`)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from ov_loops.errors import InputError

if TYPE_CHECKING:
    from ov_loops.loopir.passes.pipeline import TargetProfile

TARGET_NAMES = ("CPU", "GPU", "NPU")  # pipeline.TARGETS; named here so the CLI loads no OpenVINO


def target_profile(
    target: str = "CPU", unroll: int | None = None, stateful: bool = False
) -> TargetProfile:
    """The profile of `target` (CPU, GPU or NPU); with `unroll`, loops of at most that many
    iterations are unrolled whatever the target's own threshold; `stateful` keeps top-level
    loops' carried values in Variables. InputError otherwise."""
    from ov_loops.loopir.passes.pipeline import TARGETS

    profile = TARGETS.get(str(target).upper())
    if profile is None:
        raise InputError(f"unknown target {target!r}: choose one of {', '.join(TARGET_NAMES)}")
    if stateful:
        profile = dataclasses.replace(profile, stateful=True)
    if unroll is None:
        return profile
    if isinstance(unroll, bool) or not isinstance(unroll, int) or unroll < 0:
        raise InputError(f"unroll must be a non-negative integer, got {unroll!r}")
    return dataclasses.replace(profile, unroll=max(profile.unroll, unroll))


def add_target_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--target`, `--stateful` and `--unroll`: what `ov-loops convert` (and `check`) converts
    for."""
    parser.add_argument(
        "--target",
        choices=TARGET_NAMES,
        default="CPU",
        help="the device the IR is for: chooses lowerings and workarounds per loop; NPU "
        "refuses loops without a constant trip count and static shapes (default CPU)",
    )
    parser.add_argument(
        "--stateful",
        action="store_true",
        help="keep the carried values of the main graph's loops in OpenVINO Variables "
        "(ReadValue/Assign), so a long sequence can be fed in chunks; reset_state() restarts",
    )
    parser.add_argument(
        "--unroll",
        type=int,
        metavar="N",
        help="unroll loops of at most N iterations into straight-line graph (any target); "
        "each loop left a loop says why ('not unrolled: ...')",
    )
