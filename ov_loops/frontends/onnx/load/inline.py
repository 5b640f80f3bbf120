"""Normalisation pass: inline model-local functions, so loops inside them are ours too."""

from __future__ import annotations

import onnx
import onnx.inliner

from ov_loops.errors import InputError

_STANDARD = ("", "ai.onnx")


def inline_local_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return `model` with calls to its local functions replaced by their bodies.

    onnx's inliner leaves a function whose ai.onnx opset differs from the model's as a call
    (skl2onnx's KNNImputer: functions at opsets 14 and 16 in a model at 18), which OpenVINO
    cannot convert. Such a function is given the model's opset first: the ONNX checker, which
    runs before, refuses a function with an op whose schema differs between the two versions
    ("not compatible with the version imported by model"), so its ops mean the same at both.
    """
    if not model.functions:
        return model
    wanted = next((o.version for o in model.opset_import if o.domain in _STANDARD), None)
    for function in model.functions:
        for opset in function.opset_import:
            if opset.domain in _STANDARD and wanted is not None:
                opset.version = wanted
    try:
        return onnx.inliner.inline_local_functions(model)
    except Exception as exc:  # the inliner raises bare C++ errors
        raise InputError(f"cannot inline the model's local functions: {exc}") from None
