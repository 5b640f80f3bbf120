"""An instrumented copy of a model that also emits what the divergence locator compares: chosen
main-graph values, and every chosen loop's merged (carried) values after each iteration, nested
loops included; and the decoding of what it emitted into a `Trace` like the references'.

Loop-5 on the CPU concatenates per-iteration outputs only when every iteration gives the same
length, and carried values may change shape, so a loop emits each value through two carried
accumulators instead (Loop-5 carries values that grow)::

    in the body:  flat = Reshape(v, [-1]); shape = ShapeOf(v)      # v: a merged value
                  for every 1-D part q (a tick [0] that counts the iterations, flat, shape,
                  and each nested loop's emitted parts):
                      acc_q = Concat(acc_q, q); len_q = Concat(len_q, ShapeOf(q))
    the loop emits the last acc_q and len_q: split acc_q by len_q, one piece per iteration

A nested loop's emitted parts are 1-D values of its enclosing body, lifted the same way, so
loops directly inside loop bodies are probed at any depth (a loop inside an If is not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.reference.trace import Trace

LOOP_TYPES = ("Loop", "TensorIterator")
# key_of(loop node, path of its graph) -> the loop's key, or None to leave it alone
KeyOf = Callable[[ov.Node, str], "str | None"]
# pick(model) -> the main-graph values to emit, by key
Pick = Callable[[ov.Model], "dict[str, ov.Output]"]


@dataclass
class LoopProbe:
    """A probed loop: its key, how many merged values it emits, its probed nested loops."""

    key: str
    merged: int
    nested: list[LoopProbe] = field(default_factory=list)

    @property
    def body_parts(self) -> int:
        """The 1-D parts its body emits per iteration (each lifted to two loop outputs): the
        tick, (flat, shape) per merged value, the nested loops' outputs."""
        return 1 + 2 * self.merged + sum(2 * inner.body_parts for inner in self.nested)


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
    """Probe the loops of `graph` that `key_of` names; their probes and emitted outputs."""
    probes, emitted = [], []
    for op in graph.get_ordered_ops():
        if op.get_type_name() not in LOOP_TYPES:
            continue
        key = key_of(op, scope)
        if key is None:
            continue
        body = op.get_function()
        nested, inner = _probe_graph(body, f"{key}/body", key_of)
        if nested:
            body = _rebuilt(body)
            op.set_function(body)
        own = _merged_parts(op, body)
        probes.append(LoopProbe(key, len(own) // 2, nested))
        tick = ops.constant(np.zeros(1, np.int64)).output(0)
        emitted.extend(_lift(op, body, [tick, *own, *inner]))
    return probes, emitted


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


def _lift(op: ov.Node, body: ov.Model, parts: list[ov.Output]) -> list[ov.Output]:
    """Each 1-D body value of `parts`, concatenated over the iterations, and its length per
    iteration: two outputs of the loop each."""
    emitted = []
    for part in parts:
        for value in (part, ops.shape_of(part, ov.Type.i64).output(0)):
            kind = value.get_element_type()
            accumulator = ops.parameter([-1], kind)
            grown = ops.result(ops.concat([accumulator, value], 0))
            body.add_parameters([accumulator])
            body.add_results([grown])
            empty = ops.constant(np.zeros(0, kind.to_dtype()))
            op.set_merged_input(accumulator, empty.output(0), grown.output(0))
            emitted.append(op.get_iter_value(grown.output(0), -1))
    op.validate_and_infer_types()
    return emitted


def _i64(values: list[int]) -> ov.Node:
    return ops.constant(np.array(values, np.int64))


def decode(instrumented: Instrumented, outputs: list[np.ndarray], trace: Trace) -> Trace:
    """Fill `trace` from the outputs of a run of the instrumented model."""
    extra = outputs[instrumented.original_outputs :]
    for key, value in zip(instrumented.values, extra):
        trace.keep(key, value)
    lifted = extra[len(instrumented.values) :]
    for probe in instrumented.probes:
        count = 2 * probe.body_parts
        _decode_run(probe, lifted[:count], trace)
        lifted = lifted[count:]
    return trace


def _decode_run(probe: LoopProbe, emitted: list[np.ndarray], trace: Trace) -> None:
    """One run of a probed loop from its emitted (accumulated, lengths) pairs."""
    pieces = [_split(emitted[k], emitted[k + 1]) for k in range(0, len(emitted), 2)]
    run = trace.start(probe.key)
    for iteration in range(len(pieces[0])):  # the tick's
        at = [p[iteration] for p in pieces[1:]]
        nested = at[2 * probe.merged :]
        with trace.inside(probe.key, iteration):
            for inner in probe.nested:
                count = 2 * inner.body_parts
                _decode_run(inner, nested[:count], trace)
                nested = nested[count:]
        own = at[: 2 * probe.merged]
        trace.record(run, [flat.reshape(shape) for flat, shape in zip(own[::2], own[1::2])])


def _split(accumulated: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    """The per-iteration pieces of an accumulated part."""
    ends = np.cumsum(np.asarray(lengths, np.int64))
    return [accumulated[end - length : end] for end, length in zip(ends, lengths)]
