"""Basic indexing (Subtensor), its increments (IncSubtensor: x[idx] += y or x[idx] = y) and
integer-array indexing on the first axis (AdvancedSubtensor1, AdvancedIncSubtensor1).

    Subtensor(x, idx)            = x[idx]: each slice a Slice (numpy's clamping), then each
                                   integer index a Gather that drops its axis
    IncSubtensor(x, y, idx)      = positions = arange(x.size).reshape(x.shape)[idx];
                                   flat(x)[flat(positions)] (+)= flat(broadcast(y, positions))
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor import subtensor as pst

from ov_loops.frontends.pytensor.dispatch import cast, ov_translate
from ov_loops.frontends.pytensor.tensor import shape_vector

_BIG = np.iinfo(np.int64).max
_SMALL = np.iinfo(np.int64).min


def _scalar(value, default: int) -> ov.Output:
    if value is None:
        return ops.constant(np.int64(default)).output(0)
    if isinstance(value, (int, np.integer)):
        return ops.constant(np.int64(value)).output(0)
    return cast(value, np.int64)


def _step_sign(step) -> int:
    if step is None or isinstance(step, (int, np.integer)):
        return -1 if step is not None and step < 0 else 1
    node = step.get_node()
    if node.get_type_name() == "Constant":
        return -1 if node.get_data().item() < 0 else 1
    raise NotImplementedError("a slice step known only at run time")


def basic_index(value: ov.Output, indices) -> ov.Output:
    """value[indices] for a tuple of slices (bounds None, ints or Outputs) and scalar indices."""
    axes, starts, stops, steps, taken = [], [], [], [], []
    for axis, index in enumerate(indices):
        if isinstance(index, slice):
            if index == slice(None):
                continue
            forward = _step_sign(index.step) > 0
            axes.append(axis)
            starts.append(_scalar(index.start, 0 if forward else _BIG))
            stops.append(_scalar(index.stop, _BIG if forward else _SMALL))
            steps.append(_scalar(index.step, 1))
        else:
            taken.append((axis, _scalar(index, 0)))
    if axes:
        value = ops.slice(
            value,
            shape_vector(starts),
            shape_vector(stops),
            shape_vector(steps),
            ops.constant(np.array(axes, np.int64)),
        ).output(0)
    for axis, index in reversed(taken):
        value = ops.gather(value, index, ops.constant(np.int64(axis))).output(0)
    return value


def _indices(op, inputs) -> tuple:
    return pst.indices_from_subtensor(list(inputs), op.idx_list)


@ov_translate.register(pst.Subtensor)
def _subtensor(op, node, inputs):
    value, *index_values = inputs
    return [basic_index(value, _indices(op, index_values))]


@ov_translate.register(pst.AdvancedSubtensor1)
def _advanced_subtensor1(op, node, inputs):
    value, index = inputs
    return [ops.gather(value, cast(index, np.int64), ops.constant(np.int64(0))).output(0)]


def scatter(value: ov.Output, update: ov.Output, select, accumulate: bool) -> ov.Output:
    """`value` with the elements `select(positions)` picks set to (or increased by) `update`,
    broadcast to their shape (see the module docstring)."""
    shape = ops.shape_of(value, ov.Type.i64)
    size = ops.reduce_prod(shape, ops.constant(np.int64(0)), True)
    positions = ops.range(
        ops.constant(np.int64(0)),
        ops.squeeze(size, ops.constant(np.int64(0))),
        ops.constant(np.int64(1)),
        ov.Type.i64,
    )
    picked = select(ops.reshape(positions, shape, False).output(0))
    update = ops.broadcast(
        cast(update, value.get_element_type().to_dtype()), ops.shape_of(picked, ov.Type.i64)
    )
    flat = ops.constant(np.array([-1], np.int64))
    scattered = ops.scatter_elements_update(
        ops.reshape(value, flat, False),
        ops.reshape(picked, flat, False),
        ops.reshape(update, flat, False),
        ops.constant(np.int64(0)),
        "sum" if accumulate else "none",
        True,
    )
    return ops.reshape(scattered, shape, False).output(0)


@ov_translate.register(pst.IncSubtensor)
def _inc_subtensor(op, node, inputs):
    value, update, *index_values = inputs
    indices = _indices(op, index_values)
    return [scatter(value, update, lambda p: basic_index(p, indices), not op.set_instead_of_inc)]


@ov_translate.register(pst.AdvancedIncSubtensor1)
def _advanced_inc_subtensor1(op, node, inputs):
    value, update, index = inputs
    index = cast(index, np.int64)

    def select(positions):
        return ops.gather(positions, index, ops.constant(np.int64(0))).output(0)

    return [scatter(value, update, select, not op.set_instead_of_inc)]
