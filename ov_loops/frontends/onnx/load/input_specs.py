"""What a user says about a model's inputs, in `ovc`'s and `openvino.convert_model`'s forms.

Text (`ovc --input`): entries separated by commas outside brackets, each `NAME[DIMS]{TYPE}` with
every part optional: `X[1,?,16]{f32},h0[1,16]`, `[1,100],[1,?]` (unnamed: the model's inputs in
order), `n[]` (a scalar). A dim is N, `?` or -1 (dynamic), or a range `A..B`, `..B`, `A..`, in
ASCII digits (as OpenVINO reads them), at most MAX_DIMENSION.
Python values: the text, a name, a shape (`ov.PartialShape`, `ov.Shape`, a list of ints and
`ov.Dimension`s), a type (`ov.Type`, a numpy dtype or scalar type), a tuple of a name, a shape
and a type, a list of those, or a dict from names to a shape, a type or a tuple of both.
"""

from __future__ import annotations

import re

import numpy as np
import openvino as ov

from ov_loops.errors import InputError
from ov_loops.record import Record

# Element type spellings: OpenVINO's short names, and numpy's names.
ELEMENT_TYPES = {
    **{t.get_type_name(): t for t in (ov.Type.f16, ov.Type.f32, ov.Type.f64, ov.Type.bf16)},
    **{t.get_type_name(): t for t in (ov.Type.i8, ov.Type.i16, ov.Type.i32, ov.Type.i64)},
    **{t.get_type_name(): t for t in (ov.Type.u8, ov.Type.u16, ov.Type.u32, ov.Type.u64)},
    "boolean": ov.Type.boolean,
    "bool": ov.Type.boolean,
    "float16": ov.Type.f16,
    "float32": ov.Type.f32,
    "float64": ov.Type.f64,
    "bfloat16": ov.Type.bf16,
    **{f"int{bits}": getattr(ov.Type, f"i{bits}") for bits in (8, 16, 32, 64)},
    **{f"uint{bits}": getattr(ov.Type, f"u{bits}") for bits in (8, 16, 32, 64)},
}
_ENTRY = re.compile(
    r"(?P<name>[^\[\]{}]*?)\s*(?:\[(?P<dims>[^\[\]{}]*)\])?\s*(?:\{(?P<type>[^{}\[\]]*)\})?"
)
_DIGITS = re.compile(r"[0-9]+")
_RANGE = re.compile(r"(?P<low>[0-9]*)\.\.(?P<high>[0-9]*)")
# OpenVINO's largest static dimension: a dimension is an int64, and its largest value stands
# for "unbounded".
MAX_DIMENSION = 2**63 - 2


class InputShape(Record):
    """One input as the user gives it: its name (None: by position), shape and element type
    (None: as the model declares)."""

    __slots__ = ("name", "shape", "element")

    def __init__(
        self,
        name: str | None = None,
        shape: ov.PartialShape | None = None,
        element: ov.Type | None = None,
    ) -> None:
        self.name = name
        self.shape = shape
        self.element = element

    def text(self) -> str:
        """The entry in `--input` syntax."""
        shape = "" if self.shape is None else str(self.shape)
        element = "" if self.element is None else f"{{{self.element.get_type_name()}}}"
        return f"{self.name or ''}{shape}{element}"


def parse_input_text(text: str) -> list[InputShape]:
    """The entries of an `--input` text (see the module's docstring)."""
    return [_parse_entry(entry.strip(), text) for entry in _split_entries(text)]


def _split_entries(text: str) -> list[str]:
    entries, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            entries.append(text[start:index])
            start = index + 1
    return [*entries, text[start:]]


def _parse_entry(entry: str, text: str) -> InputShape:
    match = _ENTRY.fullmatch(entry)
    if not entry or match is None:
        raise InputError(f"input {text!r}: cannot read {entry!r}: expected NAME[DIMS]{{TYPE}}")
    dims, element = match["dims"], match["type"]
    shape = None
    if dims is not None:
        shape = ov.PartialShape([_dimension(d, index, entry) for index, d in _tokens(dims)])
    return InputShape(
        match["name"] or None,
        shape,
        None if element is None else element_type(element.strip(), entry),
    )


def _tokens(dims: str) -> list[tuple[int, str]]:
    """The dims of a shape's text, numbered."""
    return list(enumerate(token for token in re.split(r"[\s,]+", dims) if token))


def _dimension(token: str, index: int, entry: str) -> ov.Dimension:
    """N, ? or -1, A..B, ..B, A.. (ASCII digits)."""
    if token in ("?", "-1"):
        return ov.Dimension()
    if _DIGITS.fullmatch(token):
        return ov.Dimension(_length(token, index, entry))
    found = _RANGE.fullmatch(token)
    if found is not None:
        low = _length(found["low"] or "0", index, entry)
        high = _length(found["high"], index, entry) if found["high"] else -1
        if high == -1 or low <= high:
            return ov.Dimension(low, high)
    raise InputError(
        f"input {entry!r}: bad dimension {token!r} at dim {index} (expected N, ?, -1 or a range "
        "A..B, in digits 0-9)"
    )


def _length(digits: str, index: int, entry: str) -> int:
    """The value of a dim's ASCII digits, at most MAX_DIMENSION (its digits are counted first:
    Python refuses to read very long numbers)."""
    significant = digits.lstrip("0")
    if len(significant) > len(str(MAX_DIMENSION)) or int(significant or "0") > MAX_DIMENSION:
        raise InputError(
            f"input {entry!r}: dim {index} is {digits}, larger than OpenVINO's largest dimension "
            f"{MAX_DIMENSION}"
        )
    return int(significant or "0")


def element_type(name: str, entry: str) -> ov.Type:
    """The element type spelled `name` (f32, i64, boolean, float32, ...) in input `entry`."""
    found = ELEMENT_TYPES.get(name)
    if found is None:
        raise InputError(
            f"input {entry!r}: unknown element type {name!r} (known: "
            f"{', '.join(sorted(ELEMENT_TYPES))})"
        )
    return found


def input_shapes(given: object) -> list[InputShape]:
    """The entries of `input=` in any form `openvino.convert_model` takes (module docstring);
    None or an empty list: no entry (as convert_model)."""
    if given is None or (isinstance(given, (list, tuple)) and not given):
        return []
    if isinstance(given, str):
        return parse_input_text(given)
    if isinstance(given, dict):
        return [_named(name, value) for name, value in given.items()]
    if _is_shape(given) or _is_type(given):
        return [_single(given)]
    if isinstance(given, (list, tuple)):
        if _is_single(given):
            return [_single(given)]
        return [_single(item) for item in given]
    raise InputError(f"input: cannot read a {type(given).__name__} as a model input")


def _named(name: object, value: object) -> InputShape:
    if not isinstance(name, str):
        raise InputError(f"input: a dict's keys are input names, not {type(name).__name__}")
    entry = _single(value) if value is not None else InputShape()
    if entry.name is not None and entry.name != name:
        raise InputError(f"input: key {name!r} holds an entry named {entry.name!r}")
    return InputShape(name, entry.shape, entry.element)


def _single(value: object) -> InputShape:
    """One input from a name, a shape, a type, or a tuple of them (each at most once)."""
    parts: dict[str, object] = {}
    items = [value] if (_is_shape(value) or not isinstance(value, (list, tuple))) else value
    for item in items:
        kind = _kind(item)
        if kind is None or kind in parts:
            what = "a second " + kind if kind else f"a {type(item).__name__}"
            raise InputError(f"input {value!r}: {what} (expected a name, a shape and a type)")
        parts[kind] = item
    return InputShape(
        parts.get("name"),
        _partial_shape(parts["shape"]) if "shape" in parts else None,
        _ov_type(parts["type"]) if "type" in parts else None,
    )


def _is_single(items: list | tuple) -> bool:
    kinds = [_kind(item) for item in items]
    return None not in kinds and len(set(kinds)) == len(kinds)


def _kind(item: object) -> str | None:
    if isinstance(item, str):
        return "name"
    if _is_shape(item):
        return "shape"
    return "type" if _is_type(item) else None


def _is_shape(value: object) -> bool:
    if isinstance(value, (ov.PartialShape, ov.Shape)):
        return True
    return isinstance(value, (list, tuple)) and all(
        isinstance(dim, (int, ov.Dimension)) and not isinstance(dim, bool) for dim in value
    )


def _is_type(value: object) -> bool:
    if isinstance(value, (ov.Type, np.dtype)):
        return True
    return isinstance(value, type) and (
        issubclass(value, np.generic) or value in (bool, int, float)
    )


def _partial_shape(value: object) -> ov.PartialShape:
    if isinstance(value, (list, tuple)):
        bad = [dim for dim in value if isinstance(dim, int) and not -1 <= dim <= MAX_DIMENSION]
        if bad:
            raise InputError(
                f"input {list(value)}: dimension {bad[0]} (expected -1, or 0 to {MAX_DIMENSION})"
            )
    return ov.PartialShape(value)


def _ov_type(value: object) -> ov.Type:
    if isinstance(value, ov.Type):
        return value
    dtype = np.dtype(value)
    found = ELEMENT_TYPES.get(dtype.name)
    if found is None:
        raise InputError(f"input: numpy type {dtype.name} has no OpenVINO element type")
    return found


def output_names(given: object) -> list[str]:
    """The tensors of `output=`: a comma-separated text, or a list of names; None: none."""
    if given is None:
        return []
    items = given.split(",") if isinstance(given, str) else list(given)
    if not all(isinstance(item, str) and item.strip() for item in items):
        raise InputError(f"output {given!r}: expected tensor names")
    return [item.strip() for item in items]
