"""`ov-loops convert --format json`: the per-loop report as one JSON object."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line imports this module for its schema: keep it light
    from ov_loops.conversion.report import Conversion, ConvertedLoop

CONVERT_JSON_SCHEMA = "ov-loops-convert/1"
CONVERT_JSON_KEYS = (
    'schema "ov-loops-convert/1"; output; translated (the number of loops); loops [{path, op, '
    "becomes, folded, spec (the LoopSpec's one-line summary or null), optimizations, "
    "not_unrolled (why a target that unrolls left it a loop, or null), outputs, carried, summary}]"
)


def conversion_json(conversion: Conversion, output: str | os.PathLike) -> str:
    """The report of a conversion written to `output`, as JSON (keys: `CONVERT_JSON_KEYS`)."""
    return json.dumps(
        {
            "schema": CONVERT_JSON_SCHEMA,
            "output": str(output),
            "translated": len(conversion.loops),
            "loops": [_loop(loop) for loop in conversion.loops],
        },
        indent=2,
    )


def _loop(loop: ConvertedLoop) -> dict:
    return {
        "path": loop.path,
        "op": loop.op,
        "becomes": None if loop.folded is not None else loop.becomes,
        "folded": loop.folded,
        "spec": None if loop.spec is None else loop.spec.summary(),
        "optimizations": list(loop.optimizations),
        "not_unrolled": loop.not_unrolled,
        "outputs": list(loop.outputs),
        "carried": list(loop.carried),
        "summary": loop.summary(),
    }
