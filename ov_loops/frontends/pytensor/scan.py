"""PyTensor's Scan through the Theano frontend's `scan` (one LoopIR builder, two doors): its
outer inputs become scan's arguments, its inner FunctionGraph is translated as `fn`.

PyTensor's Scan (ScanInfo; outer inputs n_steps, sequences, mit-sot and sit-sot buffers whose
first entries are the initial values, untraced sit-sots, nit-sot lengths, non-sequences):

    outputs_info = [{initial: buffer[:L], taps} per mit-sot (L = -min(taps)),
                    buffer[0] per sit-sot, value per untraced sit-sot, None per nit-sot]
    traces = scan(fn=inner graph, sequences, outputs_info, non_sequences, n_steps)
             (fn returns until(condition) too for a while scan)
    mit-sot / sit-sot output = concat(initial, trace)[-len(buffer):]   (fewer if it stopped)
    nit-sot output           = trace[-length:]
    untraced sit-sot output  = concat(initial, trace)[-1]

Sequences arrive already shifted by their taps and reversed for go_backwards (PyTensor builds
those Subtensors outside the Scan). Mit-mot outputs (the scans of gradients) are not translated.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.compile.mode import get_mode
from pytensor.scan.op import Scan

from ov_loops import ovgraph
from ov_loops.frontends.pytensor.dispatch import (
    INCOMPATIBLE_REWRITES,
    inner_ops,
    ov_translate,
    translate_graph,
)
from ov_loops.frontends.theano.body import until
from ov_loops.frontends.theano.scan import scan

_ZERO = np.int64(0)


def _i64(value: int) -> ov.Output:
    return ops.constant(np.array([value], np.int64)).output(0)


def _first(buffer: ov.Output, count: int) -> ov.Output:
    """buffer[:count]."""
    return ops.slice(buffer, _i64(0), _i64(count), _i64(1), _i64(0)).output(0)


def _last(values: ov.Output, count: ov.Output) -> ov.Output:
    """values[-count:] along axis 0 (all of them when there are fewer)."""
    start = ops.maximum(ops.subtract(ovgraph.length(values, 0), count), ops.constant(_ZERO))
    stop = ops.constant(np.array([np.iinfo(np.int64).max], np.int64))
    return ops.slice(values, ops.unsqueeze(start, _i64(0)), stop, _i64(1), _i64(0)).output(0)


def _outputs_info(op, inputs) -> tuple[list, list[ov.Output]]:
    """scan's outputs_info in its order (mit-sot, sit-sot, untraced sit-sot, nit-sot), and the
    initial values each traced output starts with (mit-sot and sit-sot)."""
    info = op.info
    outputs_info, initials = [], []
    for buffer, taps in zip(op.outer_mitsot(inputs), info.mit_sot_in_slices):
        initial = _first(buffer, -min(taps))
        outputs_info.append({"initial": initial, "taps": list(taps)})
        initials.append(initial)
    for buffer in op.outer_sitsot(inputs):
        initials.append(_first(buffer, 1))
        outputs_info.append(ops.squeeze(initials[-1], _i64(0)).output(0))
    outputs_info.extend(op.outer_untraced_sit_sot(inputs))
    outputs_info.extend([None] * info.n_nit_sot)
    return outputs_info, initials


def _step(op):
    """scan's `fn`: the inner graph on the body's values, its outputs in scan's order."""
    info = op.info

    def fn(*arguments):
        outputs = translate_graph(op.fgraph, list(arguments))
        traced = op.inner_mitsot_outs(outputs) + op.inner_sitsot_outs(outputs)
        ordered = traced + op.inner_untraced_sit_sot_outs(outputs) + op.inner_nitsot_outs(outputs)
        return (ordered, until(outputs[-1])) if info.as_while else ordered

    return fn


def _rewrite_inner(op) -> None:
    """The inner graph rewritten by the Scan's mode without what cannot be translated."""
    get_mode(op.mode).excluding(*INCOMPATIBLE_REWRITES).optimizer(op.fgraph)


@ov_translate.register(Scan)
def _scan(op, node, inputs):
    info = op.info
    if info.n_mit_mot:
        raise NotImplementedError("mit-mot outputs (gradient scans) are not translated yet")
    _rewrite_inner(op)
    outputs_info, initials = _outputs_info(op, inputs)
    traces, _ = scan(
        _step(op),
        sequences=op.outer_seqs(inputs),
        outputs_info=outputs_info,
        non_sequences=op.outer_non_seqs(inputs),
        n_steps=inputs[0],
        name=op.name or "pytensor_scan",
    )
    traces = traces if isinstance(traces, list) else [traces]
    traced = len(initials)
    untraced = info.n_untraced_sit_sot
    buffers = op.outer_mitsot(inputs) + op.outer_sitsot(inputs)
    results = [
        _last(ops.concat([initial, trace], 0).output(0), ovgraph.length(buffer, 0))
        for initial, trace, buffer in zip(initials, traces, buffers)
    ]
    nitsot = traces[traced + untraced :]
    results += [_last(t, n) for t, n in zip(nitsot, op.outer_nitsot(inputs))]
    for value, trace in zip(op.outer_untraced_sit_sot(inputs), traces[traced : traced + untraced]):
        whole = ops.concat([ops.unsqueeze(value, _i64(0)), trace], 0)
        results.append(ops.gather(whole, ops.constant(np.int64(-1)), _ZERO).output(0))
    return results


@inner_ops.register(Scan)
def _scan_ops(op):
    return [node.op for node in op.fgraph.toposort()]
