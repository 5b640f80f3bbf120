"""Draws that pick entries of an array in a random order: permutation and choice without
replacement, by sorting random keys (TopK), batched over the draw's batch shape.

    permutation(x):  n = x (a scalar: a permutation of arange(n)), else x's first core axis
        order = the positions of keys u_1..u_n sorted (u: uniforms of shape batch + [n])
        = order, or x[..., order, ...] along that axis
    choice(a, [p], core_shape) without replacement, m = prod(core_shape) picks:
        keys = log(p_i) - log(-log(u_i)) (Gumbel keys), or u_i without p
        picked = the positions of the m largest keys, largest first
        = picked (a scalar a: of arange(a)), or a[..., picked, ...], reshaped to
          batch + core_shape + a's axes after the first

The m largest Gumbel keys are a draw of m entries without replacement, the first with
probability p_i, each next among those left in proportion to p (Gumbel's top-k): the order
numpy's `choice(replace=False, p=p)` draws in. Entries with p = 0 are picked last (numpy
refuses more picks than entries with p > 0). The keys are f32: two entries tie with
probability about 2**-24 each (the earlier is picked first).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import cast, i64
from ov_loops.frontends.pytensor.draws import Draw


def _scalar(value: int) -> ov.Output:
    return ops.constant(np.int64(value)).output(0)


def _ordered(keys: ov.Output, count: ov.Output) -> ov.Output:
    """The positions of the `count` largest keys along the last axis, largest first."""
    top = ops.topk(keys, count, -1, "max", "value", ov.Type.i64, True)
    return top.output(1)


def _core_split(value: ov.Output, core: int, rank: int) -> tuple[ov.Output, ov.Output]:
    """`value`'s (length of its first core axis, or its value if it has none; its shape from
    its first core axis on)."""
    if core == 0:
        first = ops.gather(ops.reshape(value, i64(-1), False), _scalar(0), _scalar(0))
        return cast(first.output(0), np.int64), i64()
    shape = ops.shape_of(value, ov.Type.i64)
    first = ops.gather(shape, _scalar(rank - core), _scalar(0)).output(0)
    return first, ops.slice(shape, i64(rank - core), i64(rank), i64(1)).output(0)


def _pick(d: Draw, items: ov.Output, order: ov.Output) -> ov.Output:
    """items[..., order, ...]: `order` (batch + [k]) indexes the first core axis of `items`
    (its batch axes broadcast to the draw's), or is the draw itself when `items` is a
    scalar count."""
    core = d.node.op.ndims_params[0]
    if core == 0:
        return order
    rank = d.node.inputs[2].type.ndim
    _, core_shape = _core_split(items, core, rank)
    spread = ops.broadcast(items, ops.concat([d.shape, core_shape], 0))
    batch = d.node.outputs[1].type.ndim - d.node.op.ndim_supp
    return ops.gather(spread, order, _scalar(batch), batch).output(0)


def _first_row(core_shape: ov.Output, rank: int) -> ov.Output:
    """The core shape, of a batch of (equal) core shapes if it has more than one axis."""
    if rank == 1:
        return core_shape
    length = ops.gather(ops.shape_of(core_shape, ov.Type.i64), i64(-1), _scalar(0))
    rows = ops.reshape(core_shape, ops.concat([i64(-1), length], 0), False)
    return ops.gather(rows, _scalar(0), _scalar(0)).output(0)


def permutation(d: Draw) -> ov.Output:
    (items,) = d.params
    core = d.node.op.ndims_params[0]
    count, _ = _core_split(items, core, d.node.inputs[2].type.ndim)
    keys = d.unit(ops.concat([d.shape, ops.unsqueeze(count, _scalar(0))], 0).output(0))
    return _pick(d, items, _ordered(keys, count))


def choice_without_replacement(d: Draw) -> ov.Output:
    items, *weights, core_shape = d.params
    core_shape = _first_row(cast(core_shape, np.int64), d.node.inputs[-1].type.ndim)
    core = d.node.op.ndims_params[0]
    count, item_shape = _core_split(items, core, d.node.inputs[2].type.ndim)
    units = d.unit(ops.concat([d.shape, ops.unsqueeze(count, _scalar(0))], 0).output(0))
    keys = units
    if weights:
        gumbel = ops.negative(ops.log(ops.negative(ops.log(units))))
        keys = ops.add(ops.log(cast(weights[0], d.element.to_dtype())), gumbel).output(0)
    picks = ops.reduce_prod(core_shape, _scalar(0), False).output(0)
    order = _ordered(keys, picks)
    picked = _pick(d, items, order)
    rest = ops.slice(item_shape, i64(1), i64(np.iinfo(np.int64).max), i64(1))
    shape = ops.concat([d.shape, core_shape, rest], 0)
    return ops.reshape(picked, shape, False).output(0)
