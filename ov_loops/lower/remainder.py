"""Lowering: a loop with a runtime trip count n as two Loop-5s, the first unrolled by k
without masks, the second running the remainder (`split_factor`, `lower_split`)::

    m = k * ((max(n, 1) - 1) // k);  r = n - m      (1 <= r <= k when n >= 1)
    first:  iterations 0 .. m-1, k copies of the body per Loop-5 iteration, no Select
    second: iterations m .. n-1, the body as it is, from the first's carried values, reading
            the sliced inputs from part m on, current_iteration offset by m
    last values: the second's;
    stacked outputs: first ++ second along the axis (second ++ first when reversed after
            the loop); the second's alone when m is 0 (an If: the empty one's dynamic dims
            are not the other's)

The second loop runs at least once when the loop does (r = k, not 0, when k divides n), so
the join needs one If, and no second loop's output of no iteration meets a first's.

Masked unrolling (loopir/unrolling.py) runs copies past the end on padding, so it needs static
shapes; the split runs only real iterations, so a body with dynamic dims (a symbolic batch)
is unrolled too. Both Loop-5s go through the passes after cell recognition
(pipeline.AFTER_CELLS): the first is unrolled there (its trip count says it is a multiple of
k), the second is not (its trip count says it is below k).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino.opset15 import if_op

from ov_loops.contract.ports import UNNUMBERED, renumbered
from ov_loops.contract.spec import (
    TRIP_COUNT_INPUT,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
)
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.pipeline import AFTER_CELLS, LoweringOptions
from ov_loops.loopir.steps import PrependInitial, Reverse
from ov_loops.loopir.trip_count import TripCount
from ov_loops.loopir.unrolling import (
    always_true,
    carried_shapes_kept,
    shapes_kept,
    unrollable,
)
from ov_loops.lower.loop5 import REMAINDER, lower_to_loop5
from ov_loops.opfactory import constant, op
from ov_loops.ovgraph import copy, length


def split_factor(loop: LoopIR, options: LoweringOptions) -> int | None:
    """k when `loop` is lowered as two Loop-5s (see the module), else None: unrolling runs
    at these options and the target unrolls no loop whole (CPU without --unroll: the only
    plugin measured), the trip count is a runtime value, no condition stops the loop early
    (initial and body conditions constant true), the loop can be unrolled, masked unrolling
    cannot (a value of dynamic shape, `shapes_kept`) but each carried value keeps the shape
    its body Parameter declares (one whose shape changes has both Loop-5s in Ifs for their
    runs of no iteration: zero_run_carry.py), every last-value result is a carried
    value's and no stacked result starts with an accumulator's initial value; k as
    `unroll-iterations` chooses it."""
    if not options.unrolls_in_part:
        return None
    if loop.trip.source != TRIP_COUNT_INPUT:
        return None
    if loop.start.constant is not True or loop.trip.multiple_of > 1:
        return None
    if not always_true(loop.body_value(loop.spec.execution_condition)):
        return None
    # shapes first: most loops have static ones (masked unrolling), and unrollable costs more
    if shapes_kept(loop) or not carried_shapes_kept(loop) or not unrollable(loop):
        return None
    if not _results_split(loop):
        return None
    return options.unroll_factor(loop)


def _results_split(loop: LoopIR) -> bool:
    carried = {entry.body_result for entry in loop.spec.merged_inputs}
    last = {e.external_port: e.body_result for e in loop.spec.last_value_outputs}
    for result in loop.results:
        if result.port in last and last[result.port] not in carried:
            return False
        if any(isinstance(step, PrependInitial) for step in result.after):
            return False
    return True


def lower_split(
    loop: LoopIR, options: LoweringOptions, factor: int
) -> tuple[LoopIR, LoopSpec, list]:
    """The first Loop-5 (after AFTER_CELLS, for the report), the second's LoopSpec (the
    report's `remainder`) and the loop's values."""
    count = loop.trip.value
    one = constant(1, np.int64)
    k = constant(factor, np.int64)
    chunks = op("Divide", op("Subtract", op("Maximum", count, one), one), k)
    first_count = op("Multiply", chunks, k).output(0)
    rest_count = op("Subtract", count, first_count).output(0)
    rest_body = loop.body.clone()  # the first loop's passes may rewrite loop.body in place
    first, finals = _first_loop(loop, first_count, factor)
    first = options.run(first, AFTER_CELLS)
    values = lower_to_loop5(first)
    carried = dict(zip(finals, values[len(loop.results) :]))
    rest = _rest_loop(loop, rest_body, first_count, rest_count, carried, factor)
    rest = options.run(rest, AFTER_CELLS)
    joined = _joined(loop, values[: len(loop.results)], lower_to_loop5(rest), first_count)
    why = f"no masks (dynamic shapes): the remainder n mod {factor} in a second Loop-5"
    return first.noting(why), rest.spec, joined


def _first_loop(loop: LoopIR, count: ov.Output, factor: int) -> tuple[LoopIR, list[int]]:
    """The loop over the first m iterations, with a last-value result for each carried value
    (after the loop's own results); the merged inputs' external ports of those results."""
    spec = loop.spec
    outputs = list(spec.outputs())
    results = list(loop.results)
    ports = []
    for merged in spec.merged_inputs:
        outputs.append(LastValueOutput(UNNUMBERED, merged.body_result))
        results.append(LoopResult(len(outputs) - 1, initial=loop.outer[merged.external_port]))
        ports.append(merged.external_port)
    trip = TripCount(count, TRIP_COUNT_INPUT, None, True, multiple_of=factor)
    new_spec = renumbered(spec, spec.inputs(), outputs)
    first = loop.replace(spec=new_spec, trip=trip, results=tuple(results), zero_run_branch=True)
    return first, ports


def _rest_loop(
    loop: LoopIR,
    body: ov.Model,
    offset: ov.Output,
    count: ov.Output,
    carried: dict[int, ov.Output],
    factor: int,
) -> LoopIR:
    """The loop over iterations m .. n-1 with `body` (a copy of the loop's): carried values
    from `carried` (by external port), sliced inputs from part m on, current_iteration + m."""
    spec = loop.spec
    outer = dict(loop.outer)
    outer.update(carried)
    for entry in spec.sliced_inputs:
        outer[entry.external_port] = _from_part(outer[entry.external_port], entry, offset)
    rest = loop.replace(path=f"{loop.path}{REMAINDER}", body=body, outer=outer)
    if spec.current_iteration is not None:
        rest = _offset_iteration(rest, offset)
    trip = TripCount(count, TRIP_COUNT_INPUT, None, True, most=factor)
    initial = {e.body_result: carried[e.external_port] for e in spec.merged_inputs}
    last = {e.external_port: e.body_result for e in spec.last_value_outputs}
    results = tuple(
        result.replace(initial=initial[last[result.port]]) if result.port in last else result
        for result in loop.results
    )
    return rest.replace(trip=trip, results=results)


def _from_part(value: ov.Output, entry, offset: ov.Output) -> ov.Output:
    """The parts of sliced input `value` the second loop reads: from part m on, or, read from
    the end, all but the last m."""
    size = length(value, entry.axis)
    start, stop = (constant(0, np.int64), op("Subtract", size, offset))
    if entry.stride > 0:
        start, stop = offset, size
    axis = constant([entry.axis], np.int64)
    one = constant([1], np.int64)
    begin = op("Unsqueeze", start, constant(0, np.int64))
    end = op("Unsqueeze", stop, constant(0, np.int64))
    return op("Slice", value, begin, end, one, axis).output(0)


def _offset_iteration(loop: LoopIR, offset: ov.Output) -> LoopIR:
    """`loop` whose body sees current_iteration + `offset` (an invariant input of its own)."""
    parameters = list(loop.body.get_parameters())
    iteration = parameters[loop.spec.current_iteration]
    shift = ov.op.Parameter(iteration.get_element_type(), iteration.get_partial_shape())
    targets = list(iteration.output(0).get_target_inputs())
    shifted = op("Add", iteration, shift).output(0)
    for target in targets:
        target.replace_source_output(shifted)
    value = offset
    if value.get_element_type() != iteration.get_element_type():
        value = op("Convert", value, destination_type=iteration.get_element_type()).output(0)
    rank = iteration.get_partial_shape().rank.get_length()
    value = op("Reshape", value, constant(np.ones(rank, np.int64)), special_zero=False).output(0)
    inputs = [*loop.spec.inputs(), InvariantInput(UNNUMBERED, len(parameters))]
    spec = renumbered(loop.spec, inputs, loop.spec.outputs())
    rest = loop.with_body(list(loop.body.get_results()), [*parameters, shift], spec)
    return rest.replace(outer={**loop.outer, spec.inputs()[-1].external_port: value})


def _joined(loop, first: list, rest: list, first_count) -> list[ov.Output]:
    """Each result's value: a last value the second loop's, a stacked one both joined."""
    axes = {e.external_port: e.axis for e in loop.spec.concatenated_outputs}
    stacked = [i for i, result in enumerate(loop.results) if result.port in axes]
    values = list(rest)
    if not stacked:
        return values
    backward = [any(isinstance(s, Reverse) for s in loop.results[i].after) for i in stacked]
    size = len(stacked)

    def both(inner: list[ov.Output]) -> list[ov.Output]:
        firsts, rests = inner[:size], inner[size:]
        pairs = [(b, a) if back else (a, b) for a, b, back in zip(firsts, rests, backward)]
        return [
            op("Concat", *pair, axis=axes[loop.results[i].port]).output(0)
            for pair, i in zip(pairs, stacked)
        ]

    firsts = [first[index] for index in stacked]
    rests = [rest[index] for index in stacked]
    first_ran_none = op("Equal", first_count, constant(0, np.int64)).output(0)
    joined = _either(first_ran_none, rests, [*firsts, *rests], both)
    for index, value in zip(stacked, joined):
        values[index] = value
    return values


def _either(condition: ov.Output, then_values: list, else_values: list, build) -> list:
    """If(condition) then `then_values` else `build(else_values)`; every value enters its
    branch as a Parameter of its own."""
    then_parameters = [_parameter_like(value) for value in then_values]
    else_parameters = [_parameter_like(value) for value in else_values]
    then_results = [ov.op.Result(copy(p.output(0))) for p in then_parameters]
    made = build([parameter.output(0) for parameter in else_parameters])
    branch = if_op(condition)
    branch.set_then_body(ov.Model(then_results, then_parameters, "then"))
    branch.set_else_body(ov.Model([ov.op.Result(v) for v in made], else_parameters, "else"))
    for value, parameter in zip(then_values, then_parameters):
        branch.set_input(value, parameter, None)
    for value, parameter in zip(else_values, else_parameters):
        branch.set_input(value, None, parameter)
    else_results = branch.get_else_body().get_results()
    outputs = [branch.set_output(a, b) for a, b in zip(then_results, else_results)]
    branch.validate_and_infer_types()
    return outputs


def _parameter_like(value: ov.Output) -> ov.Node:
    return ov.op.Parameter(value.get_element_type(), value.get_partial_shape())
