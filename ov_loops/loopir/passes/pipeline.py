"""The order of the LoopIR passes, stated once, and the target profiles that switch them on.

Order: constants are inlined first (the copies below must not see their Parameters); the copies
before an Abs of a shared Concat next, before the simplification, whose MOC would otherwise
rewrite such a Concat wrongly itself (abs_concats.py); unchanged carried values become invariant
(and Constants, when a Constant feeds them) before the simplification, so that MOC folds them
into the step (jax2onnx's carried weights: biases fused, pass-through Identity ops gone); other
copies inside the body after the optimisations; then the zero-run branch, which reads the body's
final shapes and spares its loops the zero-iteration guards; those guards read each concatenated
output's per-iteration part, so they come before the parts of rank above 12 are flattened; a
loop computed from constants alone gets its run-time input after the passes that read or rewrite
the body. The iteration's Parameter moves first last of all, once no pass adds Parameters any
more.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import openvino as ov

from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes import base
from ov_loops.loopir.passes.abs_concats import CopyConcatsBeforeAbs, copy_concats_before_abs
from ov_loops.loopir.passes.accumulators import StackAccumulators
from ov_loops.loopir.passes.back_edges import CopyBackEdges
from ov_loops.loopir.passes.base import DeferredPass, LoopPass
from ov_loops.loopir.passes.concat_copies import (
    CopyCapturesIntoConcats,
    copy_loop_outputs_into_concats,
)
from ov_loops.loopir.passes.constant_loops import KeepConstantLoopsAtRunTime
from ov_loops.loopir.passes.constants import InlineConstantCaptures
from ov_loops.loopir.passes.dead_values import RemoveDeadValues
from ov_loops.loopir.passes.empty_sequences import (
    STATES,
    keep_initial_states_of_empty_sequences,
)
from ov_loops.loopir.passes.gathered_slices import SliceGatheredRows
from ov_loops.loopir.passes.hoist_sliced import HoistSlicedComputation
from ov_loops.loopir.passes.iteration_first import IterationParameterFirst
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS, OptimizeLevel
from ov_loops.loopir.passes.licm import HoistInvariantComputation
from ov_loops.loopir.passes.merge_matmuls import MergeSharedMatMuls
from ov_loops.loopir.passes.pack_carried import PackCarriedValues
from ov_loops.loopir.passes.port_rank import FlattenHighRankStacks
from ov_loops.loopir.passes.simplify import SimplifyBody
from ov_loops.loopir.passes.unbounded_carries import UnboundedCarryLengths
from ov_loops.loopir.passes.zero_run_carry import BranchZeroRunsOfReshapedCarries
from ov_loops.loopir.passes.zero_run_guards import GuardZeroIterationRuns
from ov_loops.record import Record
from ov_loops.targets import TARGETS as TARGET_TABLE
from ov_loops.targets import Target, check_count, check_target, check_unroll

# A pass in the pipeline: its class, or the class's name until it runs.
PassKind = type[LoopPass] | DeferredPass


def _deferred(module: str, class_name: str, name: str, level: str | None) -> DeferredPass:
    return DeferredPass(f"ov_loops.loopir.passes.{module}", class_name, name, level)


# Passes a default CPU conversion does not run, imported when one runs (base.DeferredPass).
ProveTripCount = _deferred("proven_trip_count", "ProveTripCount", "prove-trip-count", None)
SumOuterProductsAfterLoop = _deferred(
    "outer_products", "SumOuterProductsAfterLoop", "sum-outer-products", "max"
)
SolveLinearRecurrences = _deferred(
    "linear_recurrences", "SolveLinearRecurrences", "solve-linear-recurrences", "max"
)
MultiplyRowsByInvariants = _deferred(
    "row_products", "MultiplyRowsByInvariants", "multiply-rows-by-invariants", "max"
)
UnrollIterations = _deferred("unroll_iterations", "UnrollIterations", "unroll-iterations", "max")
DEFERRED = (
    ProveTripCount,
    SumOuterProductsAfterLoop,
    SolveLinearRecurrences,
    MultiplyRowsByInvariants,
    UnrollIterations,
)

# The optimisations that shape the body before a lowering is chosen (lower/select.py): cells
# are recognised after the body is simplified, dead values are gone, invariant work has left,
# rows read at the iteration number are sliced inputs and accumulators are stacked outputs
# (MOC folds the exporters' transposes and shape arithmetic; carried weights become invariant
# constants; tf2onnx's Concat accumulator becomes the stacked h), and before the passes that
# change the step itself: hoisting takes x W out of the body, unrolling chains copies of it.
BEFORE_CELLS: tuple[PassKind, ...] = (
    InlineConstantCaptures,
    CopyConcatsBeforeAbs,
    RemoveDeadValues,
    SimplifyBody,
    HoistInvariantComputation,
    SliceGatheredRows,
    StackAccumulators,
    ProveTripCount,
)
# What a loop that stays a Loop-5 goes through after the choice: per-gate MatMuls merged
# first (the cell patterns read them one by one; the merged product of a sliced part is then
# hoisted as one); carried values packed into one back edge after unrolling (its copies pass
# them on unpacked).
AFTER_CELLS: tuple[PassKind, ...] = (
    MergeSharedMatMuls,
    HoistSlicedComputation,
    SumOuterProductsAfterLoop,
    SolveLinearRecurrences,
    MultiplyRowsByInvariants,
    UnrollIterations,
    PackCarriedValues,
    CopyCapturesIntoConcats,
    CopyBackEdges,
    BranchZeroRunsOfReshapedCarries,
    GuardZeroIterationRuns,
    FlattenHighRankStacks,
    KeepConstantLoopsAtRunTime,
    UnboundedCarryLengths,
    IterationParameterFirst,
)
PIPELINE: tuple[PassKind, ...] = (*BEFORE_CELLS, *AFTER_CELLS)


class DecisionPoint(Record):
    """A choice lowering makes between two stages of PIPELINE that a profile switches like an
    optimisation: from `level` on, unless the profile `skips` its `name`."""

    __slots__ = ("name", "level")

    def __init__(self, name: str, level: OptimizeLevel) -> None:
        self.name = name
        self.level = level


# Between BEFORE_CELLS and AFTER_CELLS: a body that is one RNN/GRU/LSTM step may become its
# *Sequence-5 op (lower/cells.py, lower/cell_cost.py). "max": at "default" a loop stays a
# Loop-5 (its port map, `validate --show`, `check`'s per-iteration divergence). Measured
# against the default level's Loop-5 (one run, 7 rounds) the op the cost model chooses was
# faster or within noise (RNN H=256 B=16 x0.97 vs x1.03, GRU lbr H=256 B=1 x0.72 vs x0.78), so
# moving it to "default" would need only a LOOP table per level.
RECOGNIZE_CELLS = DecisionPoint("recognize-cells", "max")

Step = PassKind | DecisionPoint
ModelWorkaround = Callable[[ov.Model], object]


class TargetProfile(Record):
    """A target's name, the names of the workaround passes it runs, and optimisations it
    `skips` whatever the level (e.g. to test passes switched on at random); `unroll`: loops of
    at most that many iterations become straight-line graph (lower/unroll.py); `static`: every
    loop must have a constant trip count and static shapes, or conversion is refused;
    `model_workarounds` run on the whole converted model, in order (the driver calls them)."""

    __slots__ = (
        "name",
        "passes",
        "skips",
        "unroll",
        "static",
        "stateful",
        "max_trip_count",
        "model_workarounds",
    )

    def __init__(
        self,
        name: str,
        passes: frozenset[str],
        skips: frozenset[str] = frozenset(),
        unroll: int = 0,
        static: bool = False,
        stateful: bool = False,
        max_trip_count: int | None = None,
        model_workarounds: tuple[ModelWorkaround, ...] = (),
    ) -> None:
        self.name = name
        self.passes = passes
        self.skips = skips
        self.unroll = unroll
        self.static = static
        # top-level loops keep carried values in Variables (lower/stateful.py)
        self.stateful = stateful
        # the trip count of loops without one (lower/select.py)
        self.max_trip_count = max_trip_count
        self.model_workarounds = model_workarounds

    def runs(self, step: Step, optimize: OptimizeLevel) -> bool:
        """Whether pass (or decision point) `step` runs for this target at level `optimize`."""
        if step.level is None:
            return step.name in self.passes
        if step.name in self.skips:
            return False
        return OPTIMIZE_LEVELS.index(step.level) <= OPTIMIZE_LEVELS.index(optimize)

    def apply_model_workarounds(self, model: ov.Model, present: Collection[str]) -> None:
        """Run `model_workarounds` on the converted `model`, in order, but those acting on op
        types of which `present` (the op types of the model and its bodies) has none."""
        for workaround in self.model_workarounds:
            acts_on = ACTS_ON.get(workaround)
            if acts_on is None or not acts_on.isdisjoint(present):
                workaround(model)

    def run(
        self,
        loop: LoopIR,
        optimize: OptimizeLevel = "none",
        passes: tuple[PassKind, ...] = PIPELINE,
        made: Callable[[PassKind], LoopPass] = lambda kind: kind(),
    ) -> LoopIR:
        """`loop` after every pass of `passes` (by default all of PIPELINE) that runs, in order
        (each instance `made` of its class); each pass requires what the one before ensured
        (`LoopPass.__call__`'s `checked`)."""
        checked = False
        for kind in passes:
            if self.runs(kind, optimize):
                loop = made(kind)(loop, checked=checked)
                checked = True
        if base.CHECKS:  # a debug switch (base.py); the lowering checks each loop once
            loop.check()
        return loop


# Passes for targets that unroll: a trip count proven from the execution condition.
UNROLLING = frozenset({ProveTripCount.name})
# OpenVINO's CPU plugin (2026.4.1): every workaround on.
# The whole converted model: Loop outputs read by a Concat, and Abs of a shared Concat in the
# main graph and If bodies (Loop bodies have their own pass), get computed copies; recurrent
# Sequence ops run over no time step give their initial states (empty_sequences.py).
CPU_MODEL_WORKAROUNDS: tuple[ModelWorkaround, ...] = (
    copy_loop_outputs_into_concats,
    copy_concats_before_abs,
    keep_initial_states_of_empty_sequences,
)
# The op types a model workaround acts on (it adds none of them): a model with none skips it.
ACTS_ON: dict[ModelWorkaround, frozenset[str]] = {
    copy_loop_outputs_into_concats: frozenset({"Concat"}),
    copy_concats_before_abs: frozenset({"Abs"}),
    keep_initial_states_of_empty_sequences: frozenset(STATES),
}
# The workaround passes every target runs (GPU and NPU too: they keep Loop-5's semantics).
CPU_PASSES = frozenset(kind.name for kind in PIPELINE if kind.level is None) - UNROLLING
# Loop-5 as its spec states it, no workaround: for tests and for plugins without these faults.
PLAIN = TargetProfile("plain", frozenset())


def _profile(target: Target) -> TargetProfile:
    """The profile of a target of the table (targets.py)."""
    return TargetProfile(
        target.name,
        CPU_PASSES | UNROLLING if target.unroll else CPU_PASSES,
        unroll=target.unroll,
        static=target.static,
        model_workarounds=CPU_MODEL_WORKAROUNDS,
    )


TARGETS = {target.name: _profile(target) for target in TARGET_TABLE}
CPU, GPU, NPU = TARGETS["CPU"], TARGETS["GPU"], TARGETS["NPU"]


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
    profile = TARGETS[check_target(target)]
    check_unroll(unroll)
    if stateful:
        profile = profile.replace(stateful=True)
    if max_trip_count is not None:
        check_count("max_trip_count", max_trip_count)
        profile = profile.replace(max_trip_count=max_trip_count)
    if unroll is None:
        return profile
    passes = profile.passes | UNROLLING if unroll else profile.passes
    return profile.replace(unroll=max(profile.unroll, unroll), passes=passes)


class LoweringOptions(Record):
    """How the loops of one conversion are lowered: the target's profile (its workarounds,
    unrolling, static shapes, state) and the optimisation level. The one object the API and the
    CLI (`ConvertOptions.lowering`, which validates the level) and the Theano builder hand to
    `lower.select.lower`; `optimize` is not checked again here."""

    __slots__ = ("target", "optimize", "loops")

    def __init__(
        self, target: TargetProfile = CPU, optimize: OptimizeLevel = "default", loops: int = 1
    ) -> None:
        self.target = target
        self.optimize = optimize
        self.loops = loops  # the model's loops (every depth): they share max's unrolling op budget

    def runs(self, step: Step) -> bool:
        """Whether pass (or decision point) `step` runs for these options."""
        return self.target.runs(step, self.optimize)

    @property
    def unrolls(self) -> bool:
        """Whether `unroll-iterations` runs at these options."""
        return self.runs(UnrollIterations)

    @property
    def unrolls_in_part(self) -> bool:
        """Whether `unroll-iterations` runs and the target unrolls no loop whole (CPU without
        --unroll): a loop of a runtime trip count may then be split (lower/remainder.py)."""
        return self.unrolls and not self.target.unroll

    def unroll_factor(self, loop: LoopIR) -> int | None:
        """k as `unroll-iterations` would choose it for `loop` when it runs at these options;
        None when it does not run or leaves the loop whole."""
        if not self.unrolls:
            return None
        from ov_loops.loopir.passes.unroll_iterations import chosen_factor

        return chosen_factor(loop, self.loops)

    def run(self, loop: LoopIR, passes: tuple[PassKind, ...] = PIPELINE) -> LoopIR:
        """`loop` after the passes of `passes` that run for these options, in order."""
        return self.target.run(loop, self.optimize, passes, self._made)

    def _made(self, kind: PassKind) -> LoopPass:
        """Pass `kind` for this conversion: unroll-iterations knows the model's loops."""
        return UnrollIterations(loops=self.loops) if kind is UnrollIterations else kind()


DEFAULT_LOWERING = LoweringOptions()  # translate's defaults: CPU, optimize="default"
