"""Pass: invariant inputs fed by outer Constants become Constants in the body."""

from __future__ import annotations

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.shared_edits import inline_constant


class InlineConstantCaptures(LoopPass):
    """Replace each body Parameter fed by an outer Constant with a copy of that Constant::

        for input in invariant_inputs:
            if outer[input] is Constant:  body.uses(parameter) <- copy(outer[input]); drop input

    The CPU plugin pre-packs constant MatMul weights; as invariant inputs they would not be.
    The data is copied: a Constant sharing the outer one's buffer dangles once the outer graph
    drops it (seen as wrong results). A nested Loop that reads the Parameter gets a Constant of
    its own: the CPU plugin (2026.4.1) dies with SIGSEGV in compile_model when one boolean
    Constant feeds both a Loop's invariant input that the Loop's execution condition reads and
    another operation.
    """

    name = "inline-constant-captures"

    def run(self, loop: LoopIR) -> LoopIR:
        parameters = loop.body.get_parameters()
        inlined = set()
        for entry in loop.spec.invariant_inputs:
            value = loop.outer[entry.external_port]
            if ovgraph.is_constant(value):
                inline_constant(parameters[entry.body_parameter], value)
                inlined.add(entry.body_parameter)
        return loop.without_parameters(inlined) if inlined else loop
