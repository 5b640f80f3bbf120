"""Python lists of arrays to and from the tensors a converted model takes and gives for an ONNX
Sequence- or Optional-typed input or output.

A converted model has, for an ONNX sequence input or output `x`, four in its place, in order:

    x         1-D, the element type: every element's values, flattened, one after the other
    x.sizes   1-D int64: each element's number of values
    x.ranks   1-D int64: each element's rank
    x.shapes  1-D int64: the elements' shapes, one after the other

An Optional of a tensor is a sequence of zero (absent) or one element; an Optional of a sequence
is the sequence's four and `x.present`, a bool scalar (the sequence is empty when absent): the
kinds of contract/kinds.py, which pack and unpack them. `to_ir_inputs` and `from_ir_outputs`
apply them to all of a model's inputs and outputs, from the ONNX types the model declares.
"""

from __future__ import annotations

import numpy as np

from ov_loops.contract.kinds import TENSOR, CarriedKind
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import element_type, kind_of


def _dtype(value_type: schema.TypeProto) -> np.dtype:
    return helpers.tensor_dtype_to_np_dtype(element_type(value_type).tensor_type.elem_type)


def _kind(value: schema.ValueInfoProto) -> CarriedKind:
    """The kind of a declared input or output (a tensor unless a sequence or an optional)."""
    kind = kind_of(value.type)
    return kind if isinstance(kind, CarriedKind) else TENSOR


def to_ir_inputs(model: schema.ModelProto, values: list) -> list[np.ndarray]:
    """The converted model's inputs from the ONNX model's: a list of arrays for a sequence, an
    array or None for an Optional of a tensor, a list or None for an Optional of a sequence."""
    fed = []
    for declared, value in zip(model.graph.input, values):
        kind = _kind(declared)
        fed.extend(kind.pack(value, None if kind == TENSOR else _dtype(declared.type)))
    return fed


def from_ir_outputs(model: schema.ModelProto, outputs: list) -> list:
    """The ONNX model's outputs from the converted model's (the inverse of `to_ir_inputs`)."""
    outputs, values = list(outputs), []
    for declared in model.graph.output:
        kind = _kind(declared)
        values.append(kind.unpack(outputs[: kind.ports]))
        del outputs[: kind.ports]
    return values


def has_sequence_io(model: schema.ModelProto) -> bool:
    """Whether any input or output of the model is a sequence or an optional."""
    values = [*model.graph.input, *model.graph.output]
    return any(_kind(value) != TENSOR for value in values)
