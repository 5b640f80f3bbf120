"""Theano-style `scan` (and `map`, `reduce`, `foldl`, `foldr`) on OpenVINO opsets: a frontend that
builds a LoopIR, lowered (passes and Loop-5, or folded) as the converter's loops are, with the
same options (`options=`, a ConvertOptions: by default CPU at optimize="none", the loop as fn
wrote it; `translate` with the same options gives the same IR for the same loop).

Semantics (Theano's `scan` guide, ../shared/specs/theano-scan.zh-en.txt)::

    offset = max(-min(taps of sequence, 0))            # first usable position of each sequence
    steps = n_steps or min(len(seq) - offset - max(taps, 0)) over the sequences
    for t in range(steps):                             # sequences reversed if go_backwards
        args = [seq[offset + t + k] for each sequence, for k in its taps]
             + [out[t + k] for each fed-back output, for k in its taps]   # out[-L:] = initial
             + non_sequences
        *outputs_t, updates_t, [until(c)] = fn(*args)  # outputs and updates in either order
        shared = updates_t (also: the counters of random draws and the updates of inner
                            scans fn made, found in the graph of what fn returns)
        stop after this step if c
    return [stack(output_t over t) for each output], {shared: its value after the last step}

`reduce`/`foldl`/`foldr` return the last value of each output instead of the whole sequence,
with a last-value output (no concatenation). An output with past taps [-L, ..] is carried as a
window of its last L values (merged input, shifted each step); a sequence tap k is a sliced input
of the view seq[offset + k : offset + k + steps]. A shared variable fn updates is a carried
value (merged input fed by the variable, its update the back edge, a last-value output); one fn
only reads is an invariant input (shared_variables.py).

The steps, in order: the arguments (arguments.py); then, in `_build`, the trip count
(loop_ir.py), the body's Parameters and the call to fn (body.py), the updates fn makes without
naming them (updates.py), the body's Results and its shared carries, the outer values fn reads
(captures.py), the LoopIR (loop_ir.py); then the one lowering call, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import openvino as ov

from ov_loops import ovgraph
from ov_loops.convert_options import ConvertOptions
from ov_loops.frontends.theano.arguments import (
    BuilderError,
    OutputInfo,
    SequenceInfo,
    as_list,
    as_output,
    parse_outputs_info,
    parse_sequences,
)
from ov_loops.frontends.theano.body import (
    Body,
    body_results,
    call_fn,
    keep_going,
    make_body,
    next_node_id,
)
from ov_loops.frontends.theano.captures import capture
from ov_loops.frontends.theano.loop_ir import loop_ir, loop_results, trip_count
from ov_loops.frontends.theano.updates import carry_shared, final_updates, implicit_updates
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import LoweringOptions
from ov_loops.lower.select import lower

BUILDER_OPTIONS = ConvertOptions(optimize="none")


def scan(
    fn: Callable,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps: int | ov.Output | None = None,
    go_backwards: bool = False,
    strict: bool = False,
    name: str | None = None,
    options: ConvertOptions = BUILDER_OPTIONS,
):
    """Build a Loop-5 computing Theano's `scan`; returns (outputs, updates).

    `outputs` is one openvino.Output or a list (the full sequence of each output over the
    steps); `updates` maps each shared variable fn updates (in the dict it returns, by its
    random draws, or by the scans it builds) to its value after the last step, for
    `ov_loops.function(..., updates=updates)`. `options` lower the loop as `translate`'s do
    (optimize, target, unroll; not input, nor stateful: shared variables keep state here). See
    the module docstring.
    """
    return _scan(
        fn,
        sequences,
        outputs_info,
        non_sequences,
        n_steps,
        go_backwards,
        strict,
        name,
        last_only=False,
        options=options,
    )


def map(
    fn: Callable,
    sequences,
    non_sequences=None,
    go_backwards: bool = False,  # noqa: A001
    name: str | None = None,
    options: ConvertOptions = BUILDER_OPTIONS,
):
    """Theano's map: fn applied to each step of the sequences; returns (outputs, updates)."""
    return scan(
        fn,
        sequences=sequences,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        name=name,
        options=options,
    )


def reduce(
    fn: Callable,
    sequences,
    outputs_info,
    non_sequences=None,  # noqa: A001
    go_backwards: bool = False,
    name: str | None = None,
    options: ConvertOptions = BUILDER_OPTIONS,
):
    """Theano's reduce: the last value of each output (a last-value output, no concatenation);
    returns (outputs, updates)."""
    return _scan(
        fn,
        sequences,
        outputs_info,
        non_sequences,
        None,
        go_backwards,
        False,
        name,
        last_only=True,
        options=options,
    )


def foldl(fn: Callable, sequences, outputs_info, non_sequences=None, **named):
    """reduce from the start of the sequences (`named`: reduce's `name` and `options`)."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, **named)


def foldr(fn: Callable, sequences, outputs_info, non_sequences=None, **named):
    """reduce from the end of the sequences (`named`: reduce's `name` and `options`)."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, **named)


def _scan(
    fn,
    given_seqs,
    given_outs,
    given_invariants,
    n_steps,
    go_backwards,
    strict,
    name,
    last_only,
    options,
):
    """The scan's LoopIR lowered as `options` say (the frontend's one lowering call); returns
    (outputs, updates). The arguments are scan's (sequences, outputs_info, non_sequences)."""
    lowering = _lowering(options)
    seqs = parse_sequences(given_seqs)
    outs = parse_outputs_info(given_outs)
    if last_only:
        outs = [replace(out, last=True) for out in outs]
    invariants = [as_output(value) for value in as_list(given_invariants)]
    if isinstance(n_steps, (int, np.integer)) and n_steps < 0:
        n_steps, go_backwards = -int(n_steps), not go_backwards
    if go_backwards:
        seqs = [SequenceInfo(ovgraph.reverse(s.value, 0), s.taps) for s in seqs]
    if n_steps is None and not seqs:
        raise BuilderError("n_steps: needed when there are no sequences")
    loop, body, count = _build(fn, seqs, outs, invariants, n_steps, strict, name, last_only)
    values = lower(loop, lowering).values
    outputs, finals = values[:count], values[count:]
    return (outputs[0] if len(outputs) == 1 else outputs), final_updates(body, finals)


def _lowering(options: ConvertOptions) -> LoweringOptions:
    """The lowering `options` ask for; BuilderError for the options the builder does not take."""
    if not isinstance(options, ConvertOptions):
        raise BuilderError(f"options: a ConvertOptions, not {type(options).__name__}")
    if options.input is not None:
        raise BuilderError("options.input: the builder's inputs are the Parameters fn reads")
    if options.stateful:
        raise BuilderError("options.stateful: the builder keeps state in shared variables")
    return options.lowering()


def _build(
    fn, seqs, outs, invariants, n_steps, strict, name, last_only
) -> tuple[LoopIR, Body, int]:
    """The scan's LoopIR with its results, its body, and how many outputs fn's step has (the
    loop's first outputs; each carried shared variable's final value follows)."""
    trip, offsets = trip_count(seqs, n_steps)
    first_body_node = next_node_id()
    body = make_body(seqs, offsets, outs, invariants, trip.value)
    step_values, explicit, condition = call_fn(fn, body, outs)
    roots = [*step_values, *(value for _, value in explicit.values())]
    implicit = implicit_updates(roots + ([condition] if condition else []), first_body_node)
    outs = outs or [OutputInfo(None, last=last_only) for _ in step_values]
    results, merged, emitted = body_results(outs, step_values, body)
    carry_shared({**implicit, **explicit}, body, results, set(explicit) if strict else set())
    results.append(keep_going(condition))
    capture(results, body, strict, first_body_node)
    loop = loop_ir(name or "scan", results, body, merged, emitted, trip, outs)
    return loop.replace(results=loop_results(outs, body)), body, len(outs)
