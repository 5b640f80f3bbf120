"""Load an ONNX model from a path, bytes or a ModelProto, with one-line errors."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from ov_loops.errors import InputError, reading


def load_model(source: str | os.PathLike[str] | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """Return a checked ModelProto; raise InputError for anything unreadable or invalid."""
    if isinstance(source, onnx.ModelProto):
        model, what = source, "the model"
    elif isinstance(source, (bytes, bytearray, memoryview)):
        model, what = _parse(bytes(source), "the given bytes"), "the given bytes"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        what = str(path)
        with reading(path, "an ONNX file"):
            data = path.read_bytes()
        model = _parse(data, what)
        if _has_external_data(model):
            try:
                onnx.external_data_helper.load_external_data_for_model(model, str(path.parent))
            except OSError as exc:
                raise InputError(f"{path}: cannot read external data: {exc}") from None
    else:
        raise InputError(f"cannot read a model from a {type(source).__name__}")
    _check(model, what)
    return model


def _parse(data: bytes, what: str) -> onnx.ModelProto:
    if not data:
        raise InputError(f"{what}: empty file, not an ONNX model")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise InputError(f"{what}: not an ONNX model or truncated ({exc})") from None
    if not model.HasField("graph") or not model.opset_import:
        raise InputError(f"{what}: not an ONNX model (no graph or no opset_import)")
    return model


def _has_external_data(model: onnx.ModelProto) -> bool:
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)


def _check(model: onnx.ModelProto, what: str) -> None:
    """Run the ONNX checker, which (unlike onnxruntime) insists on typed, shaped graph I/O.

    Main-graph inputs and outputs without a type or shape are given a placeholder one for the
    duration of the check only.
    """
    patched = []
    for value in (*model.graph.input, *model.graph.output):
        if not value.type.WhichOneof("value"):
            value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
            patched.append((value, "type"))
        if value.type.HasField("tensor_type") and not value.type.tensor_type.HasField("shape"):
            value.type.tensor_type.shape.SetInParent()
            patched.append((value, "shape"))
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
        raise InputError(f"{what}: invalid ONNX model: {first}") from None
    except ValueError as exc:  # protobuf too large for the in-memory checker
        raise InputError(f"{what}: cannot check model: {exc}") from None
    finally:
        for value, field in reversed(patched):
            if field == "type":
                value.ClearField("type")
            else:
                value.type.tensor_type.ClearField("shape")


def opset_version(model: onnx.ModelProto, domain: str = "") -> int | None:
    """The model's opset version for `domain` ("" and "ai.onnx" are the same)."""
    wanted = {"", "ai.onnx"} if domain in ("", "ai.onnx") else {domain}
    for opset in model.opset_import:
        if opset.domain in wanted:
            return opset.version
    return None
