"""The body of a scan under construction: its Parameters in fn's argument order, the call to
fn (its step values, updates and `until`), and the Results it computes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.frontends.theano.arguments import (
    BuilderError,
    OutputInfo,
    SequenceInfo,
    as_output,
)
from ov_loops.frontends.theano.shared_variables import SharedVariable, update_pairs


@dataclass(frozen=True)
class until:  # noqa: N801 - Theano's name
    """Returned last by `fn`: stop after the step in which `condition` is true."""

    condition: object


@dataclass
class Body:
    """The body under construction: its Parameters by role, and the outer values feeding them."""

    arguments: list[ov.Output] = field(default_factory=list)  # fn's arguments, in order
    sliced: list[tuple[ov.Node, ov.Output]] = field(default_factory=list)  # (param, view)
    windows: list[tuple[ov.Node, OutputInfo]] = field(default_factory=list)  # (param, output)
    invariant: list[tuple[ov.Node, ov.Output]] = field(default_factory=list)  # (param, value)
    # (param, variable, index of the Result holding its update): updated shared variables
    shared: list[tuple[ov.Node, SharedVariable, int]] = field(default_factory=list)

    @property
    def parameters(self) -> list[ov.Node]:
        return (
            [p for p, _ in self.sliced]
            + [p for p, _ in self.windows]
            + [p for p, _, _ in self.shared]
            + [p for p, _ in self.invariant]
        )


def i64(*values) -> ov.Output:
    """An i64 constant of `values`."""
    return ops.constant(np.array(values, np.int64)).output(0)


def rows(value: ov.Output, start: int) -> ov.Output:
    """value[start:] along axis 0 (the stop from the shape: the CPU plugin computes in i32)."""
    stop = ops.unsqueeze(ovgraph.length(value, 0), i64(0))
    return ops.slice(value, i64(start), stop, i64(1), i64(0)).output(0)


def next_node_id() -> int:
    """An id above every existing node's (OpenVINO numbers nodes in creation order): the first
    node of the body, the nodes fn builds among them."""
    return ops.constant(np.int8(0)).get_instance_id()


def make_body(seqs: list[SequenceInfo], offsets, outs, invariants, steps: ov.Output) -> Body:
    """Body Parameters in fn's argument order: sequence taps (parts of views), output taps
    (a value, or entries of a window), non_sequences."""
    body = Body()
    for sequence, offset in zip(seqs, offsets):
        shape = sequence.value.get_partial_shape()
        part = (
            ov.PartialShape([1, *ovgraph.dimensions(shape)[1:]]) if shape.rank.is_static else shape
        )
        for tap in sequence.taps:  # sequence[offset + tap : offset + tap + steps]
            start = ops.constant(np.array([offset + tap], np.int64))
            stop = ops.add(start, ops.unsqueeze(steps, i64(0)))
            view = ops.slice(sequence.value, start, stop, i64(1), i64(0)).output(0)
            parameter = ops.parameter(part, sequence.value.get_element_type())
            body.sliced.append((parameter, view))
            body.arguments.append(ops.squeeze(parameter, i64(0)).output(0))
    for index, out in enumerate(outs):
        if out.taps:
            _window_parameters(body, index, out)
    for value in invariants:
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        body.invariant.append((parameter, value))
        body.arguments.append(parameter.output(0))
    return body


def _window_parameters(body: Body, index: int, out: OutputInfo) -> None:
    """The Parameter of fed-back output `index` (its value, or the window of its past values)
    and fn's arguments read from it (the value, or each tap's entry of the window)."""
    shape = out.initial.get_partial_shape()
    if (
        out.is_window
        and shape.rank.is_static
        and shape[0].is_static
        and shape[0].get_length() < out.window
    ):
        raise BuilderError(
            f"outputs_info[{index}]: taps {out.taps} need {out.window} initial values "
            f"along axis 0, the initial state has {shape[0].get_length()}"
        )
    parameter = ops.parameter(shape, out.initial.get_element_type())
    body.windows.append((parameter, out))
    if not out.is_window:
        body.arguments.append(parameter.output(0))
    for tap in out.taps if out.is_window else []:  # window[window_length + tap]
        position = ops.constant(np.int64(out.window + tap))
        body.arguments.append(ops.gather(parameter, position, i64(0)).output(0))


def call_fn(fn, body: Body, outs: list[OutputInfo]):
    """fn's step values (one per output), its updates ({shared: new value}; returned before or
    after the outputs, or alone) and its `until` condition, or None."""
    returned = fn(*body.arguments)
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    condition = None
    if items and isinstance(items[-1], until):
        condition = as_output(items.pop().condition)
    updates = {}
    for item in items:
        if isinstance(item, dict):
            updates.update(item)
    returned = [item for item in items if not isinstance(item, dict)]
    if len(returned) == 1 and isinstance(returned[0], (list, tuple)):
        returned = list(returned[0])
    if outs and len(returned) != len(outs):
        raise BuilderError(
            f"fn: returned {len(returned)} outputs, outputs_info describes {len(outs)}"
        )
    return [as_output(value) for value in returned], update_pairs(updates, "fn"), condition


def body_results(outs: list[OutputInfo], step_values: list[ov.Output], body: Body):
    """The body's Results: each fed-back output's next value (or window), then each output's
    value per step (or its last value, for an output that returns only that; a fed-back one's
    is the Result of its back edge, as an ONNX loop's carried value's is). Returns them, the
    merged inputs as (Parameter, output, back-edge Result index), and the index of each
    output's Result."""
    made: list[ov.Node] = []
    merged: list[tuple[ov.Node, OutputInfo, int]] = []
    emitted = []
    windows = {id(out): parameter for parameter, out in body.windows}
    for index, (out, value) in enumerate(zip(outs, step_values)):
        if out.taps:
            _check_fed_back(index, out, value)
            fed_back = value
            if out.is_window:  # drop the oldest value, append this step's
                parameter = windows[id(out)]
                fed_back = ops.concat(
                    [rows(parameter.output(0), 1), ops.unsqueeze(value, i64(0))], 0
                ).output(0)
            made.append(ops.result(fed_back))
            merged.append((windows[id(out)], out, len(made) - 1))
            if out.last and not out.is_window:  # its last value is the back edge's Result
                emitted.append(len(made) - 1)
                continue
        made.append(ops.result(value if out.last else ops.unsqueeze(value, i64(0))))
        emitted.append(len(made) - 1)
    return made, merged, emitted


def keep_going(condition: ov.Output | None) -> ov.Node:
    """The Result of the execution condition: not `until`'s condition (always true without)."""
    keep = (
        ops.constant(True)
        if condition is None
        else ops.logical_not(ops.convert(condition, ov.Type.boolean))
    )
    return ops.result(keep)


def _check_fed_back(index: int, out: OutputInfo, value: ov.Output) -> None:
    """fn's step value of a fed-back output has its initial state's (element) type and shape."""
    initial = out.initial
    element = initial.get_partial_shape()
    if out.is_window and element.rank.is_static:
        element = ov.PartialShape(list(element)[1:])
    if value.get_element_type() != initial.get_element_type():
        raise BuilderError(
            f"outputs_info[{index}]: fn returns {value.get_element_type().get_type_name()} but "
            f"the initial state is {initial.get_element_type().get_type_name()}"
        )
    shape = value.get_partial_shape()
    if not shape.compatible(element):
        raise BuilderError(
            f"outputs_info[{index}]: fn returns shape {shape} but the initial state gives {element}"
        )
