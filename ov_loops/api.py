"""The conversion API: `translate` and `convert` an ONNX model, `save` the IR."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import openvino as ov

from ov_loops.conversion.caveats import sequence_lengths_warning
from ov_loops.conversion.driver import convert_model
from ov_loops.conversion.precision import f64_warning
from ov_loops.conversion.provenance import record_conversion
from ov_loops.conversion.report import Conversion
from ov_loops.convert_options import ConvertOptions
from ov_loops.errors import ConversionError, InputError
from ov_loops.frontends.onnx.load.caveats import nodes_with_sequence_lengths
from ov_loops.frontends.onnx.load.input_specs import input_shapes, output_names
from ov_loops.frontends.onnx.load.io_edits import InputOutputEdits
from ov_loops.frontends.onnx.load.load import ModelSource, checked_on_failure, load_model
from ov_loops.loopir.passes.levels import OptimizeLevel
from ov_loops.staging import IRPlace, since, stage

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
    return translate_with(model, options, output)


def translate_with(
    model: ModelSource,
    options: ConvertOptions,
    output: str | list[str] | None = None,
    shares_weights: bool = False,
) -> Conversion:
    """`translate` with its options in one object (`ov-loops convert` hands its own).
    `shares_weights`: the weights a model read from a path keeps in its file (or in external-data
    files) stay there, memory-mapped by OpenVINO's frontend and shared by the model's Constants
    instead of copied into it; the model then needs those files unchanged while it lives, and
    the process's working directory is their file system's root while the frontend converts the
    main graph (conversion/driver.py): for a caller that owns the model and the process, as
    `ov-loops convert` does."""
    edits = InputOutputEdits(input_shapes(options.input), output_names(output))
    started = time.perf_counter()
    with checked_on_failure(model):
        loaded = load_model(model, edits.apply, weights_in_files=True, check=False)
        recurrent = nodes_with_sequence_lengths(loaded.model)
        log.info("read and prepared the ONNX model in %s", since(started))
        started = time.perf_counter()
        try:
            conversion = convert_model(
                loaded, options.lowering(), edits.shapes, shares_weights=shares_weights
            )
        except ConversionError:
            if edits.conflict is None:
                raise
            raise InputError(f"{edits.conflict}: the model declares them one length") from None
    edits.retype(conversion.model)
    record_conversion(conversion.model, model, options, output)
    log.info("converted %d loop(s) in %s", len(conversion.loops), since(started))
    converted = conversion.model
    for warning in (f64_warning(converted), sequence_lengths_warning(recurrent, converted)):
        if warning is not None:
            log.warning(warning)
    return conversion


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
    block). An IR without Loop, TensorIterator or If layers has nothing to validate. (The
    validation costs less once the model is freed: `ov_loops.staging` writes in two steps.)

    `model` is written in place, without `openvino.save_model`'s clone of it, unless its
    weights would cost more memory than the clone, and put back as it was after, on an error
    too (`ov_loops.borrowed_save`): the same graph, names and rt_info; do not use it from
    another thread meanwhile. The files are those `ov-loops convert` writes: save_model's but
    for its quirks (docs/cli.md).
    """
    with IRPlace(ir_path(path)) as place:
        place.commit(stage(model, place.scratch_xml, compress_to_fp16))
