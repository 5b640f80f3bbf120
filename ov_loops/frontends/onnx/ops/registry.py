"""The loop-op registry: which ONNX ops ov-loops translates into Loop-5, by domain, op type and
opset range, and the class that reads and translates each.

An op registers the layout class of its module (ops/loop.py, scan.py, scan8.py), one class per
opset range in which the op means the same::

    @loop_op("Scan", opsets=(9, None))      # Scan from opset 9 on (None: no last opset)
    class OnnxScan(OnnxLoopLayout): ...

The class reads a node into its layout (`read(node, path, opset, sequences[, captured])`,
raising ConversionError naming the node; `captured`: a scopes.CapturedNames shared by a
model's loops) and translates the loop from the values arriving at its placeholder
(`layout.loop_ir(values, context)` -> (LoopIR, reports of its body's loops); see body.py). A
registration that repeats or overlaps another's opsets raises. Importing the package `ops`
imports each of its modules, so every op is registered before a lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.proto import schema
from ov_loops.record import Record

STANDARD_DOMAINS = ("", "ai.onnx")  # the same domain, spelled two ways
Layout = TypeVar("Layout", bound=type)


class Registration(Record):
    """An op type of a domain read by `layout` in opsets first..last (None: every later one)."""

    __slots__ = ("domain", "op", "first", "last", "layout")

    def __init__(self, domain: str, op: str, first: int, last: int | None, layout: type) -> None:
        self.domain = domain
        self.op = op
        self.first = first
        self.last = last
        self.layout = layout

    def holds(self, opset: int | None) -> bool:
        """Whether `opset` is in the range; an unknown opset (None) is the latest."""
        if opset is None:
            return self.last is None
        return self.first <= opset and (self.last is None or opset <= self.last)

    def overlaps(self, other: Registration) -> bool:
        if (self.domain, self.op) != (other.domain, other.op):
            return False
        below = self.last is not None and self.last < other.first
        above = other.last is not None and other.last < self.first
        return not (below or above)

    def describe(self) -> str:
        last = "" if self.last is None else self.last
        return f"{self.domain or 'ai.onnx'}:{self.op} opsets {self.first}..{last}"


_REGISTERED: list[Registration] = []


def _domain(domain: str) -> str:
    return "" if domain in STANDARD_DOMAINS else domain


def loop_op(
    op: str, opsets: tuple[int, int | None], domain: str = ""
) -> Callable[[Layout], Layout]:
    """Register the decorated layout class as the reader of `op` in `opsets` (first, last),
    and set its `op`; ValueError when another class reads the op in one of those opsets."""

    def register(layout: Layout) -> Layout:
        entry = Registration(_domain(domain), op, opsets[0], opsets[1], layout)
        for other in _REGISTERED:
            if entry.overlaps(other):
                raise ValueError(
                    f"{layout.__name__} reads {entry.describe()}, but {other.layout.__name__} "
                    f"reads {other.describe()}"
                )
        _REGISTERED.append(entry)
        layout.op = op
        return layout

    return register


def is_loop_op(node: schema.NodeProto) -> bool:
    """Whether `node` is of an op ov-loops translates (in some opset)."""
    return any((entry.domain, entry.op) == (_domain(node.domain), node.op_type) for entry in _ops())


def op_types() -> list[str]:
    """The op types registered (of any domain), each once."""
    return sorted({entry.op for entry in _ops()})


def lookup(node: schema.NodeProto, opset: int | None) -> type:
    """The layout class that reads `node` in `opset` (its domain's version; None: unknown);
    ConversionError when the op is not translated in that opset."""
    for entry in _ops():
        if (entry.domain, entry.op) == (_domain(node.domain), node.op_type) and entry.holds(opset):
            return entry.layout
    raise ConversionError(
        f"{node.op_type} '{node.name}' of opset {opset} is not a loop ov-loops translates"
    )


def _ops() -> list[Registration]:
    """Every registration: importing this module imported the package `ops` first, whose
    `__init__` imports each of its modules, and so registered every op."""
    return _REGISTERED
