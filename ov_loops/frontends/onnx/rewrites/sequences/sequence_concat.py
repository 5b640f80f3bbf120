"""ConcatFromSequence and SplitToSequence on a sequence's four tensors (see sequence_ops.py).

Both views of a tensor X of shape pre + [A] + post cut along one axis into pieces of lengths
a_0 .. a_{n-1} (sum A) meet in one index: with P = prod(pre) and Q = prod(post), piece k holds
X's values at [p, J_k + j, q] (J_k = a_0 + ... + a_{k-1}) for p < P, j < a_k, q < Q in that
order, so X.reshape(-1)[m] is the buffer's value at `concat_index(...)[m]`.
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.rewrites.sequences.sequence_emit import Emit
from ov_loops.frontends.onnx.rewrites.sequences.sequence_ops import Sequence, element_shape


def concat_index(e: Emit, lengths: str, pre: str, post: str, offsets: str) -> str:
    """The buffer position of each value of the concatenation, in its order:

    for p < P, for j < A (in piece k = piece_of(j), at j' = j - J_k), for q < Q:
        offsets[k] + p * a_k * Q + j' * Q + q
    """
    count_p, count_q = e.product(pre), e.product(post)
    ends = e.op("CumSum", [lengths, e.const(0)])
    j = e.arange(e.total(lengths))
    later = e.op("Greater", [e.unsqueeze(ends, [0]), e.unsqueeze(j, [1])])
    piece = e.op("Sub", [e.op("Size", [lengths]), e.count_along_last(later)])
    first = e.op("Sub", [ends, lengths])
    within = e.op("Sub", [j, e.op("Gather", [first, piece], axis=0)])
    base = e.op("Add", [e.op("Gather", [offsets, piece], axis=0), e.op("Mul", [within, count_q])])
    stride = e.op("Mul", [e.op("Gather", [lengths, piece], axis=0), count_q])
    index = e.op("Add", [
        e.op("Mul", [e.unsqueeze(e.arange(count_p), [1, 2]), e.unsqueeze(stride, [0, 2])]),
        e.op("Add", [e.unsqueeze(base, [0, 2]), e.unsqueeze(e.arange(count_q), [0, 1])]),
    ])  # fmt: skip
    return e.flat(index)


def _axis(e: Emit, axis: int, rank: int | None, rank_tensor) -> str:
    """`axis` normalised against `rank` (rank_tensor() computes it when unknown), as a 1-D of
    one element."""
    if axis >= 0 or rank is not None:
        return e.const([axis + rank if axis < 0 else axis])
    return e.op("Add", [e.const([axis]), rank_tensor()])


def concat_from_sequence(e: Emit, seq: Sequence, axis: int, new_axis: int) -> str:
    """ConcatFromSequence(seq, axis, new_axis=0):
    `np.concatenate(seq, axis) if not new_axis else np.stack(seq, axis)` (the elements agree
    on every other axis; a negative axis counts from the back of the result's rank). The
    elements' rank must be known."""
    shape = element_shape(e, seq, e.const([0]))
    rank = seq.rank if isinstance(seq.rank, int) else 0  # EMPTY: no element to read
    known = axis + rank + new_axis if axis < 0 else axis
    at = e.const([known])
    pre = e.slice(shape, e.const([0]), at)
    post = e.slice(shape, at if new_axis else e.plus(at, 1))
    if new_axis:
        lengths = e.op("Expand", [e.const(1), e.op("Shape", [seq.sizes])])
    else:
        shape_starts = e.op("CumSum", [seq.ranks, e.const(0)], exclusive=1)
        lengths = e.op("Gather", [seq.shapes, e.op("Add", [shape_starts, at])], axis=0)
    result_shape = e.concat([pre, e.vector(e.total(lengths)), post])
    values = seq.buffer
    if known != 0:
        index = concat_index(e, lengths, pre, post, e.starts(seq.sizes))
        values = e.op("Gather", [seq.buffer, index], axis=0)
    return _reshaped(e, values, result_shape, _result_dims(seq.dims, known, new_axis))


def _result_dims(dims, axis: int, new_axis: int) -> list | None:
    """The dims known of the result of concatenating elements of `dims` along `axis`: theirs,
    but for the axis (its length the total)."""
    if not isinstance(dims, tuple):
        return None
    return [*dims[:axis], None, *dims[axis + 1 - new_axis :]]


def _reshaped(e: Emit, values: str, shape: str, dims: list | None) -> str:
    """`values` reshaped to `shape` (1-D), whose entries `dims` knows before run time:

        target = [dims[i] if known else shape[i] for i]    # the same values (every element
        result = reshape(values, target)                    # has those dims; none at zero runs)
        return broadcast(result, [dims[i] if known else 1 for i])   # a no-op copy

    OpenVINO cannot bound `shape` (read from a loop's output), so the Reshape's dims are all
    dynamic; the Broadcast to a constant makes the known ones static."""
    if dims is None or all(dim is None for dim in dims):
        return e.reshape(values, shape)
    target = e.concat([
        e.const([dim]) if dim is not None else e.slice(shape, e.const([i]), e.const([i + 1]))
        for i, dim in enumerate(dims)
    ])  # fmt: skip
    ones = [1 if dim is None else dim for dim in dims]
    return e.op("Expand", [e.reshape(values, target), e.const(ones)])


def _split_lengths(e: Emit, length: str, split: str | None, split_rank: int | None) -> str:
    """The pieces' lengths along the axis (of `length`, 1-D of one element): ones without a
    split; chunks of a scalar split, the last one shorter; a 1-D split as given."""
    if split is None:
        return e.op("Expand", [e.const(1), length])
    lengths = e.op("Cast", [split], to=schema.TensorProto.INT64)
    if split_rank != 0:
        return e.flat(lengths)
    total = e.scalar(length)
    count = e.op("Div", [e.op("Sub", [e.op("Add", [total, lengths]), e.const(1)]), lengths])
    left = e.op("Sub", [total, e.op("Mul", [e.arange(count), lengths])])
    # min(lengths, left) as a Where: Min takes no int64 before opset 12
    return e.op("Where", [e.op("Less", [left, lengths]), left, lengths])


def split_to_sequence(
    e: Emit, x: str, split: str | None, axis: int, keepdims: int, ranks: tuple, elem_type: int
) -> Sequence:
    """SplitToSequence(x, split=None, axis=0, keepdims=1):
    `pieces = np.split(x, cut points of split, axis)` where split is None (pieces of length 1,
    the axis dropped if not keepdims), a scalar (pieces of that length, the last shorter) or
    1-D (the pieces' lengths). `ranks` are x's and split's ranks, None when unknown."""
    x_rank, split_rank = ranks
    shape = e.op("Shape", [x])
    at = _axis(e, axis, x_rank, lambda: e.rank(x))
    pre, post = e.slice(shape, e.const([0]), at), e.slice(shape, e.plus(at, 1))
    lengths = _split_lengths(e, e.at(shape, at), split, split_rank)
    sizes = e.op("Mul", [lengths, e.op("Mul", [e.product(pre), e.product(post)])])
    index = concat_index(e, lengths, pre, post, e.starts(sizes))
    values = e.flat(x)
    buffer = e.op("ScatterElements", [values, index, values], axis=0)
    count = e.op("Shape", [lengths])
    drops_axis = split is None and keepdims == 0
    if drops_axis:
        rows = e.repeat(e.concat([pre, post]), count)
    else:
        # x's shape with the axis's length replaced: not a Concat of [n, 0] pieces (for an
        # empty `pre` or `post`), which OpenVINO's bound evaluation dies on (SIGFPE).
        rows = e.op("ScatterElements", [e.repeat(shape, count), e.repeat(at, count),
                                        e.unsqueeze(lengths, [1])], axis=1)  # fmt: skip
    element_rank = e.op("Sub", [e.rank(x), e.const([int(drops_axis)])])
    known = x_rank - int(drops_axis) if x_rank is not None else None
    ranks_out = e.op("Expand", [element_rank, count])
    return Sequence(buffer, sizes, ranks_out, e.flat(rows), elem_type, known)
