"""Pass: OpenVINO's own graph simplification (its MOC transformations, as `openvino.convert_model`
runs them) on loop bodies, and on the converted model.

MOC folds constants and the ShapeOf of static dims, removes no-op Converts and duplicate
nodes, and fuses what the CPU plugin would otherwise execute op by op: bodies of exporters'
loops hold much shape arithmetic. On a body it keeps the Parameters and Results the LoopSpec
indexes (checked); on the whole model it may prune or renumber Loop ports, so the driver reads
every Loop's spec again afterwards (conversion.report.rederived). It runs before the CPU
workarounds, which it must not see: e.g. it would drop a Convert to the same type.
"""

from __future__ import annotations

import openvino as ov
from openvino._offline_transformations import apply_moc_transformations

from ov_loops.contract.spec import SpecError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class SimplifyBody(LoopPass):
    """Run OpenVINO's MOC transformations on the body, in place::

    body = moc(body)        # same Parameters and Results, in the same order
    """

    name = "simplify-body"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        before = _ports(loop.body)
        count = len(loop.body.get_ordered_ops())
        simplify_model(loop.body)
        if _ports(loop.body) != before:
            raise SpecError(f"{loop.path}: simplifying the body changed its Parameters or Results")
        left = len(loop.body.get_ordered_ops())
        return loop.noting(f"simplified body ({count} -> {left} ops)") if left < count else loop


def simplify_model(model: ov.Model) -> None:
    """Identity ops bypassed, then OpenVINO's MOC transformations with constant folding, in
    place (MOC keeps Identity-16, which the ONNX frontend makes of ONNX Identity)."""
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Identity":
            op.output(0).replace(op.input_value(0))
    apply_moc_transformations(model, cf=True)


def _ports(body: ov.Model) -> list[str]:
    nodes = [*body.get_parameters(), *body.get_results()]
    return [node.get_friendly_name() for node in nodes]
