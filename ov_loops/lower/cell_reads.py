"""How a cell loop reads its sequence X [T, B, I], and how many steps it runs.

Two reads are recognised (lower/cells.py):

    sliced   a Loop-5 sliced input on axis 0, forward or backward, and a constant true
             condition (ONNX Scan, a Loop reading X[i], jax2onnx, torch):
                 n = min(trip count, T) (T when unbounded), rows X[:n] or X[T-n:]
    counted  Gather(X, k) of an invariant X at a carried counter k (k0 a constant >= 0, k += 1)
             while k + 1 < limit, an invariant (tf2onnx's while-loops):
                 n = min(trip count, max(limit - k0, 1), T - k0) (the first step always runs),
                 rows X[k0 : k0 + n]
    both: n = 0 when the initial condition is false.

Carried counters (`counters`) are merged inputs whose back edge is Add(their Parameter, a
constant scalar); their last value is k0 + n * step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.spec import ConcatenatedOutput, MergedInput, SlicedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.lower.cell_patterns import key, operand_orders

FORWARD, BACKWARD = (1, 0, -1), (-1, -1, 0)  # (stride, start, end) of a whole-sequence slice


@dataclass(frozen=True)
class SequenceRead:
    """X's external port and body Parameter (its slice, or all of X for a counted read),
    whether it is read backwards, and for a counted read: the counter (merged input index), its
    constant initial value, and the Less node and limit's external port of the condition."""

    x_port: int
    x_parameter: int
    backward: bool = False
    counter: int | None = None
    first: int = 0
    condition: ov.Node | None = None
    limit_port: int | None = None


def whole_sequence(entry: SlicedInput | ConcatenatedOutput) -> bool:
    """Whether a sliced input or stacked output runs over all of axis 0, one step at a time."""
    return (
        entry.axis == 0
        and entry.part_size == 1
        and (entry.stride, entry.start, entry.end) in (FORWARD, BACKWARD)
    )


def parameter(loop: LoopIR, entry: MergedInput) -> ov.Output:
    """The body Parameter of a merged input."""
    return loop.body.get_parameters()[entry.body_parameter].output(0)


def counters(loop: LoopIR) -> dict[int, tuple[np.ndarray, ov.Node]]:
    """Carried counters: merged input index -> (constant scalar step, the Add)."""
    found = {}
    for index, entry in enumerate(loop.spec.merged_inputs):
        own_parameter = parameter(loop, entry)
        node = loop.body_value(entry.body_result).get_node()
        if node.get_type_name() != "Add":
            continue
        for own, step in operand_orders(node):
            value = ovgraph.constant_value(step)
            if key(own) == key(own_parameter) and value is not None and value.size == 1:
                found[index] = (value.reshape(()), node)
    return found


def sequence_read(loop: LoopIR, counted: dict) -> SequenceRead | None:
    """How `loop` reads its sequence, or None when neither way."""
    spec = loop.spec
    condition = ovgraph.constant_value(loop.body_value(spec.execution_condition))
    if len(spec.sliced_inputs) == 1 and condition is not None and bool(np.all(condition)):
        sliced = spec.sliced_inputs[0]
        if not whole_sequence(sliced):
            return None
        return SequenceRead(sliced.external_port, sliced.body_parameter, sliced.stride < 0)
    if spec.sliced_inputs:
        return None
    return _counted_read(loop, counted)


def _counted_read(loop: LoopIR, counted: dict) -> SequenceRead | None:
    less = loop.body_value(loop.spec.execution_condition).get_node()
    if less.get_type_name() != "Less":
        return None
    by_parameter = {e.body_parameter: e.external_port for e in loop.spec.invariant_inputs}
    parameters = loop.body.get_parameters()
    limit = less.input_value(1).get_node()
    if limit.get_type_name() != "Parameter":
        return None
    limit_port = by_parameter.get(parameters.index(limit))
    for index, (step, add) in counted.items():
        entry = loop.spec.merged_inputs[index]
        first = ovgraph.constant_value(loop.outer[entry.external_port])
        if key(less.input_value(0)) != key(add.output(0)) or step != 1 or first is None:
            continue
        first = int(first.reshape(-1)[0]) if first.size == 1 else -1
        gathers = [
            _gathered(loop, reader.get_node(), by_parameter)
            for reader in parameter(loop, entry).get_target_inputs()
        ]
        found = [g for g in gathers if g is not None]
        if limit_port is None or len(found) != 1 or first < 0:
            return None
        return SequenceRead(*found[0], False, index, first, less, limit_port)
    return None


def _gathered(loop: LoopIR, node: ov.Node, by_parameter: dict) -> tuple[int, int] | None:
    """(X's external port, its Parameter) when `node` is Gather(X invariant, counter, axis 0)."""
    axis = ovgraph.constant_value(node.input_value(2)) if node.get_input_size() == 3 else None
    if node.get_type_name() != "Gather" or axis is None or int(axis) != 0:
        return None
    data = node.input_value(0).get_node()
    if data.get_type_name() != "Parameter":
        return None
    index = loop.body.get_parameters().index(data)
    return (by_parameter[index], index) if index in by_parameter else None


def iterations(loop: LoopIR, read: SequenceRead, sequence: ov.Output) -> ov.Output:
    """n, the steps the loop runs, an i64 scalar."""
    if loop.trip.constant is not None and read.counter is None:
        steps = ops.constant(np.int64(loop.trip.constant)).output(0)
    else:
        first = ops.constant(np.int64(read.first))
        steps = ops.subtract(ovgraph.length(sequence, 0), first).output(0)
        if read.counter is not None:
            limit = ops.convert(loop.outer[read.limit_port], ov.Type.i64)
            wanted = ops.maximum(ops.subtract(limit, first), ops.constant(np.int64(1)))
            steps = ops.minimum(steps, wanted).output(0)
        trip = loop.trip.value
        unbounded = ops.less(trip, ops.constant(np.int64(0)))
        steps = ops.select(unbounded, steps, ops.minimum(trip, steps)).output(0)
    if loop.start.runtime:
        steps = ops.select(loop.start.value, steps, ops.constant(np.int64(0))).output(0)
    return steps


def rows_read(loop: LoopIR, read: SequenceRead, sequence: ov.Output, steps: ov.Output) -> ov.Output:
    """The n rows the loop reads, batch first: [B, n, I]."""
    length = sequence.get_partial_shape()[0]
    whole = length.is_static and loop.trip.constant == length.get_length()
    if not whole or loop.start.runtime or read.counter is not None:
        one = ops.constant(np.array([1], np.int64))
        zero = ops.constant(np.array([0], np.int64))
        count = ops.unsqueeze(steps, zero)
        if read.backward:
            total = ops.unsqueeze(ovgraph.length(sequence, 0), zero)
            start, stop = ops.subtract(total, count), total
        else:
            start = ops.constant(np.array([read.first], np.int64))
            stop = ops.add(start, count)
        sequence = ops.slice(sequence, start, stop, one, zero).output(0)
    order = ops.constant(np.array([1, 0, 2], np.int64))
    return ops.transpose(sequence, order).output(0)
