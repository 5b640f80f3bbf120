"""Run an OpenVINO IR (XML/BIN) in numpy: Loop-5, TensorIterator-1 and If from their port maps,
back_edges and special ports; body operators from the kernel table (kernels.py). An op without
a kernel is an error naming it. A stateful IR (ReadValue/Assign) runs as one call from a fresh
state (state.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ov_loops.errors import ConversionError, OvLoopsError
from ov_loops.ir.reader import Graph, IRDocument, Layer, loop_spec, read_ir
from ov_loops.reference.ir.dtypes import PRECISIONS, numpy_type
from ov_loops.reference.ir.kernels import KERNELS, axis_of, ints
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS, Budget
from ov_loops.reference.trace import Trace, loop_key


class Executor:
    """Runs graphs of one IR document; with a `trace`, records each loop's merged values per
    iteration (keyed by `trace.loop_key`: "main/<layer name>", "<loop key>/body/<name>", If
    branches as "<path>/<if name>/then_body") and the main graph's outputs ("<name>:<k>", k
    the output's index)."""

    def __init__(self, document: IRDocument, budget: Budget, trace: Trace | None = None) -> None:
        self.document = document
        self.budget = budget
        self.trace = trace
        self._scope = ["main"]  # the path of the graph being run
        # Loop bodies run once per iteration: their order, wiring and constants are read once.
        self._plans: dict[int, tuple[list[Layer], dict]] = {}
        self._constants: dict[int, np.ndarray] = {}

    def _plan(self, graph: Graph) -> tuple[list[Layer], dict]:
        if id(graph) not in self._plans:
            producers = {
                (edge.to_layer, edge.to_port): (edge.from_layer, edge.from_port)
                for edge in graph.edges
            }
            self._plans[id(graph)] = (_topological(graph), producers)
        return self._plans[id(graph)]

    def constant(self, layer: Layer) -> np.ndarray:
        if id(layer) not in self._constants:
            self._constants[id(layer)] = self._read_constant(layer)
        return self._constants[id(layer)]

    def _read_constant(self, layer: Layer) -> np.ndarray:
        dtype = numpy_type(layer.data["element_type"])
        shape = ints(layer.data.get("shape"))
        if 0 in shape:  # OpenVINO stores a 1-byte placeholder for empty constants
            return np.zeros(shape, dtype)
        raw = self.document.read_bin(int(layer.data["offset"]), int(layer.data["size"]))
        if raw is None:
            raise ConversionError(f"IR reference: Const '{layer.name}' lies outside the .bin")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def run_graph(
        self, graph: Graph, parameters: dict[str, np.ndarray], traced: bool = False
    ) -> dict[str, np.ndarray]:
        """Execute `graph` with values for its Parameters (by layer id); return each Result's
        value by layer id. `traced`: keep every layer's outputs in the trace."""
        values: dict[tuple[str, int], np.ndarray] = {}
        order, producers = self._plan(graph)
        results = {}
        for layer in order:
            where = f"{layer.type} '{layer.name}'"
            try:  # the layer's failures, whatever raised them, are one ConversionError
                inputs = [values[producers[(layer.id, port)]] for port in sorted(layer.inputs)]
                if layer.type == "Result":
                    results[layer.id] = inputs[0]
                    continue
                outputs = [np.asarray(v) for v in self._run_layer(graph, layer, inputs, parameters)]
            except OvLoopsError:
                raise
            except Exception as exc:  # numpy, the port wiring and the .bin raise anything
                detail = " ".join(str(exc).split()) or type(exc).__name__
                raise ConversionError(f"IR reference: {where} failed: {detail}") from None
            for index, (port, value) in enumerate(zip(sorted(layer.outputs), outputs)):
                self.budget.value(where, value)
                values[(layer.id, port)] = value
                if traced and layer.type not in ("Parameter", "Const"):
                    self.trace.keep(f"{layer.name}:{index}", value)
        return results

    def _run_layer(self, graph: Graph, layer: Layer, inputs: list, parameters: dict) -> list:
        if layer.type == "Parameter":
            return [parameters[layer.id]]
        if layer.type == "Const":
            return [self.constant(layer)]
        if layer.type in ("Loop", "TensorIterator"):
            return self.run_loop(graph, layer, inputs)
        if layer.type == "If":
            return self.run_if(layer, inputs)
        if layer.type in KERNELS:
            return KERNELS[layer.type](layer, inputs)
        raise ConversionError(
            f"IR reference: no kernel for {layer.type} ({layer.version}) '{layer.name}'"
        )

    @contextmanager
    def _within(self, scope: str, iteration: tuple[str, int] | None = None) -> Iterator[None]:
        """Run a body at path `scope` (in `iteration` of a loop: (its path, the iteration))."""
        self._scope.append(scope)
        try:
            if iteration is not None and self.trace is not None:
                with self.trace.inside(*iteration):
                    yield
            else:
                yield
        finally:
            self._scope.pop()

    def run_if(self, layer: Layer, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """If-8: the then or else body, fed and read through its port map."""
        then_body, else_body = layer.branches
        flag = bool(np.asarray(inputs[0]).reshape(-1)[0])
        body, tag = (then_body, "then_port_map") if flag else (else_body, "else_port_map")
        branch = f"{self._scope[-1]}/{layer.name}/{tag.removesuffix('_port_map')}_body"
        by_port = dict(zip(sorted(layer.inputs), inputs))
        entries = layer.element.find(tag)
        feeds = {
            e.get("internal_layer_id"): by_port[int(e.get("external_port_id"))]
            for e in entries
            if e.tag == "input"
        }
        with self._within(branch):
            results = self.run_graph(body, feeds)
        wired = {
            int(e.get("external_port_id")): results[e.get("internal_layer_id")]
            for e in entries
            if e.tag == "output"
        }
        return [wired[port] for port in sorted(layer.outputs)]

    def run_loop(self, graph: Graph, layer: Layer, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Loop-5 / TensorIterator-1, from the layer's LoopSpec (Loop-5 spec)::

        i = 0; keepgoing = cond (Loop) ; params <- invariant values, merged initial values
        while (trip < 0 or i < trip) and keepgoing:     # TI: i < number of parts
            params[sliced] = part i of the input along axis (stride < 0: from the end)
            params[current_iteration] = i
            results = body(params)
            keepgoing = results[execution_condition] (if mapped)
            params[merged] = results[back edge source]; parts[concatenated] += results
            i += 1
        outputs: last values (initial value of a merged input if no iteration ran) and
        concatenations along their axis (reversed order for stride < 0)
        """
        try:
            spec = loop_spec(self.document, graph, layer)
        except (KeyError, TypeError) as exc:
            raise ConversionError(
                f"IR reference: {layer.type} '{layer.name}' has an invalid "
                f"port_map ({exc}); run ov-loops validate"
            ) from None
        parameter, _ = _body_ids(layer.body)
        by_port = dict(zip(sorted(layer.inputs), inputs))
        params = {
            parameter[e.body_parameter]: by_port[e.external_port]
            for e in (*spec.merged_inputs, *spec.invariant_inputs)
        }
        sliced = [
            (parameter[e.body_parameter], _parts(by_port[e.external_port], e))
            for e in spec.sliced_inputs
        ]
        if layer.type == "Loop":
            trip = int(np.asarray(inputs[0]).reshape(-1)[0])
            keepgoing = bool(np.asarray(inputs[1]).reshape(-1)[0])
        else:
            trip, keepgoing = min((len(parts) for _, parts in sliced), default=0), True
        with self.budget.accumulating(f"{layer.type} '{layer.name}'") as held:
            last, stacked = self._iterate(layer, spec, params, sliced, (trip, keepgoing), held)
            return self._loop_outputs(layer, spec, params, last, stacked)

    def _iterate(self, layer, spec, params, sliced, start, held) -> tuple[dict, dict]:
        """Run the body while the loop goes on (`start`: trip count, initial condition); the
        last iteration's results and the parts of each concatenated output (counted in
        `held`)."""
        body, where = layer.body, f"{layer.type} '{layer.name}'"
        parameter, result = _body_ids(body)
        (trip, keepgoing), iteration = start, 0
        key = loop_key(self._scope[-1], layer.name)
        recorded = self.trace.start(key) if self.trace is not None else None
        last: dict[str, np.ndarray] = {}
        stacked: dict[int, list[np.ndarray]] = {
            e.body_result: [] for e in spec.concatenated_outputs
        }
        while (trip < 0 or iteration < trip) and keepgoing:
            self.budget.iteration(where, iteration)
            for internal, parts in sliced:
                if iteration >= len(parts):
                    raise ConversionError(
                        f"IR reference: {where}: the sliced input ends before iteration {iteration}"
                    )
                params[internal] = parts[iteration]
            if spec.current_iteration is not None:
                declared = body.layers[parameter[spec.current_iteration]]
                params[declared.id] = np.array(
                    iteration, numpy_type(declared.data.get("element_type", "i64"))
                ).reshape(ints(declared.data.get("shape")))
            with self._within(f"{key}/body", (key, iteration)):
                last = self.run_graph(body, params)
            if recorded is not None:
                self.trace.record(recorded, [last[result[e.body_result]] for e in _merged(spec)])
            for index, store in stacked.items():
                store.append(last[result[index]])
                held.add(store[-1])
            for entry in spec.merged_inputs:
                params[parameter[entry.body_parameter]] = last[result[entry.body_result]]
            if spec.execution_condition is not None:
                flag = last[result[spec.execution_condition]]
                keepgoing = bool(np.asarray(flag).reshape(-1)[0])
            iteration += 1
        return last, stacked

    def _loop_outputs(self, layer, spec, params, last, stacked) -> list[np.ndarray]:
        """Last values (the initial value of the merged input a last value feeds back to when
        no iteration ran) and concatenations, in output port order."""
        parameter, result = _body_ids(layer.body)
        ports = sorted(layer.outputs)
        values = {}
        for entry in spec.concatenated_outputs:
            port = layer.outputs[ports[entry.external_port]]
            values[entry.external_port] = _concatenate(stacked[entry.body_result], entry, port)
        for entry in spec.last_value_outputs:
            port = layer.outputs[ports[entry.external_port]]
            if last:
                values[entry.external_port] = last[result[entry.body_result]]
            else:
                merged = next(
                    (m for m in spec.merged_inputs if m.body_result == entry.body_result), None
                )
                values[entry.external_port] = (
                    params[parameter[merged.body_parameter]] if merged else _zeros(port)
                )
        return [values[index] for index in range(len(ports))]


def _merged(spec) -> list:
    """A LoopSpec's merged inputs in external port order (the order a trace records them in)."""
    return sorted(spec.merged_inputs, key=lambda entry: entry.external_port)


def _body_ids(body: Graph) -> tuple[list[str], list[str]]:
    """The layer ids of a body's Parameters and Results, in port_map index order."""
    return [p.id for p in body.of_type("Parameter")], [r.id for r in body.of_type("Result")]


def _parts(value: np.ndarray, entry) -> list[np.ndarray]:
    """The parts of a sliced input (a SlicedInput), in iteration order."""
    axis = axis_of(entry.axis, value.ndim)
    length = value.shape[axis]
    start = entry.start + length if entry.start < 0 else entry.start
    end = entry.end + length if entry.end < 0 else entry.end  # inclusive bound
    stride, part = entry.stride, entry.part_size
    offsets = range(start, end + 1, stride) if stride > 0 else range(start, end - 1, stride)
    pieces = []
    for offset in offsets:
        low = offset if stride > 0 else offset - part + 1
        if low < 0 or low + part > length:
            break
        pieces.append(np.take(value, range(low, low + part), axis=axis))
    return pieces


def _concatenate(parts: list[np.ndarray], entry, port) -> np.ndarray:
    """A concatenated output (a ConcatenatedOutput); zero parts give its port's shape with 0."""
    if entry.stride < 0:
        parts = parts[::-1]
    if parts:
        return np.concatenate(parts, axis=axis_of(entry.axis, parts[0].ndim))
    return _zeros(port, entry.axis)


def _zeros(port, empty_axis: int | None = None) -> np.ndarray:
    """Zeros of the port's precision and shape, dynamic dims 0, after zero iterations: a
    concatenated output (`empty_axis` 0 too; [0] when the port has no dims) or, since Loop-5
    leaves it undefined, a last value no back edge feeds."""
    dims = [0 if d < 0 else d for d in port.dims]
    if empty_axis is not None:
        if not dims:
            dims = [0]
        dims[empty_axis] = 0
    return np.zeros(dims, PRECISIONS.get(port.precision, np.float32))


def _topological(graph: Graph) -> list[Layer]:
    pending = {layer_id: 0 for layer_id in graph.layers}
    consumers: dict[str, list[str]] = {layer_id: [] for layer_id in graph.layers}
    for edge in graph.edges:
        pending[edge.to_layer] += 1
        consumers[edge.from_layer].append(edge.to_layer)
    ready = [layer_id for layer_id, count in pending.items() if count == 0]
    order = []
    while ready:
        layer_id = ready.pop()
        order.append(graph.layers[layer_id])
        for consumer in consumers[layer_id]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    if len(order) != len(graph.layers):
        raise ConversionError("IR reference: the graph has a cycle")
    return order


def run_ir(
    path: str | Path,
    inputs: dict[str, np.ndarray],
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    trace: Trace | None = None,
) -> dict[str, np.ndarray]:
    """The IR's outputs for `inputs` (by Parameter tensor name or layer name), keyed by every
    tensor name of each Result's input. Loops stop with an error after `max_iterations`
    iterations in total, or when a value or the loops' accumulated outputs exceed the element
    bounds of `ov_loops.reference.limits`. With `trace`, loops' merged values are recorded per
    iteration and the main graph's layer outputs (see `Executor`). Every failure is a one-line
    ConversionError (an unreadable file an InputError)."""
    document = read_ir(path, stream=False)
    executor = Executor(document, Budget("IR reference", max_iterations), trace)
    try:
        with np.errstate(all="ignore"):
            return _run_main(executor, document.graph, inputs)
    except OvLoopsError:
        raise
    except Exception as exc:  # the main graph's wiring: Parameters and Results without ports
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ConversionError(f"IR reference: {type(exc).__name__}: {detail}") from None


def _run_main(executor: Executor, graph: Graph, inputs: dict) -> dict[str, np.ndarray]:
    parameters = {}
    for layer in graph.of_type("Parameter"):
        names = {layer.name} | _port_names(next(iter(layer.outputs.values()), None), layer)
        value = next((inputs[name] for name in names if name in inputs), None)
        if value is None:
            raise ConversionError(f"IR reference: no value for input '{layer.name}'")
        parameters[layer.id] = np.asarray(value)
    results = executor.run_graph(graph, parameters, traced=executor.trace is not None)
    named = {}
    for layer in graph.of_type("Result"):
        source, port = graph.producer(layer.id, min(layer.inputs))
        for name in _port_names(source.outputs.get(port), source) | {layer.name}:
            named[name] = results[layer.id]
    return named


def _port_names(port, layer: Layer) -> set[str]:
    if layer.element is None:
        return set()
    for element in layer.element.iter("port"):
        if port is not None and element.get("id") == str(port.id) and element.get("names"):
            return {name.strip() for name in element.get("names").split(",")}
    return set()
