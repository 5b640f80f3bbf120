"""Inputs and outputs of a check kept in .npz archives: written atomically, read back with
their names checked against the model's."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ov_loops.checking.inputs import by_position, read_arrays
from ov_loops.checking.polygraphy_json import polygraphy_text
from ov_loops.errors import InputError


def save_arrays(path: str | os.PathLike, arrays: dict[str, np.ndarray], what: str) -> None:
    """Write `arrays` by name to `path` (exactly that name): polygraphy's JSON when the name
    ends in .json (`what` "inputs": a feed dict, else RunResults), else an .npz; into a
    temporary file beside it, then renamed, so a failure leaves no half-written file."""
    target = Path(path)
    require_directory(target, what)
    scratch = None
    try:
        with tempfile.NamedTemporaryFile(
            dir=target.parent, prefix=".ov-loops-", suffix=target.suffix, delete=False
        ) as handle:
            scratch = handle.name
            if target.suffix.lower() == ".json":
                handle.write(polygraphy_text(arrays, what).encode())
            else:
                np.savez(handle, **arrays)
        os.replace(scratch, target)
    except OSError as exc:
        raise InputError(f"{target}: cannot write {what}: {exc.strerror or exc}") from None
    finally:
        if scratch is not None and os.path.exists(scratch):
            os.unlink(scratch)


def require_directory(path: str | os.PathLike | None, what: str) -> None:
    """The directory `path` is to be written in exists (checked before the work starts)."""
    if path is not None and not Path(path).parent.is_dir():
        raise InputError(f"{path}: cannot write {what}: no such directory {Path(path).parent}")


@dataclass(frozen=True)
class SavedOutputs:
    """Outputs saved earlier (read at once, matched with the model's outputs later)."""

    path: str | os.PathLike
    arrays: dict[str, np.ndarray]

    @classmethod
    def read(cls, path: str | os.PathLike) -> SavedOutputs:
        return cls(path, read_arrays(path, "outputs"))

    def require_names(self, names: list[str]) -> None:
        """The saved outputs are exactly the model's outputs `names`, by name or by position
        (`by_position`; checked before the work starts)."""
        arrays = by_position(self.arrays, names, "outputs")
        missing = [name for name in names if name not in arrays]
        extra = sorted(set(arrays) - set(names))
        if missing or extra:
            said = [f"missing {', '.join(missing)}"] * bool(missing)
            said += [f"not outputs of the model: {', '.join(extra)}"] * bool(extra)
            raise InputError(
                f"{self.path}: the saved outputs do not match the model's ({'; '.join(said)}); "
                f"the model's outputs: {', '.join(names) or 'none'}"
            )

    def matched(self, names: list[str], like: list[np.ndarray]) -> list[np.ndarray]:
        """The outputs in the order of `names` (`require_names`), each of the kind of its
        counterpart in `like` (raw 2-byte values, numpy's storage of bfloat16, are read back
        as bfloat16)."""
        self.require_names(names)
        arrays = by_position(self.arrays, names, "outputs")
        return [_as_kind(self.path, name, arrays[name], ours) for name, ours in zip(names, like)]


def _as_kind(path, name: str, value: np.ndarray, ours: np.ndarray) -> np.ndarray:
    raw = value.dtype.kind == "V" and value.dtype.names is None and value.dtype.subdtype is None
    if raw and ours.dtype.name == "bfloat16" and value.dtype.itemsize == ours.dtype.itemsize:
        return value.view(ours.dtype)
    if value.dtype.kind not in "biuf" and value.dtype.name != "bfloat16":
        raise InputError(f"{path}: saved output '{name}' holds {value.dtype} values: no numbers")
    return value
