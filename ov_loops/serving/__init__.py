"""Serving: an IR written as a version of a model in an OpenVINO Model Server (OVMS) repository.

    REPOSITORY/config.json          {"model_config_list": [{"config": {"name": NAME,
                                                                      "base_path": "NAME"}}, ...]}
    REPOSITORY/NAME/N/model.xml     (and model.bin): version N of model NAME

`base_path` is relative to the repository, so the repository can be mounted anywhere:
`docker run -p 9000:9000 -v $PWD/REPOSITORY:/models openvino/model_server
--config_path /models/config.json --port 9000`. An existing config.json is merged, not
rewritten: only the entry of NAME changes, and only its base_path and `stateful` (a model with
Variables, `--stateful`, is listed with `"stateful": true`, OVMS's option for models that keep
state between requests); every other key, entry and setting is kept (serving/config.py).
Versions are never overwritten unless asked (serving/repository.py).
"""

from __future__ import annotations

from ov_loops.serving.repository import save_ovms, versions

__all__ = ["save_ovms", "versions"]
