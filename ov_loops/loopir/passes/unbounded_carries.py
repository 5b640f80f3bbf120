"""Pass: a loop-carried value that enters with a static (or bounded) length the body may
change enters with a length OpenVINO cannot bound, along every axis the body may change.

OpenVINO's CPU plugin (2026.4.1) keeps, inside a Loop body, the length of the value the Loop
receives for a carried Parameter when that length is static. Measured on a list entering with
3 elements (its sizes, ranks and shapes tensors static [3]) and growing: ShapeOf of the ranks
and shapes Parameters gave 3 in every iteration (of sizes, also [3], the right 4, 5, ...), the
sum of the shapes' values was garbage (-1668539904) from the second iteration on, and a Range
whose start came from them read memory never written (1-3% of first inferences after a
compile allocated 0.3-22 GB; all of them when glibc fills new allocations with 0x4F bytes,
MALLOC_PERTURB_=176). A bounded length fails at once ("Can not clone with new dims.
Descriptor's shape: {0 - 3} is incompatible with provided dimensions: {4}"). A value entering
with a length OpenVINO cannot bound ([?]) was right in every iteration. Along another axis,
a value entering as [2, 2] and growing along axis 1 ([2, 1..]) failed each run with
iterations when the graph reads nothing of the Loop's last value ("object is not
initialized"; at `none`, in the main graph or in a body: issue 20, the differential
campaign's seed 2100600038); entering as [2, ?] it ran.

So such a value enters as `Gather(v, Range(0, len(v) + zero))`, with `zero` computed from a
Parameter upstream of the loop (OpenVINO knows no bounds of a Parameter's values, so the
length stays [?]; a RandomUniform draw does not do: OpenVINO evaluates it to bound shapes)::

    zero = ReduceSum(p[:1] == p[:1]) * 0          # p: a Parameter upstream of the loop
    for each carried v, for each axis a of static or bounded length the body may change:
        v -> Gather(v, Range(0, len(v, a) + zero, 1), axis a)

Without such a Parameter (a loop of constants) the loop is left as it is. A value entering
empty (static [0], a list built from SequenceEmpty) is left too: through the Gather, a list
that SequenceInsert grows at position 0 from empty lost elements on the CPU (ConcatFromSequence
after the loop got 8 values for a [3, 2, 3] stack), and lists growing from empty ran right
without it.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.spec import MergedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.ovgraph import dimensions, length, upstream


class UnboundedCarryLengths(LoopPass):
    """Feed each carried value of static or bounded length that the body may change through a
    Gather of a Range whose length OpenVINO cannot bound, along each axis it may change (see
    the module docstring)."""

    name = "unbounded-carry-lengths"

    def run(self, loop: LoopIR) -> LoopIR:
        changing = {
            entry.external_port: axes
            for entry in loop.spec.merged_inputs
            if (axes := _bounded_but_changing(loop, entry))
        }
        if not changing:
            return loop
        source = _upstream_parameter([*loop.outer.values(), loop.trip.value, loop.start.value])
        if source is None:
            return loop
        zero = _unknown_zero(source)
        outer = dict(loop.outer)
        for port, axes in changing.items():
            for axis in axes:
                outer[port] = _unbounded(outer[port], zero, axis)
        return loop.replace(outer=outer)


def _bounded_but_changing(loop: LoopIR, entry: MergedInput) -> list[int]:
    """The axes along which the value entering at `entry` has a static or bounded length, not
    0, that the body's value for the next iteration may not keep."""
    entering = loop.outer[entry.external_port].get_partial_shape()
    if entering.rank.is_dynamic:
        return []
    produced = loop.body_value(entry.body_result).get_partial_shape()
    same_rank = produced.rank.is_static and produced.rank == entering.rank
    return [
        axis
        for axis, dim in enumerate(dimensions(entering))
        if dim.get_max_length() not in (-1, 0)
        and not (same_rank and dim.is_static and produced[axis] == dim)
    ]


def _upstream_parameter(values: list[ov.Output | None]) -> ov.Output | None:
    """A Parameter of a number type upstream of `values` (or one of them), if any."""
    for node in upstream(values):
        if node.get_type_name() == "Parameter" and _numeric(node.get_output_element_type(0)):
            return node.output(0)
    return None


def _numeric(element: ov.Type) -> bool:
    return element.is_real() or (element.is_integral_number() and element != ov.Type.boolean)


def _unknown_zero(source: ov.Output) -> ov.Output:
    """An i64 scalar 0 computed from at most one element of `source`: how many of its first
    element equal themselves, times 0 (a NaN and an empty `source` give 0 too)."""
    first = ops.slice(
        ops.reshape(source, _i64([-1]), special_zero=False),
        _i64([0]),
        _i64([1]),
        _i64([1]),
    )
    count = ops.reduce_sum(ops.convert(ops.equal(first, first), ov.Type.i64), _i64([0]))
    return ops.multiply(count, _i64(0)).output(0)


def _unbounded(value: ov.Output, zero: ov.Output, axis: int) -> ov.Output:
    """`value` as Gather(value, Range(0, len(value, axis) + zero)) along `axis`."""
    steps = ops.range(_i64(0), ops.add(length(value, axis), zero), _i64(1), ov.Type.i64)
    return ops.gather(value, steps, _i64(axis)).output(0)


def _i64(value) -> ov.Node:
    return ops.constant(np.array(value, np.int64))
