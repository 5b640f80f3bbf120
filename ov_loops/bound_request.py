"""An infer request bound once to numpy buffers: what `ov_loops.compile` and the PyTensor
linker run a compiled model's calls of one input-shape signature with.

    BoundRequest(compiled, shapes): one numpy buffer per input (of its shape in `shapes`)
        under SHARED_BYTES and per output of static shape, set as the request's tensors once
        (memory shared)
    run(values): copy each value into its input's buffer (cast to the input's element type);
            a larger input's value set as a tensor sharing its memory (converted if it must)
        start_async, wait
        return the outputs: the bound buffers (the request's own tensors where an output's
            shape is dynamic), which the next run rewrites

Binding once saves what a call otherwise spends wrapping each array as an `ov.Tensor`, setting
it and fetching each output tensor: with those at each call, the run of the PyMC AR(1)
logp+dlogp's request took 1.6 times the CPU time (200 us against 126, interleaved, load 23),
the run of an add of [16, 16] and [16] 1.5 times. The request runs with `start_async` and
`wait`, not `infer`: with a stream and one inference thread (INFERENCE_NUM_THREADS 1) the CPU
plugin's `infer` runs the request as a task of the calling thread's stream, which swallows an
error of the inference (returning the output buffers unwritten) and keeps the failed task
queued, to run again at the next `infer` of any model sharing the stream: after its request is
freed, a segfault (OpenVINO 2026.4; PyTensor's scan tests in one process). With NUM_STREAMS 0
the CPU plugin runs `start_async` in the calling thread, as `infer`, and raises such an error.
"""

from __future__ import annotations

import numpy as np
import openvino as ov

# The element types numpy holds as they are (no bf16, sub-byte or string types): only these
# are bound (an output of another type is read from the request's own tensor).
SHARED_TYPES = frozenset(
    (ov.Type.boolean, ov.Type.i8, ov.Type.i16, ov.Type.i32, ov.Type.i64, ov.Type.u8)
    + (ov.Type.u16, ov.Type.u32, ov.Type.u64, ov.Type.f16, ov.Type.f32, ov.Type.f64)
)

# An input of this many bytes or more is not copied into a buffer but wrapped as a tensor
# sharing its memory at each run: the wrapping costs 5-9 us, a copy of 64 KiB 2 us, of 256 KiB
# 10 us (CPU time, f32).
SHARED_BYTES = 128 * 1024


class BoundRequest:
    """A compiled model's infer request, its inputs (of the given shapes) and static-shape
    outputs bound to numpy buffers once (see the module docstring)."""

    def __init__(self, compiled: ov.CompiledModel, shapes: list[tuple[int, ...]]) -> None:
        """`compiled`'s inputs must be of SHARED_TYPES."""
        self.request = compiled.create_infer_request()
        self.dtypes = [port.get_element_type().to_dtype() for port in compiled.inputs]
        self.inputs = [
            self._bound_input(index, shape, dtype)
            for index, (shape, dtype) in enumerate(zip(shapes, self.dtypes))
        ]
        self.outputs = [
            self._bound_output(index, port) for index, port in enumerate(compiled.outputs)
        ]

    def _bound_input(
        self, index: int, shape: tuple[int, ...], dtype: np.dtype
    ) -> np.ndarray | None:
        if np.prod(shape, dtype=np.int64) * dtype.itemsize >= SHARED_BYTES:
            return None
        buffer = np.empty(shape, dtype)
        self.request.set_input_tensor(index, ov.Tensor(buffer, shared_memory=True))
        return buffer

    def _bound_output(self, index: int, port: ov.ConstOutput) -> np.ndarray | None:
        shape = port.get_partial_shape()
        if shape.is_dynamic or port.get_element_type() not in SHARED_TYPES:
            return None
        buffer = np.empty(shape.to_shape(), port.get_element_type().to_dtype())
        self.request.set_output_tensor(index, ov.Tensor(buffer, shared_memory=True))
        return buffer

    def run(self, values: list) -> list[np.ndarray]:
        """The outputs for `values` (in input order, each of its input's shape): buffers the
        next run rewrites; an inference error is raised (RuntimeError)."""
        for index, (buffer, value) in enumerate(zip(self.inputs, values)):
            if buffer is None:
                array = np.ascontiguousarray(value, self.dtypes[index])  # (a copy if it must)
                self.request.set_input_tensor(index, ov.Tensor(array, shared_memory=True))
            else:
                buffer[...] = value
        self.request.start_async()  # not infer(): see the module docstring
        self.request.wait()
        return [
            self.request.get_output_tensor(index).data if buffer is None else buffer
            for index, buffer in enumerate(self.outputs)
        ]
