"""Device targets: the profile a `--target` name, an `--unroll` count and `--stateful` choose
(their command line is `ov_loops.cli.convert.add_convert_options`)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ov_loops.errors import InputError

if TYPE_CHECKING:
    from ov_loops.loopir.passes.pipeline import TargetProfile

TARGET_NAMES = ("CPU", "GPU", "NPU")  # pipeline.TARGETS; named here so the CLI loads no OpenVINO


def check_target(target: object) -> str:
    """The profile name of `target` (CPU, GPU or NPU, any case); InputError otherwise."""
    name = str(target).upper()
    if name not in TARGET_NAMES:
        raise InputError(f"unknown target {target!r}: choose one of {', '.join(TARGET_NAMES)}")
    return name


def check_unroll(unroll: object) -> None:
    """InputError unless `unroll` is None or a non-negative integer."""
    if unroll is None:
        return
    if isinstance(unroll, bool) or not isinstance(unroll, int) or unroll < 0:
        raise InputError(f"unroll must be a non-negative integer, got {unroll!r}")


def target_profile(
    target: str = "CPU", unroll: int | None = None, stateful: bool = False
) -> TargetProfile:
    """The profile of `target` (CPU, GPU or NPU); with `unroll`, loops of at most that many
    iterations are unrolled whatever the target's own threshold; `stateful` keeps top-level
    loops' carried values in Variables. InputError otherwise."""
    from ov_loops.loopir.passes.pipeline import TARGETS

    profile = TARGETS[check_target(target)]
    check_unroll(unroll)
    if stateful:
        profile = dataclasses.replace(profile, stateful=True)
    if unroll is None:
        return profile
    return dataclasses.replace(profile, unroll=max(profile.unroll, unroll))
