"""The streaming form of a top-level loop: its carried values kept in OpenVINO Variables.

As OpenVINO's LowLatency2 does for TensorIterator and Loop, each carried value of a loop in the
main graph is read from a Variable whose initial value is the value the model feeds it, and the
value the loop leaves (after its post-loop steps and zero-iteration guards) is stored back::

    state[v] = ReadValue(variable_v, init=outer[v])   # outer[v] on the first call, after reset
    loop runs from state[v] instead of outer[v]       # the guards' initial values too
    Assign(variable_v, final[v])                      # what the model returns as v's last value

so a long sequence fed in chunks (one inference per chunk of the sliced inputs) gives the
results of one pass over the whole sequence; `InferRequest.reset_state()` starts a new one. A
loop whose trip count does not come from the chunk (a fixed count, a while loop) runs that
many more iterations from the state on every call.

Only the recurrent state is kept: a carried value the body returns unchanged (a weight, the
whole input passed through), or a counter of iterations, starts from its outer value on every
call; lower/streaming.py says which, and refuses the loops that cannot stream.

A Variable keeps the static dims of its value where the body's Parameter and Result agree on
them (a state of static shape: the CPU plugin cannot reorder a state of dynamic shape between
a Loop and an Assign in some graphs), dynamic dims where the value may change between
iterations; a state of an element type the plugin cannot keep is stored in another one
(`STORED_AS`) with Converts around the ReadValue and the Assign.

A stateful loop whose states start from computed values (not model inputs or constants) has
one more Variable, `<loop>/init_guard`, that no output reads: its ReadValue is initialised
from a sum of each state's initial value, which keeps the CPU plugin from moving the
computation of those values into the states' ReadValues, a fused form that fails to compile
or gives a state the fixed shape of its first value (`_init_guard`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from openvino.op.util import Variable, VariableInfo

from ov_loops.contract.spec import MergedInput
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.lower.streaming import COUNTER, per_call
from ov_loops.ovgraph import upstream

# The element types the CPU plugin (2026.4.1) cannot keep in a Variable, and the type each is
# stored in. Measured (a ReadValue/Add/Assign model called three times): compiling fails for
# i64, u64, u32, i16 and u16 ("CPU plugin does not support i64 for use with oneDNN") and f64;
# f32, f16, i32, i8, u8 and boolean keep their values. Stored as i32: i16/u16 exactly, u32 bit
# for bit (2**31 + 5 and 2**32 - 10 come back); i64/u64 keep their low 32 bits, as the plugin's
# own i64 arithmetic does (the plain conversion of a Loop adding 4 to 2**40 + 3 gives 7). f64
# is rounded to f32, which the plugin computes f64 in anyway (1 + 1e-12 gives 1). So a state
# loses nothing the loop's arithmetic on the CPU did not; hence no refusal.
STORED_AS = {
    ov.Type.i64: ov.Type.i32,
    ov.Type.u64: ov.Type.i32,
    ov.Type.u32: ov.Type.i32,
    ov.Type.i16: ov.Type.i32,
    ov.Type.u16: ov.Type.i32,
    ov.Type.f64: ov.Type.f32,
}
# GPU and NPU were not measured (no device here): every target uses this table, since i32 and
# f32 are the types every OpenVINO plugin computes in; at worst it costs two Converts a state.
# A ReadValue initialised straight from one of these has nothing the CPU plugin would move
# into it (`_init_guard`): a Parameter stays, a Constant alone gives the moved part no input.
NOTHING_TO_MOVE = {"Parameter", "Constant"}
# Ops a state's value passes through unchanged but for its shape or type.
_RESHAPING = frozenset({"Convert", "Unsqueeze", "Squeeze", "Reshape", "Transpose"})


@dataclass(frozen=True)
class State:
    """A carried value of loop `loop_path` kept in `variable`; its final value is result
    `result` of the loop; `init` is what its ReadValue is initialised from (`_init_guard`)."""

    variable: Variable
    result: int
    init: ov.Output
    loop_path: str


def read_states(loop: LoopIR) -> tuple[LoopIR, tuple[State, ...], str]:
    """`loop` reading each carried value that is a state (`streaming.per_call` names the others)
    from a Variable initialised by its outer value, the states (see the module), stored as
    `STORED_AS` says, and one phrase naming them and the values each call starts again. A
    carried value no output returns keeps no state."""
    fresh = per_call(loop)
    outer, states, reads, used = dict(loop.outer), [], {}, set()
    for index, merged in enumerate(loop.spec.merged_inputs):
        result = _final_result(loop, merged.body_result)
        if result is None or index in fresh:
            continue
        start = loop.outer[merged.external_port]
        variable_id = f"{loop.path}/{_name(start, merged.external_port)}"
        if variable_id in used:  # one outer value feeding two carried values
            variable_id = f"{variable_id}/{merged.external_port}"
        used.add(variable_id)
        shape = _state_shape(loop, merged, start)
        read, state = kept_state(start, variable_id, shape, result, loop.path)
        outer[merged.external_port] = read
        reads[result] = (start, outer[merged.external_port])
        states.append(state)
    kept = {_final_result(loop, loop.spec.merged_inputs[i].body_result) for i in fresh}
    streamed = loop.replace(outer=outer, results=_guards_from(loop, reads, kept))
    return streamed, tuple(states), _described(loop, states, fresh)


def kept_state(
    start: ov.Output, variable_id: str, shape: ov.PartialShape, result: int, path: str
) -> tuple[ov.Output, State]:
    """`start` kept in a Variable `variable_id` of `shape` (stored as `STORED_AS` says) that it
    initialises: the value read (of start's type) to use instead of `start`, and the State
    whose final value is value `result` of the loop or op at `path`."""
    stored = STORED_AS.get(start.get_element_type(), start.get_element_type())
    variable = _variable(variable_id, shape, stored)
    init = _converted(start, stored)
    read = _converted(_read_value(init, variable), start.get_element_type())
    return read, State(variable, result, init, path)


def read_from_variables(values: list[ov.Output]) -> bool:
    """Whether some of `values` is read from a Variable (a ReadValue), through ops that only
    reshape or convert: a state --stateful keeps."""
    nodes = upstream(values, lambda node: node.get_type_name() in _RESHAPING)
    return any(node.get_type_name() == "ReadValue" for node in nodes)


def _described(loop: LoopIR, states: list[State], fresh: dict[int, str]) -> str:
    """The summary's phrase: `states: 'h0' f32[?,8]; each call starts again: 'time' (counts
    iterations)`: each state's variable (its outer value's name), type and shape, and each
    counter."""
    named = [
        f"'{s.variable.info.variable_id.removeprefix(loop.path + '/')}' "
        f"{s.variable.info.data_type.get_type_name()}{s.variable.info.data_shape}"
        for s in states
    ]
    phrase = f"states: {', '.join(named) or 'none'}"
    ports = [(loop.spec.merged_inputs[i].external_port, why) for i, why in sorted(fresh.items())]
    counters = [
        f"'{_name(loop.outer[port], port)}' ({why})" for port, why in ports if why == COUNTER
    ]
    return phrase + (f"; each call starts again: {', '.join(counters)}" if counters else "")


def _name(value: ov.Output, port: int) -> str:
    """The outer value's tensor name, else the Loop input port's number (it may have none)."""
    return value.get_any_name() if value.get_names() else str(port)


def _guards_from(
    loop: LoopIR, reads: dict[int, tuple], kept: set[int | None]
) -> tuple[LoopResult, ...]:
    """loop.results with each zero-iteration value (`initial`) that is the outer value of a
    state, `reads[i] = (outer value, its state)`, replaced by that state: result i's own first
    (one outer value may start two carried values), else the first one from that value; the
    results at `kept` (of carried values each call starts again) keep theirs."""
    by_outer: dict = {}
    for start, read in reads.values():
        by_outer.setdefault(_key(start), read)
    results = []
    for index, result in enumerate(loop.results):
        own = reads.get(index)
        if own is not None and _key(own[0]) == _key(result.initial):
            result = result.replace(initial=own[1])
        elif index not in kept and _key(result.initial) in by_outer:
            result = result.replace(initial=by_outer[_key(result.initial)])
        results.append(result)
    return tuple(results)


def assign_states(values: list[ov.Output], states: tuple[State, ...]) -> tuple[ov.Node, ...]:
    """The Assigns storing each state's final value (the model's sinks), converted to the type
    its Variable stores, and the init guard's (`_init_guard`) when a state starts from a
    computed value. Assign takes a node, not an output: a Convert (a no-op when the types
    agree) is one for any output."""
    assigns = tuple(
        ops.assign(ops.convert(values[s.result], s.variable.info.data_type), s.variable)
        for s in states
    )
    if any(s.init.get_node().get_type_name() not in NOTHING_TO_MOVE for s in states):
        return (*assigns, _init_guard(states))
    return assigns


def _init_guard(states: tuple[State, ...]) -> ov.Node:
    """The Assign of a Variable `<loop>/init_guard` that keeps the CPU plugin from moving the
    computation of any ReadValue's initial value into it, in a saved IR too::

        sums = [sum(init_s as f32) for each state s]
        guard = ReadValue(variable_g, init=sums)
        Assign(variable_g, max(guard, sums))     # a sink; nothing reads the guard

    The plugin's MoveReadValueInputsToSubgraph (2026.4.1) moves the nodes computing a
    ReadValue's init into it (a ReadValueWithSubgraph) unless the ReadValue carries rt_info
    DisableInitSubgraphFusing, which `_read_value` sets but the IR does not keep. Its rule: a
    node stays in the main graph (an input of the moved part) when it is a Parameter or has a
    path to an output (a node whose output 0 nobody reads: a Result, an Assign) bypassing the
    ReadValue; when the ReadValue's own producer is one, nothing moves. Each state's `init`
    reaches the guard's Assign, and so does the guard's own init, `sums`: nothing moves. The
    fused form fails (measured): a ReadValueWithSubgraph whose value reaches a Concat,
    directly or through a Reshape, does not compile ("Invalid graph status": the Concat
    initialises it a second time), and it takes the shape of its init, not its Variable's (a
    list's sizes [3] cannot grow: "Can not clone with new dims"). Moving only the sums (the
    guard's Assign reading the guard alone) failed to compile when an init is one output of
    several of a node: the plugin's snippets fuse t = tanh(s), t * W (an init) and t * P (read
    by the loop) into one Subgraph of two outputs, and the pass asks that input for its one
    element type ("get_element_type() must be called on a node with exactly one output",
    issue 20). The sums read the values of each init (a ShapeOf would fold to a constant for
    an init of static shape). Cost: each call sums each state's initial value, which the
    main graph computes on each call anyway, and copies one f32 per state."""
    sums = ops.concat([_sum_of(s.init) for s in states], 0)
    variable = _variable(
        f"{states[0].loop_path}/init_guard", sums.get_output_partial_shape(0), ov.Type.f32
    )
    guard = ops.read_value(sums, variable)
    return ops.assign(ops.maximum(guard, sums), variable)


def _sum_of(value: ov.Output) -> ov.Output:
    """[sum of value's elements], in f32 (0 for an empty value): it reads value's data."""
    flat = ops.reshape(value, ops.constant(np.array([-1], np.int64)), False)
    as_f32 = ops.convert(flat, ov.Type.f32)
    return ops.reduce_sum(as_f32, ops.constant(np.array([0], np.int64)), True).output(0)


def _read_value(start: ov.Output, variable: Variable) -> ov.Output:
    """ReadValue(variable, init=start), marked so that the CPU plugin evaluates `start` in the
    main graph rather than moving the nodes computing it into the ReadValue (its
    MoveReadValueInputsToSubgraph pass; the fused form fails, see `_init_guard`). The mark is
    node rt_info, which the IR does not keep; the init guard, a graph shape, survives it."""
    read = ops.read_value(start, variable)
    read.get_rt_info()["DisableInitSubgraphFusing"] = "true"
    return read.output(0)


def _converted(value: ov.Output, element_type: ov.Type) -> ov.Output:
    """`value` as `element_type` (itself when it already is)."""
    if value.get_element_type() == element_type:
        return value
    return ops.convert(value, element_type).output(0)


def _final_result(loop: LoopIR, body_result: int) -> int | None:
    """The index among loop.results of the last value of `body_result`, if the loop gives it."""
    ports = {e.external_port for e in loop.spec.last_value_outputs if e.body_result == body_result}
    return next((i for i, result in enumerate(loop.results) if result.port in ports), None)


def _key(value: ov.Output | None) -> tuple[int, int] | None:
    return None if value is None else (value.get_node().get_instance_id(), value.get_index())


def _state_shape(loop: LoopIR, merged: MergedInput, start: ov.Output) -> ov.PartialShape:
    """The shape a state keeps across iterations and calls: a dim is static where the body's
    Parameter and the Result feeding it back agree on it (and the outer value does not say
    otherwise), dynamic where the value may change; of `start`'s rank when the body's ranks
    are unknown or differ."""
    before = loop.body.get_parameters()[merged.body_parameter].get_partial_shape()
    after = loop.body_value(merged.body_result).get_partial_shape()
    outer = start.get_partial_shape()
    if before.rank.is_dynamic or after.rank.is_dynamic or before.rank != after.rank:
        return ov.PartialShape.dynamic(outer.rank)
    if outer.rank.is_static and outer.rank != before.rank:
        return ov.PartialShape.dynamic(before.rank.get_length())
    if outer.rank.is_dynamic:
        outer = ov.PartialShape.dynamic(before.rank.get_length())
    dims = [
        b if b.is_static and b == a and (o.is_dynamic or o == b) else ov.Dimension.dynamic()
        for b, a, o in zip(before, after, outer)
    ]
    return ov.PartialShape(dims)


def _variable(variable_id: str, shape: ov.PartialShape, element_type: ov.Type) -> Variable:
    """A Variable of `shape` and `element_type` named `variable_id`."""
    info = VariableInfo()
    info.data_shape = shape
    info.data_type = element_type
    info.variable_id = variable_id
    return Variable(info)
