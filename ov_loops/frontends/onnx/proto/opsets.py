"""Which operator set versions a model imports."""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema


def opset_version(model: schema.ModelProto, domain: str = "") -> int | None:
    """The model's opset version for `domain` ("" and "ai.onnx" are the same)."""
    wanted = {"", "ai.onnx"} if domain in ("", "ai.onnx") else {domain}
    for opset in model.opset_import:
        if opset.domain in wanted:
            return opset.version
    return None
