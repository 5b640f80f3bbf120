"""The conversion API: `translate` and `convert` an ONNX model, `save` the IR."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import onnx
import openvino as ov

from ov_loops.conversion.driver import convert_model
from ov_loops.conversion.report import Conversion
from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load import load_model
from ov_loops.loopir.passes.levels import check_optimize_level
from ov_loops.targets import target_profile

ModelSource = str | os.PathLike | bytes | onnx.ModelProto


def translate(
    model: ModelSource, optimize: str = "default", target: str = "CPU", unroll: int | None = None
) -> Conversion:
    """Convert an ONNX model and report what became of each loop.

    `model` is a path, the bytes of an ONNX file or an `onnx.ModelProto`; loading applies the
    ONNX passes of `ov_loops.frontends.onnx.rewrites` (sort, check, normalise). `optimize` is
    "none", "default" or "max": which loop optimisations run (see docs/architecture.md).
    `target` ("CPU", "GPU", "NPU") chooses lowerings and workarounds per loop; `unroll` unrolls
    loops of at most that many iterations into straight-line graph on any target. Raises
    `InputError` when it cannot be read (or `optimize` is unknown), `ConversionError` (or
    `UnsupportedError`, listing every unsupported op with its node path) when it cannot be
    converted.
    """
    check_optimize_level(optimize)
    profile = target_profile(target, unroll)
    return convert_model(load_model(model), profile, optimize=optimize)


def convert(
    model: ModelSource, optimize: str = "default", target: str = "CPU", unroll: int | None = None
) -> ov.Model:
    """Convert an ONNX model to an `openvino.Model` whose loops are all Loop-5 (or straight-line
    graph where unrolled; see `translate`)."""
    return translate(model, optimize, target, unroll).model


def save(model: ov.Model, path: str | os.PathLike, compress_to_fp16: bool = False) -> None:
    """Write `path` (.xml) and its .bin beside it; on failure nothing is left half-written."""
    target = Path(path)
    if target.suffix != ".xml":
        raise InputError(f"{target}: the output path must end in .xml")
    if not target.parent.is_dir():
        raise InputError(f"{target.parent}: no such directory")
    try:
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".ov-loops-") as scratch:
            scratch_xml = Path(scratch) / target.name
            ov.save_model(model, str(scratch_xml), compress_to_fp16=compress_to_fp16)
            os.replace(scratch_xml.with_suffix(".bin"), target.with_suffix(".bin"))
            os.replace(scratch_xml, target)
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
