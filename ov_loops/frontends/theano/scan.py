"""Theano-style `scan` (and `map`, `reduce`, `foldl`, `foldr`) on OpenVINO opsets: a frontend that
builds a LoopIR, lowered (passes and Loop-5, or folded) as the converter's loops are, for CPU.

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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract.ports import UNNUMBERED, number_ports
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    MergedInput,
    SlicedInput,
)
from ov_loops.contract.values import tensors
from ov_loops.errors import OvLoopsError
from ov_loops.frontends.theano.shared_variables import (
    SharedVariable,
    read_by,
    shared_variable,
    update_pairs,
)
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.pipeline import CPU
from ov_loops.lower.select import lower

# rt_info mark on a scan's final value of a shared variable: the instance id of the variable's
# node, so that the scan whose fn built this one finds and carries it.
_FINAL_OF = "ov_loops.final_of"


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
    steps); `updates` maps each shared variable fn updates (in the dict it returns, by its
    random draws, or by the scans it builds) to its value after the last step, for
    `ov_loops.function(..., updates=updates)`. See the module docstring.
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
    """fn's step values (one per output), its updates ({shared: new value}; returned before or
    after the outputs, or alone) and its `until` condition, or None."""
    returned = fn(*body.arguments)
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    condition = None
    if items and isinstance(items[-1], until):
        condition = _output(items.pop().condition)
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
    return [_output(value) for value in returned], update_pairs(updates, "fn"), condition


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
    first_body_node = _next_node_id()
    body = _parameters(seqs, offsets, outs, invariants, trip.value)
    step_values, explicit, condition = _call(fn, body, outs)
    roots = [*step_values, *(value for _, value in explicit.values())]
    implicit = _implicit_updates(roots + ([condition] if condition else []), first_body_node)
    outs = outs or [_Output(None) for _ in step_values]
    results, merged, emitted = _results(outs, step_values, body, last_only)
    _carry_shared({**implicit, **explicit}, body, results, set(explicit) if strict else set())
    keep = (
        ops.constant(True)
        if condition is None
        else ops.logical_not(ops.convert(condition, ov.Type.boolean))
    )
    results.append(ops.result(keep))
    _capture(results, body, strict, first_body_node)
    loop = _loop_ir(name or "scan", results, body, merged, emitted, trip, last_only)
    loop_results = _loop_results(outs, step_values, last_only) + tuple(
        LoopResult(len(outs) + k, initial=variable.value.output(0))
        for k, (_, variable, _) in enumerate(body.shared)
    )
    values = lower(loop.replace(results=loop_results), CPU).values
    outputs, finals = values[: len(outs)], values[len(outs) :]
    updates = {}
    for (_, variable, _), final in zip(body.shared, finals):
        updates[variable.value] = final
        final.get_rt_info()[_FINAL_OF] = variable.value.get_instance_id()  # for enclosing scans
    return (outputs[0] if len(outputs) == 1 else outputs), updates


def _next_node_id() -> int:
    """An id above every existing node's (OpenVINO numbers nodes in creation order)."""
    return ops.constant(np.int8(0)).get_instance_id()


def _implicit_updates(roots: list[ov.Output], first_body_node: int) -> dict:
    """The updates fn makes without naming them, found in the graph it built (the nodes from
    `first_body_node` on, connected to `roots`): a random draw's counter advances by its default
    increment per step (the scan carries it: `function` no longer advances it), and an inner
    scan's final value of a shared variable is that variable's value after the step."""
    counters, finals = [], {}
    seen, pending = set(), [root.get_node() for root in roots]
    while pending:
        node = pending.pop()
        key = node.get_instance_id()
        if key < first_body_node or key in seen:
            continue
        seen.add(key)
        variable = shared_variable(node)
        if variable is not None and variable.default_increment:
            counters.append(variable)
        for output in node.outputs():
            if _FINAL_OF in output.get_rt_info():
                finals[int(output.get_rt_info()[_FINAL_OF].value)] = output
            pending.extend(target.get_node() for target in output.get_target_inputs())
        pending.extend(value.get_node() for value in node.input_values())
    updates = {}
    for variable in counters:
        updates[variable.value.get_instance_id()] = (variable, variable.default_update())
        variable.default_increment = 0
    for key, final in finals.items():
        updates[key] = (_variable_upstream(final, key), final)
    return updates


def _variable_upstream(value: ov.Output, key: int) -> SharedVariable:
    """The shared variable whose node has instance id `key`, among those `value` is computed
    from (a scan's final value depends on the variable's value)."""
    for variable in read_by([value.get_node()]):
        if variable.value.get_instance_id() == key:
            return variable
    raise BuilderError(
        f"fn: an inner scan's update {value.get_node().get_friendly_name()} reads no shared "
        "variable"
    )


def _carry_shared(updates: dict, body: _Body, results: list[ov.Node], strict: set) -> None:
    """Each updated shared variable becomes a carried value of `body`: its Parameter (fn's
    non_sequences argument when it was passed, else a new one), its update a Result. `strict`:
    the ids of the variables fn named in its updates, which must then be non_sequences."""
    passed = {value.get_node().get_instance_id(): p for p, value in body.invariant}
    for key, (variable, new_value) in updates.items():
        variable.check(new_value, "fn")
        parameter = passed.get(key)
        if parameter is None and key in strict:
            raise BuilderError(
                f"fn: updates shared variable {variable.name}, not in non_sequences (strict=True)"
            )
        if parameter is None:
            value = variable.value.output(0)
            parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        body.invariant = [(p, v) for p, v in body.invariant if p is not parameter]
        results.append(ops.result(new_value))
        body.shared.append((parameter, variable, len(results) - 1))


def _results(outs: list[_Output], step_values: list[ov.Output], body: _Body, last_only: bool):
    """The body's Results: each fed-back output's next value (or window), then each output's
    value per step (or last value). Returns them, the merged inputs as (Parameter, output,
    back-edge Result index), and the index of each output's Result."""
    results: list[ov.Node] = []
    merged: list[tuple[ov.Node, _Output, int]] = []
    emitted = []
    windows = {id(out): parameter for parameter, out in body.windows}
    for index, (out, value) in enumerate(zip(outs, step_values)):
        if out.taps:
            _check_fed_back(index, out, value)
            fed_back = value
            if _is_window(out):  # drop the oldest value, append this step's
                parameter = windows[id(out)]
                fed_back = ops.concat(
                    [_rows(parameter.output(0), 1), ops.unsqueeze(value, _i64(0))], 0
                ).output(0)
            results.append(ops.result(fed_back))
            merged.append((windows[id(out)], out, len(results) - 1))
        results.append(ops.result(value if last_only else ops.unsqueeze(value, _i64(0))))
        emitted.append(len(results) - 1)
    return results, merged, emitted


def _loop_ir(name: str, results, body: _Body, merged, emitted, trip, last_only) -> LoopIR:
    """The LoopIR, still without its results (merged: fed-back outputs, then updated shared
    variables; invariant: non_sequences and captures; sliced: sequence views; outputs: one per
    output, concatenated or last value, then each shared variable's last value; the condition
    last)."""
    parameters = body.parameters
    index_of = {p.get_instance_id(): i for i, p in enumerate(parameters)}
    inputs, outer = [], []
    for parameter, out, result in merged:
        inputs.append(MergedInput(UNNUMBERED, index_of[parameter.get_instance_id()], result))
        outer.append(_rows(out.initial, -out.window) if _is_window(out) else out.initial)
    for parameter, variable, result in body.shared:
        inputs.append(MergedInput(UNNUMBERED, index_of[parameter.get_instance_id()], result))
        outer.append(variable.value.output(0))
    for parameter, value in body.invariant:
        inputs.append(InvariantInput(UNNUMBERED, index_of[parameter.get_instance_id()]))
        outer.append(value)
    for parameter, value in body.sliced:
        inputs.append(SlicedInput(UNNUMBERED, index_of[parameter.get_instance_id()], axis=0))
        outer.append(value)
    outputs = [
        LastValueOutput(UNNUMBERED, r) if last_only else ConcatenatedOutput(UNNUMBERED, r, 0)
        for r in emitted
    ] + [LastValueOutput(UNNUMBERED, result) for _, _, result in body.shared]
    condition = len(results) - 1
    spec = number_ports(inputs, outputs, trip.source, trip.constant, None, condition)
    return LoopIR(
        path=name,
        op="scan",
        spec=spec,
        body=ov.Model(results, parameters, f"{name}/body"),
        outer=dict(enumerate(outer, start=2)),
        trip=trip,
        start=trips.initial_condition(None),
        carried=tensors(
            [f"outputs_info[{k}]" for k in range(len(merged))] + [v.name for _, v, _ in body.shared]
        ),
        results=(),
    )


def _loop_results(outs: list[_Output], step_values: list[ov.Output], last_only: bool):
    """One LoopResult per output: a reduce's fed-back output is its initial state after zero
    steps; a scan's output is empty then, shaped from the initial state when fed back."""
    if last_only:
        return tuple(
            LoopResult(k, initial=out.initial if out.taps else None) for k, out in enumerate(outs)
        )
    return tuple(
        LoopResult(k, empty_shape=_empty_shape(out, value) if out.taps else None)
        for k, (out, value) in enumerate(zip(outs, step_values))
    )


def _empty_shape(out: _Output, value: ov.Output) -> ov.Output | None:
    """The shape of zero steps of an output: [0, *its step shape], the step shape taken from the
    initial state when the output is fed back (it has that shape), else from fn's static dims."""
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


def _capture(results: Sequence[ov.Node], body: _Body, strict: bool, first_body_node: int) -> None:
    """Outer values the body reads (outputs of nodes that depend on no body Parameter but on a
    Parameter or a shared variable outside, consumed inside the body) become invariant inputs of
    `body`; under `strict` they are an error. Reads of an updated shared variable become reads of
    its carried Parameter (a node built before fn that reads one is an error: it would change
    outside the loop too), and fn's direct reads of a shared non_sequence reads of its Parameter."""
    carried = {v.value.get_instance_id(): p.output(0) for p, v, _ in body.shared}
    kind = _classifier({p.get_instance_id() for p in body.parameters} | set(carried))
    read_through = dict(carried)  # shared variable's node id -> the body Parameter to read
    for parameter, value in body.invariant:
        if shared_variable(value) is not None:
            read_through.setdefault(value.get_node().get_instance_id(), parameter.output(0))
    inside = {result.get_instance_id() for result in results}
    captured: dict[tuple[int, int], ov.Output] = {}
    pending = list(results)
    while pending:
        for target in pending.pop().inputs():
            value = target.get_source_output()
            source = value.get_node()
            key = source.get_instance_id()
            if key in read_through:
                target.replace_source_output(read_through[key])
            elif kind(source) == "outer":
                captured.setdefault((key, value.get_index()), value)
            elif kind(source) == "body" and key not in inside:
                if key < first_body_node:
                    raise BuilderError(
                        f"fn: reads {source.get_friendly_name()}, built before scan from a "
                        "shared variable fn updates: build it inside fn"
                    )
                inside.add(key)
                pending.append(source)
    if captured and strict:
        names = ", ".join(sorted({name for c in captured.values() for name in _sources(c)}))
        raise BuilderError(f"fn: uses {names} from outside without non_sequences (strict=True)")
    for value in captured.values():
        parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        for target in list(value.get_target_inputs()):
            if target.get_node().get_instance_id() in inside:
                target.replace_source_output(parameter.output(0))
        body.invariant.append((parameter, value))


def _classifier(own: set[int]) -> Callable[[ov.Node], str]:
    """kind(node): "body" if it depends on a node of `own`, else "outer" if on a Parameter or a
    shared variable (ReadValue) outside, else "const"."""
    kinds: dict[int, str] = {}

    def kind(node: ov.Node) -> str:
        key = node.get_instance_id()
        if key not in kinds:
            if key in own:
                kinds[key] = "body"
            elif node.get_type_name() in ("Parameter", "ReadValue"):
                kinds[key] = "outer"
            else:
                found = {kind(value.get_node()) for value in node.input_values()}
                kinds[key] = "body" if "body" in found else "outer" if "outer" in found else "const"
        return kinds[key]

    return kind


def _sources(value: ov.Output) -> set[str]:
    """The names of the Parameters and shared variables an outer value is computed from."""
    names, pending = set(), [value.get_node()]
    while pending:
        node = pending.pop()
        variable = shared_variable(node)
        if variable is not None or node.get_type_name() in ("Parameter", "ReadValue"):
            names.add(variable.name if variable is not None else node.get_friendly_name())
        else:
            pending.extend(source.get_node() for source in node.input_values())
    return names
