"""What a file that does not read as an ONNX model is, in a few words: an OpenVINO IR (its .xml,
or the .bin beside one), or another known kind of file, rather than the protobuf parser's words.
"""

from __future__ import annotations

import re
from pathlib import Path

from ov_loops.errors import InputError

# An IR's .xml: an optional XML declaration and comments, then the root element <net ...>.
_IR_XML = re.compile(rb"\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<net[\s>]", re.DOTALL)
# Files people pass for a model, by their first bytes.
_MAGIC = {
    b"PK\x03\x04": "a zip archive",
    b"\x93NUMPY": "a NumPy array file",
    b"\x89HDF": "an HDF5 file",
    b"\x1f\x8b": "a gzip file",
}
_SUGGESTION = "ov-loops validate checks its loops, ov-loops check runs it"
_HEAD = 4096


def not_onnx_error(data: bytes, what: str, path: Path | None, parsed: bool) -> InputError:
    """The error for `data` (read from `path`, named `what` in errors) that is not an ONNX
    model; `parsed` says whether it parsed as a protobuf (without a graph then)."""
    head = data[:_HEAD].lstrip(b"\xef\xbb\xbf")
    if _IR_XML.match(head):
        return InputError(f"{what}: already an OpenVINO IR, not an ONNX model ({_SUGGESTION})")
    ir = _ir_beside(path)
    if ir is not None:
        return InputError(f"{what}: the weights of the OpenVINO IR {ir}, not an ONNX model")
    return InputError(f"{what}: not an ONNX model: {_kind(head, parsed)}")


def _ir_beside(path: Path | None) -> Path | None:
    """The IR .xml whose weights `path` (a .bin) is, if it is beside it."""
    if path is None or path.suffix != ".bin":
        return None
    xml = path.with_suffix(".xml")
    try:
        with xml.open("rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return None
    return xml if _IR_XML.match(head.lstrip(b"\xef\xbb\xbf")) else None


def _kind(head: bytes, parsed: bool) -> str:
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if _is_text(head):
        return "an XML file" if head.lstrip().startswith(b"<") else "a text file"
    if parsed:
        return "a protobuf message without a graph or an opset_import"
    if head.startswith(b"\x08"):  # field 1 (ir_version) as varint: how an ONNX file begins
        return "a truncated or corrupt protobuf (it begins as an ONNX model does)"
    return "neither a protobuf message nor a known kind of file"


def _is_text(head: bytes) -> bool:
    """Whether `head` is UTF-8 text without control characters (but whitespace); the last
    few bytes may be a character cut at the end of the head."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:
            return False
        text = head[: exc.start].decode("utf-8")
    return bool(text) and all(char.isprintable() or char in "\t\n\r\f\v" for char in text)
