"""Pass: every back edge that is not an unchanged value carries a computed copy."""

from __future__ import annotations

import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class CopyBackEdges(LoopPass):
    """Replace each back edge's Result by one of a computed copy (`ovgraph.copy`), unless the
    body returns the Parameter itself (an unchanged value)::

        for merged in merged_inputs:
            if results[merged.body_result] is not parameters[merged.body_parameter]:
                results[merged.body_result] = Result(copy(value))

    See `ovgraph.copy` for the CPU-plugin fault this avoids. Last-value outputs reading the same
    Result read the copy (the same value).
    """

    name = "copy-back-edges"

    def run(self, loop: LoopIR) -> LoopIR:
        parameters = loop.body.get_parameters()
        results = list(loop.body.get_results())
        copied = False
        for merged in loop.spec.merged_inputs:
            value = results[merged.body_result].input_value(0)
            if value.get_node() != parameters[merged.body_parameter]:
                results[merged.body_result] = ops.result(ovgraph.copy(value))
                copied = True
        return loop.with_body(results, list(parameters)) if copied else loop
