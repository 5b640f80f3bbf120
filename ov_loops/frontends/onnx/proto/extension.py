"""onnx's shape inference, inliner and op schemas, called in its C++ extension directly.

onnx's Python functions of these (onnx.shape_inference.infer_shapes, onnx.inliner's,
onnx.defs.get_schema) serialize the model, call the extension `onnx.onnx_cpp2py_export` and
parse its answer; importing them imports the whole onnx package (proto/onnx_parts.py: about
10 MiB). The extension alone costs about 2 MiB; it is loaded on the first call here, from the
installed onnx, and shared with a later `import onnx`. Each function makes the call onnx's
function makes, with the same arguments, and raises what it raises (the extension's errors:
InferenceError, SchemaError, or a bare RuntimeError of C++). Its op-schema registry is filled on
the first shape inference or schema call (7 MiB), as with onnx's functions.
"""

from __future__ import annotations

import functools
from types import ModuleType

from google.protobuf.message import DecodeError

from ov_loops.frontends.onnx.proto.onnx_parts import extension_file_names, onnx_module
from ov_loops.frontends.onnx.proto.schema import ModelProto


@functools.cache
def extension() -> ModuleType:
    """onnx's C++ extension module (onnx's own when onnx is imported)."""
    name = "onnx.onnx_cpp2py_export"
    return onnx_module(name, extension_file_names("onnx_cpp2py_export"))


def infer_shapes(model: ModelProto, data_prop: bool = False) -> ModelProto:
    """`model` with the types ONNX shape inference finds (onnx.shape_inference.infer_shapes
    with check_type and strict_mode off)."""
    inferred = extension().shape_inference.infer_shapes(
        model.SerializeToString(), False, False, data_prop
    )
    return _model(inferred)


def inline_local_functions(model: ModelProto) -> ModelProto:
    """`model` with its local functions' calls inlined (onnx.inliner's function, without
    converting a function's opset)."""
    return _model(extension().inliner.inline_local_functions(model.SerializeToString(), False))


def since_version(op_type: str, version: int, domain: str = "") -> int | None:
    """The opset version the schema of `op_type` at opset `version` of `domain` was
    introduced at (onnx.defs.get_schema(...).since_version); None when no such op exists."""
    defs = extension().defs
    try:
        return defs.get_schema(op_type, version, domain).since_version
    except defs.SchemaError:
        return None


def _model(serialized: bytes) -> ModelProto:
    """A model parsed from the extension's answer, all of it read (as onnx.load_from_string)."""
    model = ModelProto()
    decoded = model.ParseFromString(serialized)
    if decoded is not None and decoded != len(serialized):
        raise DecodeError(f"decoding consumed too few bytes: {decoded} of {len(serialized)}")
    return model
