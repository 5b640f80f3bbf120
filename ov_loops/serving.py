"""Serving: an IR written as an OpenVINO Model Server (OVMS) model repository.

    REPOSITORY/config.json        {"model_config_list": [{"config": {"name": NAME,
                                                                    "base_path": "NAME"}}, ...]}
    REPOSITORY/NAME/1/model.xml   (and model.bin): version 1 of model NAME

`base_path` is relative to the repository, so the repository can be mounted anywhere:
`docker run -p 9000:9000 -v $PWD/REPOSITORY:/models openvino/model_server
--config_path /models/config.json --port 9000`. An entry of another name in an existing
config.json is kept; one of the same name is replaced.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import openvino as ov

from ov_loops.errors import InputError

VERSION = "1"


def save_ovms(model: ov.Model, repository: Path, name: str, compress_to_fp16: bool = True) -> Path:
    """Write `model` as version 1 of `name` in the OVMS repository `repository` (created if
    missing) and list it in the repository's config.json; the path of the model.xml."""
    from ov_loops.api import save

    config = repository / "config.json"
    entries = _entries(config) if config.exists() else []
    xml = repository / name / VERSION / "model.xml"
    save(model, xml, compress_to_fp16=compress_to_fp16)
    entries = [e for e in entries if e.get("config", {}).get("name") != name]
    entries.append({"config": {"name": name, "base_path": name}})
    _write_atomically(config, json.dumps({"model_config_list": entries}, indent=2) + "\n")
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
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as file:
        file.write(text)
    os.replace(file.name, path)
