"""The order of the LoopIR passes, stated once, and the target profiles that switch them on.

Order: constants are inlined first (the copies below must not see their Parameters); the
copies before an Abs of a shared Concat next, before the simplification, whose MOC would
otherwise rewrite such a Concat wrongly itself (abs_concats.py); other copies inside the body
after the optimisations; then the refusal, which reads the body's final shapes; the zero-iteration
guards read each concatenated output's per-iteration part, so they come before the parts of
rank above 12 are flattened; a loop computed from constants alone gets its run-time input
after the passes that read or rewrite the body. The iteration's Parameter moves first last of
all, once no pass adds Parameters any more.
"""

from __future__ import annotations

from dataclasses import dataclass

from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.abs_concats import CopyConcatsBeforeAbs
from ov_loops.loopir.passes.accumulators import StackAccumulators
from ov_loops.loopir.passes.back_edges import CopyBackEdges
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.passes.concat_copies import CopyCapturesIntoConcats
from ov_loops.loopir.passes.constant_loops import KeepConstantLoopsAtRunTime
from ov_loops.loopir.passes.constants import InlineConstantCaptures
from ov_loops.loopir.passes.dead_values import RemoveDeadValues
from ov_loops.loopir.passes.hoist_sliced import HoistSlicedComputation
from ov_loops.loopir.passes.iteration_first import IterationParameterFirst
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.loopir.passes.licm import HoistInvariantComputation
from ov_loops.loopir.passes.port_rank import FlattenHighRankStacks
from ov_loops.loopir.passes.simplify import SimplifyBody
from ov_loops.loopir.passes.unbounded_carries import UnboundedCarryLengths
from ov_loops.loopir.passes.unroll_iterations import UnrollIterations
from ov_loops.loopir.passes.zero_run_carry import RefuseZeroRunReshapedCarry
from ov_loops.loopir.passes.zero_run_guards import GuardZeroIterationRuns

PIPELINE: tuple[type[LoopPass], ...] = (
    InlineConstantCaptures,
    CopyConcatsBeforeAbs,
    SimplifyBody,
    RemoveDeadValues,
    HoistInvariantComputation,
    StackAccumulators,
    HoistSlicedComputation,
    UnrollIterations,
    CopyCapturesIntoConcats,
    CopyBackEdges,
    RefuseZeroRunReshapedCarry,
    GuardZeroIterationRuns,
    FlattenHighRankStacks,
    KeepConstantLoopsAtRunTime,
    UnboundedCarryLengths,
    IterationParameterFirst,
)


@dataclass(frozen=True)
class TargetProfile:
    """A target's name, the names of the workaround passes it runs, and optimisations it
    `skips` whatever the level (e.g. to test passes switched on at random); `unroll`: loops of
    at most that many iterations become straight-line graph (lower/unroll.py); `static`: every
    loop must have a constant trip count and static shapes, or conversion is refused."""

    name: str
    passes: frozenset[str]
    skips: frozenset[str] = frozenset()
    unroll: int = 0
    static: bool = False
    stateful: bool = False  # top-level loops keep carried values in Variables (lower/stateful.py)

    def runs(self, kind: type[LoopPass], optimize: str) -> bool:
        """Whether pass `kind` runs for this target at optimisation level `optimize`."""
        if kind.level is None:
            return kind.name in self.passes
        if kind.name in self.skips:
            return False
        return OPTIMIZE_LEVELS.index(kind.level) <= OPTIMIZE_LEVELS.index(optimize)

    def run(
        self, loop: LoopIR, optimize: str = "none", passes: tuple[type[LoopPass], ...] = PIPELINE
    ) -> LoopIR:
        """`loop` after every pass of `passes` (by default all of PIPELINE) that runs, in order."""
        for kind in passes:
            if self.runs(kind, optimize):
                loop = kind()(loop)
        return loop


# OpenVINO's CPU plugin (2026.4.1): every workaround on.
CPU = TargetProfile("CPU", frozenset(kind.name for kind in PIPELINE if kind.level is None))
# Loop-5 as its spec states it, no workaround: for tests and for plugins without these faults.
PLAIN = TargetProfile("plain", frozenset())

# OpenVINO's GPU plugin unrolls every Loop/TensorIterator of fewer than 16 iterations itself
# (src/plugins/intel_gpu/src/plugin/transformations_pipeline.cpp: the callback of
# ov::pass::UnrollTensorIterator keeps loops with `num_iter >= 16`); we do the same before it,
# so the IR is what the GPU runs, and with current_iteration as a constant of the type the body
# declares (its own unrolling feeds an i64 Constant to i32 bodies, which its i32-only kernels
# refuse: openvinotoolkit/openvino#34777; validator rule GP001). The CPU workarounds stay on:
# they keep Loop-5's semantics.
GPU_UNROLL_BELOW = 16
GPU = TargetProfile("GPU", CPU.passes, unroll=GPU_UNROLL_BELOW - 1)
# The NPU compiler needs static shapes (openvinotoolkit/openvino#26357: "NPU does not support
# dynamic shapes") and unrolls every Loop by its constant trip count itself (the NPU compiler's
# IE UnrollTensorIterator pass, LoopRewriter: `for currentIter < numIterations`), and not a
# Loop that may stop early with concatenated outputs ("Concat cases for ParamExecConds are not
# supported yet", E#124554). So: unroll every loop that qualifies, refuse the others.
NPU = TargetProfile("NPU", CPU.passes, unroll=2**31 - 1, static=True)
TARGETS = {profile.name: profile for profile in (CPU, GPU, NPU)}
