"""Locating the first divergence: where OpenVINO first computed something else than the numpy
reference, when a check's outputs mismatch.

An instrumented copy of the model (`ov_loops.checking.probes`) also emits every main-graph
value and, per iteration, the carried values of every loop that sits in the main graph or
directly in a loop body, at any depth. One run of it on the device gives a `Trace` like the
reference's; they are compared in the order the model computes them::

    for each main-graph node, in topological order:
        if an output differs: a loop -> descend into it; any other node -> blame it
    descend(loop run):
        for each iteration i:
            descend(each nested loop's run in iteration i), in the order they ran
            the first carried value that differs after iteration i -> blame it
        iteration counts differ -> blame the iteration where one side stopped

A sequence carried as its four tensors is compared element by element (`checking.carried`).
The extra outputs can change how the plugin compiles the model; when the instrumented run
agrees everywhere, the divergence is reported as not located, never guessed.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
import openvino as ov

from ov_loops.api import save
from ov_loops.checking.carried import (
    Carried,
    difference,
    first_differing_iteration,
    ir_layout,
    onnx_layout,
    tensor_difference,
)
from ov_loops.checking.device import run_isolated
from ov_loops.checking.probes import LOOP_TYPES, Instrumented, LoopProbe, decode, instrument
from ov_loops.checking.settings import Settings
from ov_loops.conversion.report import Conversion
from ov_loops.errors import message_line
from ov_loops.frontends.onnx.load.prepare import PreparedModel
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout
from ov_loops.frontends.onnx.ops.registry import is_loop_op, lookup
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import all_graphs
from ov_loops.lower.loop5 import REMAINDER
from ov_loops.reference.trace import LoopRun, Trace, Where, loop_key

# Assign: a sink (stateful IR), whose value is its input's
NOT_OBSERVED = ("Parameter", "Constant", "Result", "Assign")


@dataclass(frozen=True)
class Divergence:
    """Where the device first computed something else than the reference.

    `kind`: "carried" (a loop-carried value after an iteration; `where` is the path down to it
    with each loop's iteration, `main/Loop_0[3]/body/Scan_1[7]`; `element` the first differing
    element of a sequence), "iterations" (the loop ran another number of times), "node" (a
    main-graph node, `node`: not a loop, or a loop whose iterations are not probed), "loop
    output" (a loop's output, its carried values agreeing), or "unlocated"."""

    kind: str
    where: str
    detail: str
    node: str = ""
    value: str = ""
    loop_path: str | None = None
    iterations: tuple[int, ...] = ()
    carried_index: int | None = None
    element: int | None = None

    @property
    def iteration(self) -> int | None:
        """The iteration of the innermost loop."""
        return self.iterations[-1] if self.iterations else None

    def text(self) -> str:
        if self.kind == "carried":
            element = "" if self.element is None else f" element {self.element}"
            return (
                f"first divergence: {self.where} carried value {self.carried_index} "
                f"'{self.value}'{element} {self.detail}"
            )
        if self.kind == "iterations":
            return f"first divergence: {self.where}: {self.detail}"
        if self.kind == "node":
            return f"first divergence: node {self.node} output '{self.value}' {self.detail}"
        if self.kind == "loop output":
            return (
                f"first divergence: {self.node} output '{self.value}' {self.detail}; its carried "
                "values agree with the reference in every iteration"
            )
        return f"first divergence not located: {self.detail}"


@dataclass(frozen=True)
class Checkpoint:
    """A main-graph node whose outputs are compared: its label, the values (key in the traces,
    name shown), and the path of the loop it is (None for other nodes)."""

    label: str
    values: list[tuple[str, str]]
    loop_path: str | None = None


def locate(
    source: PreparedModel,
    conversion: Conversion,
    trace: Trace,
    feeds: dict,
    settings: Settings,
    scratch: str,
) -> Divergence:
    """The first divergence of the converted model from the ONNX reference, whose `trace` of
    the prepared (lowered) `source` run on `feeds` is given."""
    return _guarded(lambda: _locate_onnx(source, conversion, trace, feeds, settings, scratch))


def _locate_onnx(source, conversion, trace, feeds, settings, scratch) -> Divergence:
    paths = Counter(loop.path for loop in conversion.loops)  # a Scan-8 is two loops: skipped
    loops = {
        loop.path: loop
        for loop in conversion.loops
        if paths[loop.path] == 1 and loop.spec is not None
    }
    names = {name for node in source.model.graph.node for name in node.output if name}

    def key_of(op: ov.Node, scope: str) -> str | None:
        info = op.get_rt_info()
        path = info["ov_loops_path"].astype(str) if "ov_loops_path" in info else None
        if path is not None and path.endswith(REMAINDER):  # a split loop's second Loop-5
            path = path[: -len(REMAINDER)]
        return path if path in loops else None

    instrumented = instrument(conversion.model, key_of, lambda model: _named_values(model, names))
    device = _in_iterations(_run(instrumented, feeds, settings, scratch))
    nodes = {node.output[0]: node for graph, _ in all_graphs(source.model.graph, "main")
             for node in graph.node if is_loop_op(node)}  # fmt: skip
    by_output = {loop.outputs[0]: path for path, loop in loops.items() if loop.outputs}
    layouts = {
        path: onnx_layout(_layout(nodes[loops[path].outputs[0]], path, source), loops[path], merged)
        for path, merged in _merged_counts(instrumented.probes).items()
        if loops[path].outputs and loops[path].outputs[0] in nodes
    }
    checkpoints = [
        Checkpoint(
            f"{node.op_type} '{node.name or node.output[0]}'",
            [(name, name) for name in node.output if name],
            by_output.get(node.output[0]) if is_loop_op(node) else None,
        )
        for node in source.model.graph.node
    ]
    walk = _Walk(_rekeyed(trace, by_output), device, layouts, settings)
    return walk.first(checkpoints)


def _layout(node: onnx.NodeProto, path: str, source: PreparedModel) -> OnnxLoopLayout:
    """The layout of loop `node` of the prepared model, as its op reads it."""
    opset = opset_version(source.model, node.domain)
    return lookup(node, opset).read(node, path, opset, source.sequences)


def locate_ir(model: ov.Model, trace: Trace, feeds: dict, settings: Settings) -> Divergence:
    """The first divergence of `model` (read from an IR) from the IR reference, whose `trace`
    of the same IR run on `feeds` is given; loops are keyed by their layer names' paths."""
    return _guarded(lambda: _locate_ir(model, trace, feeds, settings))


def _guarded(find: Callable[[], Divergence]) -> Divergence:
    """`find()`; when the instrumented model cannot be built or run, a divergence not located
    that says why (the check's verdict stands either way)."""
    try:
        return find()
    except Exception as exc:  # OpenVINO raises RuntimeError, the device worker InputError
        reason = message_line(exc, last=True)
        return Divergence("unlocated", "", f"the instrumented model failed: {reason}")


def _locate_ir(model: ov.Model, trace: Trace, feeds: dict, settings: Settings) -> Divergence:
    layouts: dict[str, list[Carried]] = {}

    def key_of(op: ov.Node, scope: str) -> str:
        path = loop_key(scope, op.get_friendly_name())
        layouts[path] = ir_layout(op)
        return path

    instrumented = instrument(model, key_of, _all_values)
    with tempfile.TemporaryDirectory(prefix="ov-loops-locate-") as scratch:
        device = _run(instrumented, feeds, settings, scratch)
    checkpoints = []
    for op in model.get_ordered_ops():
        if op.get_type_name() in NOT_OBSERVED:
            continue
        name = op.get_friendly_name()
        shown = [(f"{name}:{k}", ",".join(sorted(out.get_names())) or f"{name}:{k}")
                 for k, out in enumerate(op.outputs())]  # fmt: skip
        loop_path = loop_key("main", name) if op.get_type_name() in LOOP_TYPES else None
        checkpoints.append(Checkpoint(f"{op.get_type_name()} '{name}'", shown, loop_path))
    return _Walk(trace, device, layouts, settings).first(checkpoints)


def _named_values(model: ov.Model, names: set[str]) -> dict[str, ov.Output]:
    """The main-graph outputs that carry one of `names` (an ONNX value's name), by that name."""
    picked = {}
    for op in model.get_ordered_ops():
        if op.get_type_name() in NOT_OBSERVED:
            continue
        for output in op.outputs():
            for name in sorted(output.get_names() & names):
                picked.setdefault(name, output)
    return picked


def _all_values(model: ov.Model) -> dict[str, ov.Output]:
    """Every output of every main-graph operation, as "<friendly name>:<index>"."""
    return {
        f"{op.get_friendly_name()}:{output.get_index()}": output
        for op in model.get_ordered_ops()
        if op.get_type_name() not in NOT_OBSERVED
        for output in op.outputs()
    }


def _run(instrumented: Instrumented, feeds: dict, settings: Settings, scratch: str) -> Trace:
    xml = Path(scratch) / "instrumented.xml"
    save(instrumented.model, xml, compress_to_fp16=settings.compress_to_fp16)
    outputs = run_isolated(xml, settings.device, settings.precision, feeds, settings.timeout)
    return decode(instrumented, outputs, Trace())


def _in_iterations(trace: Trace) -> Trace:
    """The device's `trace` with each run of an unrolled Loop-5 and the run of a split loop's
    second Loop-5 that continues it joined into one, `observed` saying which of the loop's
    iterations each recorded one ends: iterations k-1, 2k-1, ... of a Loop-5 unrolled by k (the
    last may end sooner: -1, up to the reference's last), then each of the second's::

        first (m/k Loop-5 iterations of k), second (r): k-1, 2k-1, .., m-1, m, .., m+r-1
    """
    for key, runs in trace.runs.items():
        joined: list[LoopRun] = []
        for run in sorted(runs, key=lambda each: each.order):
            if run.continues and joined:
                before = joined[-1]
                if before.observed is None:
                    before.observed = list(range(len(before)))
                done = (before.observed[-1] + 1) if before.observed else 0
                before.observed += [done + index for index in range(len(run))]
                before.extend(run)
                continue
            if run.step > 1 or run.continues:
                run.observed = [(index + 1) * run.step - 1 for index in range(len(run))]
                if run.step > 1 and run.observed and not _followed(runs, run):
                    run.observed[-1] = -1  # an unrolled run's last Loop-5 iteration may be short
            joined.append(run)
        trace.runs[key] = joined
    return trace


def _followed(runs: list[LoopRun], run: LoopRun) -> bool:
    """Whether the next run of the key continues `run` (it then ends on a whole step)."""
    later = [each for each in runs if each.order > run.order]
    return bool(later) and min(later, key=lambda each: each.order).continues


def _merged_counts(probes: list[LoopProbe]) -> dict[str, int]:
    counts = {}
    for probe in probes:
        counts[probe.key] = probe.merged
        counts.update(_merged_counts(probe.nested))
    return counts


def _rekeyed(trace: Trace, keys: dict[str, str]) -> Trace:
    """`trace` with its loops keyed by `keys` (the ONNX reference keys a loop by its first
    output's name; the locator by its path); loops not in `keys` are dropped."""
    rekeyed = Trace(values=trace.values, truncated=trace.truncated)
    for key, runs in trace.runs.items():
        if key not in keys:
            continue
        for run in runs:
            if all(outer in keys for outer, _ in run.where):
                where = tuple((keys[outer], iteration) for outer, iteration in run.where)
                moved = LoopRun(where, run.order)
                moved.extend(run)
                rekeyed.runs[keys[key]].append(moved)
    return rekeyed


def _where(stack: Where) -> str:
    """`main/Loop_0[3]/body/Scan_1[7]` from [(main/Loop_0, 3), (main/Loop_0/body/Scan_1, 7)]."""
    shown, previous = "", ""
    for path, iteration in stack:
        shown += f"{path[len(previous) :]}[{iteration}]"
        previous = path
    return shown


class _Walk:
    """Compares a reference trace with the device's, in the order the model computes."""

    def __init__(
        self, reference: Trace, device: Trace, layouts: dict[str, list[Carried]], settings
    ) -> None:
        self.reference, self.device = reference, device
        self.layouts = layouts
        self.rtol, self.atol = settings.rtol, settings.atol
        self.partial = reference.truncated or device.truncated
        self._runs = (_by_where(reference), _by_where(device))

    def first(self, checkpoints: list[Checkpoint]) -> Divergence:
        """The first checkpoint whose outputs differ (a loop: the first place inside it);
        without one, the first place inside any main-graph loop."""
        for checkpoint in checkpoints:
            for key, shown in checkpoint.values:
                if key not in self.reference.values or key not in self.device.values:
                    continue
                detail = tensor_difference(
                    self.reference.values[key], self.device.values[key], self.rtol, self.atol
                )
                if detail is None:
                    continue
                if checkpoint.loop_path not in self.device.runs:  # not a loop, or not probed
                    return Divergence("node", checkpoint.label, detail, checkpoint.label, shown)
                found = self._top_level(checkpoint.loop_path)
                return found or Divergence(
                    "loop output", checkpoint.loop_path, detail, checkpoint.label, shown,
                    checkpoint.loop_path,
                )  # fmt: skip
        for path, _ in self._runs[0].get((), []):
            found = self._top_level(path)
            if found is not None:
                return found
        return Divergence(
            "unlocated",
            "",
            "the instrumented model agrees with the reference at every value and iteration it "
            "emits (its extra outputs may change how the plugin compiles it)",
        )

    def _top_level(self, path: str) -> Divergence | None:
        pair = [dict(side.get((), [])).get(path) for side in self._runs]
        return self._in_run(path, (), *pair) if None not in pair else None

    def _in_run(self, path: str, stack: Where, want: LoopRun, have: LoopRun) -> Divergence | None:
        """The first divergence in one run of a loop: nested loops first in each iteration. A
        device run that records some iterations only (`observed`: an unrolled or split loop)
        is compared at those, with no nested loops."""
        counts = (len(want), len(have))
        if have.observed is None:
            iterations = list(range(min(counts)))
            return self._compared(path, stack, (want, have), iterations, counts, True)
        ends = [len(want) - 1 if end < 0 else end for end in have.observed]
        kept = [index for index, end in enumerate(ends) if end < len(want)]
        pair = ([want[ends[index]] for index in kept], [have[index] for index in kept])
        counts = (len(want), _device_iterations(have, len(want)))
        return self._compared(path, stack, pair, [ends[i] for i in kept], counts, False)

    def _compared(self, path, stack, pair, iterations, counts, nested) -> Divergence | None:
        """The first divergence between the reference's and the device's records of a run,
        `pair`, the loop's iteration each pair of records ends given by `iterations`; `counts`
        the iterations each ran; `nested`: look into the loops that ran inside first."""
        (want, have), (expected, ran) = pair, counts
        layout = self.layouts.get(path, [])
        if not all(_fits(layout, expected, got) for expected, got in zip(want, have)):
            layout = []  # the traces do not record what the layout says: compare nothing
        count = len(iterations)
        differing = [first_differing_iteration(v, want, have, self.rtol, self.atol) for v in layout]
        first = min(differing, default=count)
        for index in range(min(first + 1, count) if nested else 0):
            found = self._nested((*stack, (path, iterations[index])))
            if found is not None:
                return found
        for value, index in zip(layout, differing):
            if index == first < count:
                inside = (*stack, (path, iterations[index]))
                element, detail = difference(value, want[first], have[first], self.rtol, self.atol)
                return Divergence(
                    "carried", _where(inside), detail, f"Loop '{path}'", value.name, path,
                    tuple(i for _, i in inside), value.index, element,
                )  # fmt: skip
        if ran != expected and not self.partial:
            stopped = (*stack, (path, min(ran, expected)))
            detail = f"the reference runs {expected} iterations, the device {ran}"
            return Divergence(
                "iterations", _where(stopped), detail, f"Loop '{path}'", "", path,
                tuple(i for _, i in stopped),
            )  # fmt: skip
        return None

    def _nested(self, inside: Where) -> Divergence | None:
        """The first divergence in the loops that ran in one iteration, in the order they ran."""
        device = dict(self._runs[1].get(inside, []))
        for inner, run in self._runs[0].get(inside, []):
            if inner in device:
                found = self._in_run(inner, inside, run, device[inner])
                if found is not None:
                    return found
        return None


def _device_iterations(run: LoopRun, reference: int) -> int:
    """How many of the loop's iterations a device run with `observed` ran: its last observed
    one + 1, or for an unrolled run whose last Loop-5 iteration may be short (-1), the
    reference's count if within what its Loop-5 iterations can run, else their most."""
    if not run.observed:
        return 0
    if run.observed[-1] >= 0:
        return run.observed[-1] + 1
    fewest, most = (len(run) - 1) * run.step + 1, len(run) * run.step
    return reference if fewest <= reference <= most else most


def _fits(layout: list[Carried], reference: list, device: list) -> bool:
    return all(
        max(value.reference) < len(reference) and max(value.device) < len(device)
        for value in layout
    )


def _by_where(trace: Trace) -> dict[Where, list[tuple[str, LoopRun]]]:
    """Each trace's loop runs by the iterations they ran in, in the order they started."""
    index: dict[Where, list[tuple[str, LoopRun]]] = {}
    for key, runs in trace.runs.items():
        for run in runs:
            index.setdefault(run.where, []).append((key, run))
    for runs in index.values():
        runs.sort(key=lambda entry: entry[1].order)
    return index
