"""The input-shape signature of one call: the cache key of `ov_loops.compile`.

    slots     = the model's inputs, in order: (names, declared shape, declared element type)
    values    = the call's inputs: a dict (by tensor name or position), a list, or one array
    signature = per slot, in order: (name, the value's shape, the slot's element type, or the
                value's where the model leaves it dynamic)

Values are checked against the slots first (one InputError naming the input): unknown names,
missing values, a rank or a static dim the model declares otherwise, a value numpy type with no
OpenVINO element type. Values of another type than the slot's are converted at the call, as
`openvino.CompiledModel` does, so they share the slot type's signature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.input_specs import ELEMENT_TYPES
from ov_loops.frontends.onnx.load.io_edits import model_inputs
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.types import ov_element_type


@dataclass(frozen=True)
class Slot:
    """One model input: its names (the first is the one reported), its declared dims (None:
    dynamic) and element type (None: dynamic)."""

    names: tuple[str, ...]
    dims: tuple[int | None, ...]
    element: ov.Type | None

    @property
    def name(self) -> str:
        return self.names[0]

    def declared(self) -> str:
        """E.g. "[?,?,4]{f32}"."""
        dims = ",".join("?" if dim is None else str(dim) for dim in self.dims)
        element = "?" if self.element is None else self.element.get_type_name()
        return f"[{dims}]{{{element}}}"


@dataclass(frozen=True)
class Signature:
    """The cache key: per model input, in order, (name, shape, element type)."""

    inputs: tuple[tuple[str, tuple[int, ...], ov.Type], ...]

    def __str__(self) -> str:
        """E.g. "x[1,1000,4]{f32},h0[1,8]{f32}" (`convert`'s `input` text)."""
        return ",".join(
            f"{name}[{','.join(map(str, shape))}]{{{element.get_type_name()}}}"
            for name, shape, element in self.inputs
        )

    def input_shapes(self) -> dict[str, tuple[list[int], ov.Type]]:
        """The signature as `convert`'s `input`: {name: (shape, element type)}."""
        return {name: (list(shape), element) for name, shape, element in self.inputs}


def onnx_slots(model: schema.ModelProto) -> list[Slot]:
    """The inputs a user feeds to an ONNX model (initializers excepted)."""
    slots = []
    for value in model_inputs(model.graph):
        tensor = value.type.tensor_type
        dims = tuple(
            dim.dim_value if dim.HasField("dim_value") else None for dim in tensor.shape.dim
        )
        element = ov_element_type(tensor.elem_type)
        typed = None if element is None or element.is_dynamic() else element
        slots.append(Slot((value.name,), dims, typed))
    return slots


def ir_slots(model: ov.Model) -> list[Slot]:
    """The inputs of an `openvino.Model`, by tensor names (its Parameter's name without)."""
    slots = []
    for port in model.inputs:
        names = tuple(sorted(port.get_names())) or (port.get_node().get_friendly_name(),)
        shape = port.get_partial_shape()
        if shape.rank.is_dynamic:
            raise InputError(f"input '{names[0]}' has a dynamic rank: it cannot be specialised")
        dims = tuple(dim.get_length() if dim.is_static else None for dim in shape)
        element = port.get_element_type()
        slots.append(Slot(names, dims, None if element.is_dynamic() else element))
    return slots


def arranged(slots: list[Slot], inputs: object) -> list[np.ndarray]:
    """The call's values in slot order: `inputs` a dict by tensor name or position, a list or
    tuple in order, or one array for a model of one input."""
    if isinstance(inputs, dict):
        return _by_key(slots, inputs)
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(values) != len(slots):
        listed = ", ".join(slot.name for slot in slots)
        raise InputError(f"{len(values)} input value(s) for {len(slots)} input(s) ({listed})")
    return [np.asarray(value) for value in values]


def _by_key(slots: list[Slot], inputs: dict) -> list[np.ndarray]:
    index = {name: position for position, slot in enumerate(slots) for name in slot.names}
    found: dict[int, object] = {}
    for key, value in inputs.items():
        position = key if isinstance(key, int) and 0 <= key < len(slots) else index.get(key)
        if position is None:
            listed = ", ".join(slot.name for slot in slots)
            raise InputError(f"no input {key!r}: the model's inputs are {listed}")
        if position in found:
            raise InputError(f"input '{slots[position].name}' is given twice")
        found[position] = value
    missing = [slot.name for position, slot in enumerate(slots) if position not in found]
    if missing:
        raise InputError(f"no value for input '{missing[0]}'")
    return [np.asarray(found[position]) for position in range(len(slots))]


def call_signature(slots: list[Slot], inputs: object) -> Signature:
    """The signature of a call with `inputs` (as `arranged` takes them)."""
    return signature_of(slots, arranged(slots, inputs))


def signature_of(slots: list[Slot], values: list[np.ndarray]) -> Signature:
    """The signature of `values` (in slot order); InputError for a value the slot refuses."""
    return Signature(tuple(_entry(slot, value) for slot, value in zip(slots, values)))


def _entry(slot: Slot, value: np.ndarray) -> tuple[str, tuple[int, ...], ov.Type]:
    shape = tuple(int(dim) for dim in value.shape)
    if len(shape) != len(slot.dims):
        raise InputError(
            f"input '{slot.name}': shape {list(shape)} has rank {len(shape)}, the model takes "
            f"{slot.declared()} (rank {len(slot.dims)})"
        )
    for axis, (dim, declared) in enumerate(zip(shape, slot.dims)):
        if declared is not None and dim != declared:
            raise InputError(
                f"input '{slot.name}': dim {axis} is {dim} in {list(shape)}, the model takes "
                f"{declared} ({slot.declared()})"
            )
    element = ELEMENT_TYPES.get(value.dtype.name)
    if element is None:
        raise InputError(
            f"input '{slot.name}': numpy type {value.dtype.name} has no OpenVINO element type"
        )
    return slot.name, shape, element if slot.element is None else slot.element
