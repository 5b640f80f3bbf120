"""Pass (target workaround): the current_iteration Parameter is the body's first Parameter."""

from __future__ import annotations

import dataclasses

from ov_loops.contract import ports
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class IterationParameterFirst(LoopPass):
    """Move the body Parameter that receives the iteration number to index 0::

        order = [current_iteration] + [every other Parameter, in its order]
        every entry's body_parameter follows its Parameter; current_iteration = 0

    OpenVINO (2026.4.1, common transformations, every device):
    `RemoveMultiSubGraphOpDanglingParamsResults` removes body Parameters nothing reads but does
    not move `current_iteration_input_idx` down with them. A Parameter nothing reads placed
    before the iteration's then makes the Loop feed the iteration number to the wrong
    Parameter: compile fails (`vector::_M_range_check`) or, silently, the body sees another
    input as its iteration (an unrolled loop of 3 iterations reported 1). Nothing precedes the
    first Parameter, so no removal can shift it.
    """

    name = "iteration-parameter-first"

    def run(self, loop: LoopIR) -> LoopIR:
        first = loop.spec.current_iteration
        if first is None or first == 0:
            return loop
        parameters = loop.body.get_parameters()
        order = [first, *(index for index in range(len(parameters)) if index != first)]
        moved = {old: new for new, old in enumerate(order)}
        inputs = [
            dataclasses.replace(entry, body_parameter=moved[entry.body_parameter])
            for entry in loop.spec.inputs()
        ]
        spec = dataclasses.replace(
            ports.renumbered(loop.spec, inputs, loop.spec.outputs()), current_iteration=0
        )
        results = list(loop.body.get_results())
        return loop.with_body(results, [parameters[index] for index in order], spec)
