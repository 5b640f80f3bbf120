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
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import openvino as ov
import openvino.opset15 as ops
from openvino.op.util import Variable, VariableInfo

from ov_loops.loopir.loop import LoopIR


@dataclass(frozen=True)
class State:
    """A carried value kept in `variable`; its final value is result `result` of the loop."""

    variable: Variable
    result: int


def is_top_level(loop: LoopIR) -> bool:
    """Whether `loop` sits in the main graph (`main/Loop_0`, not `main/Loop_0/body/...`)."""
    return "/" not in loop.path.removeprefix("main/")


def read_states(loop: LoopIR) -> tuple[LoopIR, tuple[State, ...]]:
    """`loop` reading each carried value from a Variable initialised by its outer value, and
    the states (see the module). A carried value no output returns keeps no state."""
    outer, states = dict(loop.outer), []
    initial = {}
    for merged in loop.spec.merged_inputs:
        result = _final_result(loop, merged.body_result)
        if result is None:
            continue
        start = loop.outer[merged.external_port]
        variable = _variable(f"{loop.path}/{start.get_any_name() or merged.external_port}", start)
        read = ops.read_value(start, variable).output(0)
        outer[merged.external_port] = read
        initial[(start.get_node().get_instance_id(), start.get_index())] = read
        states.append(State(variable, result))
    results = tuple(
        dataclasses.replace(r, initial=initial.get(_key(r.initial), r.initial)) if r.initial else r
        for r in loop.results
    )
    return loop.replace(outer=outer, results=results), tuple(states)


def assign_states(values: list[ov.Output], states: tuple[State, ...]) -> tuple[ov.Node, ...]:
    """The Assigns storing each state's final value (the model's sinks). Assign takes a node,
    not an output: a Convert to the value's own type (a no-op) is one for any output."""
    return tuple(
        ops.assign(ops.convert(values[s.result], values[s.result].get_element_type()), s.variable)
        for s in states
    )


def _final_result(loop: LoopIR, body_result: int) -> int | None:
    """The index among loop.results of the last value of `body_result`, if the loop gives it."""
    ports = {e.external_port for e in loop.spec.last_value_outputs if e.body_result == body_result}
    return next((i for i, result in enumerate(loop.results) if result.port in ports), None)


def _key(value: ov.Output | None) -> tuple[int, int] | None:
    return None if value is None else (value.get_node().get_instance_id(), value.get_index())


def _variable(variable_id: str, start: ov.Output) -> Variable:
    """A Variable of `start`'s element type and rank, every dim dynamic (a carried value may
    change shape between iterations, and chunks between calls)."""
    shape = start.get_partial_shape()
    info = VariableInfo()
    info.data_shape = (
        ov.PartialShape.dynamic(shape.rank.get_length())
        if shape.rank.is_static
        else ov.PartialShape.dynamic()
    )
    info.data_type = start.get_element_type()
    info.variable_id = variable_id
    return Variable(info)
