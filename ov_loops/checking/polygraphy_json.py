"""Polygraphy's JSON files of arrays (`polygraphy run --save-inputs / --load-inputs`,
`--save-outputs / --load-outputs`), read and written without polygraphy.

Polygraphy's format (polygraphy/json/serde.py, comparator/struct.py):

    an array        {"array": base64(numpy.save(array)), "polygraphy_class": "ndarray"}
                    (older files mark it "__polygraphy_encoded_ndarray" instead; a LazyArray
                    wraps one: {"values": ARRAY, "polygraphy_class": "LazyArray"})
    inputs          [{NAME: ARRAY, ...}, ...]               one feed dict per iteration
    outputs         {"lst": [[RUNNER, [{"outputs": {NAME: ARRAY, ...}, "runtime": ...,
                     "runner_name": RUNNER, "polygraphy_class": "IterationResult"}, ...]], ...],
                     "polygraphy_class": "RunResults"}

A check runs one iteration: a file of several iterations, or outputs of several runners, is
refused in one line naming them. Arrays are read with numpy.load(allow_pickle=False).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os

import numpy as np

from ov_loops.errors import InputError

RUNNER = "ov-loops-check"


def read_polygraphy(path: str | os.PathLike, what: str) -> dict[str, np.ndarray]:
    """The arrays of a polygraphy JSON file by name: a feed dict (a list of one, or one), or
    RunResults of one runner and one iteration."""
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{path}: cannot read {what}: not JSON ({exc})") from None
    feed = _one_feed(path, what, data)
    return {name: _array(path, name, value) for name, value in feed.items()}


def _one_feed(path, what: str, data: object) -> dict:
    """The one feed dict (name -> encoded array) of `data`."""
    if isinstance(data, dict) and isinstance(data.get("lst"), list):  # RunResults
        runners = [entry[0] for entry in data["lst"] if isinstance(entry, list) and entry]
        if len(runners) != 1 or len(data["lst"][0]) != 2:
            raise InputError(
                f"{path}: cannot read {what}: polygraphy results of {len(runners)} runners "
                f"({', '.join(map(str, runners))}); save those of one (polygraphy run with one "
                "runner, or --save-outputs of it alone)"
            )
        data = [i.get("outputs") if isinstance(i, dict) else i for i in data["lst"][0][1]]
    if isinstance(data, list):
        if len(data) != 1:
            raise InputError(
                f"{path}: cannot read {what}: {len(data)} iterations in the file; a check runs "
                "one (polygraphy run --iterations 1)"
            )
        data = data[0]
    if not isinstance(data, dict):
        raise InputError(f"{path}: cannot read {what}: not polygraphy's JSON of arrays")
    return data


def _array(path, name: str, value: object) -> np.ndarray:
    """One encoded array (an ndarray, or a LazyArray holding one)."""
    if isinstance(value, dict) and "values" in value:  # LazyArray
        return _array(path, name, value["values"])
    if isinstance(value, dict) and "tensor" in value:
        raise InputError(f"{path}: '{name}' is a torch tensor: save numpy arrays")
    encoded = value.get("array") if isinstance(value, dict) else None
    if not isinstance(encoded, str):
        raise InputError(f"{path}: '{name}' is not an array in polygraphy's encoding")
    try:
        data = base64.b64decode(encoded.encode(), validate=True)
    except (binascii.Error, ValueError):
        data = encoded.encode("latin-1", errors="replace")  # polygraphy's oldest encoding
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError, OSError, ... on bad data
        raise InputError(f"{path}: '{name}' cannot be read as an array ({exc})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):  # polygraphy's older archives of one array
        with loaded:
            return loaded[loaded.files[0]]
    return loaded


def polygraphy_text(arrays: dict[str, np.ndarray], what: str) -> str:
    """`arrays` as polygraphy writes them: inputs a list of one feed dict; outputs RunResults
    of one runner (named `RUNNER`) and one iteration."""
    feed = {name: _encoded(array) for name, array in arrays.items()}
    if what == "inputs":
        data: object = [feed]
    else:
        lazy = {name: {"values": v, "polygraphy_class": "LazyArray"} for name, v in feed.items()}
        iteration = {
            "outputs": lazy,
            "runtime": None,
            "runner_name": RUNNER,
            "polygraphy_class": "IterationResult",
        }
        data = {"lst": [[RUNNER, [iteration]]], "polygraphy_class": "RunResults"}
    return json.dumps(data, indent=4)


def _encoded(array: np.ndarray) -> dict[str, str]:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return {"array": base64.b64encode(buffer.getvalue()).decode(), "polygraphy_class": "ndarray"}
