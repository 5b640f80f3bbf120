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
    if unroll is not None:
        check_count("unroll", unroll)


def target_profile(
    target: str = "CPU",
    unroll: int | None = None,
    stateful: bool = False,
    max_trip_count: int | None = None,
) -> TargetProfile:
    """The profile of `target` (CPU, GPU or NPU); with `unroll`, loops of at most that many
    iterations are unrolled whatever the target's own threshold (and trip counts are proven
    from execution conditions, as for the targets that unroll); `stateful` keeps top-level
    loops' carried values in Variables; `max_trip_count` is the trip count of loops that have
    none (they stop at their condition, or after that many iterations). InputError
    otherwise."""
    from ov_loops.loopir.passes.pipeline import TARGETS, UNROLLING

    profile = TARGETS[check_target(target)]
    check_unroll(unroll)
    if stateful:
        profile = dataclasses.replace(profile, stateful=True)
    if max_trip_count is not None:
        check_count("max_trip_count", max_trip_count)
        profile = dataclasses.replace(profile, max_trip_count=max_trip_count)
    if unroll is None:
        return profile
    passes = profile.passes | UNROLLING if unroll else profile.passes
    return dataclasses.replace(profile, unroll=max(profile.unroll, unroll), passes=passes)


def check_count(name: str, value: object) -> None:
    """InputError naming option `name` unless `value` is a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value!r}")
