"""Choosing a lowering per loop and target.

The lowerings a loop at level "default" for CPU does not take (cells, folding, unrolling,
the remainder split, static shapes, streaming states) are imported where chosen: a conversion
that needs none of them does not load their modules (a fresh process's fixed cost)."""

from __future__ import annotations

import openvino as ov

from ov_loops.contract.spec import TRIP_COUNT_UNBOUNDED, LoopSpec
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import (
    AFTER_CELLS,
    BEFORE_CELLS,
    RECOGNIZE_CELLS,
    LoweringOptions,
)
from ov_loops.lower.loop5 import lower_to_loop5
from ov_loops.ovgraph import SUBGRAPH_OPS
from ov_loops.record import Record


class Lowered(Record):
    """What a loop became: its values (in result order) and the LoopSpec of the Loop-5 emitted,
    or why it was folded away; `becomes` names the op that computes it ("Loop-5",
    "LSTMSequence-5", ...; spec None then, and folded None)."""

    __slots__ = (
        "values",
        "spec",
        "folded",
        "applied",
        "carried",
        "becomes",
        "states",
        "streaming",
        "not_unrolled",
        "remainder",
    )

    def __init__(
        self,
        values: list[ov.Output],
        spec: LoopSpec | None,
        folded: str | None = None,
        applied: tuple[str, ...] = (),
        carried: tuple[str, ...] = (),
        becomes: str = "Loop-5",
        states: tuple[ov.Node, ...] = (),
        streaming: str | None = None,
        not_unrolled: str | None = None,
        remainder: LoopSpec | None = None,
    ) -> None:
        self.values = values
        self.spec = spec
        self.folded = folded
        self.applied = applied
        self.carried = carried  # the names of the carried values the Loop-5 carries
        self.becomes = becomes
        self.states = states  # the Assigns of a stateful loop (lower/stateful.py)
        self.streaming = streaming  # with --stateful: its states, and the values calls restart
        self.not_unrolled = not_unrolled  # why a target that unrolls (or max) left it a loop
        self.remainder = remainder  # a split loop's second Loop-5 (lower/remainder.py)


def lower(loop: LoopIR, options: LoweringOptions) -> Lowered:
    """`loop` lowered as `options` say (see `_lowered`); for a stateful target, a loop of the
    main graph that may run keeps its recurrent states in Variables, its Assigns in `states`,
    or is refused when it cannot stream (lower/stateful.py, lower/streaming.py)."""
    if not options.target.stateful or not loop.in_main_graph or loop.runs_zero_times:
        return _lowered(loop, options)
    from ov_loops.lower.stateful import assign_states, read_states
    from ov_loops.lower.streaming import refuse_unless_streamable

    refuse_unless_streamable(loop)
    loop, states, streaming = read_states(loop)
    lowered = _lowered(loop, options)
    assigns = assign_states(lowered.values, states)
    return lowered.replace(states=assigns, streaming=streaming)


def _lowered(loop: LoopIR, options: LoweringOptions) -> Lowered:
    """Fold a loop that provably runs no iteration; otherwise run the passes of the target at
    the optimisation level of `options` up to cell recognition (pipeline.BEFORE_CELLS); a
    recognised cell step (pipeline.RECOGNIZE_CELLS) becomes its *Sequence-5 op when the cost
    model (lower/cell_cost.py) says it is faster; otherwise the remaining passes run
    (pipeline.AFTER_CELLS) and a Loop-5 is emitted. A loop without a trip count gets the
    target's `max_trip_count`, when it has one (`--max_trip_count N`). Before cells: a target
    needing static loops refuses the others (lower/static.py), and a loop of at most
    `target.unroll` iterations becomes straight-line graph when it can (lower/unroll.py); where
    the target unrolls, a loop left a loop says why (`not_unrolled`)."""
    names = tuple(value.name for value in loop.carried)
    target = options.target
    if target.max_trip_count is not None and loop.trip.source == TRIP_COUNT_UNBOUNDED:
        loop = loop.with_trip_count(target.max_trip_count)
    if loop.runs_zero_times:
        return _folded(loop, names)
    loop = options.run(loop, BEFORE_CELLS)
    if target.static:
        from ov_loops.lower.static import refuse_unless_static

        refuse_unless_static(loop, target.name)
    why = _not_unrolled(loop, target.unroll) if target.unroll else None
    if target.unroll and why is None:
        return _unrolled(loop, f"unrolled x{loop.trip.constant}", names)
    if options.runs(RECOGNIZE_CELLS):
        lowered, loop = _as_cell(loop, names)
        if lowered is not None:
            return lowered.replace(not_unrolled=why)
    split = _split(loop, options, names)
    if split is not None:
        return split.replace(not_unrolled=why)
    loop = options.run(loop, AFTER_CELLS)
    why = why or loop.not_unrolled
    names = tuple(value.name for value in loop.carried)
    if _inlined(loop, options):
        return _unrolled(loop, "inlined its one iteration", names)
    lowered = Lowered(lower_to_loop5(loop, target.static), loop.spec, None, loop.applied, names)
    return lowered.replace(not_unrolled=why)


def _split(loop: LoopIR, options: LoweringOptions, names: tuple[str, ...]) -> Lowered | None:
    """`loop` as two Loop-5s (lower/remainder.py) when `split_factor` gives it a k, else None;
    its first condition (`unrolls_in_part`) asked here, so that the default level, which does
    not unroll, imports neither remainder.py nor unrolling."""
    if not options.unrolls_in_part:
        return None
    from ov_loops.lower.remainder import lower_split, split_factor

    factor = split_factor(loop, options)
    if factor is None:
        return None
    first, rest, values = lower_split(loop, options, factor)
    return Lowered(values, first.spec, None, first.applied, names, remainder=rest)


def _folded(loop: LoopIR, names: tuple[str, ...]) -> Lowered:
    """The values of `loop`, which provably runs no iteration (lower/fold.py)."""
    from ov_loops.lower.fold import fold, fold_reason

    return Lowered(fold(loop), None, f"runs zero times: {fold_reason(loop)}", (), names)


def _unrolled(loop: LoopIR, how: str, names: tuple[str, ...]) -> Lowered:
    """`loop` as straight-line graph (lower/unroll.py), `how` noted among what was applied."""
    from ov_loops.lower.unroll import unroll_fully

    applied = (*loop.applied, how)
    return Lowered(unroll_fully(loop), None, None, applied, names, "straight-line graph")


def _as_cell(loop: LoopIR, names: tuple[str, ...]) -> tuple[Lowered | None, LoopIR]:
    """(its *Sequence-5 op, `loop`) when the body of `loop` is a recognised cell step and the
    cost model says the op is faster (lower/cells.py, cell_cost.py); else (None, `loop`), which
    notes why a recognised cell stays a loop. A body without the ops every cell step has is
    no cell (`may_be_cell`): the cell modules are then not loaded at all."""
    if not may_be_cell(loop.body):
        return None, loop
    from ov_loops.lower.cell_cost import kept_as_loop, sequence_is_faster
    from ov_loops.lower.cells import lower_to_sequence, recognized_cell

    cell = recognized_cell(loop)
    if cell is None:
        return None, loop
    if not sequence_is_faster(cell, loop):
        return None, loop.noting(kept_as_loop(cell, loop))
    applied = (*loop.applied, f"-> {cell.op}")
    return Lowered(lower_to_sequence(loop, cell), None, None, applied, names, f"{cell.op}-5"), loop


# Every cell step (lower/cell_match.py) has a gate's MatMul (lower/cell_patterns.py: an affine
# form's terms are MatMuls) and one of these activations; a Loop, If or TensorIterator in the
# body is never part of one. CELL_ACTIVATIONS is cell_patterns.RNN_ACTIVATIONS' keys, written
# here not to import it (tests/lower/test_select.py holds them equal).
CELL_ACTIVATIONS = frozenset({"Sigmoid", "Tanh", "Relu"})


def may_be_cell(body: ov.Model) -> bool:
    """Whether `body` has a MatMul and an activation of a cell, and no nested body: without,
    lower/cells.py's recognition cannot match (a cheap test before loading its modules, about
    10 ms of a fresh process, and before running it on each loop of a model)."""
    kinds = {node.get_type_name() for node in body.get_ordered_ops()}
    return "MatMul" in kinds and bool(kinds & CELL_ACTIVATIONS) and kinds.isdisjoint(SUBGRAPH_OPS)


def _inlined(loop: LoopIR, options: LoweringOptions) -> bool:
    """Whether `loop`, left by the passes at level max with one iteration, becomes its body
    inlined (passes/linear_recurrences.py: the CPU plugin ran a one-iteration Loop's 70 vector
    ops in about 1 us each, the main graph fuses and folds them)."""
    if options.optimize != "max" or loop.trip.constant != 1:
        return False
    if loop.iterations_per_step != 1:  # a loop unrolled by its whole trip count
        return False
    from ov_loops.lower.unroll import unroll_refusal

    return unroll_refusal(loop) is None


def _not_unrolled(loop: LoopIR, most: int) -> str | None:
    """Why `loop` is not unrolled where loops of at most `most` iterations are (None: it is)."""
    from ov_loops.lower.unroll import unroll_refusal

    count = loop.trip.constant
    if count is not None and count > most:
        return f"{count} iterations, more than {most}"
    return unroll_refusal(loop)
