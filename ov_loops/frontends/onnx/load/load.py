"""Load an ONNX model from a path, bytes, a binary stream or a ModelProto, with one-line errors.

Loading reads the model and its external data, then applies the ONNX passes of
frontends.onnx.load.prepare (topological sort, the ONNX checker, normalisations). For
conversion, a model read from a path may leave its weights in its files (load/weights.py).
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from google.protobuf.message import DecodeError, Message

from ov_loops.errors import InputError, reading
from ov_loops.frontends.onnx.load import weights
from ov_loops.frontends.onnx.load.checker import Unchecked, check_model
from ov_loops.frontends.onnx.load.order import sort_topologically
from ov_loops.frontends.onnx.load.prepare import PreparedModel, prepare
from ov_loops.frontends.onnx.proto import schema

ModelSource = str | os.PathLike[str] | bytes | io.IOBase | schema.ModelProto


def load_model(
    source: ModelSource,
    edit: Callable[[schema.ModelProto], None] | None = None,
    weights_in_files: bool = False,
    check: bool = True,
) -> PreparedModel:
    """Return the model read, checked and prepared for conversion (a ModelProto given is left
    as it is; a stream, such as `io.BytesIO`, is read from its position to its end); raise
    InputError for anything unreadable or invalid. `edit` changes the model as read, before
    its passes (the user's input shapes and output cut: frontends.onnx.load.io_edits).

    `weights_in_files`: a model read from a path keeps its big tensors' data in its files,
    referenced by absolute path (frontends.onnx.load.weights); the model is then for
    conversion only (OpenVINO's frontend reads such references, onnx and onnxruntime need them
    loaded). Without `check` the ONNX checker does not run: `checked_on_failure` runs it when
    what follows fails."""
    in_files = weights_in_files and isinstance(source, (str, os.PathLike))
    model, what, directory = _read_whole(source, in_files)
    try:
        if edit is not None:
            edit(model)
        prepared = prepare(model, check)
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None
    if in_files:
        weights.with_absolute_locations(prepared.model, directory)
    return prepared


@contextmanager
def checked_on_failure(source: ModelSource) -> Iterator[None]:
    """Run the body, which reads and converts `source` without the ONNX checker; when it fails
    (an error or a bug), read `source` again and raise the checker's one-line refusal instead if
    the checker (or the topological sort before it) refuses the model: what loading it with the
    checker would have said. The checker imports onnx and fills its op-schema registry (16 MiB,
    proto/schema.py); a model that converts never pays for it."""
    position = source.tell() if isinstance(source, io.IOBase) and source.seekable() else None
    try:
        yield
    except Exception:
        refusal = _checker_refusal(source, position)
        if refusal is None:
            raise
        raise refusal from None


def _checker_refusal(source: ModelSource, position: int | None) -> InputError | None:
    """The checker's refusal of `source` read again; None when it accepts the model, cannot
    check it, or reading finds a fault (which the failure names: reading found it before the
    checker ran)."""
    try:
        if position is not None:
            source.seek(position)
        model, what, _ = _read_whole(source, isinstance(source, (str, os.PathLike)))
    except (InputError, OSError, ValueError):
        return None
    try:
        check_model(sort_topologically(model))
    except Unchecked:
        return None
    except InputError as exc:
        return InputError(f"{what}: {exc}")
    return None


def _read_whole(source: ModelSource, in_files: bool) -> tuple[schema.ModelProto, str, Path | None]:
    """`_read`, then the checks of what was read: UTF-8 strings, and the external data (read,
    or only its sizes checked `in_files`)."""
    model, what, directory = _read(source, in_files)
    _require_utf8(model, what)
    if in_files:
        weights.check_external_sizes(model, directory, what)
    else:
        _load_external_data(model, directory, what)
    return model, what, directory


def _read(source, weights_in_files: bool = False) -> tuple[schema.ModelProto, str, Path | None]:
    """(model, how to name it in errors, the directory its external data is in); a path read
    `weights_in_files` gives a model without its big tensors' data."""
    if isinstance(source, schema.ModelProto):
        model = schema.ModelProto()
        model.CopyFrom(source)
        return model, "the model", None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), "the given bytes"), "the given bytes", None
    if isinstance(source, io.IOBase) or callable(getattr(source, "read", None)):
        return _parse(_read_stream(source), "the given stream"), "the given stream", None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with reading(path, "an ONNX file"):
            data = weights_in_files and weights.read_without_weights(path) or path.read_bytes()
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


def _parse(data: bytes, what: str, path: Path | None = None) -> schema.ModelProto:
    if not data:
        raise InputError(f"{what}: empty file, not an ONNX model")
    model = schema.ModelProto()
    try:
        model.ParseFromString(data)
        parsed = True
    except (DecodeError, RuntimeWarning, ValueError):
        parsed = False
    if not parsed or not model.HasField("graph") or not model.opset_import:
        # what the file is instead (not_onnx.py): imported on this failure alone
        from ov_loops.frontends.onnx.load.not_onnx import not_onnx_error

        raise not_onnx_error(data, what, path, parsed=parsed)
    return model


def _require_utf8(message: Message, what: str) -> None:
    """Refuse string fields that are not UTF-8 (protobuf hands them over as bytes), naming the
    first one (`_refuse_non_utf8`): the walk that finds none builds no field paths."""
    if not _all_utf8(message):
        _refuse_non_utf8(message, what)


# A field's kind for _all_utf8 (fields of another type are 0: skipped).
_STRING, _STRINGS, _MESSAGE, _MESSAGES = 1, 2, 3, 4


def _all_utf8(message: Message) -> bool:
    """Whether every string field of `message` and of the messages in it is UTF-8 (a str)."""
    pending = [message]
    while pending:
        for field, value in pending.pop().ListFields():
            kind = _field_kind(field)
            if kind == _MESSAGE:
                pending.append(value)
            elif kind == _MESSAGES:
                pending.extend(value)
            elif kind == _STRING:
                if isinstance(value, bytes):
                    return False
            elif kind == _STRINGS and any(isinstance(item, bytes) for item in value):
                return False
    return True


@functools.cache  # by descriptor: a model's walk asks for the same few fields again and again
def _field_kind(field) -> int:
    if field.type == field.TYPE_STRING:
        return _STRINGS if field.is_repeated else _STRING
    if field.type == field.TYPE_MESSAGE:
        return _MESSAGES if field.is_repeated else _MESSAGE
    return 0


def _refuse_non_utf8(message: Message, what: str, where: str = "model") -> None:
    """Raise InputError naming the first string field of `message` (depth first, in field
    order) that is not UTF-8."""
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
                _refuse_non_utf8(item, what, f"{where}.{field.name}{suffix}")


def _load_external_data(model: schema.ModelProto, directory: Path | None, what: str) -> None:
    """Read every tensor kept in an external file, wherever it is in the model, relative to the
    model's directory (files outside it are refused, as onnx does)."""
    external = list(weights.external_tensors(model))
    if not external:
        return
    if directory is None:
        raise InputError(
            f"{what}: tensor '{external[0].name}' keeps its data in an external file, which "
            "cannot be found without the model's path: convert the file itself"
        )
    weights.check_external_sizes(model, directory, what)
    for tensor in external:
        try:
            weights.read_external_data(tensor, directory)
        except OSError as exc:
            raise InputError(f"{what}: cannot read external data: {exc}") from None
