"""Serving: an IR written as an OpenVINO Model Server (OVMS) model repository.

    REPOSITORY/config.json        {"model_config_list": [{"config": {"name": NAME,
                                                                    "base_path": "NAME"}}, ...]}
    REPOSITORY/NAME/1/model.xml   (and model.bin): version 1 of model NAME

`base_path` is relative to the repository, so the repository can be mounted anywhere:
`docker run -p 9000:9000 -v $PWD/REPOSITORY:/models openvino/model_server
--config_path /models/config.json --port 9000`. An entry of another name in an existing
config.json is kept; one of the same name is replaced. A model with Variables (`--stateful`,
shared variables) is listed with `"stateful": true`, OVMS's option for models that keep state
between requests (each client then sends a sequence id; see OVMS's "Serving Stateful Models").

Nothing is left half-written: the model is saved in a scratch directory of the repository,
config.json is replaced atomically, and only then the model's files are moved into NAME/1;
if any step before the move fails, the repository is as it was (one-line InputError).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import openvino as ov

from ov_loops.errors import InputError, OvLoopsError

VERSION = "1"


def save_ovms(model: ov.Model, repository: Path, name: str, compress_to_fp16: bool = True) -> Path:
    """Write `model` as version 1 of `name` in the OVMS repository `repository` (created if
    missing) and list it in the repository's config.json (see the module); the path of the
    model.xml."""
    from ov_loops.api import make_directories, save

    config = repository / "config.json"
    entries = _entries(config) if config.exists() else []
    entries = [e for e in entries if e.get("config", {}).get("name") != name]
    entry: dict = {"name": name, "base_path": name}
    if model.get_variables():
        entry["stateful"] = True
    entries.append({"config": entry})
    text = json.dumps({"model_config_list": entries}, indent=2) + "\n"
    xml = repository / name / VERSION / "model.xml"
    made = make_directories(xml.parent)  # before config.json lists it; removed on failure
    try:
        with tempfile.TemporaryDirectory(dir=repository, prefix=".ov-loops-") as scratch:
            staged = Path(scratch) / "model.xml"
            save(model, staged, compress_to_fp16=compress_to_fp16)
            _write_atomically(config, text)
            os.replace(staged.with_suffix(".bin"), xml.with_suffix(".bin"))
            os.replace(staged, xml)  # renames within the repository: no half-written model
    except (OSError, OvLoopsError) as exc:  # InputError, or the IR fails validation
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        if isinstance(exc, OvLoopsError):
            raise
        raise InputError(f"{config}: cannot write: {exc.strerror or exc}") from None
    return xml


def _entries(config: Path) -> list[dict]:
    """The model_config_list of an existing config.json; a file of another form is an error."""
    try:
        entries = json.loads(config.read_text()).get("model_config_list", [])
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"{config}: not an OVMS config.json ({exc})") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise InputError(f"{config}: model_config_list is not a list of objects")
    return entries


def _write_atomically(path: Path, text: str) -> None:
    """Replace `path` by a file holding `text`, written beside it first (no reader sees half)."""
    descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
