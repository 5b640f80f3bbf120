"""The PyTensor Linker: the FunctionGraph as one OpenVINO model, compiled once per signature of
input shapes.

    fgraph_convert: every Op translatable (else one error naming them), then
        model = ov.Model(translate_graph(fgraph, Parameters of the inputs' types))
    call(*arrays): compiled = cache[shapes of arrays] or compile(model reshaped to them);
        return compiled(arrays) as numpy arrays of the outputs' dtypes

Shared variables are inputs of the FunctionGraph and their updates outputs: PyTensor's Function
stores them, as for every linker. Values compute in f32 on CPU (INFERENCE_PRECISION_HINT, not the
bf16 the plugin may choose); float64 graphs are computed in f32 too (OpenVINO's CPU plugin). One
inference thread unless `config` says otherwise (DEFAULT_CONFIG).
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
# processes of their own): a 60-step PyMC logp+dlogp takes 0.5 ms of CPU time per call on one
# thread, 1.1 ms on two (the Loop's per-iteration synchronisation).
DEFAULT_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}
log = logging.getLogger("ov_loops.pytensor")


# float64 values cross the model's boundary as float32, which the CPU plugin computes them in
# anyway: its f64 inputs and outputs cost a Convert or Reorder node each (10 of the 35 us of
# node time of the PyMC model's inference); the call converts the arrays (`_input_array`).
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
    """A model compiled once per signature of input shapes; called with numpy arrays.

    Each signature keeps one infer request: a call wraps the input arrays as tensors sharing
    their memory, infers, and copies the outputs out of the request's buffers (OpenVINO's
    `CompiledModel.__call__` spends 3 times the CPU time of an identity model's inference on
    converting its arguments and results). It runs the request with `start_async` and `wait`,
    not `infer`: with one inference thread (DEFAULT_CONFIG) the CPU plugin's `infer` runs the
    request as a task of the calling thread's stream, which swallows an error of the
    inference (the call returned the output buffers unwritten) and keeps the failed task
    queued, to run again at the next `infer` of any model sharing the stream: after its
    request is freed, a segfault (OpenVINO 2026.4; PyTensor's scan tests in one process).
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
        self.dtypes = [p.get_element_type().to_dtype() for p in model.get_parameters()]
        self.requests: dict[tuple, ov.InferRequest] = {}

    def request_for(self, arrays: list[np.ndarray]) -> ov.InferRequest:
        """The infer request of the model compiled for these inputs' shapes (on first use)."""
        key = tuple(array.shape for array in arrays)
        if key not in self.requests:
            try:
                compiled = self._compile(arrays)
            except RuntimeError as refused:
                if self.rebuilt is None:
                    raise
                log.warning(
                    "%s refused the scans lowered at max (%s): lowered at default",
                    self.device,
                    message_line(refused, last=True),
                )
                self.model, self.rebuilt = self.rebuilt(), None
                self.requests.clear()
                compiled = self._compile(arrays)
            self.requests[key] = compiled.create_infer_request()
        return self.requests[key]

    def _compile(self, arrays: list[np.ndarray]) -> ov.CompiledModel:
        model = self.model.clone()
        if all(array.size for array in arrays):  # see the class docstring
            model.reshape(
                {p.output(0): list(a.shape) for p, a in zip(model.get_parameters(), arrays)}
            )
        return core().compile_model(model, self.device, self.config)

    def __call__(self, *inputs) -> list:
        arrays = [_input_array(value, dtype) for value, dtype in zip(inputs, self.dtypes)]
        request = self.request_for(arrays)
        for index, array in enumerate(arrays):
            request.set_input_tensor(index, ov.Tensor(array, shared_memory=True))
        request.start_async()  # not infer(): see the class docstring
        request.wait()
        return [
            convert(request.get_output_tensor(index).data)
            for index, convert in enumerate(self.outputs)
        ]


def _input_array(value, dtype: np.dtype) -> np.ndarray:
    """An input's value as the model takes it, C-contiguous, float64 as float32 (BOUNDARY; a
    numpy Generator as its key)."""
    if isinstance(value, np.random.Generator):
        return key_of(value)
    array = np.asarray(value)  # (ascontiguousarray would make a 0-d array 1-d)
    if array.dtype == np.float64 and dtype == np.float32:
        return array.astype(np.float32, order="C")
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def _output_value(variable) -> Callable:
    """How a model output (a view of the request's buffer) becomes the value of `variable`:
    copied, as its dtype (a key becomes a Generator)."""
    if is_random_type(variable):
        return generator_of
    dtype = variable.type.dtype
    return lambda array: np.array(array, dtype=dtype)


class OpenVINOLinker(JITLinker):
    """A Linker that runs the whole FunctionGraph as one OpenVINO model (see the module
    docstring); `device` and `config` go to `ov.Core.compile_model`, `optimize` (none, default,
    max) is the level the scans are lowered at, for the target of `device` (CPU unless GPU, NPU)."""

    incompatible_rewrites = INCOMPATIBLE_REWRITES

    def __init__(
        self, device: str = "CPU", config: dict | None = None, optimize: str = "max", **kwargs
    ) -> None:
        self.device = device
        self.config = {**DEFAULT_CONFIG, **(config or {})}
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
