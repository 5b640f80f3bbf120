"""Device targets, one table: each `--target` name and what its plugin needs of a loop (which
loops it unrolls, static shapes); the lowering's profile of each is built from this table
(`loopir/passes/pipeline.py: TARGETS`, `target_profile`). Imports nothing heavy: the CLI offers
the names without OpenVINO, and the validator reads GPU_UNROLL_BELOW with lxml alone."""

from __future__ import annotations

from ov_loops.errors import InputError
from ov_loops.record import Record

# OpenVINO's GPU plugin unrolls every Loop/TensorIterator of fewer than 16 iterations itself
# (src/plugins/intel_gpu/src/plugin/transformations_pipeline.cpp: the callback of
# ov::pass::UnrollTensorIterator keeps loops with `num_iter >= 16`).
GPU_UNROLL_BELOW = 16


class Target(Record):
    """A device as `--target` names it: loops of at most `unroll` iterations become
    straight-line graph (their trip counts proven from execution conditions when it is not 0);
    `static`: every loop must have a constant trip count and static shapes, or conversion is
    refused. Every target runs the CPU plugin's workarounds (they keep Loop-5's semantics)."""

    __slots__ = ("name", "unroll", "static")

    def __init__(self, name: str, unroll: int = 0, static: bool = False) -> None:
        self.name = name
        self.unroll = unroll
        self.static = static


TARGETS = (
    Target("CPU"),
    # The GPU plugin unrolls short loops itself; we do the same before it, so the IR is what the
    # GPU runs, and with current_iteration as a constant of the type the body declares (its own
    # unrolling feeds an i64 Constant to i32 bodies, which its i32-only kernels refuse:
    # openvinotoolkit/openvino#34777; validator rule GP001).
    Target("GPU", unroll=GPU_UNROLL_BELOW - 1),
    # The NPU compiler needs static shapes (openvinotoolkit/openvino#26357: "NPU does not support
    # dynamic shapes") and unrolls every Loop by its constant trip count itself (the NPU
    # compiler's IE UnrollTensorIterator pass, LoopRewriter: `for currentIter < numIterations`),
    # and not a Loop that may stop early with concatenated outputs ("Concat cases for
    # ParamExecConds are not supported yet", E#124554). So: unroll every loop that qualifies,
    # refuse the others.
    Target("NPU", unroll=2**31 - 1, static=True),
)
TARGET_NAMES = tuple(target.name for target in TARGETS)


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


def check_count(name: str, value: object) -> None:
    """InputError naming option `name` unless `value` is a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value!r}")
