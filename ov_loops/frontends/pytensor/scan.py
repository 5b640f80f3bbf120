"""PyTensor's Scan through the Theano frontend's `scan` (one LoopIR builder, two doors): its
outer inputs become scan's arguments, its inner FunctionGraph is translated as `fn`.

PyTensor's Scan (ScanInfo; outer inputs n_steps, sequences, mit-mot buffers, mit-sot and sit-sot
buffers whose first entries are the initial values, untraced sit-sots, nit-sot lengths,
non-sequences):

    outputs_info = [the carried rows of each mit-mot (mitmot.py), sit-sots whose last value
                    only is kept; {initial: buffer[:L], taps} per mit-sot (L = -min(taps));
                    buffer[0] per sit-sot; value, last value only, per untraced sit-sot;
                    None per nit-sot; None per mit-mot (its emitted rows)]
    sequences    = [the mit-mots' rows read before they are written (mitmot.py)] + sequences
    fn(...)      = the inner graph, on the mit-mots' windows of rows; until(condition) too
                   for a while scan
    mit-sot / sit-sot output = concat(initial, trace)[-len(buffer):]   (fewer if it stopped)
    nit-sot output           = trace[-length:]
    mit-mot output           = concat(emitted rows, final carried rows, buffer[n_steps + width:])
    untraced output          = the value after the last step

Sequences arrive already shifted by their taps and reversed for go_backwards (PyTensor builds
those Subtensors outside the Scan); mit-mots are the scans `pytensor.grad` builds.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.compile.mode import get_mode
from pytensor.graph.basic import Constant
from pytensor.scan.op import Scan
from pytensor.tensor.subtensor import Subtensor

from ov_loops import ovgraph
from ov_loops.frontends.pytensor import mitmot
from ov_loops.frontends.pytensor.dispatch import (
    INCOMPATIBLE_REWRITES,
    cast,
    clients,
    i64,
    inner_ops,
    ov_translate,
    scan_options,
    translate_graph,
)
from ov_loops.frontends.theano.arguments import OutputInfo
from ov_loops.frontends.theano.body import until
from ov_loops.frontends.theano.scan import scan

_ZERO = np.int64(0)
_END = np.iinfo(np.int64).max


def _last(values: ov.Output, count: ov.Output) -> ov.Output:
    """values[-count:] along axis 0 (all of them when there are fewer; count of any int type)."""
    length = ovgraph.length(values, 0)
    start = ops.maximum(ops.subtract(length, cast(count, np.int64)), ops.constant(_ZERO))
    stop = ops.constant(np.array([_END], np.int64))
    return ops.slice(values, ops.unsqueeze(start, i64(0)), stop, i64(1), i64(0)).output(0)


def _stored(written: ov.Output, length, whole: ov.Output, dropped=_ZERO) -> ov.Output:
    """A mit-sot's, sit-sot's or nit-sot's outer output after all n_steps steps, a buffer of
    `length` rows as Scan.perform leaves it (its step 6), `written` the initial rows and the
    steps' values but for the first `dropped` of them::

        rows = initial + trace                       # W = len(rows) = `whole`
        W >= length: rows[-length:]
        W <  length: rows + zeros(length - W)        # a truncated gradient's longer buffer

    W comes from the step count, not from the shape of the Loop's output: the CPU plugin
    (2026.4.1) gives a partially unrolled Loop's stacked output 0 rows there. A while scan's
    buffer holds n_steps + len(initial) rows and PyTensor cuts what it did not run, which
    leaves the rows: `_last`."""
    length = cast(length, np.int64)
    pad = ops.maximum(ops.subtract(length, whole), ops.constant(_ZERO))
    rank = written.get_partial_shape().rank.get_length()
    after = ops.concat([ops.unsqueeze(pad, i64(0)), i64(*[0] * (rank - 1))], 0)
    padded = ops.pad(written, i64(*[0] * rank), after, "constant").output(0)
    start = ops.maximum(ops.subtract(ops.subtract(whole, length), dropped), ops.constant(_ZERO))
    stop = ops.constant(np.array([_END], np.int64))
    return ops.slice(padded, ops.unsqueeze(start, i64(0)), stop, i64(1), i64(0)).output(0)


def _read_last_only(variable, buffer) -> bool:
    """Whether the graph reads `variable` (a sit-sot's output, as long as its outer `buffer`)
    only as its last row: variable[-1], or variable[0] of a buffer of one row (PyTensor's
    scan_save_mem keeps one row when only the last is read, and indexes it so)."""
    last = {-1, 0} if buffer.type.shape[0] == 1 else {-1}
    readers = clients(variable)
    return bool(readers) and all(
        index == 0
        and isinstance(node.op, Subtensor)
        and not isinstance(node.op.idx_list[0], slice)
        and isinstance(node.inputs[1], Constant)
        and int(node.inputs[1].data) in last
        for node, index in readers
    )


def _traced_output(
    initial: ov.Output, trace: ov.Output, buffer: ov.Output, last: bool, n_steps, as_while: bool
) -> ov.Output:
    """A mit-sot's or sit-sot's outer output (`_stored`, `_last` for a while scan); when only its
    last value is read (`_read_last_only`, not in a while scan), `trace` is that value and
    stands for the rows."""
    length = ovgraph.length(buffer, 0).output(0)
    whole = ops.add(n_steps, ovgraph.length(initial, 0)).output(0)
    if last:
        row = ops.unsqueeze(trace, i64(0)).output(0)
        return _stored(row, length, whole, dropped=n_steps)
    rows = ops.concat([initial, trace], 0).output(0)
    return _last(rows, length) if as_while else _stored(rows, length, whole)


def _outputs_info(op, inputs, mitmots, last_only) -> tuple[list, list[ov.Output]]:
    """scan's outputs_info in its order (see the module docstring), and the initial values
    each traced output starts with (mit-sot and sit-sot); a sit-sot of `last_only` keeps
    only its last value."""
    info = op.info
    outputs_info = mitmot.carries(mitmots, op.outer_mitmot(inputs))
    initials = []
    for buffer, taps in zip(op.outer_mitsot(inputs), info.mit_sot_in_slices):
        initial = mitmot.rows(buffer, 0, -min(taps))
        outputs_info.append({"initial": initial, "taps": list(taps)})
        initials.append(initial)
    for buffer, last in zip(op.outer_sitsot(inputs), last_only):
        initials.append(mitmot.rows(buffer, 0, 1))
        initial = ops.squeeze(initials[-1], i64(0)).output(0)
        outputs_info.append(OutputInfo(initial, [-1], last=True) if last else initial)
    outputs_info += [OutputInfo(v, [-1], last=True) for v in op.outer_untraced_sit_sot(inputs)]
    outputs_info.extend([None] * (info.n_nit_sot + info.n_mit_mot))
    return outputs_info, initials


def _step(op, inner, mitmots):
    """scan's `fn`: the inner graph `inner` (the Scan's, rewritten) on the body's values, its
    outputs in scan's order."""
    info = op.info

    def fn(*arguments):
        rows, arguments = mitmot.split(mitmots, list(arguments), lambda m: len(m.sequence_taps))
        seqs, arguments = arguments[: info.n_seqs], arguments[info.n_seqs :]
        carried, others = mitmot.split(mitmots, arguments, lambda m: m.width)
        windows = [mitmot.window(*args) for args in zip(mitmots, rows, carried)]
        reads = [w[t] for m, w in zip(mitmots, windows) for t in m.in_taps]
        outputs = translate_graph(inner, seqs + reads + others)
        groups = op.inner_mitmot_outs_grouped(outputs)
        steps = [mitmot.written(*args) for args in zip(mitmots, windows, groups)]
        ordered = [carry for carries, _ in steps for carry in carries]
        ordered += op.inner_mitsot_outs(outputs) + op.inner_sitsot_outs(outputs)
        ordered += op.inner_untraced_sit_sot_outs(outputs) + op.inner_nitsot_outs(outputs)
        ordered += [emitted for _, emitted in steps]
        return (ordered, until(outputs[-1])) if info.as_while else ordered

    return fn


def _rewrite_inner(op):
    """A copy of the inner graph rewritten by the Scan's mode without what cannot be
    translated (the Scan's own graph stays as it is: other functions built from the same Scan
    read it, and PyTensor's own modes rewrite copies too)."""
    inner = op.fgraph.clone()
    get_mode(op.mode).excluding(*INCOMPATIBLE_REWRITES).optimizer(inner)
    return inner


@ov_translate.register(Scan)
def _scan(op, node, inputs):
    info = op.info
    inner = _rewrite_inner(op)
    mitmots = mitmot.mit_mots(op)
    buffers = op.outer_mitmot(inputs)
    last_only = [
        not info.as_while and _read_last_only(v, buffer)
        for v, buffer in zip(op.outer_sitsot_outs(node.outputs), op.outer_sitsot(node.inputs))
    ]
    outputs_info, initials = _outputs_info(op, inputs, mitmots, last_only)
    traces, _ = scan(
        _step(op, inner, mitmots),
        sequences=mitmot.sequences(mitmots, buffers) + op.outer_seqs(inputs),
        outputs_info=outputs_info,
        non_sequences=op.outer_non_seqs(inputs),
        n_steps=inputs[0],
        name=op.name or "pytensor_scan",
        options=scan_options(),
    )
    traces = traces if isinstance(traces, list) else [traces]
    carried, traces = mitmot.split(mitmots, traces, lambda m: m.width)
    emitted, traces = traces[len(traces) - info.n_mit_mot :], traces[: len(traces) - info.n_mit_mot]
    n_steps = ops.convert(inputs[0], ov.Type.i64).output(0)
    results = [
        mitmot.final_buffer(*args, n_steps)
        for args in zip(buffers, (m.width for m in mitmots), emitted, carried)
    ]
    traced, untraced = len(initials), info.n_untraced_sit_sot
    results += [
        _traced_output(*args, n_steps, info.as_while)
        for args in zip(
            initials,
            traces,
            op.outer_mitsot(inputs) + op.outer_sitsot(inputs),
            [False] * info.n_mit_sot + last_only,
        )
    ]
    lengths = op.outer_nitsot(inputs)
    results += [
        _last(t, n) if info.as_while else _stored(t, n, n_steps)
        for t, n in zip(traces[traced + untraced :], lengths)
    ]
    return results + traces[traced : traced + untraced]


@inner_ops.register(Scan)
def _scan_ops(op):
    return [node.op for node in op.fgraph.toposort()]
