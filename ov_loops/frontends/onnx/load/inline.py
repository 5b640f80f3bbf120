"""Normalisation pass: inline model-local functions, so loops inside them are ours too."""

from __future__ import annotations

import onnx
import onnx.inliner

from ov_loops.errors import InputError


def inline_local_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return `model` with calls to its local functions replaced by their bodies."""
    if not model.functions:
        return model
    try:
        return onnx.inliner.inline_local_functions(model)
    except Exception as exc:  # the inliner raises bare C++ errors
        raise InputError(f"cannot inline the model's local functions: {exc}") from None
