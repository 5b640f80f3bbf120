"""Kinds of loop-carried values: the Loop-5 ports each takes, what its parts are named, and how a
value of the kind is packed into its tensors and unpacked from them.

A logical carried value (what a frontend's loop carries: a tensor, a sequence, an optional) is
carried by one or more consecutive merged inputs of the LoopSpec, one per part of its kind; a
model's input or output of the kind is as many tensors, named as the parts are::

    TENSOR              x                                  1 port
    SEQUENCE            x, x.sizes, x.ranks, x.shapes      4 ports; for elements e_0 .. e_{n-1}:
        x         = concat([e.reshape(-1) for e in elements])    1-D, the element type
        x.sizes   = [e.size for e in elements]                   1-D int64
        x.ranks   = [e.ndim for e in elements]                   1-D int64
        x.shapes  = concat([e.shape for e in elements])          1-D int64
    OPTIONAL            a SEQUENCE of zero (absent) or one element (an Optional of a tensor)
    OPTIONAL_SEQUENCE   a SEQUENCE's four, then x.present: a bool scalar (the sequence is empty
                        when absent)

This module is the one place that says how many ports each kind takes and what they are; the
ONNX sequence rewrite (frontends/onnx/rewrites/sequences/) computes on the same parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CarriedKind:
    """A kind of carried value; this class is the kind of a tensor (one part, itself)."""

    name: str
    part_suffixes: tuple[str, ...] = ("",)

    def __str__(self) -> str:
        return self.name

    @property
    def ports(self) -> int:
        """How many merged inputs (or model inputs/outputs) a value of this kind takes."""
        return len(self.part_suffixes)

    def part_names(self, name: str) -> tuple[str, ...]:
        """The names ov-loops gives the parts of a value `name` (before making them unique)."""
        return tuple(name + suffix for suffix in self.part_suffixes)

    def described(self) -> str:
        """The kind in a sentence: "tensor", "sequence", "optional of a sequence"."""
        return self.name.replace("_", " of a ")

    # -- values ---------------------------------------------------------------------------------
    def pack(self, value, dtype=None) -> list:
        """The parts of `value` (as the Python API takes it: an array for a tensor, a list of
        arrays for a sequence, an array or None for an Optional of a tensor, a list or None for
        an Optional of a sequence); `dtype` is the element type of a sequence's elements."""
        return [value]

    def unpack(self, parts: list):
        """The value (as `pack` takes it) of its parts."""
        return parts[0]

    @property
    def elementwise(self) -> bool:
        """Whether `check` compares a value element by element (a tensor is compared whole)."""
        return False


@dataclass(frozen=True)
class SequenceKind(CarriedKind):
    """A sequence of tensors of one element type and any shapes (module docstring); `most`
    bounds its length (an Optional of a tensor: 1); `flagged` adds the `present` part."""

    most: int | None = None
    flagged: bool = False

    def pack(self, value, dtype=None) -> list[np.ndarray]:
        if self.most == 1:  # an Optional of a tensor holds the tensor itself
            return self.pack_elements(None if value is None else [value], dtype)
        return self.pack_elements(value if self.flagged else list(value), dtype)

    def pack_elements(self, elements: list | None, dtype) -> list[np.ndarray]:
        """The parts of a value given as its elements (None: an absent Optional)."""
        parts = pack_sequence(elements or [], dtype)
        return [*parts, np.array(elements is not None)] if self.flagged else parts

    def unpack(self, parts: list):
        elements = self.elements(parts)
        if self.most == 1:
            return elements[0] if elements else None
        return elements if self.present(parts) in (None, True) else None

    @property
    def elementwise(self) -> bool:
        return True

    def present(self, parts: list) -> bool | None:
        """Whether an Optional of a sequence is present (None: the kind has no `present` part)."""
        return bool(parts[4]) if self.flagged else None

    def elements(self, parts: list) -> list[np.ndarray]:
        """The elements the parts hold; ValueError when they do not describe a sequence."""
        return unpack_sequence(*parts[:4])


SEQUENCE_PARTS = ("", ".sizes", ".ranks", ".shapes")
TENSOR = CarriedKind("tensor")
SEQUENCE = SequenceKind("sequence", SEQUENCE_PARTS)
OPTIONAL = SequenceKind("optional", SEQUENCE_PARTS, most=1)
OPTIONAL_SEQUENCE = SequenceKind("optional_sequence", (*SEQUENCE_PARTS, ".present"), flagged=True)
KINDS = {kind.name: kind for kind in (TENSOR, SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE)}


def pack_sequence(elements: list, dtype: np.dtype | type) -> list[np.ndarray]:
    """The four tensors of a sequence of `elements` (arrays of one element type, `dtype`)."""
    arrays = [np.asarray(element, dtype) for element in elements]
    flat = [array.reshape(-1) for array in arrays]
    return [
        np.concatenate(flat) if flat else np.zeros(0, dtype),
        np.array([array.size for array in arrays], np.int64),
        np.array([array.ndim for array in arrays], np.int64),
        np.array([n for array in arrays for n in array.shape], np.int64),
    ]


def unpack_sequence(
    buffer: np.ndarray, sizes: np.ndarray, ranks: np.ndarray, shapes: np.ndarray
) -> list[np.ndarray]:
    """The elements (arrays) of a sequence from its four tensors."""
    elements, value, dim = [], 0, 0
    for size, rank in zip(np.asarray(sizes).tolist(), np.asarray(ranks).tolist()):
        shape = np.asarray(shapes)[dim : dim + rank].tolist()
        elements.append(np.asarray(buffer)[value : value + size].reshape(shape))
        value, dim = value + size, dim + rank
    return elements


# -- carried values of a loop ------------------------------------------------------------------
@dataclass(frozen=True)
class CarriedValue:
    """A logical loop-carried value: its name (the outer value it starts from), its kind, and
    the positions in `LoopSpec.merged_inputs` of the merged inputs carrying it, in order."""

    name: str
    merged: tuple[int, ...]
    kind: CarriedKind = TENSOR

    def __post_init__(self) -> None:
        if not isinstance(self.kind, CarriedKind):
            raise ValueError(f"carried value '{self.name}': unknown kind {self.kind!r}")
        if len(self.merged) != self.kind.ports:
            raise ValueError(
                f"carried value '{self.name}': a {self.kind} takes {self.kind.ports} merged "
                f"input(s), got {len(self.merged)}"
            )


def tensors(names: list[str], first: int = 0) -> tuple[CarriedValue, ...]:
    """Tensor carried values for `names`, carried by merged inputs first, first + 1, ..."""
    return tuple(CarriedValue(name, (first + k,)) for k, name in enumerate(names))


def grouped(names: list[str], kinds: list[CarriedKind]) -> tuple[CarriedValue, ...]:
    """Carried values of the merged inputs whose outer values are `names`, in order, one of each
    of `kinds` over as many inputs as its kind takes; a value is named by its first input."""
    values, first = [], 0
    for kind in kinds:
        values.append(CarriedValue(names[first], tuple(range(first, first + kind.ports)), kind))
        first += kind.ports
    return tuple(values)


# -- kinds marked on parts ---------------------------------------------------------------------
# The rt_info key, on a Loop-5 body, of the kind of each merged body Parameter (by its name) that
# carries a part of a value that is not a tensor: "<kind> <part>", e.g. "sequence 1".
CARRIED_MARK = "ov_loops_carried"
# on an unrolled Loop-5's body: how many of the loop's own iterations one Loop-5 iteration runs
STEP_MARK = "ov_loops_iterations_per_step"
Part = tuple[CarriedKind, int]  # a part of a carried value: its kind and its index among them


def mark(part: Part) -> str:
    """How a part is written in a mark."""
    return f"{part[0].name} {part[1]}"


def read_mark(text: str) -> Part | None:
    """The part a mark names; None for anything else."""
    words = text.split()
    if len(words) != 2 or words[0] not in KINDS or not words[1].isdigit():
        return None
    return KINDS[words[0]], int(words[1])


def kinds_of_parts(parts: list[Part | None]) -> list[CarriedKind]:
    """The kind of each value of consecutive merged inputs, each known as a part (None: not
    known, a tensor): a kind's parts 0, 1, ... in order make one value of it; a part out of its
    place is read as a tensor (a pass or transformation removed one of its siblings)."""
    kinds, position = [], 0
    while position < len(parts):
        found = parts[position]
        kind = TENSOR
        if found is not None and found[1] == 0:
            wanted = [(found[0], k) for k in range(found[0].ports)]
            if parts[position : position + found[0].ports] == wanted:
                kind = found[0]
        kinds.append(kind)
        position += kind.ports
    return kinds


def kinds_by_suffix(names: list[str]) -> list[CarriedKind]:
    """The kinds of consecutive merged inputs named `names`, from the names ov-loops gives the
    parts (what an IR written before kinds were marked tells): `x` then `x.sizes`, `x.ranks`,
    `x.shapes` (and `x.present`) make a sequence (an Optional of a sequence), anything else is a
    tensor. An Optional of a tensor reads as a sequence, which compares alike."""
    kinds, position = [], 0
    while position < len(names):
        name = names[position]
        kind = next(
            (
                each
                for each in (OPTIONAL_SEQUENCE, SEQUENCE)
                if tuple(names[position : position + each.ports]) == each.part_names(name)
            ),
            TENSOR,
        )
        kinds.append(kind)
        position += kind.ports
    return kinds
