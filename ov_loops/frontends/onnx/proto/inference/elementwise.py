"""Rules of ops whose output has an input's shape, or the inputs' broadcast shape.

Semantics from the ONNX operator docs (https://onnx.ai/onnx/operators/) and onnx's inference
functions (onnx/defs/math/defs.cc, logical/defs.cc, tensor/defs.cc; shape_inference.h:
propagateShapeAndTypeFromFirstInput, multidirectionalBroadcastShapeInference).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.inference.graphs import NodeContext
from ov_loops.frontends.onnx.proto.inference.kinds import Dim, Sequence, Shape, Tensor, Unsure

T = schema.TensorProto


def same_as_first(ctx: NodeContext) -> list:
    """Identity, Tanh, Sigmoid, Relu, Neg, Abs, Exp, Log, Sqrt, Reciprocal, Not, Erf:
    output 0 has input 0's type and shape (Identity-14+: a sequence too)."""
    value = ctx.inputs[0] if ctx.inputs else None
    if isinstance(value, Sequence) and ctx.node.op_type == "Identity" and ctx.opset >= 14:
        if value.elem is None or not value.elem.elem:
            raise Unsure("a sequence of unknown element type")
        return [value]
    return [ctx.tensor(0)]


def softmax(ctx: NodeContext) -> list:
    """Softmax/LogSoftmax-13: input 0's type and shape; `axis` (default -1) must be in
    [-r, r-1]."""
    value = ctx.tensor(0)
    if value.shape is not None:
        rank = len(value.shape)
        if not -rank <= int(ctx.attr("axis", -1)) < rank:
            raise Unsure("softmax axis out of range")
    return [value]


def broadcast(shapes: list[Shape]) -> Shape:
    """Multidirectional (numpy) broadcasting as onnx infers it: per dim, the value other
    than 1 (values must agree), else the one symbol when all the others are 1, else unknown;
    None when some input has no shape."""
    if any(shape is None for shape in shapes):
        return None
    rank = max(len(shape) for shape in shapes)
    dims: list[Dim] = []
    for index in range(rank):
        value, symbols = 1, set()
        for shape in shapes:
            if index < rank - len(shape):
                continue
            dim = shape[index - rank + len(shape)]
            if isinstance(dim, int):
                if dim != 1:
                    if value not in (1, dim):
                        raise Unsure("dims that do not broadcast")
                    value = dim
            else:
                symbols.add(dim)
        if value != 1 or not symbols:
            dims.append(value)
        else:
            dims.append(symbols.pop() if len(symbols) == 1 else None)
    return tuple(dims)


def arithmetic(ctx: NodeContext) -> list:
    """Add, Sub, Mul, Div: input 0's element type, the inputs' broadcast shape."""
    values = [ctx.tensor(index) for index in range(len(ctx.inputs))]
    return [Tensor(values[0].elem, broadcast([value.shape for value in values]))]


def comparison(ctx: NodeContext) -> list:
    """Less, Greater, Equal, And, Or: bool, the inputs' broadcast shape."""
    values = [ctx.tensor(index) for index in range(len(ctx.inputs))]
    return [Tensor(T.BOOL, broadcast([value.shape for value in values]))]


def cast(ctx: NodeContext) -> list:
    """Cast: element type `to`, input 0's shape."""
    to = ctx.attr("to")
    if not isinstance(to, int) or not to:
        raise Unsure("Cast without `to`")
    return [Tensor(to, ctx.tensor(0).shape)]


def cast_like(ctx: NodeContext) -> list:
    """CastLike (opset 15+): input 1's element type, input 0's shape."""
    if ctx.opset < 15:
        raise Unsure("CastLike before opset 15")
    return [Tensor(ctx.tensor(1).elem, ctx.tensor(0).shape)]


_SAME_AS_FIRST = ["Identity", "Tanh", "Sigmoid", "Relu", "Neg", "Abs", "Exp", "Log", "Sqrt"]
RULES = {
    **dict.fromkeys([*_SAME_AS_FIRST, "Reciprocal", "Not", "Erf"], same_as_first),
    "Softmax": softmax,
    "LogSoftmax": softmax,
    **dict.fromkeys(["Add", "Sub", "Mul", "Div"], arithmetic),
    **dict.fromkeys(["Less", "Greater", "Equal", "And", "Or"], comparison),
    "Cast": cast,
    "CastLike": cast_like,
}
