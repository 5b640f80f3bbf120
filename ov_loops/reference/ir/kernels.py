"""IR reference kernels: (layer, inputs) -> outputs for each body operator the reference runs,
by IR layer type (`KERNELS`, with the recurrent sequence ops of sequences.py and the state ops of
state.py). Loops and If are the executor's (executor.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ov_loops.errors import ConversionError
from ov_loops.ir.reader import Layer
from ov_loops.reference.ir.dtypes import numpy_type
from ov_loops.reference.ir.sequences import SEQUENCE_KERNELS
from ov_loops.reference.ir.state import STATE_KERNELS


def ints(text: str | None) -> list[int]:
    """A comma-separated attribute as ints ([] when absent)."""
    return [int(v) for v in text.split(",") if v.strip()] if text else []


def axis_of(value, rank: int) -> int:
    """An axis from an int or a one-element array, made non-negative."""
    value = int(np.asarray(value).reshape(-1)[0])
    return value + rank if value < 0 else value


Kernel = Callable[[Layer, list[np.ndarray]], list[np.ndarray]]  # (layer, inputs) -> outputs
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
    "BitwiseAnd": np.bitwise_and,
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


def _is_inf(layer, x):
    """IsInf-10: +inf where detect_positive, -inf where detect_negative (both by default)."""
    positive = layer.data.get("detect_positive", "true") == "true"
    negative = layer.data.get("detect_negative", "true") == "true"
    return [(positive & np.isposinf(x[0])) | (negative & np.isneginf(x[0]))]


def _relu(layer, x):
    return [np.maximum(x[0], 0).astype(x[0].dtype)]


def _sigmoid(layer, x):
    return [(1 / (1 + np.exp(-x[0]))).astype(x[0].dtype)]


def _clamp(layer, x):
    return [np.clip(x[0], float(layer.data["min"]), float(layer.data["max"])).astype(x[0].dtype)]


def _softmax(layer, x):
    axis = axis_of(int(layer.data.get("axis", 1)), x[0].ndim)
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
    return [np.concatenate(x, axis=axis_of(int(layer.data["axis"]), x[0].ndim))]


def _split(layer, x):
    return list(np.split(x[0], int(layer.data["num_splits"]), axis=axis_of(x[1], x[0].ndim)))


def _variadic_split(layer, x):
    data, axis, lengths = x[0], axis_of(x[1], x[0].ndim), [int(v) for v in np.atleast_1d(x[2])]
    if -1 in lengths:
        lengths[lengths.index(-1)] = data.shape[axis] - (sum(lengths) + 1)
    return list(np.split(data, np.cumsum(lengths)[:-1], axis=axis))


def _squeeze(layer, x):
    if len(x) == 1 or np.size(x[1]) == 0:
        return [np.squeeze(x[0])]
    axes = tuple(axis_of(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
    axes = tuple(a for a in axes if x[0].shape[a] == 1)
    return [np.squeeze(x[0], axis=axes)]


def _unsqueeze(layer, x):
    rank = x[0].ndim + np.size(x[1])
    axes = sorted(axis_of(int(a), rank) for a in np.atleast_1d(x[1]))
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
    axis = axis_of(x[2], data.ndim)
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    return [np.take(data, indices, axis=axis)]


def _slice(layer, x):
    data, start, stop, step = x[0], np.atleast_1d(x[1]), np.atleast_1d(x[2]), np.atleast_1d(x[3])
    axes = np.atleast_1d(x[4]) if len(x) > 4 else np.arange(len(start))
    index = [slice(None)] * data.ndim
    for a, s, e, st in zip(axes, start, stop, step):
        index[axis_of(int(a), data.ndim)] = slice(int(s), int(e), int(st))
    return [data[tuple(index)]]


def _strided_slice(layer, x):
    data, begin, end = x[0], np.atleast_1d(x[1]), np.atleast_1d(x[2])
    stride = np.atleast_1d(x[3]) if len(x) > 3 else np.ones_like(begin)
    begin_mask, end_mask = ints(layer.data.get("begin_mask")), ints(layer.data.get("end_mask"))
    for name in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask"):
        if any(ints(layer.data.get(name))):
            raise ConversionError(f"IR reference: StridedSlice '{layer.name}' with {name}")
    index = []
    for i in range(len(begin)):
        b = None if i < len(begin_mask) and begin_mask[i] else int(begin[i])
        e = None if i < len(end_mask) and end_mask[i] else int(end[i])
        index.append(slice(b, e, int(stride[i])))
    return [data[tuple(index)]]


def _shape_of(layer, x):
    return [np.array(x[0].shape, dtype=numpy_type(layer.data.get("output_type", "i64")))]


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
    return [_converted(x[0], numpy_type(layer.data["destination_type"]))]


def _convert_like(layer, x):
    """ConvertLike-1: data converted to the element type of `like` (as Convert)."""
    return [_converted(x[0], x[1].dtype)]


def _range(layer, x):
    dtype = numpy_type(layer.data.get("output_type", "i64"))
    start, stop, step = (np.asarray(v).reshape(-1)[0] for v in x)
    return [np.arange(start, stop, step).astype(dtype)]


def _reduce(function):
    def kernel(layer, x):
        axes = tuple(axis_of(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
        keep = layer.data.get("keep_dims") == "true"
        return [np.asarray(function(x[0], axis=axes, keepdims=keep)).astype(x[0].dtype)]

    return kernel


def _mean(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """OpenVINO's ReduceMean: sum / count, 0 over zero elements (numpy: NaN and a warning)."""
    count = int(np.prod([x.shape[a] for a in axis]))
    total = np.sum(x, axis=axis, keepdims=keepdims)
    return np.zeros_like(total) if count == 0 else total / count


def _reverse(layer, x):
    if layer.data.get("mode", "index") == "mask":
        axes = tuple(i for i, flag in enumerate(np.atleast_1d(x[1])) if flag)
    else:
        axes = tuple(axis_of(int(a), x[0].ndim) for a in np.atleast_1d(x[1]))
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
    axis = axis_of(x[1], data.ndim) if len(x) > 1 else 0
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
    axis = axis_of(x[3], data.ndim)
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    position = list(np.indices(indices.shape))
    position[axis] = indices
    data[tuple(position)] = updates.astype(data.dtype)
    return [data]


def _random_uniform(layer, x):
    """RandomUniform-8 over an integer range of one value, [min, min + 1): min everywhere (the
    run-time zero of ov_loops/loopir/passes/constant_loops.py). Other draws are not reproduced."""
    dtype = numpy_type(layer.data.get("output_type", "f32"))
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
        "IsInf": _is_inf,
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
        "ReduceMean": _reduce(_mean),
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
KERNELS.update(SEQUENCE_KERNELS)  # sequences.py
KERNELS.update(STATE_KERNELS)  # state.py
