"""Record: fields in __slots__ order, compared, hashed, shown and replaced as a frozen
dataclass's; underscored slots are memos; a subclass's fields follow its base's."""

from __future__ import annotations

import dataclasses
from functools import cached_property

import pytest

from ov_loops.record import Record


class Point(Record):
    __slots__ = ("x", "y", "_memo")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y
        self._memo: dict = {}


class Other(Record):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Cached(Record):
    __slots__ = ("values", "__dict__")

    def __init__(self, values: tuple[int, ...]) -> None:
        self.values = values

    @cached_property
    def total(self) -> int:
        return sum(self.values)


class Labelled(Cached):
    __slots__ = ("label",)

    def __init__(self, values: tuple[int, ...], label: str) -> None:
        super().__init__(values)
        self.label = label


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    x: int
    y: int = 0


def test_fields_are_the_public_slots_in_order():
    assert Point._fields == ("x", "y")
    assert Cached._fields == ("values",)
    assert Labelled._fields == ("values", "label")


def test_equal_and_hashed_by_fields_within_one_class():
    first, second = Point(1, 2), Point(1, 2)
    first._memo["seen"] = True  # a memo is not compared
    assert first == second and hash(first) == hash(second)
    assert Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != Other(1, 2)  # another class, same fields
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_equality_and_hash_as_a_frozen_dataclass():
    assert hash(Point(3, 4)) == hash(FrozenPoint(3, 4))
    assert (Point(3, 4) == Point(3, 5)) == (FrozenPoint(3, 4) == FrozenPoint(3, 5))


def test_repr_names_the_fields():
    assert repr(Point(1, "a")) == "Point(x=1, y='a')"
    assert repr(Labelled((1,), "l")) == "Labelled(values=(1,), label='l')"


def test_replace_copies_with_changes():
    point = Point(1, 2)
    point._memo["seen"] = True
    moved = point.replace(y=5)
    assert moved == Point(1, 5) and point == Point(1, 2)
    assert moved._memo == {}  # a memo starts anew, as a dataclass field with init=False
    assert Labelled((1, 2), "a").replace(label="b") == Labelled((1, 2), "b")
    with pytest.raises(TypeError):
        point.replace(z=1)


def test_a_dict_slot_allows_cached_properties():
    cached = Cached((1, 2, 3))
    assert cached.total == 6 and cached.__dict__ == {"total": 6}
    assert cached == Cached((1, 2, 3))  # the cache is not a field


def test_slots_refuse_other_attributes():
    with pytest.raises(AttributeError):
        Point(1).z = 2  # type: ignore[attr-defined]
