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

from ov_loops.errors import OvLoopsError
from ov_loops.loops import guards
from ov_loops.loops.spec import (
    TRIP_COUNT_CONSTANT,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.loops.to_openvino import build_loop


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


def _reverse(value: ov.Output) -> ov.Output:
    return guards.reverse(value, 0)


def _steps_of(sequence: _Sequence) -> tuple[int, ov.Output]:
    """(offset, usable steps) of a sequence with its taps."""
    offset = max(0, -min(sequence.taps))
    ahead = max(0, max(sequence.taps))
    length = ops.squeeze(
        ops.gather(ops.shape_of(sequence.value, ov.Type.i64), _i64(0), _i64(0)), _i64(0)
    )
    usable = ops.maximum(
        ops.subtract(length, ops.constant(np.int64(offset + ahead))), ops.constant(np.int64(0))
    )
    return offset, usable.output(0)


def _tap_view(sequence: _Sequence, offset: int, tap: int, steps: ov.Output) -> ov.Output:
    """seq[offset + tap : offset + tap + steps] along axis 0."""
    start = ops.constant(np.array([offset + tap], np.int64))
    stop = ops.add(start, ops.unsqueeze(steps, _i64(0)))
    return ops.slice(sequence.value, start, stop, _i64(1), _i64(0)).output(0)


def _scan(
    fn, sequences, outputs_info, non_sequences, n_steps, go_backwards, strict, name, last_only
):
    seqs = _sequences(sequences)
    outs = _outputs_info(outputs_info)
    invariants = [_output(value) for value in _as_list(non_sequences)]
    if isinstance(n_steps, (int, np.integer)) and n_steps < 0:
        n_steps, go_backwards = -int(n_steps), not go_backwards
    if go_backwards:
        seqs = [_Sequence(_reverse(s.value), s.taps) for s in seqs]
    if n_steps is None and not seqs:
        raise BuilderError("n_steps: needed when there are no sequences")

    # The trip count: n_steps, else the shortest sequence's usable length.
    offsets_steps = [_steps_of(s) for s in seqs]
    if n_steps is not None:
        trip_value = (
            ops.constant(np.int64(n_steps)).output(0)
            if isinstance(n_steps, (int, np.integer))
            else _output(n_steps)
        )
    else:
        trip_value = offsets_steps[0][1]
        for _, usable in offsets_steps[1:]:
            trip_value = ops.minimum(trip_value, usable).output(0)
    trip = guards.trip_count(trip_value)
    start = guards.initial_condition(None)

    # Body parameters, in fn's argument order.
    arguments: list[ov.Output] = []
    sliced: list[tuple[ov.Node, ov.Output]] = []  # (parameter, outer view)
    for s, (offset, _) in zip(seqs, offsets_steps):
        element = s.value.get_partial_shape()
        part_shape = ov.PartialShape([1, *list(element)[1:]]) if element.rank.is_static else element
        for tap in s.taps:
            parameter = ops.parameter(part_shape, s.value.get_element_type())
            sliced.append((parameter, _tap_view(s, offset, tap, trip.value)))
            arguments.append(ops.squeeze(parameter, _i64(0)).output(0))
    windows: list[tuple[ov.Node, _Output]] = []
    for index, out in enumerate(outs):
        if not out.taps:
            continue
        if out.window > 1 or len(out.taps) > 1 or out.taps != [-1]:
            shape = out.initial.get_partial_shape()
            if shape.rank.is_static and shape[0].is_static and shape[0].get_length() < out.window:
                raise BuilderError(
                    f"outputs_info[{index}]: taps {out.taps} need {out.window} initial values "
                    f"along axis 0, the initial state has {shape[0].get_length()}"
                )
        parameter = ops.parameter(out.initial.get_partial_shape(), out.initial.get_element_type())
        windows.append((parameter, out))
        if out.taps == [-1] and not _is_window(out):
            arguments.append(parameter.output(0))
        else:
            for tap in out.taps:  # window[window_length + tap]
                index_in_window = ops.constant(np.int64(out.window + tap))
                arguments.append(ops.gather(parameter, index_in_window, _i64(0)).output(0))
    invariant_parameters = [
        ops.parameter(v.get_partial_shape(), v.get_element_type()) for v in invariants
    ]
    arguments += [p.output(0) for p in invariant_parameters]

    returned = fn(*arguments)
    returned = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    condition = None
    if returned and isinstance(returned[-1], until):
        condition = _output(returned.pop().condition)
    if len(returned) != len(outs) and outs:
        raise BuilderError(
            f"fn: returned {len(returned)} outputs, outputs_info describes {len(outs)}"
        )
    if not outs:
        outs = [_Output(None) for _ in returned]
    step_values = [_output(value) for value in returned]

    # Feedback: each fed-back output's new window (or value), checked against its initial state.
    results: list[ov.Node] = []
    merged, last_values, concatenated = [], [], []
    parameters = [p for p, _ in sliced] + [p for p, _ in windows] + invariant_parameters
    window_of = {id(out): parameter for parameter, out in windows}
    for index, (out, value) in enumerate(zip(outs, step_values)):
        if out.taps:
            _check_fed_back(index, out, value)
            parameter = window_of[id(out)]
            if _is_window(out):  # drop the oldest value, append this step's
                shifted = _rows(parameter.output(0), 1, None)
                fed_back = ops.concat([shifted, ops.unsqueeze(value, _i64(0))], 0).output(0)
            else:
                fed_back = value
            results.append(ops.result(guards.copy(fed_back)))
            merged.append((parameter, len(results) - 1))
        if last_only:
            results.append(ops.result(value))
            last_values.append(len(results) - 1)
        else:
            results.append(ops.result(ops.unsqueeze(value, _i64(0))))
            concatenated.append(len(results) - 1)
    if condition is not None:
        keep = ops.logical_not(ops.convert(condition, ov.Type.boolean))
        results.append(ops.result(keep))
    else:
        results.append(ops.result(ops.constant(True)))
    condition_index = len(results) - 1

    captured = _captures(results, parameters)
    if captured and strict:
        names = ", ".join(sorted({c.get_node().get_friendly_name() for c in captured}))
        raise BuilderError(f"fn: uses {names} from outside without non_sequences (strict=True)")
    capture_parameters = []
    for value in captured:
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        for target in list(value.get_target_inputs()):
            if _inside(target.get_node(), results, parameters + capture_parameters):
                target.replace_source_output(parameter.output(0))
        capture_parameters.append(parameter)
    parameters += capture_parameters
    body = ov.Model(results, parameters, f"{name or 'scan'}/body")

    # The LoopSpec: merged (windows), invariant (non_sequences, captures), sliced (sequences).
    index_of = {p.get_instance_id(): i for i, p in enumerate(parameters)}
    port = 2
    spec_merged = []
    external: dict[int, ov.Output] = {}
    for parameter, result in merged:
        out = next(o for p, o in windows if p.get_instance_id() == parameter.get_instance_id())
        spec_merged.append(MergedInput(port, index_of[parameter.get_instance_id()], result))
        external[port] = _rows(out.initial, -out.window, None) if _is_window(out) else out.initial
        port += 1
    spec_invariant = []
    for parameter, value in zip(invariant_parameters + capture_parameters, invariants + captured):
        spec_invariant.append(InvariantInput(port, index_of[parameter.get_instance_id()]))
        external[port] = value
        port += 1
    spec_sliced = []
    for parameter, view in sliced:
        spec_sliced.append(SlicedInput(port, index_of[parameter.get_instance_id()], axis=0))
        external[port] = view
        port += 1
    spec = LoopSpec(
        trip_count_source=trip.source,
        trip_count=trip.constant if trip.source == TRIP_COUNT_CONSTANT else None,
        sliced_inputs=tuple(spec_sliced),
        merged_inputs=tuple(spec_merged),
        invariant_inputs=tuple(spec_invariant),
        concatenated_outputs=tuple(
            ConcatenatedOutput(i, r, axis=0) for i, r in enumerate(concatenated)
        ),
        last_value_outputs=tuple(LastValueOutput(i, r) for i, r in enumerate(last_values)),
        execution_condition=condition_index,
    )
    if trip.proven_zero:
        outputs = _zero_steps(step_values, outs, last_only)
    else:
        produced = build_loop(spec, body, trip.value, start.value, external, name or "scan")
        zero = guards.runs_zero(trip, start)
        if last_only:
            initial = [
                out.initial if out.taps and not _is_window(out) else value
                for out, value in zip(outs, produced)
            ]
            outputs = guards.guard_last_values(produced, initial, zero)
        else:
            outputs = guards.guard_zero_iterations(
                produced,
                [0] * len(produced),
                [_empty_shape(out, value) for out, value in zip(outs, step_values)],
                zero,
            )
    return (outputs[0] if len(outputs) == 1 else outputs), {}


def _rows(value: ov.Output, start: int, stop: int | None) -> ov.Output:
    """value[start:stop] along axis 0, the stop taken from the shape (no large constants: the
    CPU plugin computes in i32)."""
    if stop is None:
        stop_value = ops.gather(ops.shape_of(value, ov.Type.i64), _i64(0), _i64(0))
    else:
        stop_value = _i64(stop)
    return ops.slice(value, _i64(start), stop_value, _i64(1), _i64(0)).output(0)


def _empty_shape(out: _Output, value: ov.Output) -> ov.Output | None:
    """The shape of zero steps of an output: [0, *its step shape], the step shape taken from the
    initial state when the output is fed back (it has that shape), else from fn's static dims."""
    if not out.taps:
        return guards.empty_shape(value, 0)
    shape = ops.shape_of(out.initial, ov.Type.i64)
    if _is_window(out):
        shape = _rows(shape, 1, None)
    return ops.concat([_i64(0), shape], 0).output(0)


def _is_window(out: _Output) -> bool:
    return out.taps != [-1]


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


def _captures(results: Sequence[ov.Node], parameters: Sequence[ov.Node]) -> list[ov.Output]:
    """Outer values the body reads: outputs of nodes that depend on no body Parameter but on
    some Parameter outside, consumed by nodes that depend on a body Parameter (or a Result)."""
    inside = {p.get_instance_id() for p in parameters}
    depends: dict[int, str] = {}  # node id -> "body", "outer" or "const"

    def kind(node) -> str:
        key = node.get_instance_id()
        if key in depends:
            return depends[key]
        if key in inside:
            depends[key] = "body"
        elif node.get_type_name() == "Parameter":
            depends[key] = "outer"
        else:
            kinds = {kind(value.get_node()) for value in node.input_values()}
            depends[key] = "body" if "body" in kinds else "outer" if "outer" in kinds else "const"
        return depends[key]

    captured: dict[tuple[int, int], ov.Output] = {}
    pending = list(results)
    seen = set()
    while pending:
        node = pending.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        for value in node.input_values():
            source = value.get_node()
            if kind(source) == "outer":
                captured.setdefault((source.get_instance_id(), value.get_index()), value)
            elif kind(source) == "body":
                pending.append(source)
    return list(captured.values())


def _inside(node, results, parameters) -> bool:
    """Whether `node` belongs to the body: a Result or a node depending on a body Parameter."""
    if any(node.get_instance_id() == r.get_instance_id() for r in results):
        return True
    inside = {p.get_instance_id() for p in parameters}
    pending, seen = [node], set()
    while pending:
        current = pending.pop()
        if current.get_instance_id() in inside:
            return True
        if current.get_instance_id() in seen:
            continue
        seen.add(current.get_instance_id())
        pending.extend(value.get_node() for value in current.input_values())
    return False


def _zero_steps(step_values: list[ov.Output], outs: list[_Output], last_only: bool):
    """A constant zero step count: no Loop (the CPU plugin crashes on it); initial values for
    reduce, empty sequences for scan."""
    if last_only:
        return [
            guards.passthrough(out.initial)
            if out.initial is not None
            else guards.empty_stack(value, 0)
            for out, value in zip(outs, step_values)
        ]
    return [guards.empty_stack(value, 0) for value in step_values]
