"""Load an ONNX model from a path, bytes, a binary stream or a ModelProto, with one-line errors.

Loading reads the model and its external data, then applies the ONNX passes of
frontends.onnx.rewrites (topological sort, the ONNX checker, normalisations).
"""

from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError, Message
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

from ov_loops.errors import InputError, reading
from ov_loops.frontends.onnx.not_onnx import not_onnx_error
from ov_loops.frontends.onnx.rewrites import prepare

T = onnx.TensorProto
# Element types whose elements take less than a byte.
_BITS = {T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2}


def load_model(
    source: str | os.PathLike[str] | bytes | io.IOBase | onnx.ModelProto,
    edit: Callable[[onnx.ModelProto], None] | None = None,
) -> onnx.ModelProto:
    """Return the model read, checked and prepared for conversion (a ModelProto given is left
    as it is; a stream, such as `io.BytesIO`, is read from its position to its end); raise
    InputError for anything unreadable or invalid. `edit` changes the model as read, before
    its passes (the user's input shapes and output cut: frontends.onnx.io_edits)."""
    model, what, directory = _read(source)
    _require_utf8(model, what)
    _load_external_data(model, directory, what)
    try:
        if edit is not None:
            edit(model)
        return prepare(model)
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None


def _read(source) -> tuple[onnx.ModelProto, str, Path | None]:
    """(model, how to name it in errors, the directory its external data is in)."""
    if isinstance(source, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(source)
        return model, "the model", None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), "the given bytes"), "the given bytes", None
    if isinstance(source, io.IOBase) or callable(getattr(source, "read", None)):
        return _parse(_read_stream(source), "the given stream"), "the given stream", None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with reading(path, "an ONNX file"):
            data = path.read_bytes()
        return _parse(data, str(path), path), str(path), path.parent
    raise InputError(f"cannot read a model from a {type(source).__name__}")


def _read_stream(stream) -> bytes:
    """The bytes of a binary stream; a text stream or a failing read is an InputError."""
    try:
        data = stream.read()
    except (OSError, ValueError) as exc:  # ValueError: a closed stream
        raise InputError(f"the given stream: cannot read: {exc}") from None
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError("the given stream: not a binary stream (open the file with 'rb')")
    return bytes(data)


def _parse(data: bytes, what: str, path: Path | None = None) -> onnx.ModelProto:
    if not data:
        raise InputError(f"{what}: empty file, not an ONNX model")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError):
        raise not_onnx_error(data, what, path, parsed=False) from None
    if not model.HasField("graph") or not model.opset_import:
        raise not_onnx_error(data, what, path, parsed=True)
    return model


def _require_utf8(message: Message, what: str, where: str = "model") -> None:
    """Refuse string fields that are not UTF-8 (protobuf hands them over as bytes)."""
    for field, value in message.ListFields():
        items = value if field.is_repeated else [value]
        if field.type == field.TYPE_STRING:
            for item in items:
                if isinstance(item, bytes):
                    shown = item.decode("utf-8", "backslashreplace")
                    raise InputError(f"{what}: {where}.{field.name} is not UTF-8: '{shown}'")
        elif field.type == field.TYPE_MESSAGE:
            for index, item in enumerate(items):
                suffix = f"[{index}]" if field.is_repeated else ""
                _require_utf8(item, what, f"{where}.{field.name}{suffix}")


def _load_external_data(model: onnx.ModelProto, directory: Path | None, what: str) -> None:
    """Read every tensor kept in an external file, wherever it is in the model, relative to the
    model's directory (files outside it are refused, as onnx does)."""
    for tensor in _all_tensors(model):
        if not uses_external_data(tensor):
            continue
        if directory is None:
            raise InputError(
                f"{what}: tensor '{tensor.name}' keeps its data in an external file, which "
                "cannot be found without the model's path: convert the file itself"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # unknown keys: onnx ignores them
                load_external_data_for_tensor(tensor, str(directory))
        except (OSError, ValueError, onnx.checker.ValidationError) as exc:
            raise InputError(f"{what}: cannot read external data: {exc}") from None
        expected = _byte_size(tensor)
        if expected is not None and expected != len(tensor.raw_data):
            raise InputError(
                f"{what}: external data of tensor '{tensor.name}' has {len(tensor.raw_data)} "
                f"bytes, its type and shape need {expected}"
            )


def _byte_size(tensor: onnx.TensorProto) -> int | None:
    """How many raw bytes the tensor's type and dims need (None when not fixed)."""
    bits = _BITS.get(tensor.data_type)
    if bits is None:
        try:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)
        except (KeyError, TypeError, ValueError):
            return None
        if dtype == np.object_:
            return None
        bits = 8 * np.dtype(dtype).itemsize
    return math.ceil(math.prod(tensor.dims) * bits / 8)


def _all_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of the model: initializers (sparse ones too) and attribute tensors of every
    graph, subgraph and function."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        for node in function.node:
            yield from _attribute_tensors(node)


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    for node in graph.node:
        yield from _attribute_tensors(node)


def _attribute_tensors(node: onnx.NodeProto) -> Iterator[onnx.TensorProto]:
    for attr in node.attribute:
        if attr.HasField("t"):
            yield attr.t
        yield from attr.tensors
        for sparse in (
            *([attr.sparse_tensor] if attr.HasField("sparse_tensor") else []),
            *attr.sparse_tensors,
        ):
            yield from (sparse.values, sparse.indices)
        if attr.HasField("g"):
            yield from _graph_tensors(attr.g)
        for graph in attr.graphs:
            yield from _graph_tensors(graph)
