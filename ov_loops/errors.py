"""One exception hierarchy for every user-facing failure.

Each error carries the process exit code the CLI uses and renders as one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


class OvLoopsError(Exception):
    """Base of every error ov-loops raises on purpose."""

    exit_code = 1

    def __str__(self) -> str:
        # One line, whatever the underlying library put in the message.
        return " ".join(super().__str__().split())


class InputError(OvLoopsError):
    """The input cannot be read: missing file, not ONNX, truncated, invalid graph, bad usage."""

    exit_code = 2


class ConversionError(OvLoopsError):
    """The model was read but cannot be converted."""

    exit_code = 1


@dataclass(frozen=True)
class UnsupportedItem:
    """One thing in the model that cannot be converted, with where it is."""

    op: str
    domain: str
    opset: int | None
    path: str
    reason: str = "no OpenVINO conversion rule"

    def describe(self) -> str:
        domain = self.domain or "ai.onnx"
        opset = f"-{self.opset}" if self.opset is not None else ""
        return f"{domain}.{self.op}{opset} at {self.path} ({self.reason})"


class UnsupportedError(ConversionError):
    """Every unsupported op or construct of a model, reported together."""

    def __init__(self, items: list[UnsupportedItem]) -> None:
        # Sorted in full (not only by path and op): set order would vary between runs.
        self.items = sorted(set(items), key=lambda item: (item.path, item.op, item.describe()))
        listed = "; ".join(item.describe() for item in self.items)
        noun = "construct" if len(self.items) == 1 else "constructs"
        super().__init__(f"cannot convert {len(self.items)} unsupported {noun}: {listed}")


def message_line(exc: BaseException, last: bool = False) -> str:
    """One line of an exception's message: the first (or `last`) non-blank line, skipping the
    "Check '...' failed at src/..." and "Exception from src/..." lines OpenVINO puts around its
    own words; the exception's type name when it says nothing."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Check ", "Exception from src"))]
    chosen = useful or lines
    if not chosen:
        return type(exc).__name__
    return chosen[-1] if last else chosen[0]


@contextmanager
def reading(path: Path, kind: str) -> Iterator[None]:
    """Turn the OSErrors of reading `path` into one-line InputErrors."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not {kind}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
