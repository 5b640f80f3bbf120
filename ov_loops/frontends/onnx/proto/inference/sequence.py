"""Rules of the sequence ops SequenceEmpty, SequenceInsert and ConcatFromSequence.

Semantics from the ONNX operator docs (https://onnx.ai/onnx/operators/) and onnx's inference
functions (onnx/defs/sequence/defs.cc).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.inference.graphs import NodeContext
from ov_loops.frontends.onnx.proto.inference.kinds import Sequence, Tensor, Unsure, union_shape

T = schema.TensorProto


def sequence_empty(ctx: NodeContext) -> list:
    """SequenceEmpty: an empty sequence of tensors of `dtype` (default float)."""
    dtype = ctx.attr("dtype", T.FLOAT)
    if not isinstance(dtype, int) or not dtype:
        raise Unsure("SequenceEmpty's dtype")
    return [Sequence(Tensor(dtype))]


def sequence_insert(ctx: NodeContext) -> list:
    """SequenceInsert: the sequence's element type (the tensor's must be the same); element
    shape the dims the sequence's element and the tensor share (unknown rank when either is,
    or theirs differ)."""
    element, tensor = ctx.sequence(0), ctx.tensor(1)
    if element.elem != tensor.elem:
        raise Unsure("SequenceInsert of a tensor of another element type")
    if element.shape is None or tensor.shape is None:
        return [Sequence(Tensor(element.elem))]
    return [Sequence(Tensor(element.elem, union_shape(tensor.shape, element.shape)))]


def concat_from_sequence(ctx: NodeContext) -> list:
    """ConcatFromSequence: the elements' type; their shape with dim `axis` unknown
    (new_axis=1: an unknown dim inserted at `axis`, in [-r-1, r])."""
    element = ctx.sequence(0)
    if element.shape is None:
        return [Tensor(element.elem)]
    axis, new_axis = ctx.attr("axis"), ctx.attr("new_axis", 0)
    rank = len(element.shape) + (1 if new_axis == 1 else 0)
    if not isinstance(axis, int) or new_axis not in (0, 1) or not -rank <= axis < rank:
        raise Unsure("ConcatFromSequence's axis")
    axis %= rank
    dims = list(element.shape)
    if new_axis:
        dims.insert(axis, None)
    else:
        dims[axis] = None
    return [Tensor(element.elem, tuple(dims))]


RULES = {
    "SequenceEmpty": sequence_empty,
    "SequenceInsert": sequence_insert,
    "ConcatFromSequence": concat_from_sequence,
}
