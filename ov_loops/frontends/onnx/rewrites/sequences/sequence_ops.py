"""ONNX sequence ops as tensor ops on a sequence's four tensors.

A sequence of n tensors e_0 .. e_{n-1} (one element type) is carried as

    buffer = concat([e.reshape(-1) for e in elements])    # 1-D, the element type
    sizes  = [e.size for e in elements]                    # 1-D int64, n values
    ranks  = [e.ndim for e in elements]                    # 1-D int64, n values
    shapes = concat([e.shape for e in elements])           # 1-D int64, sum(ranks) values

so elements of any shapes (different lengths, even different ranks) are carried exactly, with
no padding. Element k is buffer[start(sizes, k) : start(sizes, k + 1)] reshaped to
shapes[start(ranks, k) : start(ranks, k + 1)], where start(counts, k) = sum(counts[:k]).

Each kernel's docstring states the op's semantics (ONNX operator spec, onnx.defs.get_schema(op)
.doc) as pseudo-code on the Python list `seq`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ov_loops.contract.kinds import OPTIONAL, OPTIONAL_SEQUENCE, SEQUENCE, SequenceKind
from ov_loops.frontends.onnx.proto import schema
from ov_loops.record import Record

if TYPE_CHECKING:  # imported with the general rewrite, which emits (sequences.py)
    from ov_loops.frontends.onnx.rewrites.sequences.sequence_emit import Emit

# What is known before run time of the rank of a sequence's elements: EMPTY (the sequence never
# holds an element, so any rank fits), an int (every element has it), or None (unknown/varies).
EMPTY = "empty"
Rank = int | str | None
# What is known of the elements' dims: EMPTY, a tuple of an int (every element has that dim,
# in every run) or None per dim, or None (unknown).
Dims = tuple[int | None, ...] | str | None


def join_ranks(first: Rank, second: Rank) -> Rank:
    """The rank known of a value that is either of two values of ranks `first` and `second`."""
    if first == EMPTY:
        return second
    if second == EMPTY or first == second:
        return first
    return None


def join_dims(first: Dims, second: Dims) -> Dims:
    """The dims known of a value that is either of two values of dims `first` and `second`."""
    if first == EMPTY:
        return second
    if second == EMPTY:
        return first
    if first is None or second is None or len(first) != len(second):
        return None
    return tuple(a if a == b else None for a, b in zip(first, second))


class Sequence(Record):
    """A sequence's four tensors by name, its element type and what is known of its rank.

    `present` is the name of a bool scalar for an Optional holding a sequence (the sequence is
    empty when absent); an Optional holding a tensor is a Sequence of zero or one element with
    `optional` set."""

    __slots__ = (
        "buffer",
        "sizes",
        "ranks",
        "shapes",
        "elem_type",
        "rank",
        "present",
        "optional",
        "dims",
    )

    def __init__(
        self,
        buffer: str,
        sizes: str,
        ranks: str,
        shapes: str,
        elem_type: int,
        rank: Rank = None,
        present: str | None = None,
        optional: bool = False,
        dims: Dims = None,
    ) -> None:
        self.buffer = buffer
        self.sizes = sizes
        self.ranks = ranks
        self.shapes = shapes
        self.elem_type = elem_type
        self.rank = rank
        self.present = present
        self.optional = optional
        self.dims = dims

    @property
    def kind(self) -> SequenceKind:
        if self.present is not None:
            return OPTIONAL_SEQUENCE
        return OPTIONAL if self.optional else SEQUENCE

    def names(self) -> tuple[str, ...]:
        parts = (self.buffer, self.sizes, self.ranks, self.shapes)
        return parts if self.present is None else (*parts, self.present)

    def renamed(self, names: tuple[str, ...]) -> Sequence:
        present = names[4] if self.present is not None else None
        return self.replace(buffer=names[0], sizes=names[1], ranks=names[2], shapes=names[3],
                            present=present)  # fmt: skip

    def as_sequence(self) -> Sequence:
        """The held sequence of an Optional of a sequence; any other value as it is."""
        return self.replace(present=None, optional=False)


def empty(e: Emit, elem_type: int) -> Sequence:
    """SequenceEmpty(dtype): `seq = []`"""
    ints = [e.empty(schema.TensorProto.INT64) for _ in range(3)]
    return Sequence(e.empty(elem_type), *ints, elem_type=elem_type, rank=EMPTY,
                    dims=EMPTY)  # fmt: skip


def construct(e: Emit, tensors: list[str], elem_type: int, rank: Rank) -> Sequence:
    """SequenceConstruct(inputs...): `seq = list(inputs)`"""
    return Sequence(
        e.concat([e.flat(t) for t in tensors]),
        e.concat([e.size(t) for t in tensors]),
        e.concat([e.rank(t) for t in tensors]),
        e.concat([e.op("Shape", [t]) for t in tensors]),
        elem_type,
        rank,
    )


def length(e: Emit, seq: Sequence) -> str:
    """SequenceLength(seq): `len(seq)`, an int64 scalar."""
    return e.op("Size", [seq.sizes])


def position(e: Emit, seq: Sequence, index: str | None, default: int) -> str:
    """A position (int32/int64 scalar, negative counts from the back; None: `default`) as a
    1-D int64 of one element in [0, n]: `p + n if p < 0 else p`."""
    if index is None:
        p = e.const([default])
    else:
        p = e.vector(e.op("Cast", [index], to=schema.TensorProto.INT64))
    shifted = e.op("Add", [p, e.vector(length(e, seq))])
    return e.op("Where", [e.op("Less", [p, e.const([0])]), shifted, p])


def _splice(e: Emit, seq: Sequence, p: str, drop: int, new: tuple[str, ...] | None) -> Sequence:
    """`seq[:p] + new + seq[p + drop:]` for new None (nothing) or a piece's four tensors."""
    parts = []
    cut = e.plus(p, drop)
    for vector, counts in ((seq.buffer, seq.sizes), (seq.sizes, None), (seq.ranks, None),
                           (seq.shapes, seq.ranks)):  # fmt: skip
        begin, end = p, cut
        if counts is not None:  # the vector holds each element's values: cut at their starts
            starts = e.starts(counts)
            begin, end = e.at(starts, p), e.at(starts, cut)
        middle = [] if new is None else [new[len(parts)]]
        parts.append(e.concat([e.take(vector, e.const([0]), begin), *middle,
                               e.take(vector, end)]))  # fmt: skip
    return seq.replace(buffer=parts[0], sizes=parts[1], ranks=parts[2], shapes=parts[3])


def insert(
    e: Emit, seq: Sequence, tensor: str, at: str | None, known: tuple[int | None, Dims]
) -> Sequence:
    """SequenceInsert(seq, tensor, position=None):
    `seq.insert(position, tensor) if position is not None else seq.append(tensor)`
    (position in [-n, n], negative counts from the back). `known`: the tensor's rank and
    dims as far as known."""
    piece = (e.flat(tensor), e.size(tensor), e.rank(tensor), e.op("Shape", [tensor]))
    known_now = {"rank": join_ranks(seq.rank, known[0]), "dims": join_dims(seq.dims, known[1])}
    if at is None:
        parts = [e.concat([old, new]) for old, new in zip(seq.names()[:4], piece)]
        return seq.replace(buffer=parts[0], sizes=parts[1], ranks=parts[2], shapes=parts[3],
                           **known_now)  # fmt: skip
    return _splice(e, seq, position(e, seq, at, 0), 0, piece).replace(**known_now)


def erase(e: Emit, seq: Sequence, at: str | None) -> Sequence:
    """SequenceErase(seq, position=-1): `del seq[position]` (negative counts from the back)."""
    return _splice(e, seq, position(e, seq, at, -1), 1, None)


def element_shape(e: Emit, seq: Sequence, p: str) -> str:
    """The shape of element p (1-D of one element in [0, n)) of a sequence of known rank, as a
    Gather of that many values: of static length, so the element's rank stays static. (A
    sequence never filled has no element to read; it is read as of rank 0.)"""
    if seq.rank in (0, EMPTY):
        return e.const([], dtype="int64")
    first = e.at(e.starts(seq.ranks), p)
    return e.at(seq.shapes, e.op("Add", [first, e.const(list(range(seq.rank)))]))


def at(e: Emit, seq: Sequence, index: str) -> str:
    """SequenceAt(seq, position): `seq[position]` (negative counts from the back)."""
    p = position(e, seq, index, 0)
    starts = e.starts(seq.sizes)
    values = e.take(seq.buffer, e.at(starts, p), e.at(starts, e.plus(p, 1)))
    return e.reshape(values, element_shape(e, seq, p))
