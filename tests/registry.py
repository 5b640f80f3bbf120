"""Named test entries (scenarios, fuzz mutations) registered where they are defined."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

Entry = TypeVar("Entry")
F = TypeVar("F", bound=Callable)


class Registry(dict[str, Entry], Generic[Entry]):
    """A dict of entries by name, in registration order, that refuses a name given twice.

    `@registry.register` adds a function under its own name; `@registry.register_as("name")`
    under another one.
    """

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def __setitem__(self, name: str, entry: Entry) -> None:
        if name in self:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        super().__setitem__(name, entry)

    def register(self, function: F) -> F:
        """Register `function` under its name; give it back unchanged (a decorator)."""
        self[function.__name__] = function
        return function

    def register_as(self, name: str) -> Callable[[F], F]:
        """A decorator that registers its function under `name`."""

        def register(function: F) -> F:
            self[name] = function
            return function

        return register

    @classmethod
    def merged(cls, what: str, *registries: Registry[Entry]) -> Registry[Entry]:
        """One registry of the entries of `registries`, in order; a name in two of them raises."""
        merged: Registry[Entry] = cls(what)
        for registry in registries:
            for name, entry in registry.items():
                merged[name] = entry
        return merged
