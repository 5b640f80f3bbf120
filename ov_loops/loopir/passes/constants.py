"""Pass: invariant inputs fed by outer Constants become Constants in the body."""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


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


def inline_constant(parameter: ov.Node, value: ov.Output) -> ov.Output | None:
    """Feed every reader of `parameter` a copy of the Constant `value` (one per nested Loop);
    the copy the other readers share, if any."""

    def copy() -> ov.Node:
        return ov.op.Constant(value.get_node().get_tensor_view(), shared_memory=False)

    shared = None
    for target in parameter.output(0).get_target_inputs():
        if target.get_node().get_type_name() == "Loop":
            constant = copy()
        else:
            shared = shared or copy()
            constant = shared
        target.replace_source_output(constant.output(0))
    return None if shared is None else shared.output(0)
