"""Record: the base of internal value classes, compared, hashed and shown by their fields.

A dataclass costs about a millisecond of CPU time to create (Python 3.11 compiles each method it
generates); the ~40 internal records on a conversion's import path made a third of
`import ov_loops.api`. A record instead names its fields in `__slots__`, in order, and
sets them in an explicit `__init__`; this base gives them the methods a frozen dataclass had:
`==` and `hash` over the fields (a record of another class is not equal), a `repr` naming them,
and `replace(**changes)`, a copy with some fields changed (dataclasses.replace). A slot whose name
starts with an underscore is a memo, not a field: neither compared, hashed, shown nor copied
(`"__dict__"` among the slots lets a record have cached properties). Records do not forbid
assignment: no code assigns a field after `__init__`. The types users build and read (LoopSpec,
Conversion, ConvertOptions, ...) stay dataclasses.
"""

from __future__ import annotations

from typing import Any, TypeVar

R = TypeVar("R", bound="Record")


class Record:
    """A value made of the fields named in its class's `__slots__` (in that order)."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = tuple(name for name in cls.__dict__.get("__slots__", ()) if name[0] != "_")
        cls._fields = (*cls._fields, *own)  # a subclass's fields follow its base's

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def replace(self: R, **changes: Any) -> R:
        """A copy with the fields `changes` names set to its values."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)
