"""Weights that stay in their file: a model read from a path is parsed without its big tensors.

Parsing a model whole copies every weight into memory (the file's bytes, then the message), and
each later copy of the message (rewrites, the graph with placeholders, the bytes handed to
OpenVINO's frontend per graph) copies them again. Instead the file is read through a memory map
and walked in protobuf's wire format; the `raw_data` of every tensor of at least MIN_BYTES
becomes an ONNX external-data reference to where those bytes lie in the file itself::

    raw_data = <bytes at offset o, length n>   ->   data_location = EXTERNAL,
                                                    external_data = {location: <the file's
                                                    name>, offset: o, length: n}

so the parsed message holds no weights. Everything else is copied as it is. Tensors already kept
in external files stay there: their sizes are checked, nothing is read. Small tensors (shapes,
axes, flags) keep their values for the ONNX passes and shape inference.

The driver hands OpenVINO's frontend each graph as bytes, and from bytes the frontend refuses
files outside the current directory; so while a model converts its files are mapped into memory
(MappedFiles) and the graphs handed over name each tensor by its address there (the
`*/_ORT_MEM_ADDR_/*` location the frontend reads, copying the data once into its Constant).
The frontend copies a graph's tensors before it translates its nodes (big300: 2 x 300 MiB
resident at its first loop), so when it reaches a loop the driver takes the mapped pages out of
the resident set (`release_resident_pages`; a body's tensors read later fault theirs in again):
the loops then convert beside the copies alone (big300's peak RSS in `ov_loops.translate` +
`save` 694 -> 652 MiB, ovc's 683).
Where the caller owns the model and the process (`ov-loops convert`, the driver's
`shares_weights`) the main graph names each file by its absolute path instead and is converted
from the file system's root (refer_to_files): the frontend maps the files itself and the
model's Constants share their pages, so the weights are never copied (big300's peak RSS in
`ov-loops convert` 705 -> 399 MiB; docs/cli.md).
"""

from __future__ import annotations

import math
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.proto import helpers, schema

MIN_BYTES = 4096  # smaller tensors keep their data in the message
T = schema.TensorProto
# Element types whose elements take less than a byte.
_BITS = {T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2}


def _fields(message, **kinds: str) -> dict[int, str]:
    """Field number -> the kind of message it holds, for the named fields of `message`."""
    return {message.DESCRIPTOR.fields_by_name[name].number: kind for name, kind in kinds.items()}


# The messages that may hold tensors, and in which fields (the walk descends only into these).
_HOLDS = {
    "model": _fields(schema.ModelProto, graph="graph", functions="function"),
    "function": _fields(schema.FunctionProto, node="node"),
    "graph": _fields(
        schema.GraphProto, node="node", initializer="tensor", sparse_initializer="sparse"
    ),
    "node": _fields(schema.NodeProto, attribute="attribute"),
    "attribute": _fields(
        schema.AttributeProto,
        t="tensor",
        tensors="tensor",
        g="graph",
        graphs="graph",
        sparse_tensor="sparse",
        sparse_tensors="sparse",
    ),
    "sparse": _fields(schema.SparseTensorProto, values="tensor", indices="tensor"),
}
_TENSOR = {field.name: field.number for field in T.DESCRIPTOR.fields}
_ENTRY = {field.name: field.number for field in schema.StringStringEntryProto.DESCRIPTOR.fields}
_LENGTH_DELIMITED, _VARINT, _FIXED64, _FIXED32 = 2, 0, 1, 5


class _NotWalkable(Exception):
    """The bytes are not the wire format the walk expects: parse the file as a whole instead."""


def read_without_weights(path: Path) -> bytes | None:
    """The serialised model at `path` with each tensor's raw_data of at least MIN_BYTES
    replaced by a reference to its place in the file (the module docstring); None when the file
    has no such tensor or is not walkable (read and parse it as usual then)."""
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size < MIN_BYTES:
            return None
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            data = memoryview(mapped)
            try:
                return _message(data, 0, len(data), "model", path.name)
            except (_NotWalkable, IndexError):
                return None
            finally:
                data.release()


def _message(data: memoryview, start: int, end: int, kind: str, location: str) -> bytes | None:
    """The message data[start:end] of `kind` with its big tensors referenced, or None when it
    holds none."""
    if kind == "tensor":
        return _tensor(data, start, end, location)
    holds = _HOLDS[kind]
    pieces, copied = [], start
    for number, wire, field_start, value_start, value_end in _walk(data, start, end):
        inner = holds.get(number) if wire == _LENGTH_DELIMITED else None
        if inner is None or value_end - value_start < MIN_BYTES:
            continue  # a message smaller than MIN_BYTES holds no big tensor
        rewritten = _message(data, value_start, value_end, inner, location)
        if rewritten is not None:
            pieces += [data[copied:field_start], _field_head(number, len(rewritten)), rewritten]
            copied = value_end
    if not pieces:
        return None
    return b"".join([*pieces, data[copied:end]])


def _tensor(data: memoryview, start: int, end: int, location: str) -> bytes | None:
    """A TensorProto with its raw_data referenced in the file, or None when it has no big
    raw_data (or already refers to external data, or states raw_data twice)."""
    fields = list(_walk(data, start, end))
    numbers = [field[0] for field in fields]
    raw = _TENSOR["raw_data"]
    if numbers.count(raw) != 1 or {_TENSOR["external_data"], _TENSOR["data_location"]} & set(
        numbers
    ):
        return None
    _, _, field_start, value_start, value_end = fields[numbers.index(raw)]
    if value_end - value_start < MIN_BYTES:
        return None
    reference = [
        ("location", location),
        ("offset", str(value_start)),
        ("length", str(value_end - value_start)),
    ]
    entries = [_entry(key, value) for key, value in reference]
    location_field = _varint_bytes(_TENSOR["data_location"] << 3 | _VARINT)
    return b"".join(
        [
            data[start:field_start],
            data[value_end:end],
            *entries,
            location_field + _varint_bytes(T.EXTERNAL),
        ]
    )


def _entry(key: str, value: str) -> bytes:
    """An external_data entry (a StringStringEntryProto field of a TensorProto)."""
    body = b"".join(
        [
            _field_head(_ENTRY["key"], len(key)) + key.encode(),
            _field_head(_ENTRY["value"], len(value.encode())) + value.encode(),
        ]
    )
    return _field_head(_TENSOR["external_data"], len(body)) + body


def _walk(data: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, value start, value end) of each field of the
    message data[start:end]."""
    position = start
    while position < end:
        field_start = position
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == _LENGTH_DELIMITED:
            length, position = _varint(data, position)
            value_start, position = position, position + length
        elif wire == _VARINT:
            value_start = position
            _, position = _varint(data, position)
        elif wire in (_FIXED64, _FIXED32):
            value_start = position
            position += 8 if wire == _FIXED64 else 4
        else:  # groups: not in ONNX
            raise _NotWalkable
        if position > end or number == 0:
            raise _NotWalkable
        yield number, wire, field_start, value_start, position


def _varint(data: memoryview, position: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise _NotWalkable


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field_head(number: int, length: int) -> bytes:
    return _varint_bytes(number << 3 | _LENGTH_DELIMITED) + _varint_bytes(length)


# -- tensors kept in files ------------------------------------------------------------------------
def external_tensors(model: schema.ModelProto) -> Iterator[schema.TensorProto]:
    """Every tensor of the model whose data is kept in a file."""
    return (tensor for tensor in all_tensors(model) if tensor.data_location == T.EXTERNAL)


def check_external_sizes(model: schema.ModelProto, directory: Path, what: str) -> None:
    """Check, without reading them, that the files of the model's external tensors lie inside
    `directory` and hold the bytes each tensor's type and dims need where it says."""
    for tensor in external_tensors(model):
        try:
            _check_external(tensor, directory)
        except (OSError, ValueError) as exc:
            raise InputError(f"{what}: cannot read external data: {exc}") from None
        except _Short as exc:
            raise InputError(f"{what}: {exc}") from None


class _Short(Exception):
    """External data of another size than the tensor's type and dims need."""


def _check_external(tensor: schema.TensorProto, directory: Path) -> None:
    entries = {entry.key: entry.value for entry in tensor.external_data}
    location, name = entries.get("location", ""), tensor.name
    path = (directory / location).resolve()
    if os.path.isabs(location):
        raise ValueError(f"tensor '{name}': location '{location}' is an absolute path")
    if not path.is_relative_to(directory.resolve()):
        raise ValueError(f"tensor '{name}': location '{location}' is outside the model's directory")
    if not path.is_file():
        raise ValueError(f"tensor '{name}': no file '{location}' beside the model")
    size = path.stat().st_size
    offset = int(entries.get("offset") or 0)
    if offset > size:
        raise ValueError(f"tensor '{name}': offset ({offset}) exceeds file size ({size})")
    length = int(entries["length"]) if entries.get("length") else size - offset
    if offset < 0 or length < 0 or length > size - offset:
        raise ValueError(
            f"tensor '{name}': length ({length}) exceeds available data "
            f"({size - offset} bytes from offset {offset})"
        )
    expected = byte_size(tensor)
    if expected is not None and expected != length:
        raise _Short(
            f"external data of tensor '{name}' has {length} bytes, its type and shape need "
            f"{expected}"
        )


def read_external_data(tensor: schema.TensorProto, directory: Path) -> None:
    """Read the data of a tensor kept in a file beside the model (as check_external_sizes
    found it) into the tensor, which then no longer refers to the file."""
    entries = {entry.key: entry.value for entry in tensor.external_data}
    with open(directory / entries["location"], "rb") as file:
        file.seek(int(entries.get("offset") or 0))
        length = entries.get("length")
        tensor.raw_data = file.read(int(length)) if length else file.read()
    tensor.data_location = T.DEFAULT
    del tensor.external_data[:]


def with_absolute_locations(model: schema.ModelProto, directory: Path) -> None:
    """Make each external tensor's location absolute: the frontend then finds the data
    whatever it is loaded from (the driver hands it bytes)."""
    for tensor in external_tensors(model):
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = str((directory / entry.value).resolve())


MEMORY = "*/_ORT_MEM_ADDR_/*"  # the location of data at the address `offset` of this process


def refer_to_files(model: schema.ModelProto) -> str | None:
    """The root of the file system holding every file `model`'s tensors are kept in, each
    tensor then naming its file by absolute path with its offset and length: converted from
    that working directory (the frontend resolves a tensor's file against it and refuses one
    outside), OpenVINO's frontend maps the files and the model's Constants share their pages,
    where MappedFiles' addresses make it copy each tensor (the driver's `shares_weights`).
    None, nothing referred, when no tensor is kept in a file, the files are not all named by
    absolute paths under one root (they are once loaded: load.with_absolute_locations), or the
    process has no working directory to come back to (removed while it ran)."""
    try:
        os.getcwd()
    except OSError:
        return None
    locations = {
        entry.value
        for tensor in external_tensors(model)
        for entry in tensor.external_data
        if entry.key == "location" and entry.value != MEMORY
    }
    roots = {Path(location).anchor for location in locations}
    if len(roots) != 1 or not all(os.path.isabs(location) for location in locations):
        return None
    for tensor, location, offset, length in _file_references(model):
        _refer(tensor, location, offset, length)
    return roots.pop()


def _file_references(
    model: schema.ModelProto,
) -> Iterator[tuple[schema.TensorProto, str, int, int]]:
    """Each tensor of `model` kept in a file, with its file, offset and length in bytes; a
    tensor of no bytes becomes an empty value instead (nothing to read; a length of 0 would
    tell the frontend "to the end of the file")."""
    for tensor in external_tensors(model):
        entries = {entry.key: entry.value for entry in tensor.external_data}
        if entries.get("location") == MEMORY:
            continue
        location, offset = entries["location"], int(entries.get("offset") or 0)
        length = int(entries.get("length") or os.path.getsize(location) - offset)
        if length == 0:
            del tensor.external_data[:]
            tensor.data_location = T.DEFAULT
            tensor.raw_data = b""
            continue
        yield tensor, location, offset, length


def _refer(tensor: schema.TensorProto, location: str, offset: int, length: int) -> None:
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        tensor.external_data.add(key=key, value=str(value))


class MappedFiles:
    """The files of tensors kept in files, mapped into memory while a model converts (the
    module docstring); closing unmaps them, after which no graph referring to them may be
    handed to the frontend."""

    def __init__(self) -> None:
        self._maps: dict[str, tuple[BinaryIO, mmap.mmap, int]] = {}
        self._resident: set[str] = set()  # mapped and not released since

    def refer_to_memory(self, model: schema.ModelProto) -> None:
        """Make each tensor of `model` kept in a file refer to its bytes in memory instead."""
        for tensor, location, offset, length in _file_references(model):
            _refer(tensor, MEMORY, self._address(location) + offset, length)

    def _address(self, path: str) -> int:
        """Where the file `path` is mapped (mapping it the first time)."""
        if path not in self._maps:
            file = open(path, "rb")  # noqa: SIM115 -- open until close()
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            self._maps[path] = (file, mapped, np.frombuffer(mapped, np.uint8).ctypes.data)
            self._resident.add(path)
        return self._maps[path][2]

    def release_resident_pages(self) -> None:
        """Take the pages of the files mapped since the last call out of the process's resident
        memory (once each: the driver calls this at every loop): they stay mapped, and a later
        read faults them in again from the file (the same bytes)."""
        for path in self._resident:
            self._maps[path][1].madvise(mmap.MADV_DONTNEED)
        self._resident.clear()

    def close(self) -> None:
        for file, mapped, _ in self._maps.values():
            mapped.close()
            file.close()
        self._maps.clear()
        self._resident.clear()

    def __enter__(self) -> MappedFiles:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def byte_size(tensor: schema.TensorProto) -> int | None:
    """How many raw bytes the tensor's type and dims need (None when not fixed)."""
    bits = _BITS.get(tensor.data_type)
    if bits is None:
        try:
            dtype = helpers.tensor_dtype_to_np_dtype(tensor.data_type)
        except (KeyError, TypeError, ValueError):
            return None
        if dtype == np.object_:
            return None
        bits = 8 * np.dtype(dtype).itemsize
    return math.ceil(math.prod(tensor.dims) * bits / 8)


def all_tensors(model: schema.ModelProto) -> Iterator[schema.TensorProto]:
    """Every tensor of the model: initializers (sparse ones too) and attribute tensors of every
    graph, subgraph and function."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        for node in function.node:
            yield from _attribute_tensors(node)


def _graph_tensors(graph: schema.GraphProto) -> Iterator[schema.TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    for node in graph.node:
        yield from _attribute_tensors(node)


def _attribute_tensors(node: schema.NodeProto) -> Iterator[schema.TensorProto]:
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
