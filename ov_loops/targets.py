"""Device targets: the profile a `--target` name, an `--unroll` count and `--stateful` choose
(their command line is `ov_loops.cli.convert.add_convert_options`)."""

from __future__ import annotations

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
    iterations are unrolled whatever the target's own threshold (and trip counts are proven
    from execution conditions, as for the targets that unroll); `stateful` keeps top-level
    loops' carried values in Variables. InputError otherwise."""
    from ov_loops.loopir.passes.pipeline import TARGETS, UNROLLING

    profile = TARGETS.get(str(target).upper())
    if profile is None:
        raise InputError(f"unknown target {target!r}: choose one of {', '.join(TARGET_NAMES)}")
    if stateful:
        profile = dataclasses.replace(profile, stateful=True)
    if unroll is None:
        return profile
    if isinstance(unroll, bool) or not isinstance(unroll, int) or unroll < 0:
        raise InputError(f"unroll must be a non-negative integer, got {unroll!r}")
    passes = profile.passes | UNROLLING if unroll else profile.passes
    return dataclasses.replace(profile, unroll=max(profile.unroll, unroll), passes=passes)
