"""`ov_loops.compile`: a model compiled anew for each input-shape signature it is called with.

call(inputs):
    signature = (name, shape, element type) of each input     (specialising/signature.py)
    if signature in cache: move it to the cache's newest end  (a hit)
    else:                                                      (a miss: the first call)
        model = ONNX: convert(source, input=signature, level)  (the static-shape pipeline)
                IR:   a clone of the model reshaped to the signature (passes not rerun)
        cache[signature] = compile_model(model, device, config)
        drop the least recently used entry beyond cache_size  (an eviction)
    return cache[signature].run(inputs)    (its infer request, the inputs' memory shared)
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import openvino as ov
from openvino.utils.data_helpers import OVDict

from ov_loops.bound_request import SHARED_TYPES, BoundRequest
from ov_loops.convert_options import ConvertOptions, given_options
from ov_loops.errors import ConversionError, InputError, OvLoopsError, message_line
from ov_loops.ovcore import core
from ov_loops.specialising.signature import (
    Signature,
    Slot,
    arranged,
    call_signature,
    ir_slots,
    onnx_slots,
    signature_of,
)

if TYPE_CHECKING:
    from ov_loops.conversion.report import Conversion

log = logging.getLogger(__name__)
DEFAULT_CACHE_SIZE = 8
TARGET_DEVICES = ("CPU", "GPU", "NPU")


@dataclass(frozen=True)
class FirstCall:
    """What the first call of a signature cost, in seconds: making its model (conversion, or
    reshaping an IR) and compiling it."""

    prepare_seconds: float
    compile_seconds: float

    @property
    def seconds(self) -> float:
        return self.prepare_seconds + self.compile_seconds


@dataclass(frozen=True)
class CacheInfo:
    """The cache's counts: hits, misses (compilations), evictions, entries held and bound."""

    hits: int
    misses: int
    evictions: int
    size: int
    bound: int


class Specialisation:
    """A signature's compiled model and the one infer request every call of it reuses, its
    buffers bound once (ov_loops/bound_request.py).

    run(values): the request run on the values (converted to the inputs' element types), the
    outputs copied out of its buffers into an OVDict, as `CompiledModel.__call__` returns them.
    That call converts its arguments and results itself: a whole `SpecialisedModel` call took
    0.61 of the CPU time it took through it (an add of [16, 16] and [16]), 0.81 for a
    [64, 256] x [256, 256] MatMul (medians of 11 interleaved rounds, one thread), with the
    arrays wrapped as tensors at each call; with the buffers bound, the run takes 0.63-0.68 of
    that wrapping's time (the add, 9 interleaved rounds, load 30)."""

    def __init__(self, compiled: ov.CompiledModel, shapes: list[tuple[int, ...]]) -> None:
        self.compiled = compiled
        # numpy has no bf16 (to_dtype says f16) and strings cannot share memory: such models
        # are called as CompiledModel is.
        plain = all(port.get_element_type() in SHARED_TYPES for port in compiled.inputs)
        self.bound = BoundRequest(compiled, shapes) if plain else None

    def run(self, values: list[np.ndarray]) -> OVDict:
        """The outputs for `values` (in input order), copied: the next call reuses the buffers."""
        if self.bound is None:
            return self.compiled(values)
        outputs = self.bound.run(values)
        return OVDict({port: out.copy() for port, out in zip(self.compiled.outputs, outputs)})


class OnnxSource:
    """An ONNX model (as `translate` takes it) and its inputs, converted for a signature with
    `options` and `input` set to the signature."""

    def __init__(self, model: object, options: ConvertOptions, slots: list[Slot]) -> None:
        self.model, self.options, self.slots = model, options, slots

    @classmethod
    def read(cls, model: object, options: ConvertOptions) -> OnnxSource:
        """The source of `model`, read (and checked) once: InputError when it cannot be."""
        from ov_loops.frontends.onnx.load.load import load_model

        model = model.read() if isinstance(model, io.IOBase) else model
        return cls(model, options, onnx_slots(load_model(model, weights_in_files=True).model))

    def specialised(self, signature: Signature) -> ov.Model:
        return self.conversion(signature).model

    def conversion(self, signature: Signature) -> Conversion:
        """`translate` with the signature as `input` (a failure that the signature's giving one
        symbolic dim two lengths explains is translate's InputError saying so)."""
        from ov_loops.api import translate

        options = dataclasses.replace(self.options, input=signature.input_shapes())
        return translate(self.model, **options.translate_keywords())


class IrSource:
    """An `openvino.Model` (read from an IR, or given), reshaped for a signature."""

    def __init__(self, model: ov.Model) -> None:
        self.model = model
        self.slots = ir_slots(model)

    def specialised(self, signature: Signature) -> ov.Model:
        return reshaped(self.model, signature)


@contextmanager
def naming(signature: Signature) -> Iterator[None]:
    """Errors of specialising to `signature` as the same kind (input or conversion) of error,
    prefixed with "inputs SIGNATURE: "."""
    try:
        yield
    except OvLoopsError as exc:
        kind = InputError if isinstance(exc, InputError) else ConversionError
        raise kind(f"inputs {signature}: {exc}") from None


def reshaped(model: ov.Model, signature: Signature) -> ov.Model:
    """A clone of `model` with the signature's shapes (and element types where the model's
    are dynamic); InputError when OpenVINO's shape inference refuses them."""
    clone = model.clone()
    shapes = {}
    for port, (_, shape, element) in zip(clone.inputs, signature.inputs):
        if port.get_element_type().is_dynamic():
            port.get_node().set_element_type(element)
        shapes[port] = ov.PartialShape(list(shape))
    try:
        clone.reshape(shapes)
    except RuntimeError as exc:
        detail = message_line(exc, last=True)
        raise InputError(f"the model refuses these shapes: {detail}") from None
    return clone


class SpecialisedModel:
    """A model compiled for each input-shape signature it is called with (`ov_loops.compile`):
    call it as an `openvino.CompiledModel` (`model(inputs)` -> its outputs, an OVDict)."""

    def __init__(
        self, source: OnnxSource | IrSource, device: str, config: dict, cache_size: int
    ) -> None:
        self._source = source
        self.device, self.config, self.cache_size = device, config, cache_size
        self._cache: OrderedDict[Signature, Specialisation] = OrderedDict()
        self.first_calls: dict[Signature, FirstCall] = {}
        self._counts = {"hits": 0, "misses": 0, "evictions": 0}

    @property
    def slots(self) -> list[Slot]:
        """The model's inputs as declared (names, dims, element types)."""
        return self._source.slots

    def __call__(self, inputs: object) -> object:
        """Run on `inputs` (a dict by tensor name or position, a list in input order, or one
        array): the compiled model of their signature's outputs."""
        values = arranged(self.slots, inputs)
        return self._specialisation(signature_of(self.slots, values)).run(values)

    def signature(self, inputs: object) -> Signature:
        """The signature (cache key) a call with `inputs` has."""
        return call_signature(self.slots, inputs)

    def compiled_for(self, signature: Signature) -> ov.CompiledModel:
        """The compiled model of `signature`: cached, or made (and cached) now."""
        return self._specialisation(signature).compiled

    def _specialisation(self, signature: Signature) -> Specialisation:
        cached = self._cache.get(signature)
        if cached is not None:
            self._counts["hits"] += 1
            self._cache.move_to_end(signature)
            return cached
        shapes = [tuple(shape) for _, shape, _ in signature.inputs]
        made = Specialisation(self._compile(signature), shapes)
        self._counts["misses"] += 1
        self._cache[signature] = made
        if len(self._cache) > self.cache_size:
            evicted, _ = self._cache.popitem(last=False)
            self._counts["evictions"] += 1
            log.info("evicted the model compiled for %s", evicted)
        return made

    def cache_info(self) -> CacheInfo:
        """Hits, misses, evictions, entries and bound of the cache."""
        return CacheInfo(**self._counts, size=len(self._cache), bound=self.cache_size)

    def cached(self) -> list[Signature]:
        """The signatures compiled and held, least recently used first."""
        return list(self._cache)

    def _compile(self, signature: Signature) -> ov.CompiledModel:
        started = time.perf_counter()
        with naming(signature):
            model = self._source.specialised(signature)
        made = time.perf_counter()
        try:
            compiled = core().compile_model(model, self.device, self.config)
        except RuntimeError as exc:
            detail = message_line(exc, last=True)
            raise InputError(
                f"cannot compile for inputs {signature} on {self.device}: {detail}"
            ) from None
        first = FirstCall(made - started, time.perf_counter() - made)
        self.first_calls[signature] = first
        log.info(
            "specialised for %s in %.0f ms (model %.0f ms, compile %.0f ms)",
            signature,
            1000 * first.seconds,
            1000 * first.prepare_seconds,
            1000 * first.compile_seconds,
        )
        return compiled


def compile(  # noqa: A001 -- openvino's name for it
    model: str | os.PathLike | bytes | io.IOBase | object,
    device: str = "CPU",
    config: dict | None = None,
    *,
    cache_size: int = DEFAULT_CACHE_SIZE,
    optimize: str | None = None,
    target: str | None = None,
    unroll: int | None = None,
    max_trip_count: int | None = None,
) -> SpecialisedModel:
    """A model compiled on `device` (with OpenVINO's `config`) anew for each input-shape
    signature it is called with, so loops run with static shapes whatever the exporter left
    symbolic; call it as an `openvino.CompiledModel`: `compiled({"x": x})` or `compiled([x])`.

    `model` is an ONNX model (a path, bytes, a stream or an `onnx.ModelProto`) or an IR (a .xml
    path or an `openvino.Model`). An ONNX model is converted for each signature as `convert`
    with `input` set to the call's shapes and element types, so the loop optimiser's
    static-shape passes run; `optimize` ("max" unless given), `target` (the device's kind,
    CPU when it has none of CPU, GPU, NPU), `unroll` and `max_trip_count` are convert's. An IR
    is reshaped to the signature (OpenVINO then compiles static shapes) but the loop passes
    are not rerun: convert the ONNX model for their speed; conversion options are an InputError.

    The cache key is the signature: per model input, in order, its name, the value's shape and
    the input's element type (the value's where the model leaves it dynamic; values of another
    type are converted, as CompiledModel does). At most `cache_size` compiled models are held;
    the least recently used one is dropped beyond that. Each signature's first-call time is
    logged (info, logger `ov_loops.specialising.compiled`) and kept in `first_calls`;
    `cache_info()` counts hits, misses and evictions. Bad inputs (unknown or missing names, a
    rank or a static dim the model declares otherwise, shapes the model refuses) are
    InputErrors; a model that cannot be converted for a signature is a ConversionError. One
    call at a time, as CompiledModel's call: it is not thread-safe.
    """
    if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 1:
        raise InputError(f"cache_size must be a positive integer, not {cache_size!r}")
    if config is not None and not isinstance(config, dict):
        raise InputError(f"config must be a dict of OpenVINO properties, not {config!r}")
    named = {"optimize": optimize, "target": target, "unroll": unroll}
    named["max_trip_count"] = max_trip_count
    source = _source(model, named, device)
    return SpecialisedModel(source, device, dict(config or {}), cache_size)


def _source(model: object, named: dict[str, object], device: str) -> OnnxSource | IrSource:
    """The source of `model`: an IR (refusing conversion options) or an ONNX model."""
    is_xml = isinstance(model, (str, os.PathLike)) and Path(model).suffix == ".xml"
    if isinstance(model, ov.Model) or is_xml:
        given = given_options(named)
        if given:
            raise InputError(
                f"{', '.join(given)}: conversion options do not apply to an IR (its loop passes "
                "are not rerun); compile the ONNX model with them"
            )
        return IrSource(model if isinstance(model, ov.Model) else _read_ir(Path(model)))
    kind = device.split(":")[0].split(".")[0].upper()
    defaults = {"optimize": "max", "target": kind if kind in TARGET_DEVICES else "CPU"}
    values = {name: value for name, value in named.items() if value is not None}
    return OnnxSource.read(model, ConvertOptions.given({**defaults, **values}))


def _read_ir(path: Path) -> ov.Model:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        return core().read_model(str(path))
    except RuntimeError as exc:
        detail = message_line(exc, last=True)
        raise InputError(f"{path}: OpenVINO cannot read it: {detail}") from None
