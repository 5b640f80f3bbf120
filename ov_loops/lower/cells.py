"""Lowering: a loop whose body is one RNN, GRU or LSTM step -> RNNSequence-5 / GRUSequence-5 /
LSTMSequence-5.

A loop is recognised (`recognized_cell`) when it reads one sequence X [T, B, I] one step at a
time (lower/cell_reads.py: a sliced input, or X[k] at a counter k while k < limit), carries h
(and c for an LSTM) [B, H] and maybe counters, and its body is exactly one cell step
(lower/cell_match.py) and the values it gives out: h' and c' as last values, h' with a length-1
axis in front as the stacked output, the counters, and Constants or invariant inputs returned
unchanged (jax2onnx's Loops give their weights back). Every op of the body must belong to that;
anything else (a clip, another activation, a peephole, a value read elsewhere) leaves the loop
to Loop-5.

The lowering (`lower_to_sequence`) runs the cell over the steps the loop would run::

    n, X_used = the steps the loop runs and the rows it reads (lower/cell_reads.py)
    Y, Ho, Co = *Sequence(transpose(X_used, [1, 0, 2]), h0, c0, lengths=[n] * B, W, R, B)
        (X_used at h0's batch when n may be 0 and h0 is a --stateful state: `_batch_of_states`)
    stacked h = transpose(Y[:, 0], [1, 0, 2]), reversed unless the stack runs the way X is read
    last h, c = Ho, Co, or h0, c0 when n == 0 (the CPU plugin leaves Ho, Co undefined then)
    last counter = k0 + n * step
    when n may be 0: the zero-iteration guards of Loop-5 (GuardZeroIterationRuns): a stacked
    output is then empty with the body's static dims, 0 for the dynamic ones, as a Loop's is
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.spec import ConcatenatedOutput, MergedInput
from ov_loops.loopir.analysis import returned_unchanged
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import GuardZeroIterationRuns
from ov_loops.loopir.steps import AfterLoop, apply_steps
from ov_loops.lower.cell_match import CellWeights, match_gru, match_lstm, match_rnn
from ov_loops.lower.cell_patterns import Matcher, NoMatch, key
from ov_loops.lower.cell_reads import (
    SequenceRead,
    counters,
    iterations,
    parameter,
    rows_read,
    sequence_read,
    whole_sequence,
)
from ov_loops.lower.stateful import read_from_variables

INERT = ("Parameter", "Result", "Constant")


@dataclass(frozen=True)
class Cell:
    """A recognised loop: the cell's weights, H, how it reads X, the external ports of the
    initial states (h, then c), and per Loop output (port order) what it is: ("last", state,
    with a length-1 axis in front), ("stacked", reversed), ("counter", port, step) or
    ("outer", value): a Constant or invariant input the body returns unchanged."""

    weights: CellWeights
    hidden: int
    read: SequenceRead
    state_ports: tuple[int, ...]
    outputs: tuple[tuple, ...]

    @property
    def op(self) -> str:
        return f"{self.weights.kind}Sequence"

    @property
    def backward(self) -> bool:
        return self.read.backward


def recognized_cell(loop: LoopIR) -> Cell | None:
    """The cell `loop` computes, or None when its body is anything more or less than one step."""
    counted = counters(loop)
    read = sequence_read(loop, counted)
    states = [e for i, e in enumerate(loop.spec.merged_inputs) if i not in counted]
    if read is None or len(states) not in (1, 2):
        return None
    matcher = _matcher(loop, read, states)
    if matcher is None:
        return None
    for _, node in counted.values():
        matcher.take(node)
    if read.condition is not None:
        matcher.take(read.condition)
    try:
        weights = _matched(loop, matcher, states)
        outputs = _outputs(loop, matcher, counted, read.backward)
    except NoMatch:
        return None
    left = [op for op in loop.body.get_ordered_ops() if op.get_type_name() not in INERT]
    if any(op.get_instance_id() not in matcher.taken for op in left):
        return None
    ports = sorted(states, key=lambda e: matcher.states[key(parameter(loop, e))] != "h")
    ports = tuple(entry.external_port for entry in ports)
    return Cell(weights, matcher.hidden, read, ports, outputs)


def _matcher(loop: LoopIR, read: SequenceRead, states: list[MergedInput]) -> Matcher | None:
    """A Matcher for `loop`'s step input and states (f32, x [1 or T, B, I], states [B, H], I
    and H static), constants of invariant inputs resolved; None when the shapes do not fit."""
    parameters = loop.body.get_parameters()
    x = parameters[read.x_parameter].output(0)
    carried = [parameter(loop, entry) for entry in states]
    shapes = [value.get_partial_shape() for value in (x, *carried)]
    if any(v.get_element_type() != ov.Type.f32 for v in (x, *carried)):
        return None
    if shapes[0].rank.get_length() != 3 or any(s.rank.get_length() != 2 for s in shapes[1:]):
        return None
    if shapes[0][2].is_dynamic or any(s[1].is_dynamic for s in shapes[1:]):
        return None
    hidden = shapes[1][1].get_length()
    if any(s[1].get_length() != hidden for s in shapes[1:]):
        return None
    constants = {}
    for entry in loop.spec.invariant_inputs:
        value = ovgraph.constant_value(loop.outer[entry.external_port])
        if value is not None:
            constants[key(parameters[entry.body_parameter].output(0))] = value
    counter = None
    if read.counter is not None:
        counter = key(parameter(loop, loop.spec.merged_inputs[read.counter]))
    roles = {key(carried[0]): "h"}
    return Matcher(x, roles, constants, hidden, shapes[0][2].get_length(), counter)


def _matched(loop: LoopIR, m: Matcher, states: list[MergedInput]) -> CellWeights:
    """The cell's weights: RNN or GRU for one carried state, LSTM for two (either one h)."""
    news = [loop.body_value(entry.body_result) for entry in states]
    if len(states) == 1:
        h = parameter(loop, states[0])
        return m.first(lambda: match_rnn(m, news[0]), lambda: match_gru(m, news[0], h))
    keys = [key(parameter(loop, entry)) for entry in states]

    def lstm(h: int, c: int) -> CellWeights:
        m.states = {keys[h]: "h", keys[c]: "c"}
        return match_lstm(m, news[h], news[c], parameter(loop, states[c]))

    return m.first(lambda: lstm(0, 1), lambda: lstm(1, 0))


def _outputs(loop: LoopIR, m: Matcher, counters: dict, backward: bool) -> tuple[tuple, ...]:
    """What each Loop output is (see Cell.outputs); NoMatch for any other body Result."""
    spec = loop.spec
    merged = spec.merged_inputs
    kinds = {}
    for index, entry in enumerate(merged):
        role = ("counter", index) if index in counters else m.states[key(parameter(loop, entry))]
        kinds[key(loop.body_value(entry.body_result))] = role
    h_new = next(k for k, role in kinds.items() if role == "h")
    made = []
    for entry in spec.outputs():
        value = loop.body_value(entry.body_result)
        role = kinds.get(key(value)) or ("part" if _is_step_part(m, value, h_new) else None)
        if isinstance(entry, ConcatenatedOutput):
            if role != "part" or not whole_sequence(entry):
                raise NoMatch
            made.append(("stacked", backward != (entry.stride < 0)))
        elif role is None:
            made.append(("outer", _passed_through(loop, m, value)))
        elif isinstance(role, tuple):
            step = counters[role[1]][0]
            made.append(("counter", merged[role[1]].external_port, step))
        else:
            made.append(("last", 0 if role in ("h", "part") else 1, role == "part"))
    return tuple(made)


def _passed_through(loop: LoopIR, m: Matcher, value: ov.Output) -> ov.Output:
    """The outer value a body Result returns unchanged in every iteration (through Identity
    ops and same-type Converts, which are taken): a copy of its Constant, or an invariant
    input's outer value; NoMatch for anything else."""
    node = returned_unchanged(value)
    for step in ovgraph.upstream([value], lambda passed: passed != node):
        m.take(step)
    if node.get_type_name() == "Constant":
        return ov.op.Constant(node.get_tensor_view(), shared_memory=False).output(0)
    for entry in loop.spec.invariant_inputs:
        if loop.body.get_parameters()[entry.body_parameter] == node:
            return loop.outer[entry.external_port]
    raise NoMatch


def _is_step_part(m: Matcher, value: ov.Output, h_new: tuple[int, int]) -> bool:
    """Whether `value` is h' with a length-1 axis in front ([1, B, H])."""
    node = value.get_node()
    if node.get_type_name() not in ("Reshape", "Unsqueeze") or key(node.input_value(0)) != h_new:
        return False
    shape, state = value.get_partial_shape(), node.input_value(0).get_partial_shape()
    if shape.rank.get_length() != 3 or shape[0] != 1 or shape[2] != state[1]:
        return False
    m.take(node)
    return True


def lower_to_sequence(loop: LoopIR, cell: Cell) -> list[ov.Output]:
    """The cell's *Sequence-5 op for `loop`, then each result's post-loop steps; the values in
    result order (see the module docstring)."""
    sequence = loop.outer[cell.read.x_port]
    steps = iterations(loop, cell.read, sequence)
    initial = [loop.outer[port] for port in cell.state_ports]
    rows = rows_read(loop, cell.read, sequence, steps)
    if loop.may_run_zero and read_from_variables(initial):
        rows = _batch_of_states(rows, initial[0])
    node = _sequence_op(cell, rows, initial, steps)
    one = ops.constant(np.array([1], np.int64))
    finals = [ops.squeeze(node.output(1 + k), one).output(0) for k in range(len(initial))]
    if loop.may_run_zero:
        none = ops.equal(steps, ops.constant(np.int64(0)))
        finals = [ops.select(none, first, last).output(0) for first, last in zip(initial, finals)]
    order = ops.constant(np.array([1, 0, 2], np.int64))
    stacked = ops.transpose(ops.squeeze(node.output(0), one), order).output(0)
    zero = ops.constant(np.array([0], np.int64))
    outputs = []
    for what in cell.outputs:
        if what[0] == "stacked":
            outputs.append(ovgraph.reverse(stacked, 0) if what[1] else stacked)
        elif what[0] == "counter":
            outputs.append(_counted(loop.outer[what[1]], what[2], steps))
        elif what[0] == "outer":
            outputs.append(what[1])
        else:
            final = finals[what[1]]
            outputs.append(ops.unsqueeze(final, zero).output(0) if what[2] else final)
    if loop.may_run_zero:  # stacked outputs empty with the body's static dims, as Loop-5's
        loop = GuardZeroIterationRuns().run(loop)
    return apply_steps(loop.results, AfterLoop(outputs, loop.trip, loop.start))


def _batch_of_states(rows: ov.Output, state: ov.Output) -> ov.Output:
    """`rows` [B', n, I] at the batch B of `state` [B, H], for a loop that may run zero times
    from a state --stateful keeps: rows of no step from a zero-iteration loop before have
    batch 0 (its body's symbolic batch, as onnxruntime gives) where the state read from its
    Variable has B, and the *Sequence op asks for one batch::

        rows' = Gather(rows, Range(0, B), axis 0)    # rows itself when B' == B; [B, 0, I]
                                                     # when n == 0: no element is read

    A Reshape to [B, n, I] is no help: the CPU plugin's symbolic shape passes take its equal
    element counts for equal dims (B' == B) and fold its target shape, wrong when n is 0."""
    batch = ops.gather(ops.shape_of(state, ov.Type.i64), ops.constant(0), ops.constant(0))
    rows_of = ops.range(ops.constant(np.int64(0)), batch, ops.constant(np.int64(1)), "i64")
    return ops.gather(rows, rows_of, ops.constant(0)).output(0)


def _counted(initial: ov.Output, step: np.ndarray, steps: ov.Output) -> ov.Output:
    """A counter after `steps` iterations: initial + steps * step, in the counter's type."""
    kind = initial.get_element_type()
    total = ops.multiply(ops.convert(steps, kind), ops.constant(step, kind))
    return ops.add(initial, ops.reshape(total, ops.shape_of(initial), False)).output(0)


def _sequence_op(
    cell: Cell, inputs: ov.Output, initial: list[ov.Output], steps: ov.Output
) -> ov.Node:
    """The *Sequence-5 node over `inputs` [B, n, I] from `initial` states [B, H]."""
    weights = cell.weights
    one = ops.constant(np.array([1], np.int64))
    states = [ops.unsqueeze(state, one) for state in initial]
    batch = ops.gather(ops.shape_of(initial[0], ov.Type.i64), ops.constant([0]), ops.constant(0))
    lengths = ops.broadcast(steps, batch)
    W, R, B = (ops.constant(array[np.newaxis]) for array in (weights.W, weights.R, weights.B))
    direction = "reverse" if cell.read.backward else "forward"
    common = dict(hidden_size=cell.hidden, direction=direction, activations=weights.activations)
    if weights.kind == "LSTM":
        return ops.lstm_sequence(inputs, *states, lengths, W, R, B, **common)
    if weights.kind == "GRU":
        lbr = weights.linear_before_reset
        return ops.gru_sequence(
            inputs, *states, lengths, W, R, B, **common, linear_before_reset=lbr
        )
    return ops.rnn_sequence(inputs, *states, lengths, W, R, B, **common)
