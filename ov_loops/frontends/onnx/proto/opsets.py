"""Which operator set versions a model imports."""

from __future__ import annotations

import onnx


def opset_version(model: onnx.ModelProto, domain: str = "") -> int | None:
    """The model's opset version for `domain` ("" and "ai.onnx" are the same)."""
    wanted = {"", "ai.onnx"} if domain in ("", "ai.onnx") else {domain}
    for opset in model.opset_import:
        if opset.domain in wanted:
            return opset.version
    return None
