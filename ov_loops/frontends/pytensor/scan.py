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

import dataclasses

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.compile.mode import get_mode
from pytensor.graph.basic import Constant
from pytensor.scan.op import Scan
from pytensor.tensor.subtensor import Subtensor

from ov_loops import ovgraph
from ov_loops.convert_options import ConvertOptions
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


def _stored(
    written: ov.Output, length, n_steps: ov.Output, steps: ov.Output, initial=_ZERO, dropped=_ZERO
) -> ov.Output:
    """A mit-sot's, sit-sot's or nit-sot's outer output, a buffer of `length` rows, as
    Scan.perform leaves it (its step 6) after `steps` of `n_steps` steps (fewer when a while
    scan stops, or a truncated gradient's buffer is longer), `written` the initial rows and
    the steps' values, but for the first `dropped` of them::

        rows = initial + trace                       # W = len(rows) = len(initial) + steps
        W >= length: rows[-length:]
        W <  length: (rows + zeros(length - W))[: length - (n_steps - steps)]
    """
    # W from the step count, not the shape of the Loop's output: the CPU plugin (2026.4.1) gives
    # the shape of a partially unrolled Loop's stacked output as 0 rows here.
    length, whole = cast(length, np.int64), ops.add(steps, initial)
    pad = ops.maximum(ops.subtract(length, whole), ops.constant(_ZERO))
    row_shape = mitmot.rows(ops.shape_of(written, ov.Type.i64).output(0), 1, _END)
    zeros = ops.broadcast(
        ops.constant(np.zeros((), written.get_element_type().to_dtype())),
        ops.concat([ops.unsqueeze(pad, i64(0)), row_shape], 0),
    )
    padded = ops.concat([written, zeros], 0).output(0)
    start = ops.maximum(ops.subtract(ops.subtract(whole, length), dropped), ops.constant(_ZERO))
    cut = ops.subtract(ops.subtract(length, ops.subtract(n_steps, steps)), dropped)
    stop = ops.select(ops.greater(pad, ops.constant(_ZERO)), cut, ops.constant(np.int64(_END)))
    bounds = [ops.unsqueeze(bound, i64(0)) for bound in (start, stop)]
    return ops.slice(padded, *bounds, i64(1), i64(0)).output(0)


def _read_last_only(variable) -> bool:
    """Whether the graph reads `variable` only as variable[-1] (an integer index, not a slice)."""
    readers = clients(variable)
    return bool(readers) and all(
        index == 0
        and isinstance(node.op, Subtensor)
        and not isinstance(node.op.idx_list[0], slice)
        and isinstance(node.inputs[1], Constant)
        and int(node.inputs[1].data) == -1
        for node, index in readers
    )


def _traced_output(
    initial: ov.Output, trace: ov.Output, buffer: ov.Output, last: bool, n_steps, steps
) -> ov.Output:
    """A mit-sot's or sit-sot's outer output (`_stored`) after `steps` steps; when only its last
    value is read (`_read_last_only`, not in a while scan), `trace` is that value and stands for
    the rows."""
    length, count = ovgraph.length(buffer, 0).output(0), ovgraph.length(initial, 0).output(0)
    if last:
        row = ops.unsqueeze(trace, i64(0)).output(0)
        return _stored(row, length, n_steps, steps, count, dropped=steps)
    rows = ops.concat([initial, trace], 0).output(0)
    return _stored(rows, length, n_steps, steps, count)


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


def _step(op, mitmots):
    """scan's `fn`: the inner graph on the body's values, its outputs in scan's order."""
    info = op.info

    def fn(*arguments):
        rows, arguments = mitmot.split(mitmots, list(arguments), lambda m: len(m.sequence_taps))
        seqs, arguments = arguments[: info.n_seqs], arguments[info.n_seqs :]
        carried, others = mitmot.split(mitmots, arguments, lambda m: m.width)
        windows = [mitmot.window(*args) for args in zip(mitmots, rows, carried)]
        reads = [w[t] for m, w in zip(mitmots, windows) for t in m.in_taps]
        outputs = translate_graph(op.fgraph, seqs + reads + others)
        groups = op.inner_mitmot_outs_grouped(outputs)
        steps = [mitmot.written(*args) for args in zip(mitmots, windows, groups)]
        ordered = [carry for carries, _ in steps for carry in carries]
        ordered += op.inner_mitsot_outs(outputs) + op.inner_sitsot_outs(outputs)
        ordered += op.inner_untraced_sit_sot_outs(outputs) + op.inner_nitsot_outs(outputs)
        ordered += [emitted for _, emitted in steps]
        return (ordered, until(outputs[-1])) if info.as_while else ordered

    return fn


def _rewrite_inner(op) -> None:
    """The inner graph rewritten by the Scan's mode without what cannot be translated."""
    get_mode(op.mode).excluding(*INCOMPATIBLE_REWRITES).optimizer(op.fgraph)


def _options(op) -> ConvertOptions:
    """The scan's lowering options (`scan_options`), at most level default for the scans of a
    truncated gradient: at max, partial unrolling of such a scan (its sequences longer than its
    trip count) gives values of uninitialised memory on OpenVINO's CPU plugin (2026.4.1;
    not isolated yet)."""
    options = scan_options()
    if op.truncate_gradient != -1 and options.optimize == "max":
        return dataclasses.replace(options, optimize="default")
    return options


@ov_translate.register(Scan)
def _scan(op, node, inputs):
    info = op.info
    _rewrite_inner(op)
    mitmots = mitmot.mit_mots(op)
    buffers = op.outer_mitmot(inputs)
    last_only = [
        not info.as_while and _read_last_only(v) for v in op.outer_sitsot_outs(node.outputs)
    ]
    outputs_info, initials = _outputs_info(op, inputs, mitmots, last_only)
    traces, _ = scan(
        _step(op, mitmots),
        sequences=mitmot.sequences(mitmots, buffers) + op.outer_seqs(inputs),
        outputs_info=outputs_info,
        non_sequences=op.outer_non_seqs(inputs),
        n_steps=inputs[0],
        name=op.name or "pytensor_scan",
        options=_options(op),
    )
    traces = traces if isinstance(traces, list) else [traces]
    carried, traces = mitmot.split(mitmots, traces, lambda m: m.width)
    emitted, traces = traces[len(traces) - info.n_mit_mot :], traces[: len(traces) - info.n_mit_mot]
    n_steps = ops.convert(inputs[0], ov.Type.i64).output(0)

    def _steps(trace: ov.Output) -> ov.Output:
        """The steps run: n_steps, or a while scan's trace's length."""
        return ovgraph.length(trace, 0).output(0) if info.as_while else n_steps

    results = [
        mitmot.final_buffer(*args, n_steps)
        for args in zip(buffers, (m.width for m in mitmots), emitted, carried)
    ]
    traced, untraced = len(initials), info.n_untraced_sit_sot
    results += [
        _traced_output(*args)
        for args in zip(
            initials,
            traces,
            op.outer_mitsot(inputs) + op.outer_sitsot(inputs),
            [False] * info.n_mit_sot + last_only,
            [n_steps] * traced,
            [_steps(t) for t in traces[:traced]],
        )
    ]
    lengths = op.outer_nitsot(inputs)
    results += [
        _stored(t, n, n_steps, _steps(t)) for t, n in zip(traces[traced + untraced :], lengths)
    ]
    return results + traces[traced : traced + untraced]


@inner_ops.register(Scan)
def _scan_ops(op):
    return [node.op for node in op.fgraph.toposort()]
