"""Run an OpenVINO IR (XML/BIN) in numpy: Loop-5 and TensorIterator-1 from their port_map,
back_edges and special ports; body operators from a kernel table. An op without a kernel is an
error naming it. A stateful IR (ReadValue/Assign) runs as one call from a fresh state
(`state.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ov_loops.errors import ConversionError, OvLoopsError
from ov_loops.ir.reader import Graph, IRDocument, Layer, loop_spec, read_ir
from ov_loops.ir.types import port_precision
from ov_loops.reference.ir.sequences import SEQUENCE_KERNELS
from ov_loops.reference.ir.state import STATE_KERNELS
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS, Budget
from ov_loops.reference.trace import Trace, loop_key

# An IR <data element_type>'s numpy type (bf16 is ml_dtypes.bfloat16: see _dtype).
DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "boolean": np.bool_,
}
# A <port precision>'s numpy type; "BOOLEAN" is how some producers spell BOOL.
PRECISIONS = {port_precision(name): dtype for name, dtype in DTYPES.items()} | {"BOOLEAN": np.bool_}


def _dtype(name: str):
    if name == "bf16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    if name not in DTYPES:
        raise ConversionError(f"IR reference: element type {name} is not supported")
    return DTYPES[name]


def _ints(text: str | None) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()] if text else []


def _axis(value, rank: int) -> int:
    """An axis from an int or a one-element array, made non-negative."""
    value = int(np.asarray(value).reshape(-1)[0])
    return value + rank if value < 0 else value


# -- kernels: (layer, inputs) -> outputs ----------------------------------------------------------
Kernel = Callable[[Layer, list[np.ndarray]], list[np.ndarray]]
KERNELS: dict[str, Kernel] = {}


def _elementwise(function) -> Kernel:
    return lambda layer, x: [np.asarray(function(*x))]


def _binary_keep_type(function) -> Kernel:
    def kernel(layer, x):
        result = function(x[0], x[1])
        return [np.asarray(result).astype(np.result_type(x[0], x[1]), copy=False)]

    return kernel


for _name, _function in {
    "Add": np.add,
    "Subtract": np.subtract,
    "Multiply": np.multiply,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "SquaredDifference": lambda a, b: (a - b) ** 2,
    "Power": np.power,
}.items():
    KERNELS[_name] = _binary_keep_type(_function)

for _name, _function in {
    "Equal": np.equal,
    "NotEqual": np.not_equal,
    "Less": np.less,
    "LessEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
    "LogicalXor": np.logical_xor,
    "LogicalNot": np.logical_not,
    "Tanh": np.tanh,
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Abs": np.abs,
    "Negative": np.negative,
    "Floor": np.floor,
    "Ceiling": np.ceil,
    "Sin": np.sin,
    "Cos": np.cos,
    "Sign": np.sign,
}.items():
    KERNELS[_name] = _elementwise(_function)


def _divide(layer, x):
    a, b = x
    if np.issubdtype(a.dtype, np.integer):
        if layer.data.get("m_pythondiv", "true") == "true":
            return [np.floor_divide(a, b)]
        return [(np.trunc(a / b)).astype(a.dtype)]
    return [np.asarray(a / b).astype(a.dtype)]


def _floor_mod(layer, x):
    return [np.mod(x[0], x[1])]


def _mod(layer, x):
    return [np.fmod(x[0], x[1])]


def _relu(layer, x):
    return [np.maximum(x[0], 0).astype(x[0].dtype)]


def _sigmoid(layer, x):
    return [(1 / (1 + np.exp(-x[0]))).astype(x[0].dtype)]


def _clamp(layer, x):
    return [np.clip(x[0], float(layer.data["min"]), float(layer.data["max"])).astype(x[0].dtype)]


def _softmax(layer, x):
    axis = _axis(int(layer.data.get("axis", 1)), x[0].ndim)
    shifted = x[0] - np.max(x[0], axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return [(exp / np.sum(exp, axis=axis, keepdims=True)).astype(x[0].dtype)]


def _matmul(layer, x):
    a, b = x
    if layer.data.get("transpose_a") == "true" and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if layer.data.get("transpose_b") == "true" and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return [np.matmul(a, b).astype(np.result_type(x[0], x[1]))]


def _concat(layer, x):
    return [np.concatenate(x, axis=_axis(int(layer.data["axis"]), x[0].ndim))]


def _split(layer, x):
    return list(np.split(x[0], int(layer.data["num_splits"]), axis=_axis(x[1], x[0].ndim)))


def _variadic_split(layer, x):
    data, axis, lengths = x[0], _axis(x[1], x[0].ndim), [int(v) for v in np.atleast_1d(x[2])]
    if -1 in lengths:
        lengths[lengths.index(-1)] = data.shape[axis] - (sum(lengths) + 1)
    return list(np.split(data, np.cumsum(lengths)[:-1], axis=axis))


def _squeeze(layer, x):
    if len(x) == 1 or np.size(x[1]) == 0:
        return [np.squeeze(x[0])]
    axes = tuple(_axis(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
    axes = tuple(a for a in axes if x[0].shape[a] == 1)
    return [np.squeeze(x[0], axis=axes)]


def _unsqueeze(layer, x):
    rank = x[0].ndim + np.size(x[1])
    axes = sorted(_axis(int(a), rank) for a in np.atleast_1d(x[1]))
    result = x[0]
    for axis in axes:
        result = np.expand_dims(result, axis)
    return [result]


def _reshape(layer, x):
    shape = [int(v) for v in np.atleast_1d(x[1])]
    if layer.data.get("special_zero") == "true":
        shape = [x[0].shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return [np.reshape(x[0], shape)]


def _transpose(layer, x):
    order = [int(v) for v in np.atleast_1d(x[1])] or list(range(x[0].ndim))[::-1]
    return [np.transpose(x[0], order)]


def _gather(layer, x):
    if int(layer.data.get("batch_dims", 0)) != 0:
        raise ConversionError(f"IR reference: Gather '{layer.name}' with batch_dims != 0")
    data, indices = x[0], np.asarray(x[1]).astype(np.int64)
    axis = _axis(x[2], data.ndim)
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    return [np.take(data, indices, axis=axis)]


def _slice(layer, x):
    data, start, stop, step = x[0], np.atleast_1d(x[1]), np.atleast_1d(x[2]), np.atleast_1d(x[3])
    axes = np.atleast_1d(x[4]) if len(x) > 4 else np.arange(len(start))
    index = [slice(None)] * data.ndim
    for a, s, e, st in zip(axes, start, stop, step):
        index[_axis(int(a), data.ndim)] = slice(int(s), int(e), int(st))
    return [data[tuple(index)]]


def _strided_slice(layer, x):
    data, begin, end = x[0], np.atleast_1d(x[1]), np.atleast_1d(x[2])
    stride = np.atleast_1d(x[3]) if len(x) > 3 else np.ones_like(begin)
    begin_mask, end_mask = _ints(layer.data.get("begin_mask")), _ints(layer.data.get("end_mask"))
    for name in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask"):
        if any(_ints(layer.data.get(name))):
            raise ConversionError(f"IR reference: StridedSlice '{layer.name}' with {name}")
    index = []
    for i in range(len(begin)):
        b = None if i < len(begin_mask) and begin_mask[i] else int(begin[i])
        e = None if i < len(end_mask) and end_mask[i] else int(end[i])
        index.append(slice(b, e, int(stride[i])))
    return [data[tuple(index)]]


def _shape_of(layer, x):
    return [np.array(x[0].shape, dtype=_dtype(layer.data.get("output_type", "i64")))]


def _broadcast(layer, x):
    mode = layer.data.get("mode", "numpy")
    data, shape = x[0], [int(v) for v in np.atleast_1d(x[1])]
    if mode == "bidirectional":
        return [data * np.ones(shape, dtype=data.dtype)]
    if mode == "explicit":
        axes = [int(v) for v in np.atleast_1d(x[2])]
        expanded = np.reshape(
            data, [data.shape[axes.index(i)] if i in axes else 1 for i in range(len(shape))]
        )
        return [np.broadcast_to(expanded, shape).copy()]
    return [np.broadcast_to(data, shape).copy()]


def _select(layer, x):
    return [np.where(x[0], x[1], x[2]).astype(np.result_type(x[1], x[2]))]


def _converted(value: np.ndarray, target) -> np.ndarray:
    if np.issubdtype(np.dtype(target), np.integer) and np.issubdtype(value.dtype, np.floating):
        value = np.round(value)  # OpenVINO rounds half to even when converting to integers
    return value.astype(target)


def _convert(layer, x):
    return [_converted(x[0], _dtype(layer.data["destination_type"]))]


def _convert_like(layer, x):
    """ConvertLike-1: data converted to the element type of `like` (as Convert)."""
    return [_converted(x[0], x[1].dtype)]


def _range(layer, x):
    dtype = _dtype(layer.data.get("output_type", "i64"))
    start, stop, step = (np.asarray(v).reshape(-1)[0] for v in x)
    return [np.arange(start, stop, step).astype(dtype)]


def _reduce(function):
    def kernel(layer, x):
        axes = tuple(_axis(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
        keep = layer.data.get("keep_dims") == "true"
        return [np.asarray(function(x[0], axis=axes, keepdims=keep)).astype(x[0].dtype)]

    return kernel


def _reverse(layer, x):
    if layer.data.get("mode", "index") == "mask":
        axes = tuple(i for i, flag in enumerate(np.atleast_1d(x[1])) if flag)
    else:
        axes = tuple(_axis(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
    return [np.flip(x[0], axis=axes)]


def _tile(layer, x):
    return [np.tile(x[0], [int(v) for v in np.atleast_1d(x[1])])]


def _identity(layer, x):
    return [x[0]]


def _cumsum(layer, x):
    """CumSum-3 (spec "CumSum-3")::

    y[i] = sum(x[j] for j <= i)  along axis (default 0); exclusive: j < i; reverse: j >= i / j > i
    """
    data = x[0]
    axis = _axis(x[1], data.ndim) if len(x) > 1 else 0
    flip = layer.data.get("reverse", "false") == "true"
    values = np.flip(data, axis) if flip else data
    summed = np.cumsum(values, axis=axis, dtype=data.dtype)
    if layer.data.get("exclusive", "false") == "true":
        summed = summed - values
    return [np.flip(summed, axis) if flip else summed]


def _scatter_elements_update(layer, x):
    """ScatterElementsUpdate-12 (spec "ScatterElementsUpdate-12"), reduction "none"::

    out = copy(data); for each index position p of indices:
        q = p with q[axis] = indices[p] (negative: + data.shape[axis]); out[q] = updates[p]
    """
    if layer.data.get("reduction", "none") != "none":
        raise ConversionError(
            f"IR reference: ScatterElementsUpdate '{layer.name}' with reduction "
            f"{layer.data['reduction']}"
        )
    data, indices, updates = x[0].copy(), np.asarray(x[1]).astype(np.int64), x[2]
    axis = _axis(x[3], data.ndim)
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    position = list(np.indices(indices.shape))
    position[axis] = indices
    data[tuple(position)] = updates.astype(data.dtype)
    return [data]


def _random_uniform(layer, x):
    """RandomUniform-8 over an integer range of one value, [min, min + 1): min everywhere (the
    run-time zero of ov_loops/loopir/passes/constant_loops.py). Other draws are not reproduced."""
    dtype = _dtype(layer.data.get("output_type", "f32"))
    low, high = (np.asarray(v).reshape(-1)[0] for v in x[1:3])
    if not np.issubdtype(np.dtype(dtype), np.integer) or high - low != 1:
        raise ConversionError(
            f"IR reference: RandomUniform '{layer.name}' other than an integer draw from "
            "[min, min + 1) is not supported"
        )
    return [np.full([int(v) for v in np.atleast_1d(x[0])], low, dtype)]


KERNELS.update(
    {
        "Divide": _divide,
        "FloorMod": _floor_mod,
        "Mod": _mod,
        "Relu": _relu,
        "ReLU": _relu,
        "Sigmoid": _sigmoid,
        "Clamp": _clamp,
        "SoftMax": _softmax,
        "Softmax": _softmax,
        "MatMul": _matmul,
        "Concat": _concat,
        "Split": _split,
        "VariadicSplit": _variadic_split,
        "Squeeze": _squeeze,
        "Unsqueeze": _unsqueeze,
        "Reshape": _reshape,
        "Transpose": _transpose,
        "Gather": _gather,
        "Slice": _slice,
        "StridedSlice": _strided_slice,
        "ShapeOf": _shape_of,
        "Broadcast": _broadcast,
        "Select": _select,
        "Convert": _convert,
        "Range": _range,
        "ReduceSum": _reduce(np.sum),
        "ReduceMean": _reduce(np.mean),
        "ReduceMax": _reduce(np.max),
        "ReduceMin": _reduce(np.min),
        "ReduceProd": _reduce(np.prod),
        "Reverse": _reverse,
        "Tile": _tile,
        "Identity": _identity,
        "CumSum": _cumsum,
        "ConvertLike": _convert_like,
        "ScatterElementsUpdate": _scatter_elements_update,
        "RandomUniform": _random_uniform,
    }
)
KERNELS.update(SEQUENCE_KERNELS)
KERNELS.update(STATE_KERNELS)


# -- graph execution ----------------------------------------------------------------------------
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
        dtype = _dtype(layer.data["element_type"])
        shape = _ints(layer.data.get("shape"))
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
                    iteration, _dtype(declared.data.get("element_type", "i64"))
                ).reshape(_ints(declared.data.get("shape")))
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
    axis = _axis(entry.axis, value.ndim)
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
        return np.concatenate(parts, axis=_axis(entry.axis, parts[0].ndim))
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
