"""A refusal: an If with an output of dynamic rank, which OpenVINO's CPU plugin cannot compile.

ONNX lets an If's branches return values of different ranks (skl2onnx's KNNImputer: [?, ?] in
one branch, [?, 1, ?] in the other) and onnxruntime runs them; OpenVINO's frontend makes an If
whose output has a dynamic rank, and the CPU plugin refuses it at compile time ("CPU plug-in
doesn't support If operation with dynamic rank"), as it does a Loop port of dynamic rank
(lower/loop5.py). Refused at convert time instead, in one line.
"""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.errors import ConversionError


def refuse_ifs_of_dynamic_rank(model: ov.Model) -> None:
    """Raise a ConversionError naming the first If (in the main graph or any body) with an
    output of dynamic rank, and that output."""
    for op in ovgraph.all_ops(model):
        if op.get_type_name() != "If":
            continue
        for index, output in enumerate(op.outputs()):
            if output.get_partial_shape().rank.is_dynamic:
                names = sorted(output.get_names())
                what = f"output {index} ('{names[0]}')" if names else f"output {index}"
                raise ConversionError(
                    f"If '{op.get_friendly_name()}': {what} has a dynamic rank (its branches "
                    "return values of different or unknown ranks); OpenVINO's CPU plugin cannot "
                    "compile an If with such an output"
                )
