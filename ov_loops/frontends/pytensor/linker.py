"""The PyTensor Linker: the FunctionGraph as one OpenVINO model, compiled once per signature of
input shapes.

    fgraph_convert: every Op translatable (else one error naming them), then
        model = ov.Model(translate_graph(fgraph, Parameters of the inputs' types))
    call(*arrays): plan = cache[shapes of arrays] or BoundRequest(compile(model reshaped to them))
        return plan.run(arrays) as new numpy arrays of the outputs' dtypes

Shared variables are inputs of the FunctionGraph and their updates outputs: PyTensor's Function
stores them, as for every linker. Values compute in f32 on CPU (INFERENCE_PRECISION_HINT, not the
bf16 the plugin may choose); float64 graphs are computed in f32 too (OpenVINO's CPU plugin). One
inference thread, the calling one, unless `config` says otherwise (DEFAULT_CONFIG).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from pytensor.link.basic import JITLinker

from ov_loops.bound_request import BoundRequest
from ov_loops.convert_options import ConvertOptions
from ov_loops.errors import message_line
from ov_loops.frontends.pytensor import (  # noqa: F401  (they register their translations)
    blas,
    elemwise,
    inner,
    linalg,
    random,
    scalar,
    scan,
    subtensor,
    tensor,
)
from ov_loops.frontends.pytensor.dispatch import (
    DEFAULT_SCAN_OPTIONS,
    INCOMPATIBLE_REWRITES,
    UnsupportedOpError,
    cast,
    check_supported,
    element_type,
    scans_lowered_with,
    translate_graph,
)
from ov_loops.frontends.pytensor.generators import generator_of, is_random_type, key_of
from ov_loops.ovcore import core

# One thread, as PyTensor's C and Numba backends compute (PyMC samples its chains in
# processes of their own): a 60-step PyMC logp+dlogp took 0.5 ms of CPU time per call on one
# thread, 1.1 ms on two (the Loop's per-iteration synchronisation). NUM_STREAMS 0: the CPU
# plugin then runs a request in the calling thread alone (whatever INFERENCE_NUM_THREADS says,
# OpenVINO 2026.4, per-thread CPU times), with no stream's thread to hand the request to and
# wake (an identity model's call: 20 us of CPU time against 45 through a stream's
# start_async), no thread pinning per call, and errors of the inference raised. Other devices
# get the precision only (their streams are their own; NUM_STREAMS 0 is untested there).
DEFAULT_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": 0}
OTHER_DEVICES_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
log = logging.getLogger("ov_loops.pytensor")


# float64 values cross the model's boundary as float32, which the CPU plugin computes them in
# anyway: its f64 inputs and outputs cost a Convert or Reorder node each (10 of the 35 us of
# node time of the PyMC model's inference); the call converts the arrays (bound_request.py).
BOUNDARY = {"float64": "float32"}


def parameter(variable) -> ov.Node:
    """A Parameter of a PyTensor variable's type (its static dims kept, the others dynamic; a
    random generator's an i32 key, generators.py; float64 as float32, BOUNDARY)."""
    if is_random_type(variable):
        return ops.parameter([], ov.Type.i32, name=str(variable))
    dtype = getattr(variable.type, "dtype", None)
    if not isinstance(dtype, str) or dtype == "object":
        raise UnsupportedOpError(f"input {variable} of type {variable.type}: not a tensor")
    shape = [-1 if dim is None else dim for dim in getattr(variable.type, "shape", ())]
    return ops.parameter(shape, element_type(BOUNDARY.get(dtype, dtype)), name=str(variable))


def _at_boundary(value: ov.Output) -> ov.Output:
    """A model output's value as it leaves the model (float64 as float32, BOUNDARY)."""
    dtype = value.get_element_type().to_dtype().name
    return cast(value, BOUNDARY[dtype]) if dtype in BOUNDARY else value


def build_model(fgraph, options: ConvertOptions = DEFAULT_SCAN_OPTIONS) -> ov.Model:
    """The OpenVINO model of `fgraph` (its inputs as Parameters, its outputs as Results), its
    scans lowered with `options`, their target's model workarounds applied (the CPU plugin's
    Concat reading a Loop output in place: loopir/passes/concat_copies.py)."""
    check_supported(fgraph)
    parameters = [parameter(variable) for variable in fgraph.inputs]
    inputs = [
        p.output(0) if is_random_type(v) else cast(p.output(0), v.type.dtype)
        for p, v in zip(parameters, fgraph.inputs)
    ]
    with scans_lowered_with(options):
        values = translate_graph(fgraph, inputs)
    results = [ops.result(_at_boundary(value)) for value in values]
    model = ov.Model(results, parameters, "pytensor")
    for workaround in options.lowering().target.model_workarounds:  # as conversion/driver.py
        workaround(model)
    return model


class CompiledFunction:
    """A model compiled once per signature of input shapes, its request's buffers bound
    (ov_loops/bound_request.py); called with numpy arrays (a random generator as its key), it
    returns new arrays of the outputs' dtypes (the next call rewrites the buffers).

    The model is reshaped to the inputs' static shapes, unless one is empty: OpenVINO then
    folds a Loop whose trip count became 0 with its reference Loop, which refuses it (`Check
    'trip_count != 0'`); the model with dynamic shapes runs such a loop zero times. When the
    device refuses the model (the CPU plugin refuses some scans lowered at max: "Can not
    create StaticMemory object", the gradient of `reduce`), `rebuilt` gives it again with the
    scans lowered at level default, once, with a warning."""

    def __init__(
        self,
        model: ov.Model,
        outputs: list,
        device: str,
        config: dict,
        rebuilt: Callable[[], ov.Model] | None = None,
    ) -> None:
        self.model, self.device, self.config, self.rebuilt = model, device, config, rebuilt
        self.outputs = [_output_value(variable) for variable in outputs]
        self.plans: dict[tuple, BoundRequest] = {}

    def plan_for(self, shapes: tuple) -> BoundRequest:
        """The bound request of the model compiled for inputs of these shapes (made now)."""
        try:
            compiled = self._compile(shapes)
        except RuntimeError as refused:
            if self.rebuilt is None:
                raise
            log.warning(
                "%s refused the scans lowered at max (%s): lowered at default",
                self.device,
                message_line(refused, last=True),
            )
            self.model, self.rebuilt = self.rebuilt(), None
            self.plans.clear()
            compiled = self._compile(shapes)
        self.plans[shapes] = BoundRequest(compiled, list(shapes))
        return self.plans[shapes]

    def _compile(self, shapes: tuple) -> ov.CompiledModel:
        model = self.model.clone()
        if all(map(all, shapes)):  # no empty input: see the class docstring
            model.reshape({p.output(0): list(s) for p, s in zip(model.get_parameters(), shapes)})
        return core().compile_model(model, self.device, self.config)

    def __call__(self, *inputs) -> list:
        values = [key_of(v) if isinstance(v, np.random.Generator) else v for v in inputs]
        shapes = tuple(np.shape(value) for value in values)
        plan = self.plans.get(shapes) or self.plan_for(shapes)
        return [convert(out) for convert, out in zip(self.outputs, plan.run(values))]


def _output_value(variable) -> Callable:
    """How a model output (a buffer the next call rewrites) becomes the value of `variable`:
    copied, as its dtype (a key becomes a Generator)."""
    if is_random_type(variable):
        return generator_of
    dtype = variable.type.dtype
    return lambda array: array.astype(dtype)  # a copy (the PyMC model's two: 2.1 us, np.array 3.9)


class OpenVINOLinker(JITLinker):
    """A Linker that runs the whole FunctionGraph as one OpenVINO model (see the module
    docstring); `device` and `config` go to `ov.Core.compile_model`, `optimize` (none, default,
    max) is the level the scans are lowered at, for the target of `device` (CPU unless GPU, NPU)."""

    incompatible_rewrites = INCOMPATIBLE_REWRITES

    def __init__(
        self, device: str = "CPU", config: dict | None = None, optimize: str = "max", **kwargs
    ) -> None:
        self.device = device
        self.config = _with_defaults(config or {}, device)
        target = device if device in ("GPU", "NPU") else "CPU"
        self.options = ConvertOptions(optimize=optimize, target=target)
        super().__init__(**kwargs)

    def fgraph_convert(self, fgraph, **kwargs) -> Callable:
        """The FunctionGraph as a callable of numpy arrays (translated now, compiled on call)."""
        model = build_model(fgraph, self.options)
        rebuilt = None
        if self.options.optimize == "max":
            default = dataclasses.replace(self.options, optimize="default")
            rebuilt = functools.partial(build_model, fgraph, default)
        return CompiledFunction(model, fgraph.outputs, self.device, self.config, rebuilt)

    def jit_compile(self, fn: Callable) -> Callable:
        """Compiled per input-shape signature when called (CompiledFunction)."""
        return fn

    def create_thunk_inputs(self, storage_map) -> list:
        """The storage cells of the FunctionGraph's inputs."""
        return [storage_map[variable] for variable in self.fgraph.inputs]


def _with_defaults(config: dict, device: str) -> dict:
    """`config` over DEFAULT_CONFIG on the CPU (OTHER_DEVICES_CONFIG elsewhere); on the CPU one
    that sets INFERENCE_NUM_THREADS but not NUM_STREAMS runs on one stream of that many threads
    (NUM_STREAMS 0 would compute on one)."""
    if device != "CPU":
        return {**OTHER_DEVICES_CONFIG, **config}
    streams = {"NUM_STREAMS": 1} if "INFERENCE_NUM_THREADS" in config else {}
    return {**DEFAULT_CONFIG, **streams, **config}
