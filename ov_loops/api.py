"""The conversion API: `translate` and `convert` an ONNX model, `save` the IR."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import openvino as ov

from ov_loops.conversion.caveats import sequence_lengths_warning
from ov_loops.conversion.driver import convert_model
from ov_loops.conversion.precision import f64_warning, keeps_f64_weights
from ov_loops.conversion.provenance import record_conversion
from ov_loops.conversion.report import Conversion
from ov_loops.convert_options import ConvertOptions
from ov_loops.errors import ConversionError, InputError
from ov_loops.frontends.onnx.load.caveats import nodes_with_sequence_lengths
from ov_loops.frontends.onnx.load.input_specs import input_shapes, output_names
from ov_loops.frontends.onnx.load.io_edits import InputOutputEdits
from ov_loops.frontends.onnx.load.load import ModelSource, checked_on_failure, load_model
from ov_loops.loopir.passes.levels import OptimizeLevel

log = logging.getLogger(__name__)


def translate(
    model: ModelSource,
    optimize: OptimizeLevel = "default",
    input: object = None,  # noqa: A002 -- openvino.convert_model's name
    output: str | list[str] | None = None,
    target: str = "CPU",
    unroll: int | None = None,
    stateful: bool = False,
    max_trip_count: int | None = None,
) -> Conversion:
    """Convert an ONNX model and report what became of each loop.

    `model` is a path, the bytes of an ONNX file, a binary stream (`io.BytesIO`) or an
    `onnx.ModelProto`; loading applies the ONNX passes of
    `ov_loops.frontends.onnx.load.prepare` (sort, check, normalise). `optimize` is "none",
    "default" or "max": which loop optimisations run (see docs/architecture.md). `input` sets the
    inputs' shapes and element types as `openvino.convert_model` takes them
    (`"X[1,?,16]{f32},h0[1,16]"`, `{"X": [1, 5]}`, `[("X", [1, 5], np.float32)]`, ...;
    frontends.onnx.load.input_specs): they reach every loop body, and a trip count they make
    constant becomes a constant. `output` names the main-graph tensors the model is cut at (`"y,h"`
    or a list). `target` ("CPU", "GPU", "NPU") chooses lowerings and workarounds per loop; `unroll`
    unrolls loops of at most that many iterations into straight-line graph on any target; `stateful`
    keeps the carried values of the main graph's loops in OpenVINO Variables, to feed a long
    sequence in chunks (reset_state() starts a new one; lower/stateful.py); `max_trip_count` is
    the trip count of loops without one (they stop at their condition, or after that many
    iterations: a bound the user vouches for). Raises `InputError` when
    it cannot be read (or an argument is wrong, or `input` gives one symbolic dim two lengths
    and the model cannot be converted with them), `ConversionError` (or `UnsupportedError`, listing
    every unsupported op with its node path) when it cannot be converted.
    """
    options = ConvertOptions(optimize, input, target, unroll, stateful, max_trip_count)
    edits = InputOutputEdits(input_shapes(options.input), output_names(output))
    started = time.perf_counter()
    with checked_on_failure(model):
        loaded = load_model(model, edits.apply, weights_in_files=True, check=False)
        recurrent = nodes_with_sequence_lengths(loaded.model)
        log.info("read and prepared the ONNX model in %s", _since(started))
        started = time.perf_counter()
        try:
            conversion = convert_model(loaded, options.lowering(), input_shapes=edits.shapes)
        except ConversionError:
            if edits.conflict is None:
                raise
            raise InputError(f"{edits.conflict}: the model declares them one length") from None
    edits.retype(conversion.model)
    record_conversion(conversion.model, model, options, output)
    log.info("converted %d loop(s) in %s", len(conversion.loops), _since(started))
    converted = conversion.model
    for warning in (f64_warning(converted), sequence_lengths_warning(recurrent, converted)):
        if warning is not None:
            log.warning(warning)
    return conversion


def _since(started: float) -> str:
    return f"{1000 * (time.perf_counter() - started):.0f} ms"


def convert(
    model: ModelSource,
    optimize: OptimizeLevel = "default",
    input: object = None,  # noqa: A002 -- openvino.convert_model's name
    output: str | list[str] | None = None,
    target: str = "CPU",
    unroll: int | None = None,
    stateful: bool = False,
    max_trip_count: int | None = None,
) -> ov.Model:
    """Convert an ONNX model to an `openvino.Model` whose loops are all Loop-5 (or straight-line
    graph where unrolled; the arguments are translate's)."""
    conversion = translate(model, optimize, input, output, target, unroll, stateful, max_trip_count)
    return conversion.model


def ir_path(path: str | os.PathLike) -> Path:
    """`path` as the IR's .xml file, named as `ovc -o` names it: `.xml` appended unless it ends
    in `.xml` (`out` -> `out.xml`, `model.XML` -> `model.XML.xml`); InputError for a path ending
    in a separator (a directory: save needs the file's name)."""
    text = os.fspath(path)
    if text.endswith(("/", os.sep)):
        raise InputError(f"{text}: names a directory; give the IR's file name (NAME.xml)")
    return Path(text if text.endswith(".xml") else text + ".xml")


def save(model: ov.Model, path: str | os.PathLike, compress_to_fp16: bool = True) -> None:
    """Write `path` (`ir_path`: `.xml` appended unless it ends in `.xml`, as `ovc` does) and
    its .bin beside it, creating missing directories; on failure nothing is left half-written
    (nor a directory made for it).

    `compress_to_fp16` (on by default, as in `openvino.save_model` and `ovc`) stores f32
    constants, those in loop bodies too, as f16 that the model converts back to f32. Unlike
    `ovc`, a model with f64 constants is stored without f16 weights: OpenVINO would round its
    f64 constants to f16 too (conversion/precision.py).

    The IR is validated (`ov_loops.validate`) before it is moved into place: one the validator
    rejects is never written (ConversionError naming the loop and the rule; warnings do not
    block). An IR without Loop, TensorIterator or If layers has nothing to validate.
    """
    target = ir_path(path)
    if compress_to_fp16 and keeps_f64_weights(model):
        log.info("the model has f64 constants: no weights stored as f16 (f64 kept)")
        compress_to_fp16 = False
    made = make_directories(target.parent)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".ov-loops-") as scratch:
            scratch_xml = Path(scratch) / target.name
            ov.save_model(model, str(scratch_xml), compress_to_fp16=compress_to_fp16)
            if _has_subgraphs(model):  # the validator checks loop layers (at any depth)
                _refuse_invalid(scratch_xml)
            os.replace(scratch_xml.with_suffix(".bin"), target.with_suffix(".bin"))
            os.replace(scratch_xml, target)
    except (OSError, ConversionError) as exc:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        if isinstance(exc, ConversionError):
            raise
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    weights = "f16" if compress_to_fp16 else "f32"
    log.info("saved %s (%s weights) in %s", target, weights, _since(started))


def _has_subgraphs(model: ov.Model) -> bool:
    """Whether the main graph has a layer the validator looks into (Loop, TensorIterator, If).
    The validator (and lxml) is imported when saving: `translate` does not need it (35 ms of a
    fresh process's first conversion)."""
    from ov_loops.ir.reader import KEPT_TYPES

    return any(op.get_type_name() in KEPT_TYPES for op in model.get_ordered_ops())


def _refuse_invalid(xml: Path) -> None:
    """Raise ConversionError when the validator finds an error in the IR at `xml`: the first
    one, with its loop and rule code, and how many more. Warnings are logged (info)."""
    from ov_loops.ir.validate import validate

    started = time.perf_counter()
    report = validate(xml)
    log.debug("validated the IR in %s", _since(started))
    for warning in report.warnings:
        log.info("validate: %s at loop '%s': %s", warning.code, warning.layer_path, warning.message)
    if report.errors:
        first, more = report.errors[0], len(report.errors) - 1
        others = f" (and {more} more error(s))" if more else ""
        raise ConversionError(
            f"the IR fails validation, nothing written: loop '{first.layer_path}': "
            f"{first.code} {first.message}{others}"
        )


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
