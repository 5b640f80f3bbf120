"""Lowering: the outputs of a loop a pass replaced (`LoopIR.fallback`), taken from the loop it
replaced when the replacement says its computation does not hold::

    outputs = If(outputs[safe_port]) { outputs[0 .. n) }
              else                   { Loop-5 of the replaced loop (on its outer values) }
    (then each result's post-loop steps, on the chosen outputs: they read ports)

The replaced loop's trip count and initial condition are constants
(passes/linear_recurrences.py replaces only such loops); its body is its own copy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR


def fall_back(loop: LoopIR, outputs: list[ov.Output], build_loop: Callable) -> list[ov.Output]:
    """`outputs` (the outputs of `loop` by port, `loop.fallback` set) with those of its
    replaced loop chosen by the safe flag, the flag's port dropped; `build_loop` emits a
    Loop-5 (loop5.py's)."""
    replaced, safe = loop.fallback.loop, outputs[loop.fallback.safe_port]
    chosen = outputs[: len(replaced.spec.outputs())]
    ports = sorted(replaced.outer)
    outer = [replaced.outer[port] for port in ports]
    parameters = ovgraph.parameters_for(outer)
    trip = ops.constant(np.int64(replaced.trip.constant)).output(0)
    start = ops.constant(np.bool_(True)).output(0)
    by_port = {port: p.output(0) for port, p in zip(ports, parameters)}
    looped = build_loop(replaced.spec, replaced.body, trip, start, by_port, replaced.path)
    else_body = ov.Model([ops.result(v) for v in looped], parameters, "looped")
    condition = ops.convert(safe, ov.Type.boolean).output(0)
    return ovgraph.if_outputs(
        condition, (ovgraph.identity_body(chosen), chosen), (else_body, outer)
    )
