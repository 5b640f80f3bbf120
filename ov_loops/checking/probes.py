"""An instrumented copy of a model that also emits what the divergence locator compares: chosen
main-graph values, and every chosen loop's merged (carried) values after each iteration, nested
loops included; and the decoding of what it emitted into a `Trace` like the references'.

A loop emits every 1-D body value q of its probe (a tick [0] that counts the iterations;
flat = Reshape(v, [-1]) and shape = ShapeOf(v) of each merged value v; each nested loop's emitted
values) once per iteration. Loop-5 on the CPU concatenates per-iteration outputs only when every
iteration gives the same length, so::

    q of a static length n ("rows"): a concatenated output of Unsqueeze(q, 0): [iterations, n]
                                      (flattened where an enclosing loop emits it in turn)
    q of a dynamic length ("ragged"): two carried accumulators (Loop-5 carries growing values)
        acc_q = Concat(acc_q, q); len_q = Concat(len_q, ShapeOf(q))
        the last acc_q split by len_q, one piece per iteration

A nested loop's emitted parts are 1-D values of its enclosing body, lifted the same way, so
loops directly inside loop bodies are probed at any depth. A loop inside an If (the If ov-loops
puts around a Loop-5 for its runs of no iteration, a split loop's, a model's own) emits through
the If: the branch that holds it returns its parts, the other empty ones (a run of no
iteration). An unrolled Loop-5 (its body's STEP_MARK: k of the loop's iterations per Loop-5
iteration) records its carried values every k iterations (`LoopRun.step`), and its nested
loops are not probed (k copies of each per Loop-5 iteration); the second Loop-5 of a split
loop (lower/remainder.py) records a run that continues the first's (`LoopRun.continues`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.kinds import STEP_MARK
from ov_loops.ir.kinds import LOOP_TYPES  # an IR layer's type is its op's type name
from ov_loops.lower.loop5 import REMAINDER
from ov_loops.reference.trace import Trace

# key_of(loop node, path of its graph) -> the loop's key, or None to leave it alone
KeyOf = Callable[[ov.Node, str], "str | None"]
# pick(model) -> the main-graph values to emit, by key
Pick = Callable[[ov.Model], "dict[str, ov.Output]"]


ROWS, RAGGED = "rows", "ragged"


@dataclass
class LoopProbe:
    """A probed loop: its key, how many merged values it emits, its probed nested loops, and how
    each of its body's parts is emitted ((ROWS, n): one output, (RAGGED, 0): two; in part
    order: the tick, (flat, shape) per merged value, the nested loops' outputs)."""

    key: str
    merged: int
    nested: list[LoopProbe] = field(default_factory=list)
    modes: list[tuple[str, int]] = field(default_factory=list)
    step: int = 1  # the loop's iterations per Loop-5 iteration (unrolled by `step`)
    continues: bool = False  # a split loop's second Loop-5: its run goes on from the first's

    @property
    def outputs(self) -> int:
        """How many outputs the loop emits."""
        return sum(1 if mode == ROWS else 2 for mode, _ in self.modes)


@dataclass
class Instrumented:
    """The instrumented model; the probes of its main-graph loops and the keys of the main-graph
    values it emits, in the order of the outputs added after the original ones."""

    model: ov.Model
    original_outputs: int
    probes: list[LoopProbe]
    values: list[str]


def instrument(model: ov.Model, key_of: KeyOf, pick: Pick) -> Instrumented:
    """A copy of `model` that also emits the values `pick` chooses in it and the merged values
    of every loop `key_of` names, per iteration (see the module's docstring)."""
    model = model.clone()
    original = len(model.outputs)
    values = pick(model)
    probes, lifted = _probe_graph(model, "main", key_of)
    extra = [ops.result(value) for value in [*values.values(), *lifted]]
    model = _rebuilt(model, extra)
    model.validate_nodes_and_infer_types()
    return Instrumented(model, original, probes, list(values))


def _rebuilt(graph: ov.Model, extra: list[ov.Node] = ()) -> ov.Model:
    """The same graph as a new Model (with `extra` Results after its own): a Model keeps its
    order of operations from before loops gained inputs, and would not serialise the inputs'
    producers."""
    results = [*graph.get_results(), *extra]
    return ov.Model(results, graph.get_sinks(), graph.get_parameters())


def _probe_graph(graph: ov.Model, scope: str, key_of: KeyOf) -> tuple[list[LoopProbe], list]:
    """Probe the loops of `graph` that `key_of` names (inside Ifs too); their probes and
    emitted outputs."""
    probes, emitted = [], []
    for op in graph.get_ordered_ops():
        if op.get_type_name() == "If":
            found, outputs = _probe_branches(op, scope, key_of)
            probes.extend(found)
            emitted.extend(outputs)
        if op.get_type_name() not in LOOP_TYPES:
            continue
        key = key_of(op, scope)
        if key is None:
            continue
        body = op.get_function()
        step = _step(body)
        nested, inner = _probe_graph(body, f"{key}/body", key_of) if step == 1 else ([], [])
        if nested:
            body = _rebuilt(body)
            op.set_function(body)
        own = _merged_parts(op, body)
        tick = ops.constant(np.zeros(1, np.int64)).output(0)
        inner = [ops.reshape(value, _i64([-1]), False).output(0) for value in inner]
        outputs, modes = _lift(op, body, [tick, *own, *inner])
        probes.append(LoopProbe(key, len(own) // 2, nested, modes, step, _continues(op)))
        emitted.extend(outputs)
    return probes, emitted


def _step(body: ov.Model) -> int:
    return int(body.get_rt_info()[STEP_MARK].astype(int)) if body.has_rt_info(STEP_MARK) else 1


def _continues(op: ov.Node) -> bool:
    info = op.get_rt_info()
    return "ov_loops_path" in info and info["ov_loops_path"].astype(str).endswith(REMAINDER)


def _probe_branches(op: ov.Node, scope: str, key_of: KeyOf) -> tuple[list[LoopProbe], list]:
    """Probe the loops in both branches of If `op`; its outputs that give what they emit: the
    then branch's parts, then the else branch's, each branch returning empty ones (a run of
    no iteration) for the other's."""
    branches = [op.get_then_body(), op.get_else_body()]
    found = [_probe_graph(branch, scope, key_of) for branch in branches]
    if not any(parts for _, parts in found):
        return [], []
    rebuilt = []
    for index, branch in enumerate(branches):
        values = []
        for other, (_, parts) in enumerate(found):
            values += parts if other == index else [_empty_like(part) for part in parts]
        rebuilt.append(_rebuilt(branch, [ops.result(value) for value in values]))
    op.set_then_body(rebuilt[0])
    op.set_else_body(rebuilt[1])
    extra = len(rebuilt[0].get_results()) - len(branches[0].get_results())
    pairs = zip(rebuilt[0].get_results()[-extra:], rebuilt[1].get_results()[-extra:])
    outputs = [op.set_output(then_result, else_result) for then_result, else_result in pairs]
    op.validate_and_infer_types()
    return [probe for probes, _ in found for probe in probes], outputs


def _empty_like(value: ov.Output) -> ov.Output:
    """What a branch that does not run a loop emits for one of its parts: no rows."""
    dims = [0 if dim.is_dynamic else dim.get_length() for dim in value.get_partial_shape()]
    dims[0] = 0
    return ops.constant(np.zeros(dims, value.get_element_type().to_dtype())).output(0)


def _merged_parts(op: ov.Node, body: ov.Model) -> list[ov.Output]:
    """(flat, shape) of each merged value after the iteration, in external port order."""
    merged = sorted(
        (d for d in op.get_input_descriptions() if type(d).__name__ == "MergedInputDescription"),
        key=lambda d: d.input_index,
    )
    parts = []
    for description in merged:
        value = body.get_results()[description.body_value_index].input_value(0)
        parts.append(ops.reshape(value, _i64([-1]), False).output(0))
        parts.append(ops.shape_of(value, ov.Type.i64).output(0))
    return parts


def _lift(op: ov.Node, body: ov.Model, parts: list[ov.Output]) -> tuple[list, list]:
    """The loop's outputs that give each 1-D body value of `parts` per iteration, and the mode
    of each (see the module's docstring)."""
    emitted, modes = [], []
    for part in parts:
        if part.get_partial_shape().is_static:
            row = ops.result(ops.unsqueeze(part, _i64([0])))
            body.add_results([row])
            emitted.append(op.get_concatenated_slices(row.output(0), 0, 1, 1, -1, 0))
            modes.append((ROWS, part.get_partial_shape()[0].get_length()))
            continue
        for value in (part, ops.shape_of(part, ov.Type.i64).output(0)):
            kind = value.get_element_type()
            accumulator = ops.parameter([-1], kind)
            grown = ops.result(ops.concat([accumulator, value], 0))
            body.add_parameters([accumulator])
            body.add_results([grown])
            empty = ops.constant(np.zeros(0, kind.to_dtype()))
            op.set_merged_input(accumulator, empty.output(0), grown.output(0))
            emitted.append(op.get_iter_value(grown.output(0), -1))
        modes.append((RAGGED, 0))
    op.validate_and_infer_types()
    return emitted, modes


def _i64(values: list[int]) -> ov.Node:
    return ops.constant(np.array(values, np.int64))


def decode(instrumented: Instrumented, outputs: list[np.ndarray], trace: Trace) -> Trace:
    """Fill `trace` from the outputs of a run of the instrumented model."""
    extra = outputs[instrumented.original_outputs :]
    for key, value in zip(instrumented.values, extra):
        trace.keep(key, value)
    lifted = extra[len(instrumented.values) :]
    for probe in instrumented.probes:
        _decode_run(probe, lifted[: probe.outputs], trace)
        lifted = lifted[probe.outputs :]
    return trace


def _decode_run(probe: LoopProbe, emitted: list[np.ndarray], trace: Trace) -> None:
    """One run of a probed loop from its emitted outputs."""
    pieces = []
    for mode, width in probe.modes:
        if mode == ROWS and width == 0:  # e.g. the shape of a scalar: as many as the ticks
            pieces.append([emitted.pop(0).reshape(-1)] * len(pieces[0]))
        elif mode == ROWS:
            pieces.append(list(np.reshape(emitted.pop(0), (-1, width))))
        else:
            pieces.append(_split(emitted.pop(0), emitted.pop(0)))
    run = trace.start(probe.key)
    run.step, run.continues = probe.step, probe.continues
    for iteration in range(len(pieces[0])):  # the tick's
        at = [p[iteration] for p in pieces[1:]]
        nested = at[2 * probe.merged :]
        with trace.inside(probe.key, iteration):
            for inner in probe.nested:
                _decode_run(inner, nested[: inner.outputs], trace)
                nested = nested[inner.outputs :]
        own = at[: 2 * probe.merged]
        trace.record(run, [flat.reshape(shape) for flat, shape in zip(own[::2], own[1::2])])


def _split(accumulated: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    """The per-iteration pieces of an accumulated part."""
    ends = np.cumsum(np.asarray(lengths, np.int64))
    return [accumulated[end - length : end] for end, length in zip(ends, lengths)]
