"""Basic indexing (Subtensor), numpy's advanced indexing (AdvancedSubtensor1: an integer
vector on the first axis; AdvancedSubtensor: integer and boolean arrays mixed with slices and
new axes) and their increments (x[idx] += y or x[idx] = y).

    Subtensor(x, idx)            = x[idx]: each slice a Slice (numpy's clamping), then each
                                   integer index a Gather that drops its axis
    AdvancedSubtensor(x, idx)    = numpy's x[idx]: new axes unsqueezed, boolean masks as their
                                   nonzero() rows, slices applied; then the k arrays, negative
                                   entries wrapped and broadcast to one shape B, pick with one
                                   GatherND from x with their axes moved first; B's axes stay
                                   first, or go where the arrays were when their axes are
                                   adjacent (numpy's rule)
    (Advanced)IncSubtensor(x, y, idx)
                                 = positions = arange(x.size).reshape(x.shape)[idx];
                                   flat(x)[flat(positions)] (+)= flat(broadcast(y, positions))
                                   (+= adds repeated positions once each, as numpy.add.at)
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.tensor import subtensor as pst
from pytensor.tensor.type_other import MakeSlice

from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate
from ov_loops.frontends.pytensor.tensor import shape_vector
from ov_loops.ovgraph import length

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


@ov_translate.register(pst.AdvancedIncSubtensor1)
def _advanced_inc_subtensor1(op, node, inputs):
    value, update, index = inputs
    index = cast(index, np.int64)

    def select(positions):
        return ops.gather(positions, index, ops.constant(np.int64(0))).output(0)

    return [scatter(value, update, select, not op.set_instead_of_inc)]


@ov_translate.register(MakeSlice)
def _make_slice(op, node, inputs):
    return [slice(*inputs)]


def _rank(value: ov.Output) -> int:
    return value.get_partial_shape().rank.get_length()


def _advanced_entries(op, index_values) -> list:
    """The index tuple of an Advanced(Inc)Subtensor: PyTensor 3 flattens it behind an
    `idx_list` template, PyTensor 2 passes it as inputs (slices, None for a new axis, arrays)."""
    idx_list = getattr(op, "idx_list", None)
    if idx_list is None:
        return list(index_values)
    return list(pst.indices_from_subtensor(list(index_values), idx_list))


def _expand(value: ov.Output, entries: list) -> tuple[ov.Output, list]:
    """`value` with the new axes inserted, and one entry per axis: a slice or an integer array
    (a boolean mask becomes its nonzero() rows, one per axis it covers)."""
    expanded: list = []
    for entry in entries:
        if entry is None:
            value = ops.unsqueeze(value, i64(len(expanded))).output(0)
            expanded.append(slice(None))
        elif isinstance(entry, slice):
            expanded.append(entry)
        elif entry.get_element_type() == ov.Type.boolean:
            rows = ops.non_zero(entry, ov.Type.i64)
            zero = ops.constant(np.int64(0))
            for row in range(_rank(entry)):
                expanded.append(ops.gather(rows, ops.constant(np.int64(row)), zero).output(0))
        else:
            expanded.append(cast(entry, np.int64))
    return value, expanded


def _wrapped(index: ov.Output, value: ov.Output, axis: int) -> ov.Output:
    """`index` into `value`'s axis `axis`, negative entries counted from the end."""
    negative = ops.less(index, ops.constant(np.int64(0)))
    return ops.select(negative, ops.add(index, length(value, axis)), index).output(0)


def advanced_index(value: ov.Output, entries: list) -> ov.Output:
    """numpy's value[tuple(entries)] (see the module docstring)."""
    value, expanded = _expand(value, entries)
    value = basic_index(value, [e if isinstance(e, slice) else slice(None) for e in expanded])
    axes = [axis for axis, entry in enumerate(expanded) if not isinstance(entry, slice)]
    if not axes:
        return value
    arrays = [_wrapped(expanded[axis], value, axis) for axis in axes]
    common = arrays[0]
    for array in arrays[1:]:
        common = ops.add(common, array).output(0)
    shape = ops.shape_of(common, ov.Type.i64)
    last = ops.constant(np.int64(-1))
    stacked = ops.concat([ops.unsqueeze(ops.broadcast(a, shape), last) for a in arrays], -1)
    rest = [axis for axis in range(_rank(value)) if axis not in axes]
    moved = ops.transpose(value, i64(*axes, *rest))
    picked = ops.gather_nd(moved, stacked, 0).output(0)
    if axes != list(range(axes[0], axes[0] + len(axes))) or axes[0] == 0:
        return picked
    batch = _rank(common)
    before = list(range(batch, batch + axes[0]))
    after = list(range(batch + axes[0], _rank(picked)))
    return ops.transpose(picked, i64(*before, *range(batch), *after)).output(0)


def _register(read_type, increment_type, index, entries) -> None:
    """Translate `read_type` as x[idx] = index(x, entries(op, index inputs)) and
    `increment_type` as its set or inc (`scatter`)."""

    def read(op, node, inputs):
        value, *index_values = inputs
        return [index(value, entries(op, index_values))]

    def increment(op, node, inputs):
        value, update, *index_values = inputs
        found = entries(op, index_values)
        return [scatter(value, update, lambda p: index(p, found), not op.set_instead_of_inc)]

    ov_translate.register(read_type)(read)
    ov_translate.register(increment_type)(increment)


_register(pst.Subtensor, pst.IncSubtensor, basic_index, _indices)
_register(pst.AdvancedSubtensor, pst.AdvancedIncSubtensor, advanced_index, _advanced_entries)
