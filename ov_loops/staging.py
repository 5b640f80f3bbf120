"""Writing an IR in two steps, so that the `ov.Model` can be freed between them: `stage` writes
it to a scratch directory (`IRPlace` makes one beside the IR's path), `IRPlace.commit`
validates the scratch IR and moves it into place. On failure nothing is left half-written.

    with IRPlace(path) as place:                # the scratch directory's lifetime
        staged = stage(model, place.scratch_xml)  # keeps no reference to the model
        del model                                 # ... every reference the caller holds
        place.commit(staged)                      # validate (an error: nothing written), move

Validation costs about twice the CPU while the converted model is alive in the process
(seq1000: 1.7 s against 0.7 s once freed, not the cyclic GC): `ov-loops convert` frees it
between the steps; `ov_loops.save`, whose caller holds the model, runs them back to back.
Both write the model without `ov.save_model`'s clone where that costs less memory (seq1000:
the save's peak 212 -> 173 MiB): `ov-loops convert` owns its model, so `stage(owned=True)`
changes it (ov_loops.owned_save); `ov_loops.save`'s caller holds the model, which is put back
as it was after (ov_loops.borrowed_save). A model of big weights is written by save_model.
The OVMS layout (ov_loops.serving) stages into its own place the same way.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import openvino as ov

from ov_loops.borrowed_save import PUT_BACK_BYTES, BorrowedModel
from ov_loops.errors import ConversionError, InputError
from ov_loops.heap import release_freed_heap
from ov_loops.owned_save import census, save_owned

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StagedIR:
    """An IR written to a scratch path, not yet validated: `xml` (its .bin beside), whether it
    has a layer the validator looks into (`judged`), its weights' type, when it was started."""

    xml: Path
    judged: bool
    weights: str
    started: float

    def validate(self) -> None:
        """Raise ConversionError when the validator finds an error in the IR: the first one,
        with its loop and rule code, and how many more. Warnings are logged (info)."""
        if not self.judged:
            return
        from ov_loops.ir.validate import validate

        started = time.perf_counter()
        report = validate(self.xml)
        log.debug("validated the IR in %s", since(started))
        for warning in report.warnings:
            log.info(
                "validate: %s at loop '%s': %s", warning.code, warning.layer_path, warning.message
            )
        if report.errors:
            first, more = report.errors[0], len(report.errors) - 1
            others = f" (and {more} more error(s))" if more else ""
            raise ConversionError(
                f"the IR fails validation, nothing written: loop '{first.layer_path}': "
                f"{first.code} {first.message}{others}"
            )

    def saved(self, target: Path) -> None:
        """Log that the IR is in place at `target`."""
        log.info("saved %s (%s weights) in %s", target, self.weights, since(self.started))


def stage(
    model: ov.Model, xml: Path, compress_to_fp16: bool = True, owned: bool = False
) -> StagedIR:
    """Write `model` as the IR `xml` (a scratch path; its directory is created), f32 weights
    as f16 when `compress_to_fp16`, unless the model has f64 constants (OpenVINO would round
    those to f16 too: conversion/precision.py). The result holds no reference to the model.

    The model is written in place, without `ov.save_model`'s clone, where that costs less
    memory (`Weights.in_place_is_cheaper`; otherwise by save_model). `owned`: the caller owns
    the model and drops it after (`ov-loops convert`): it is left changed (ov_loops.owned_save).
    Otherwise it is put back as it was, on an error too (ov_loops.borrowed_save)."""
    started = time.perf_counter()
    release_freed_heap()  # what the conversion freed, before saving adds lxml and the validator
    weights = census(model)
    if compress_to_fp16 and weights.has_f64:
        log.info("the model has f64 constants: no weights stored as f16 (f64 kept)")
        compress_to_fp16 = False
    xml.parent.mkdir(parents=True, exist_ok=True)
    if not weights.in_place_is_cheaper(compress_to_fp16, 0 if owned else PUT_BACK_BYTES):
        ov.save_model(model, str(xml), compress_to_fp16=compress_to_fp16)
    elif owned:
        save_owned(model, xml, compress_to_fp16)
    else:
        BorrowedModel(model).save(xml, compress_to_fp16)
    kind = "f16" if compress_to_fp16 else "f32"
    return StagedIR(xml, _has_subgraphs(model), kind, started)


def _has_subgraphs(model: ov.Model) -> bool:
    """Whether the main graph has a layer the validator looks into (Loop, TensorIterator, If).
    The validator (and lxml) is imported when there is one to validate: `translate` does not
    need it (35 ms of a fresh process's first conversion), nor an IR without (4.1 MiB)."""
    from ov_loops.ir.kinds import KEPT_TYPES

    return any(op.get_type_name() in KEPT_TYPES for op in model.get_ordered_ops())


class Place:
    """Where staged files go and, while in a `with`, a scratch directory in `scratch_in` to
    stage them in. Leaving the `with` removes the scratch directory and, on failure, undoes
    `_make` (`_undo`); an OSError becomes InputError naming `label`. Subclasses say what is
    made, undone and how a staged IR is committed."""

    def __init__(self, scratch_in: Path, label: Path) -> None:
        self.scratch_in, self.label = scratch_in, label
        self._scratch: tempfile.TemporaryDirectory | None = None

    @property
    def scratch(self) -> Path:
        """The scratch directory."""
        assert self._scratch is not None, "a Place's scratch directory exists in its with only"
        return Path(self._scratch.name)

    def _make(self) -> None:
        """Create the directories the files go in (before the scratch directory)."""

    def _undo(self) -> None:
        """Remove what `_make` created, on failure."""

    def __enter__(self) -> Place:
        self._make()
        try:
            self._scratch = tempfile.TemporaryDirectory(dir=self.scratch_in, prefix=".ov-loops-")
        except OSError as exc:
            self.__exit__(type(exc), exc, None)  # raises InputError
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
        if exc is None:
            return
        self._undo()
        if isinstance(exc, OSError):
            raise InputError(f"{self.label}: cannot write: {exc.strerror or exc}") from None


class IRPlace(Place):
    """An IR's place, `path` (.xml): the scratch directory is beside it, its missing
    directories are created (removed on failure)."""

    def __init__(self, target: Path) -> None:
        super().__init__(target.parent, target)
        self.path = target
        self._made: Path | None = None

    @property
    def scratch_xml(self) -> Path:
        """The IR's path in the scratch directory."""
        return self.scratch / self.path.name

    def _make(self) -> None:
        self._made = make_directories(self.path.parent)

    def _undo(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)

    def commit(self, staged: StagedIR) -> Path:
        """Validate the staged IR, then move it (.bin first) to `path`; return `path`."""
        staged.validate()
        os.replace(staged.xml.with_suffix(".bin"), self.path.with_suffix(".bin"))
        os.replace(staged.xml, self.path)
        staged.saved(self.path)
        return self.path


def make_directories(directory: Path) -> Path | None:
    """Create `directory` and its missing parents; the outermost one created (None: none)."""
    missing = [each for each in (directory, *directory.parents) if not each.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"{directory}: not a directory") from None
    except OSError as exc:
        raise InputError(f"{directory}: cannot create: {exc.strerror or exc}") from None
    return missing[-1] if missing else None


def since(started: float) -> str:
    """The time since `started` (perf_counter), in ms."""
    return f"{1000 * (time.perf_counter() - started):.0f} ms"
