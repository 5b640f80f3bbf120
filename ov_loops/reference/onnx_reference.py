"""Run an ONNX model in numpy: onnx.reference's kernels for ordinary ops, our own Loop, Scan (all
versions, Scan-8 with sequence_lens) and If.

onnx.reference's own control flow is not trustworthy (see ../shared/notes/openvino-loop5.md): it
joins Loop scan outputs with np.vstack, runs no iteration when `cond` is omitted, and lacks
reverse Scans, non-zero axes and Scan-8. The kernels below follow the ONNX spec as onnxruntime
reads it, and each states its semantics.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from ov_loops.errors import ConversionError, OvLoopsError, message_line
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS, Budget
from ov_loops.reference.trace import Trace
from ov_loops.reference.undefined_means import ReduceMean

__all__ = ["Trace", "run_onnx"]


def _scalar(value) -> int | bool:
    return np.asarray(value).reshape(-1)[0].item()


def _declared_flag_shape(
    declared: onnx.ValueInfoProto, fed: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The shape the body's iteration number or condition is fed with: a scalar when the body
    declares one (the spec), [1] when it declares another rank (an old form declares [1];
    onnxruntime feeds [1] whatever the rank), and `fed` (the shape of the value the Loop
    received, as onnxruntime passes it on) when it declares none."""
    tensor = declared.type.tensor_type
    if not tensor.HasField("shape"):
        return fed
    return (1,) if tensor.shape.dim else ()


def _empty_stack(body_output: onnx.ValueInfoProto, axis: int = 0) -> np.ndarray:
    """Zero stacked iterations: [0, *declared per-iteration shape] (unknown dims are 0)."""
    tensor = body_output.type.tensor_type
    dtype = (
        onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type) if tensor.elem_type else np.float32
    )
    dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tensor.shape.dim]
    if not tensor.HasField("shape"):
        dims = []
    dims.insert(min(axis, len(dims)), 0)
    return np.zeros(dims, dtype)


def _label(node: onnx.NodeProto) -> str:
    return f"{node.op_type} '{node.name or node.output[0]}'"


class _Bounded(OpRun):
    """A loop kernel bound to a budget of work and memory and an optional trace (class
    attributes, set by `_control_flow_ops`)."""

    budget: Budget
    trace: Trace | None

    def keep(self, node, held, carried, elements, stores, recorded) -> None:
        """After an iteration: bound the carried values, store the scan elements (counted in
        `held`), record the carried values in the trace."""
        for value in carried:
            self.budget.value(_label(node), value)
        for store, element in zip(stores, elements):
            store.append(np.asarray(element))
            held.add(store[-1])
        if recorded is not None:
            self.trace.record(recorded, carried)

    def iterating(self, iteration: int):
        """The context of one body run: loops it starts are traced as inside `iteration`."""
        if self.trace is None:
            return nullcontext()
        return self.trace.inside(self.onnx_node.output[0], iteration)


class _Loop(_Bounded):
    """ONNX Loop, "Operator semantics" of the spec, with onnxruntime's reading::

    keepgoing = True if cond is None else cond     # an omitted cond starts true
    v, scans, i = v_initial, [[] ...], 0
    while (M is None or i < M) and keepgoing:
        keepgoing, *v, *elements = body(i, keepgoing, *v, **outer_values)
        scans[k].append(elements[k]) for each k
        i += 1
    return *v, *[np.stack(s) for s in scans]      # stacked on a new axis 0
    """

    def need_context(self) -> bool:
        return True

    def _run(self, M, cond, *initial, context=None, attributes=None, bindings=None, body=None):
        names = self.body.input_names
        carried_count = len(names) - 2
        keepgoing = True if cond is None else bool(_scalar(cond))
        limit = None if M is None else int(_scalar(M))
        values = dict(context or {})
        carried = list(initial)
        scans: list[list[np.ndarray]] = [
            [] for _ in range(len(self.body.output_names) - 1 - carried_count)
        ]
        recorded = self.trace.start(self.onnx_node.output[0]) if self.trace else None
        iteration_input, condition_input = self.body.onnx_graph_.input[:2]
        iteration_shape = _declared_flag_shape(iteration_input)
        fed = (1,) if cond is not None and np.shape(cond) == (1,) else ()
        condition_shape = _declared_flag_shape(condition_input, fed)
        iteration, node = 0, self.onnx_node
        with self.budget.accumulating(_label(node)) as held:
            while keepgoing and (limit is None or iteration < limit):
                self.budget.iteration(_label(node), iteration)
                feeds = dict(values)
                feeds[names[0]] = np.array(iteration, np.int64).reshape(iteration_shape)
                feeds[names[1]] = np.array(keepgoing).reshape(condition_shape)
                feeds.update(zip(names[2:], carried))
                with self.iterating(iteration):
                    outputs = self._run_body(feeds, attributes=attributes, bindings=bindings)
                keepgoing = bool(_scalar(outputs[0]))
                carried = list(outputs[1 : 1 + carried_count])
                self.keep(node, held, carried, outputs[1 + carried_count :], scans, recorded)
                iteration += 1
        body_outputs = self.body.onnx_graph_.output
        stacked = [
            np.stack(scan) if scan else _empty_stack(body_outputs[1 + carried_count + k])
            for k, scan in enumerate(scans)
        ]
        return tuple(carried + stacked)[: len(self.onnx_node.output)]


class _Scan(_Bounded):
    """ONNX Scan, the spec's pseudocode (opset 9+), and Scan-8 per batch entry::

    length = scan_1.shape[axis_1]                   # all scan inputs agree
    for t in range(length):
        parts = [x.take(t or length-1-t, axis) for each scan input]
        *st, *elements = body(*st, *parts, **outer_values)
        out_k.append(element) or out_k.insert(0, element)   # scan_output_directions
    return *st, *[np.stack(out_k, axis=output_axis_k)]

    Scan-8: for each batch entry b, the above on st[b] and x[b, :sequence_lens[b]]
    (axis 0, `directions`), outputs zero-padded to the full length.
    """

    def need_context(self) -> bool:
        return True

    def _run(self, *inputs, context=None, attributes=None, bindings=None, **_):
        opset = self.run_params.get("opsets", {}).get("", 23)
        scans_in = self.num_scan_inputs
        if opset is not None and opset < 9:
            return self._run_batched(inputs, context, attributes, bindings)
        states, xs = list(inputs[: len(inputs) - scans_in]), inputs[len(inputs) - scans_in :]
        return self._scan(states, xs, context, attributes, bindings, self._axes(xs))

    def _attr(self, name, count, default=0):
        value = getattr(self, name, None)
        return list(value) if value is not None else [default] * count

    def _axes(self, xs):
        axes = self._attr("scan_input_axes", len(xs))
        return [a + np.ndim(x) if a < 0 else a for a, x in zip(axes, xs)]

    def _scan(
        self, states, xs, context, attributes, bindings, axes, directions=None, recorded=None
    ):
        names = self.body.input_names
        n_states = len(states)
        directions = directions or self._attr("scan_input_directions", len(xs))
        lengths = {np.shape(x)[axis] for x, axis in zip(xs, axes)}
        if len(lengths) != 1:
            raise ConversionError(
                f"Scan '{self.onnx_node.name or self.onnx_node.output[0]}': scan inputs "
                f"differ in length {sorted(lengths)}"
            )
        length = lengths.pop()
        k_outputs = len(self.body.output_names) - n_states
        elements: list[list[np.ndarray]] = [[] for _ in range(k_outputs)]
        recorded = (
            recorded
            if recorded is not None
            else (self.trace.start(self.onnx_node.output[0]) if self.trace else None)
        )
        values, node = dict(context or {}), self.onnx_node
        with self.budget.accumulating(_label(node)) as held:
            for t in range(length):
                self.budget.iteration(_label(node), t)
                feeds = dict(values)
                feeds.update(zip(names[:n_states], states))
                for name, x, axis, reverse in zip(names[n_states:], xs, axes, directions):
                    feeds[name] = np.take(x, length - 1 - t if reverse else t, axis=axis)
                with self.iterating(t):
                    outputs = self._run_body(feeds, attributes=attributes, bindings=bindings)
                states = list(outputs[:n_states])
                self.keep(node, held, states, outputs[n_states:], elements, recorded)
        out_axes = self._attr("scan_output_axes", k_outputs)
        out_directions = self._attr("scan_output_directions", k_outputs)
        body_outputs = self.body.onnx_graph_.output
        stacked = []
        for k, store in enumerate(elements):
            if out_directions[k]:
                store = store[::-1]
            if store:
                rank = np.ndim(store[0]) + 1
                axis = out_axes[k] + rank if out_axes[k] < 0 else out_axes[k]
                stacked.append(np.stack(store, axis=axis))
            else:
                declared = body_outputs[n_states + k]
                rank = len(declared.type.tensor_type.shape.dim) + 1
                axis = out_axes[k] + rank if out_axes[k] < 0 else out_axes[k]
                stacked.append(_empty_stack(declared, axis))
        return tuple(states + stacked)[: len(self.onnx_node.output)]

    def _run_batched(self, inputs, context, attributes, bindings):
        scans_in = self.num_scan_inputs
        lengths, rest = inputs[0], list(inputs[1:])
        states, xs = rest[: len(rest) - scans_in], rest[len(rest) - scans_in :]
        batch, full = np.shape(xs[0])[0], np.shape(xs[0])[1]
        directions = self._attr("directions", scans_in)
        per_entry = []
        recorded = self.trace.start(self.onnx_node.output[0]) if self.trace else None
        for b in range(batch):
            n = full if lengths is None else int(lengths[b])
            outputs = self._scan(
                [s[b] for s in states],
                [x[b, :n] for x in xs],
                context,
                attributes,
                bindings,
                [0] * scans_in,
                directions,
                recorded,
            )
            per_entry.append(outputs)
        n_states = len(states)
        finals = [
            np.stack([entry[i] for entry in per_entry])
            if per_entry
            else np.zeros((0, *np.shape(states[i])[1:]), np.asarray(states[i]).dtype)
            for i in range(n_states)
        ]
        stacked = []
        for k in range(len(self.onnx_node.output) - n_states):
            padded = []
            for entry in per_entry:
                element = entry[n_states + k]
                pad = [(0, full - element.shape[0])] + [(0, 0)] * (element.ndim - 1)
                padded.append(np.pad(element, pad))
            if padded:
                stacked.append(np.stack(padded))
            else:  # an empty batch: [0, full length, *element]
                element = _empty_stack(self.body.onnx_graph_.output[n_states + k])
                stacked.append(np.zeros((0, full, *element.shape[1:]), element.dtype))
        return tuple(finals + stacked)


class _If(OpRun):
    """ONNX If: the then_branch's outputs when `cond` (one element) is true, else the
    else_branch's; both branches see the enclosing scopes' values."""

    def need_context(self) -> bool:
        return True

    def _run(self, cond, context=None, attributes=None, bindings=None, **_):
        if np.size(cond) != 1:
            raise ConversionError(f"If '{self.onnx_node.name}': condition of size {np.size(cond)}")
        run = self._run_then_branch if bool(_scalar(cond)) else self._run_else_branch
        return tuple(run(context, attributes=attributes, bindings=bindings))


class _Absent(list):
    """An Optional holding nothing (onnx.reference lets an op return a list, not None)."""


class Optional(OpRun):
    """ONNX Optional: `x` when given, else an absent value of the type attribute.

    onnx.reference's own (onnx 1.23) wraps the value in a list, so OptionalHasElement finds an
    absent one present and OptionalGetElement gives a list."""

    def _run(self, x=None, type=None):  # noqa: A002 - the attribute's name
        return (_Absent() if x is None else x,)


class OptionalHasElement(OpRun):
    """ONNX OptionalHasElement: `x is not None` (an omitted input is absent)."""

    def _run(self, x=None):
        return (np.array(x is not None and not isinstance(x, _Absent)),)


class OptionalGetElement(OpRun):
    """ONNX OptionalGetElement: the value an Optional holds (an error when it holds none)."""

    def _run(self, x=None):
        if x is None or isinstance(x, _Absent):
            raise ConversionError(f"{_label(self.onnx_node)}: the optional holds no value")
        return (x,)


def _control_flow_ops(budget: Budget, trace: Trace | None) -> list[type[OpRun]]:
    """Loop, Scan and If kernels (onnx.reference finds them by class name) bound to `budget`
    and `trace`, Optional, and ReduceMean (undefined_means.py)."""
    bound = {"budget": budget, "trace": trace}
    loops = [type("Loop", (_Loop,), bound), type("Scan", (_Scan,), bound)]
    optionals = [Optional, OptionalHasElement, OptionalGetElement]
    return [*loops, type("If", (_If,), {}), *optionals, ReduceMean]


def _output(value) -> np.ndarray | list[np.ndarray] | None:
    """An output as an array; a sequence as a list of arrays; an absent optional as None."""
    if isinstance(value, _Absent):
        return None
    if value is None or isinstance(value, list):
        return value if value is None else [np.asarray(element) for element in value]
    return np.asarray(value)


def run_onnx(
    model: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    trace: Trace | None = None,
) -> list[np.ndarray]:
    """The model's outputs for `inputs`, computed in numpy; loops stop with an error after
    `max_iterations` iterations in total, or when a value or the loops' accumulated outputs
    exceed the element bounds of `ov_loops.reference.limits`. With `trace`, loop-carried values
    are recorded per iteration and the main graph's tensor values by name. A sequence output is
    a list of arrays."""
    budget = Budget("ONNX reference", max_iterations)
    try:
        evaluator = ReferenceEvaluator(model, new_ops=_control_flow_ops(budget, trace))
        with np.errstate(all="ignore"):
            if trace is None:
                return [_output(value) for value in evaluator.run(None, inputs)]
            values = evaluator.run(None, inputs, intermediate=True)
        given = {*inputs, *evaluator.rt_inits_}
        for name, value in values.items():
            if isinstance(value, np.ndarray) and name not in given:
                trace.keep(name, value)
        return [_output(values[name]) for name in evaluator.output_names]
    except OvLoopsError:
        raise
    except Exception as exc:  # onnx.reference's kernels raise anything on bad inputs
        where = _failed_node(exc)
        detail = message_line(exc)
        raise ConversionError(f"ONNX reference: {where}{type(exc).__name__}: {detail}") from None


def _failed_node(exc: Exception) -> str:
    """ "OP 'NAME' failed: " for the innermost ONNX node whose kernel was running when `exc`
    was raised (onnx.reference's message does not name it), else ""."""
    frame, node = exc.__traceback__, None
    while frame is not None:
        kernel = frame.tb_frame.f_locals.get("self")
        if isinstance(kernel, OpRun) and isinstance(kernel.onnx_node, onnx.NodeProto):
            node = kernel.onnx_node
        frame = frame.tb_next
    return "" if node is None else f"{_label(node)} failed: "
