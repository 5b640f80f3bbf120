"""Python lists of arrays to and from the tensors a converted model takes and gives for an ONNX
Sequence- or Optional-typed input or output.

A converted model has, for an ONNX sequence input or output `x`, four in its place, in order:

    x         1-D, the element type: every element's values, flattened, one after the other
    x.sizes   1-D int64: each element's number of values
    x.ranks   1-D int64: each element's rank
    x.shapes  1-D int64: the elements' shapes, one after the other

An Optional of a tensor is a sequence of zero (absent) or one element; an Optional of a sequence
is the sequence's four and `x.present`, a bool scalar (the sequence is empty when absent).
`to_ir_inputs` and `from_ir_outputs` apply this to all of a model's inputs and outputs, from the
ONNX types the model declares.
"""

from __future__ import annotations

import numpy as np
import onnx

from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import (
    OPTIONAL,
    OPTIONAL_SEQUENCE,
    SEQUENCE,
    element_type,
    kind_of,
)


def pack_sequence(elements: list, dtype: np.dtype | type) -> list[np.ndarray]:
    """The four tensors of a sequence of `elements` (arrays of one element type, `dtype`)."""
    arrays = [np.asarray(element, dtype) for element in elements]
    flat = [array.reshape(-1) for array in arrays]
    return [
        np.concatenate(flat) if flat else np.zeros(0, dtype),
        np.array([array.size for array in arrays], np.int64),
        np.array([array.ndim for array in arrays], np.int64),
        np.array([n for array in arrays for n in array.shape], np.int64),
    ]


def unpack_sequence(
    buffer: np.ndarray, sizes: np.ndarray, ranks: np.ndarray, shapes: np.ndarray
) -> list[np.ndarray]:
    """The elements (arrays) of a sequence from its four tensors."""
    elements, value, dim = [], 0, 0
    for size, rank in zip(np.asarray(sizes).tolist(), np.asarray(ranks).tolist()):
        shape = np.asarray(shapes)[dim : dim + rank].tolist()
        elements.append(np.asarray(buffer)[value : value + size].reshape(shape))
        value, dim = value + size, dim + rank
    return elements


def _dtype(value_type: onnx.TypeProto) -> np.dtype:
    return onnx.helper.tensor_dtype_to_np_dtype(element_type(value_type).tensor_type.elem_type)


def _packed(kind: str, value, dtype) -> list[np.ndarray]:
    if kind == SEQUENCE:
        return pack_sequence(value, dtype)
    if kind == OPTIONAL:
        return pack_sequence([] if value is None else [value], dtype)
    return [*pack_sequence(value or [], dtype), np.array(value is not None)]


def to_ir_inputs(model: onnx.ModelProto, values: list) -> list[np.ndarray]:
    """The converted model's inputs from the ONNX model's: a list of arrays for a sequence, an
    array or None for an Optional of a tensor, a list or None for an Optional of a sequence."""
    fed = []
    for declared, value in zip(model.graph.input, values):
        kind = kind_of(declared.type)
        if kind in (SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE):
            fed.extend(_packed(kind, value, _dtype(declared.type)))
        else:
            fed.append(value)
    return fed


def from_ir_outputs(model: onnx.ModelProto, outputs: list) -> list:
    """The ONNX model's outputs from the converted model's (the inverse of `to_ir_inputs`)."""
    outputs, values = list(outputs), []
    for declared in model.graph.output:
        kind = kind_of(declared.type)
        if kind not in (SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE):
            values.append(outputs.pop(0))
            continue
        elements = unpack_sequence(*outputs[:4])
        present = bool(outputs[4]) if kind == OPTIONAL_SEQUENCE else True
        del outputs[: 5 if kind == OPTIONAL_SEQUENCE else 4]
        if kind == SEQUENCE:
            values.append(elements)
        elif kind == OPTIONAL:
            values.append(elements[0] if elements else None)
        else:
            values.append(elements if present else None)
    return values


def has_sequence_io(model: onnx.ModelProto) -> bool:
    """Whether any input or output of the model is a sequence or an optional."""
    values = [*model.graph.input, *model.graph.output]
    return any(kind_of(value.type) in (SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE) for value in values)
