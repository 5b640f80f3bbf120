"""An OVMS config.json: read it, check its shape, merge one model's entry into it, write it.

OVMS's configuration (model_server docs/parameters.md, src/schema.cpp) is one JSON object:

    {"model_config_list": [{"config": {"name": NAME, "base_path": PATH, ...}}, ...],
     "mediapipe_config_list": [...], "monitoring": {...}, ...}

Merging changes as little as it can (the user's settings are kept):

    entry = the item of model_config_list whose config.name is NAME (appended when none)
    entry.config.base_path = NAME        unless it names that directory already
    entry.config.stateful  = true        when the model keeps state; dropped when it does not
    the rest of the file is kept byte for byte (serving/json_text.py edits the text in place;
    an added entry is laid out like the one before it); nothing changed -> not written at all
"""

from __future__ import annotations

import json
import os
import re
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path

from ov_loops.errors import InputError
from ov_loops.serving.json_text import append_item, remove_member, set_member


@dataclass(frozen=True)
class ConfigFile:
    """A config.json as read: its text (None: there is none) and data (key order kept)."""

    path: Path
    text: str | None
    data: dict

    @classmethod
    def read(cls, path: Path) -> ConfigFile:
        """The config.json at `path` (none: an empty list); a file that is not JSON, or not
        OVMS's shape, is a one-line InputError."""
        if not path.exists():
            return cls(path, None, {"model_config_list": []})
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (OSError, UnicodeDecodeError) as exc:
            said = getattr(exc, "strerror", None) or exc
            raise InputError(f"{path}: cannot read: {said}") from None
        except ValueError as exc:
            raise InputError(f"{path}: not valid JSON ({exc}); nothing written") from None
        _require_shape(path, data)
        return cls(path, text, data)

    def entry(self, name: str) -> dict | None:
        """The `config` object of model `name`, or None."""
        models = self.data.get("model_config_list", [])
        return next((i["config"] for i in models if i["config"].get("name") == name), None)

    def merged(self, name: str, stateful: bool) -> str | None:
        """The text of this file with model `name` listed (see the module), or None when the
        file says so already."""
        models = self.data.get("model_config_list")
        if self.text is None or not models:  # no entry to copy the layout of
            return self._dumped(name, stateful)
        found = [i for i, item in enumerate(models) if item["config"].get("name") == name]
        if not found:
            entry = {"name": name, "base_path": name, **({"stateful": True} if stateful else {})}
            indent = _indent(self.text)
            return append_item(self.text, ("model_config_list",), {"config": entry}, indent)
        path, config = ("model_config_list", found[0], "config"), models[found[0]]["config"]
        text = self.text
        if not _names_directory(self.path.parent, config.get("base_path"), name):
            text = set_member(text, path, "base_path", name)
        if stateful and config.get("stateful") is not True:
            text = set_member(text, path, "stateful", True)
        elif not stateful and config.get("stateful") is True:
            text = remove_member(text, path, "stateful")
        return None if text == self.text else text

    def _dumped(self, name: str, stateful: bool) -> str:
        """The whole file written anew (there was none, or an empty list), keys kept."""
        entry = {"name": name, "base_path": name, **({"stateful": True} if stateful else {})}
        data = {**self.data, "model_config_list": [{"config": entry}]}
        indent = 2 if self.text is None else _indent(self.text)
        return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _require_shape(path: Path, data: object) -> None:
    """OVMS's shape, as far as the entries ov-loops reads and writes go: an object whose
    model_config_list is a list of {"config": {"name": "...", ...}}."""
    if not isinstance(data, dict):
        raise InputError(f"{path}: not an OVMS config.json: the top level is not an object")
    models = data.get("model_config_list", [])
    if not isinstance(models, list):
        raise InputError(f"{path}: not an OVMS config.json: model_config_list is not a list")
    for index, item in enumerate(models):
        config = item.get("config") if isinstance(item, dict) else None
        if not isinstance(config, dict) or not isinstance(config.get("name"), str):
            raise InputError(
                f"{path}: not an OVMS config.json: model_config_list[{index}] is not "
                '{"config": {"name": ..., ...}}'
            )


def _names_directory(repository: Path, base_path: object, name: str) -> bool:
    """Whether `base_path` (relative to config.json's directory, as OVMS reads it) is the
    directory NAME of the repository already."""
    if not isinstance(base_path, str) or "://" in base_path or not base_path:
        return False
    return os.path.normpath(repository / base_path) == os.path.normpath(repository / name)


def _indent(text: str) -> str | int | None:
    """The indentation of a JSON text: None when it is one line, else its first indented
    line's leading whitespace (a number of spaces, or the string itself)."""
    found = re.search(r"\n([ \t]+)\S", text)
    if found is None:
        return None
    unit = found.group(1)
    return len(unit) if set(unit) == {" "} else unit


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` by a file holding `text`, written beside it first (no reader sees half).
    It keeps the permissions of the file it replaces, and a new one gets those `open` gives
    (0o666 less the umask): the server may run as another user (OVMS's image: user `ovms`).
    A symbolic link stays one: the file it names is replaced (a config kept elsewhere, linked
    into the repository). The text is on disk before the rename makes it the file."""
    path = Path(os.path.realpath(path))
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    scratch = path.with_name(f".config-{uuid.uuid4().hex}.tmp")
    descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(scratch, mode)
        os.replace(scratch, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
