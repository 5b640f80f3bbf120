"""A Blockwise of a core Op with no batched translation (a Scan, as PyTensor builds when it
vectorises one): a Loop over the flattened batch, the core Op's translation its body.

    Blockwise(core)(*xs), xs[i] of shape batch_i + core_i (the same number of batch axes):
        batch = broadcast(batch_0, batch_1, ...);  P = prod(batch)
        rows_i = reshape(broadcast(xs[i], batch + core_i), [P] + core_i)
        ys = scan(lambda *row: core(*row), sequences=rows, n_steps=P)     # ys[j]: [P] + core
        output j = reshape(ys[j], batch + core shape of ys[j])
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import cast, i64, ov_translate, scan_options
from ov_loops.frontends.theano.scan import scan


def _split_shape(value: ov.Output, batch: int) -> tuple[ov.Output, ov.Output]:
    """`value`'s shape as (its first `batch` sizes, the others)."""
    shape = ops.shape_of(value, ov.Type.i64)
    end = np.iinfo(np.int64).max
    return (
        ops.slice(shape, i64(0), i64(batch), i64(1)).output(0),
        ops.slice(shape, i64(batch), i64(end), i64(1)).output(0),
    )


def looped(op, node, inputs: list[ov.Output]) -> list[ov.Output]:
    """The outputs of the Blockwise `op` at `node` (see the module docstring)."""
    batch = op.batch_ndim(node)
    core_node = op._create_dummy_core_node(node.inputs)
    shapes = [_split_shape(value, batch) for value in inputs]
    batch_shape = shapes[0][0]
    for batch_sizes, _ in shapes[1:]:
        batch_shape = ops.maximum(batch_shape, batch_sizes).output(0)
    count = ops.reduce_prod(batch_shape, i64(0), True)
    rows = [
        ops.reshape(
            ops.broadcast(value, ops.concat([batch_shape, core], 0)),
            ops.concat([count, core], 0),
            False,
        ).output(0)
        for value, (_, core) in zip(inputs, shapes)
    ]

    def body(*row):
        values = ov_translate(op.core_op, core_node, list(row))
        return [cast(v, out.type.dtype) for v, out in zip(values, core_node.outputs)]

    traces, _ = scan(
        body,
        sequences=rows,
        n_steps=ops.squeeze(count, i64(0)).output(0),
        name="pytensor_blockwise",
        options=scan_options(),
    )
    traces = traces if isinstance(traces, list) else [traces]
    return [
        ops.reshape(trace, ops.concat([batch_shape, _split_shape(trace, 1)[1]], 0), False).output(0)
        for trace in traces
    ]
