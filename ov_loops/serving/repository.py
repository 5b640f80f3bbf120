"""The model files of an OVMS repository: which version to write, and writing it whole.

    REPOSITORY/NAME/N/model.xml, model.bin     version N of model NAME (N a positive integer)
    N = the one asked for, else (the largest version there) + 1, else 1
    an existing N is refused unless overwrite; then the whole version directory is replaced

The version directory is built in a scratch directory of the repository and renamed into place
(a server watching the repository never sees half a version); config.json is written before
that rename and the repository is left as it was when anything before it fails.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import openvino as ov

from ov_loops.errors import InputError
from ov_loops.serving.config import ConfigFile, write_atomically
from ov_loops.staging import Place, StagedIR, make_directories, stage

log = logging.getLogger(__name__)


def save_ovms(
    model: ov.Model,
    repository: str | os.PathLike,
    name: str,
    compress_to_fp16: bool = True,
    version: int | None = None,
    overwrite: bool = False,
) -> Path:
    """Write `model` as a version of model `name` in the OVMS repository `repository` (created
    if missing), list it in the repository's config.json (merged: see ov_loops.serving) and
    return the path of the model.xml.

    `version` is the version to write (default: the largest one there + 1, or 1); a version
    that exists is refused (InputError) unless `overwrite`, which replaces its directory whole.
    Nothing is left half-written: any failure leaves the repository as it was.
    """
    stateful = bool(model.get_variables())
    with VersionPlace(Path(repository), name, stateful, version, overwrite) as place:
        return place.commit(stage(model, place.scratch_xml, compress_to_fp16))


class VersionPlace(Place):
    """A version of model `name` in the OVMS repository `root` (see the module; `stateful`: the
    model has Variables), staged in a scratch directory of the repository (`scratch_xml`), and
    `commit`ted. The model's directory is created (removed on failure if left empty)."""

    def __init__(
        self, root: Path, name: str, stateful: bool, version: int | None, overwrite: bool
    ) -> None:
        _check_name(name)
        if root.suffix.lower() == ".xml":
            raise InputError(
                f"{root}: --layout ovms writes a repository directory (REPOSITORY/NAME/VERSION/"
                "model.xml): give the directory, e.g. -o models/"
            )
        self.config = ConfigFile.read(root / "config.json")
        super().__init__(root, self.config.path)
        self.directory, self.overwrite = root / name, overwrite
        self.number = _version(self.directory, version, overwrite)
        self._text = self.config.merged(name, stateful=stateful)
        _warn_if_not_served(self.config.entry(name), self.number)
        self.path = self.directory / str(self.number) / "model.xml"
        self._made: Path | None = None

    @property
    def scratch_xml(self) -> Path:
        """The model.xml staged in the scratch directory."""
        return self.scratch / "version" / "model.xml"

    def _make(self) -> None:
        self._made = make_directories(self.directory)

    def _undo(self) -> None:
        _remove_empty(self.directory, self._made)

    def commit(self, staged: StagedIR) -> Path:
        """Validate the staged IR, write config.json and rename the version into place (if
        still free: none appeared meanwhile); return the path of its model.xml."""
        staged.validate()
        _version(self.directory, self.number, self.overwrite)
        if self._text is not None:
            write_atomically(self.config.path, self._text)
        replaced = self.scratch / "replaced" if self.overwrite else None
        _move_into_place(staged.xml.parent, self.path.parent, replaced)
        staged.saved(self.path)
        return self.path


def _remove_empty(directory: Path, made: Path | None) -> None:
    """Remove `directory` and its parents up to `made` (the outermost one this call created),
    each only when empty: another writer's files there are never removed."""
    if made is None:
        return
    for each in (directory, *directory.parents):
        try:
            each.rmdir()
        except OSError:
            return
        if each == made:
            return


def _check_name(name: str) -> None:
    """A model name is one directory name of the repository."""
    if not name or name in (".", "..") or "/" in name or os.sep in name or name.startswith("."):
        raise InputError(
            f"--model_name {name!r}: a model name is one directory name (no '/', not hidden)"
        )


def versions(directory: Path) -> list[int]:
    """The versions in a model's directory: its entries named by a positive integer."""
    if not directory.is_dir():
        return []
    found = (e.name for e in directory.iterdir())
    return sorted(int(n) for n in found if n.isascii() and n.isdigit() and int(n) > 0)


def _version(directory: Path, asked: int | None, overwrite: bool) -> int:
    """The version to write (see the module)."""
    if asked is not None and (isinstance(asked, bool) or asked < 1):
        raise InputError(f"--model_version {asked}: a version is a positive integer")
    present = versions(directory)
    number = asked if asked is not None else (present[-1] + 1 if present else 1)
    if (directory / str(number)).exists() and not overwrite:
        raise InputError(
            f"{directory / str(number)}: version {number} of '{directory.name}' exists; "
            "--overwrite replaces it, or omit --model_version to write the next one "
            f"({present[-1] + 1 if present else 1})"
        )
    return number


def _warn_if_not_served(entry: dict | None, number: int) -> None:
    """A version policy in config.json that will not serve the version written: a warning."""
    policy = (entry or {}).get("model_version_policy")
    specific = policy.get("specific", {}).get("versions") if isinstance(policy, dict) else None
    if isinstance(specific, list) and number not in specific:
        log.warning(
            "config.json's model_version_policy serves versions %s only: version %d is written "
            "but not served until the policy lists it",
            specific,
            number,
        )


def _move_into_place(staged: Path, target: Path, replaced: Path | None) -> None:
    """Rename the staged version directory to `target`. When overwriting, an existing one is
    moved aside to `replaced` first (removed with the scratch directory); else a `target`
    that appeared meanwhile with files in it makes the rename fail (never replaced)."""
    if replaced is not None and target.exists():
        os.replace(target, replaced)
    os.rename(staged, target)
