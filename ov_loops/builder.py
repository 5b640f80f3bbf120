"""Theano-style `scan` (and `map`, `reduce`, `foldl`, `foldr`) on OpenVINO opsets, emitting a
Loop-5 through LoopSpec.

Semantics (Theano's `scan` guide, ../shared/specs/theano-scan.zh-en.txt)::

    offset = max(-min(taps of sequence, 0))            # first usable position of each sequence
    steps = n_steps or min(len(seq) - offset - max(taps, 0)) over the sequences
    for t in range(steps):                             # sequences reversed if go_backwards
        args = [seq[offset + t + k] for each sequence, for k in its taps]
             + [out[t + k] for each fed-back output, for k in its taps]   # out[-L:] = initial
             + non_sequences
        *outputs_t, [until(c)] = fn(*args)
        stop after this step if c
    return [stack(output_t over t) for each output], {}

`reduce`/`foldl`/`foldr` return the last value of each output instead of the whole sequence,
with a last-value output (no concatenation). An output with past taps [-L, ..] is carried as a
window of its last L values (merged input, shifted each step); a sequence tap k is a sliced input
of the view seq[offset + k : offset + k + steps].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.errors import OvLoopsError
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.passes import cpu_guards
from ov_loops.lower.loop5 import build_loop


class BuilderError(OvLoopsError):
    """A `scan` call that cannot be built: the message names the argument."""


@dataclass(frozen=True)
class until:  # noqa: N801 - Theano's name
    """Returned last by `fn`: stop after the step in which `condition` is true."""

    condition: object


@dataclass
class _Sequence:
    value: ov.Output
    taps: list[int]


@dataclass
class _Output:
    initial: ov.Output | None
    taps: list[int] = field(default_factory=list)

    @property
    def window(self) -> int:
        """How many past values fn sees (0 for an output not fed back)."""
        return -min(self.taps) if self.taps else 0


def _output(value) -> ov.Output:
    if isinstance(value, ov.Output):
        return value
    if isinstance(value, ov.Node):
        return value.output(0)
    if hasattr(value, "output"):
        return value.output(0)
    raise BuilderError(f"expected an openvino Output or Node, got {type(value).__name__}")


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _sequences(sequences) -> list[_Sequence]:
    parsed = []
    for index, entry in enumerate(_as_list(sequences)):
        if isinstance(entry, dict):
            if "input" not in entry:
                raise BuilderError(f"sequences[{index}]: a dict needs 'input'")
            taps = entry.get("taps", [0])
            taps = [0] if taps is None else _as_list(taps)
            parsed.append(_Sequence(_output(entry["input"]), [int(k) for k in taps]))
        else:
            parsed.append(_Sequence(_output(entry), [0]))
    return parsed


def _outputs_info(outputs_info) -> list[_Output]:
    parsed = []
    for index, entry in enumerate(_as_list(outputs_info)):
        if entry is None:
            parsed.append(_Output(None))
        elif isinstance(entry, dict):
            initial = entry.get("initial")
            taps = entry.get("taps", [-1] if initial is not None else None)
            taps = [int(k) for k in _as_list(taps)]
            if taps and initial is None:
                raise BuilderError(f"outputs_info[{index}]: taps {taps} need an 'initial' state")
            if any(k >= 0 for k in taps):
                raise BuilderError(
                    f"outputs_info[{index}]: output taps must be negative, got {taps}"
                )
            parsed.append(_Output(_output(initial) if initial is not None else None, taps))
        else:
            parsed.append(_Output(_output(entry), [-1]))
    return parsed


def scan(
    fn: Callable,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps: int | ov.Output | None = None,
    go_backwards: bool = False,
    strict: bool = False,
    name: str | None = None,
):
    """Build a Loop-5 computing Theano's `scan`; returns (outputs, updates).

    `outputs` is one openvino.Output or a list (the full sequence of each output over the
    steps); `updates` is an empty dict, for Theano compatibility. See the module docstring.
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
    )


def map(
    fn: Callable,
    sequences,
    non_sequences=None,
    go_backwards: bool = False,  # noqa: A001
    name: str | None = None,
):
    """Theano's map: fn applied to each step of the sequences; returns (outputs, updates)."""
    return scan(
        fn, sequences=sequences, non_sequences=non_sequences, go_backwards=go_backwards, name=name
    )


def reduce(
    fn: Callable,
    sequences,
    outputs_info,
    non_sequences=None,  # noqa: A001
    go_backwards: bool = False,
    name: str | None = None,
):
    """Theano's reduce: the last value of each output (a last-value output, no concatenation);
    returns (outputs, updates)."""
    return _scan(
        fn, sequences, outputs_info, non_sequences, None, go_backwards, False, name, last_only=True
    )


def foldl(fn: Callable, sequences, outputs_info, non_sequences=None, name: str | None = None):
    """reduce from the start of the sequences."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, name=name)


def foldr(fn: Callable, sequences, outputs_info, non_sequences=None, name: str | None = None):
    """reduce from the end of the sequences."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, name=name)


# -- construction --------------------------------------------------------------------------------
def _i64(*values) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)


def _rows(value: ov.Output, start: int) -> ov.Output:
    """value[start:] along axis 0 (the stop from the shape: the CPU plugin computes in i32)."""
    stop = ops.unsqueeze(ovgraph.length(value, 0), _i64(0))
    return ops.slice(value, _i64(start), stop, _i64(1), _i64(0)).output(0)


def _is_window(out: _Output) -> bool:
    """Fed back with taps other than the plain [-1]: carried as a window of past values."""
    return out.taps != [-1]


@dataclass
class _Body:
    """The body under construction: its Parameters by role, and the outer values feeding them."""

    arguments: list[ov.Output] = field(default_factory=list)  # fn's arguments, in order
    sliced: list[tuple[ov.Node, ov.Output]] = field(default_factory=list)  # (param, view)
    windows: list[tuple[ov.Node, _Output]] = field(default_factory=list)  # (param, output)
    invariant: list[tuple[ov.Node, ov.Output]] = field(default_factory=list)  # (param, value)

    @property
    def parameters(self) -> list[ov.Node]:
        return (
            [p for p, _ in self.sliced]
            + [p for p, _ in self.windows]
            + [p for p, _ in self.invariant]
        )


def _trip_count(seqs: list[_Sequence], n_steps) -> tuple[trips.TripCount, list[int]]:
    """n_steps, else the shortest sequence's usable length; and each sequence's offset."""
    offsets, usable = [], []
    for sequence in seqs:
        offset, ahead = max(0, -min(sequence.taps)), max(0, max(sequence.taps))
        offsets.append(offset)
        remaining = ops.subtract(
            ovgraph.length(sequence.value, 0), ops.constant(np.int64(offset + ahead))
        )
        usable.append(ops.maximum(remaining, ops.constant(np.int64(0))).output(0))
    if isinstance(n_steps, (int, np.integer)):
        value = ops.constant(np.int64(n_steps)).output(0)
    elif n_steps is not None:
        value = _output(n_steps)
    else:
        value = usable[0]
        for other in usable[1:]:
            value = ops.minimum(value, other).output(0)
    return trips.trip_count(value), offsets


def _parameters(seqs, offsets, outs, invariants, steps: ov.Output) -> _Body:
    """Body Parameters in fn's argument order: sequence taps (parts of views), output taps
    (a value, or entries of a window), non_sequences."""
    body = _Body()
    for sequence, offset in zip(seqs, offsets):
        shape = sequence.value.get_partial_shape()
        part = ov.PartialShape([1, *list(shape)[1:]]) if shape.rank.is_static else shape
        for tap in sequence.taps:  # sequence[offset + tap : offset + tap + steps]
            start = ops.constant(np.array([offset + tap], np.int64))
            stop = ops.add(start, ops.unsqueeze(steps, _i64(0)))
            view = ops.slice(sequence.value, start, stop, _i64(1), _i64(0)).output(0)
            parameter = ops.parameter(part, sequence.value.get_element_type())
            body.sliced.append((parameter, view))
            body.arguments.append(ops.squeeze(parameter, _i64(0)).output(0))
    for index, out in enumerate(outs):
        if not out.taps:
            continue
        shape = out.initial.get_partial_shape()
        if (
            _is_window(out)
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
        if not _is_window(out):
            body.arguments.append(parameter.output(0))
        for tap in out.taps if _is_window(out) else []:  # window[window_length + tap]
            position = ops.constant(np.int64(out.window + tap))
            body.arguments.append(ops.gather(parameter, position, _i64(0)).output(0))
    for value in invariants:
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        body.invariant.append((parameter, value))
        body.arguments.append(parameter.output(0))
    return body


def _call(fn, body: _Body, outs: list[_Output]):
    """fn's step values (one per output) and its `until` condition, or None."""
    returned = fn(*body.arguments)
    returned = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    condition = None
    if returned and isinstance(returned[-1], until):
        condition = _output(returned.pop().condition)
    if outs and len(returned) != len(outs):
        raise BuilderError(
            f"fn: returned {len(returned)} outputs, outputs_info describes {len(outs)}"
        )
    return [_output(value) for value in returned], condition


def _scan(
    fn, sequences, outputs_info, non_sequences, n_steps, go_backwards, strict, name, last_only
):
    seqs = _sequences(sequences)
    outs = _outputs_info(outputs_info)
    invariants = [_output(value) for value in _as_list(non_sequences)]
    if isinstance(n_steps, (int, np.integer)) and n_steps < 0:
        n_steps, go_backwards = -int(n_steps), not go_backwards
    if go_backwards:
        seqs = [_Sequence(ovgraph.reverse(s.value, 0), s.taps) for s in seqs]
    if n_steps is None and not seqs:
        raise BuilderError("n_steps: needed when there are no sequences")
    trip, offsets = _trip_count(seqs, n_steps)
    start = trips.initial_condition(None)
    body = _parameters(seqs, offsets, outs, invariants, trip.value)
    step_values, condition = _call(fn, body, outs)
    outs = outs or [_Output(None) for _ in step_values]

    # Results: each fed-back output's next value (or window), then each output's value per step
    # (or last value), then the condition.
    results: list[ov.Node] = []
    merged: list[tuple[ov.Node, _Output, int]] = []  # (parameter, output, back-edge result)
    emitted = []
    windows = dict(zip([id(out) for _, out in body.windows], [p for p, _ in body.windows]))
    for index, (out, value) in enumerate(zip(outs, step_values)):
        if out.taps:
            _check_fed_back(index, out, value)
            fed_back = value
            if _is_window(out):  # drop the oldest value, append this step's
                parameter = windows[id(out)]
                fed_back = ops.concat(
                    [_rows(parameter.output(0), 1), ops.unsqueeze(value, _i64(0))], 0
                ).output(0)
            results.append(ops.result(ovgraph.copy(fed_back)))
            merged.append((windows[id(out)], out, len(results) - 1))
        results.append(ops.result(value if last_only else ops.unsqueeze(value, _i64(0))))
        emitted.append(len(results) - 1)
    keep = (
        ops.constant(True)
        if condition is None
        else ops.logical_not(ops.convert(condition, ov.Type.boolean))
    )
    results.append(ops.result(keep))

    _capture(results, body, strict)
    parameters = body.parameters
    model = ov.Model(results, parameters, f"{name or 'scan'}/body")
    spec, external = _spec(parameters, merged, body, emitted, len(results) - 1, trip, last_only)
    if trip.proven_zero:
        outputs = _zero_steps(step_values, outs, last_only)
    else:
        produced = build_loop(spec, model, trip.value, start.value, external, name or "scan")
        zero = cpu_guards.runs_zero(trip, start)
        if last_only:
            initial = [
                out.initial if out.taps and not _is_window(out) else value
                for out, value in zip(outs, produced)
            ]
            outputs = cpu_guards.guard_last_values(produced, initial, zero)
        else:
            empty = [_empty_shape(out, value) for out, value in zip(outs, step_values)]
            outputs = cpu_guards.guard_zero_iterations(produced, [0] * len(produced), empty, zero)
    return (outputs[0] if len(outputs) == 1 else outputs), {}


def _spec(parameters, merged, body: _Body, emitted, condition, trip, last_only):
    """The LoopSpec (merged: windows; invariant: non_sequences and captures; sliced: sequence
    views) and the outer value of each port."""
    index_of = {p.get_instance_id(): i for i, p in enumerate(parameters)}
    external: dict[int, ov.Output] = {}
    entries: dict[str, list] = {"merged": [], "invariant": [], "sliced": []}
    port = 2
    for parameter, out, result in merged:
        index = index_of[parameter.get_instance_id()]
        entries["merged"].append(MergedInput(port, index, result))
        external[port] = _rows(out.initial, -out.window) if _is_window(out) else out.initial
        port += 1
    for kind, pairs, make in (
        ("invariant", body.invariant, lambda port, index: InvariantInput(port, index)),
        ("sliced", body.sliced, lambda port, index: SlicedInput(port, index, axis=0)),
    ):
        for parameter, value in pairs:
            entries[kind].append(make(port, index_of[parameter.get_instance_id()]))
            external[port] = value
            port += 1
    outputs = (
        tuple(LastValueOutput(i, r) for i, r in enumerate(emitted))
        if last_only
        else tuple(ConcatenatedOutput(i, r, axis=0) for i, r in enumerate(emitted))
    )
    spec = LoopSpec(
        trip_count_source=trip.source,
        trip_count=trip.constant if trip.source == TRIP_COUNT_CONSTANT else None,
        sliced_inputs=tuple(entries["sliced"]),
        merged_inputs=tuple(entries["merged"]),
        invariant_inputs=tuple(entries["invariant"]),
        concatenated_outputs=() if last_only else outputs,
        last_value_outputs=outputs if last_only else (),
        execution_condition=condition,
    )
    return spec, external


def _empty_shape(out: _Output, value: ov.Output) -> ov.Output | None:
    """The shape of zero steps of an output: [0, *its step shape], the step shape taken from the
    initial state when the output is fed back (it has that shape), else from fn's static dims."""
    if not out.taps:
        return ovgraph.empty_shape(value, 0)
    shape = ops.shape_of(out.initial, ov.Type.i64).output(0)
    if _is_window(out):
        shape = _rows(shape, 1)
    return ops.concat([_i64(0), shape], 0).output(0)


def _check_fed_back(index: int, out: _Output, value: ov.Output) -> None:
    initial = out.initial
    element = initial.get_partial_shape()
    if _is_window(out) and element.rank.is_static:
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


def _capture(results: Sequence[ov.Node], body: _Body, strict: bool) -> None:
    """Outer values the body reads (outputs of nodes that depend on no body Parameter but on a
    Parameter outside, consumed inside the body) become invariant inputs of `body`; under
    `strict` they are an error."""
    own = {p.get_instance_id() for p in body.parameters}
    kinds: dict[int, str] = {}  # node id -> "body", "outer" or "const"

    def kind(node) -> str:
        key = node.get_instance_id()
        if key not in kinds:
            if key in own:
                kinds[key] = "body"
            elif node.get_type_name() == "Parameter":
                kinds[key] = "outer"
            else:
                found = {kind(value.get_node()) for value in node.input_values()}
                kinds[key] = "body" if "body" in found else "outer" if "outer" in found else "const"
        return kinds[key]

    inside = {result.get_instance_id() for result in results}
    captured: dict[tuple[int, int], ov.Output] = {}
    pending = list(results)
    while pending:
        node = pending.pop()
        for value in node.input_values():
            source = value.get_node()
            if kind(source) == "outer":
                captured.setdefault((source.get_instance_id(), value.get_index()), value)
            elif kind(source) == "body" and source.get_instance_id() not in inside:
                inside.add(source.get_instance_id())
                pending.append(source)
    if captured and strict:
        names = ", ".join(sorted({c.get_node().get_friendly_name() for c in captured.values()}))
        raise BuilderError(f"fn: uses {names} from outside without non_sequences (strict=True)")
    for value in captured.values():
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        for target in list(value.get_target_inputs()):
            if target.get_node().get_instance_id() in inside:
                target.replace_source_output(parameter.output(0))
        body.invariant.append((parameter, value))


def _zero_steps(step_values: list[ov.Output], outs: list[_Output], last_only: bool):
    """A constant zero step count: no Loop (the CPU plugin crashes on it); initial values for
    reduce, empty sequences for scan."""
    if last_only:
        return [
            ovgraph.passthrough(out.initial)
            if out.initial is not None
            else ovgraph.empty_stack(value, 0)
            for out, value in zip(outs, step_values)
        ]
    return [ovgraph.empty_stack(value, 0) for value in step_values]
