"""PyTensor's Scan through the Theano frontend's `scan` (one LoopIR builder, two doors): its
outer inputs become scan's arguments, its inner FunctionGraph is translated as `fn`.

PyTensor's Scan (ScanInfo; outer inputs n_steps, sequences, mit-mot buffers, mit-sot and sit-sot
buffers whose first entries are the initial values, untraced sit-sots, nit-sot lengths,
non-sequences):

    outputs_info = [buffer, last value only, per mit-mot; {initial: buffer[:L], taps} per
                    mit-sot (L = -min(taps)); buffer[0] per sit-sot; value, last value only,
                    per untraced sit-sot; None per nit-sot]
    sequences    = [arange(n_steps) if there are mit-mots] + sequences
    fn(i, ...)   = the inner graph, a mit-mot reading buffer[i + t] for t in its input taps
                   and writing buffer[i + t] for t in its output taps (taps from the oldest);
                   until(condition) too for a while scan
    mit-sot / sit-sot output = concat(initial, trace)[-len(buffer):]   (fewer if it stopped)
    nit-sot output           = trace[-length:]
    mit-mot / untraced       = the value after the last step

Sequences arrive already shifted by their taps and reversed for go_backwards (PyTensor builds
those Subtensors outside the Scan); mit-mots are the scans `pytensor.grad` builds.
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
from ov_loops.frontends.theano.arguments import OutputInfo
from ov_loops.frontends.theano.body import until
from ov_loops.frontends.theano.scan import scan

_ZERO = np.int64(0)


def _i64(*values: int) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)


def _first(buffer: ov.Output, count: int) -> ov.Output:
    """buffer[:count]."""
    return ops.slice(buffer, _i64(0), _i64(count), _i64(1), _i64(0)).output(0)


def _last(values: ov.Output, count: ov.Output) -> ov.Output:
    """values[-count:] along axis 0 (all of them when there are fewer)."""
    start = ops.maximum(ops.subtract(ovgraph.length(values, 0), count), ops.constant(_ZERO))
    stop = ops.constant(np.array([np.iinfo(np.int64).max], np.int64))
    return ops.slice(values, ops.unsqueeze(start, _i64(0)), stop, _i64(1), _i64(0)).output(0)


def _outputs_info(op, inputs) -> tuple[list, list[ov.Output]]:
    """scan's outputs_info in its order (mit-mot, mit-sot, sit-sot, untraced sit-sot,
    nit-sot), and the initial values each traced output starts with (mit-sot and sit-sot)."""
    info = op.info
    outputs_info = [OutputInfo(b, [-1], last=True) for b in op.outer_mitmot(inputs)]
    initials = []
    for buffer, taps in zip(op.outer_mitsot(inputs), info.mit_sot_in_slices):
        initial = _first(buffer, -min(taps))
        outputs_info.append({"initial": initial, "taps": list(taps)})
        initials.append(initial)
    for buffer in op.outer_sitsot(inputs):
        initials.append(_first(buffer, 1))
        outputs_info.append(ops.squeeze(initials[-1], _i64(0)).output(0))
    outputs_info += [OutputInfo(v, [-1], last=True) for v in op.outer_untraced_sit_sot(inputs)]
    outputs_info.extend([None] * info.n_nit_sot)
    return outputs_info, initials


def _read_mit_mots(op, step: ov.Output, buffers: list[ov.Output]) -> list[ov.Output]:
    """Each mit-mot's inputs of this step: buffer[step + t] for its input taps."""
    taps = op.info.normalized_mit_mot_in_slices
    return [
        ops.gather(buffer, ops.add(step, ops.constant(np.int64(tap))), _ZERO).output(0)
        for buffer, buffer_taps in zip(buffers, taps)
        for tap in buffer_taps
    ]


def _write_mit_mots(op, step: ov.Output, buffers, outputs) -> list[ov.Output]:
    """Each mit-mot's buffer after this step: its outputs written at step + t for its taps."""
    written = []
    groups = op.inner_mitmot_outs_grouped(outputs)
    for buffer, values, taps in zip(buffers, groups, op.info.normalized_mit_mot_out_slices):
        positions = ops.add(step, _i64(*taps))
        rows = ops.concat([ops.unsqueeze(v, _i64(0)) for v in values], 0)
        written.append(ops.scatter_update(buffer, positions, rows, _ZERO).output(0))
    return written


def _step(op):
    """scan's `fn`: the inner graph on the body's values, its outputs in scan's order."""
    info = op.info

    def fn(*arguments):
        arguments = list(arguments)
        step = arguments.pop(0) if info.n_mit_mot else None
        seqs = arguments[: info.n_seqs]
        buffers = arguments[info.n_seqs : info.n_seqs + info.n_mit_mot]
        others = arguments[info.n_seqs + info.n_mit_mot :]
        inner = seqs + _read_mit_mots(op, step, buffers) + others
        outputs = translate_graph(op.fgraph, inner)
        ordered = _write_mit_mots(op, step, buffers, outputs) if info.n_mit_mot else []
        ordered += op.inner_mitsot_outs(outputs) + op.inner_sitsot_outs(outputs)
        ordered += op.inner_untraced_sit_sot_outs(outputs) + op.inner_nitsot_outs(outputs)
        return (ordered, until(outputs[-1])) if info.as_while else ordered

    return fn


def _rewrite_inner(op) -> None:
    """The inner graph rewritten by the Scan's mode without what cannot be translated."""
    get_mode(op.mode).excluding(*INCOMPATIBLE_REWRITES).optimizer(op.fgraph)


def _sequences(op, inputs) -> list[ov.Output]:
    """The outer sequences, after the step numbers when mit-mots index their buffers by them."""
    sequences = op.outer_seqs(inputs)
    if op.info.n_mit_mot:
        steps = ops.range(ops.constant(_ZERO), inputs[0], ops.constant(np.int64(1)), ov.Type.i64)
        sequences = [steps.output(0), *sequences]
    return sequences


@ov_translate.register(Scan)
def _scan(op, node, inputs):
    info = op.info
    _rewrite_inner(op)
    outputs_info, initials = _outputs_info(op, inputs)
    traces, _ = scan(
        _step(op),
        sequences=_sequences(op, inputs),
        outputs_info=outputs_info,
        non_sequences=op.outer_non_seqs(inputs),
        n_steps=inputs[0],
        name=op.name or "pytensor_scan",
    )
    traces = traces if isinstance(traces, list) else [traces]
    mit_mots, traces = traces[: info.n_mit_mot], traces[info.n_mit_mot :]
    traced, untraced = len(initials), info.n_untraced_sit_sot
    buffers = op.outer_mitsot(inputs) + op.outer_sitsot(inputs)
    results = mit_mots + [
        _last(ops.concat([initial, trace], 0).output(0), ovgraph.length(buffer, 0).output(0))
        for initial, trace, buffer in zip(initials, traces, buffers)
    ]
    lengths = op.outer_nitsot(inputs)
    results += [_last(t, n) for t, n in zip(traces[traced + untraced :], lengths)]
    return results + traces[traced : traced + untraced]


@inner_ops.register(Scan)
def _scan_ops(op):
    return [node.op for node in op.fgraph.toposort()]
