"""Tensor shapes that hold in every iteration of every Loop, proven by induction.

ONNX shape inference does not give a Loop body's carried inputs the shapes of the initial
values (a carried value may change shape between iterations), and a declared shape is not a
proof. This module assumes a shape for every carried value, runs ONNX shape inference under
the assumptions, and generalises until they are inductive::

    assumed[v] = unknown for every carried v
    repeat:
        infer every value's shape with body input v (and the Loop's output v) as assumed[v]
        if still guessing and assumed != the initial values' shapes:
            assumed = the initial values' shapes        # settles outer loops before inner ones
        else:
            wanted[v] = join(assumed[v], shape(initial v), shape(body output v))
            done (proven) when wanted == assumed, else assumed = wanted
    join(a, b): same rank, else unknown rank; per dim, the common number or symbol, else unknown

When done, each carried input has its assumed shape in iteration 1 (its initial value)
and, if it had in iteration j, in iteration j + 1 (the body's output): by induction in every
iteration, and so has every value the body computes from it. No declared value_info or
body-output shape is trusted (they are cleared first). Dims that are symbols ONNX inference
made up (`unk__N`) stand for unknown dims; symbols of the main graph's inputs are fixed for one
run.
"""

from __future__ import annotations

import numpy as np

from ov_loops.frontends.onnx.ops.loop import is_loop
from ov_loops.frontends.onnx.proto import helpers, inference, schema
from ov_loops.frontends.onnx.proto.scopes import (
    all_graphs,
    captured_names,
    defined_names,
    subgraphs,
)

_ROUNDS = 16  # guesses settle in (loop depth) rounds; each later round generalises a dim
_KEPT = 64  # initializers up to this many elements keep their values for inference
Shape = tuple[object, ...] | None  # per dim an int, a main-input symbol or None; None: no rank


class CarriedShapes:
    """The tensor shape of every named value of a model, in every iteration of its loops."""

    def __init__(self, model: schema.ModelProto, data_prop: bool = False) -> None:
        """`data_prop`: ONNX inference also propagates shape values (Shape -> Gather -> ...
        -> Slice), which proves more dims and costs more."""
        self.data_prop = data_prop
        self.symbols = {
            dim.dim_param
            for value in model.graph.input
            for dim in value.type.tensor_type.shape.dim
            if dim.dim_param
        }
        self.shapes: dict[str, Shape] = {}
        self.elem_types: dict[str, int] = {}
        copy = schema.ModelProto()
        copy.CopyFrom(model)
        _weights_as_inputs(copy.graph)
        outer_constants_inside(copy.graph)
        loops = _carried_values(copy)
        assumed: list[Shape] = [None] * len(loops)
        guessing = True  # first assume the initial values' shapes, until they settle
        for _ in range(_ROUNDS):
            for graph, _ in all_graphs(copy.graph, "main"):
                del graph.value_info[:]
            for (body_input, body_output, _, final, graph), shape in zip(loops, assumed):
                _declare(body_input, shape)
                _declare(body_output, None)
                if final:
                    graph.value_info.append(body_input)
                    graph.value_info[-1].name = final
            if not self._infer(copy):
                return
            starts = [self.shapes.get(initial) for _, _, initial, _, _ in loops]
            if guessing and starts != assumed:
                assumed = starts
                continue
            guessing = False
            wanted = [
                _join(_join(shape, start), self.shapes.get(body_output.name))
                for (_, body_output, _, _, _), shape, start in zip(loops, assumed, starts)
            ]
            if wanted == assumed:
                return
            assumed = wanted
        self.shapes, self.elem_types = {}, {}  # no fixed point found: nothing is known

    def rank(self, name: str) -> int | None:
        """The rank `name` has in every iteration, if known."""
        shape = self.shapes.get(name)
        return None if shape is None else len(shape)

    def is_fixed(self, name: str) -> bool:
        """Whether every dim of `name` is a number or a main-input symbol: the same in every
        iteration of one run."""
        shape = self.shapes.get(name)
        return shape is not None and None not in shape

    def elem_type(self, name: str) -> int:
        """`name`'s element type, or 0 when unknown."""
        return self.elem_types.get(name, 0)

    def _infer(self, model: schema.ModelProto) -> bool:
        """Infer the shapes of `model` into self.shapes; False when inference fails."""
        try:
            inferred = inference.infer_shapes(model, data_prop=self.data_prop)
        except Exception:  # inference fails on some valid models: then nothing is known
            self.shapes, self.elem_types = {}, {}
            return False
        self.shapes, self.elem_types = {}, {}
        for graph, _ in all_graphs(inferred.graph, "main"):
            for value in [*graph.input, *graph.value_info, *graph.output]:
                if value.type.HasField("tensor_type"):
                    self._record(value.name, value.type.tensor_type)
            for tensor in graph.initializer:
                self.shapes[tensor.name] = tuple(tensor.dims)
                self.elem_types[tensor.name] = tensor.data_type
        return True

    def _record(self, name: str, tensor_type: schema.TypeProto.Tensor) -> None:
        """Record a value's type; a body output without a shape keeps the shape its
        value_info (a Loop's final value) gave it."""
        self.elem_types[name] = tensor_type.elem_type
        if tensor_type.HasField("shape"):
            self.shapes[name] = tuple(self._dim(dim) for dim in tensor_type.shape.dim)
        else:
            self.shapes.setdefault(name, None)

    def _dim(self, dim: schema.TensorShapeProto.Dimension) -> object:
        if dim.HasField("dim_value"):
            return dim.dim_value
        return dim.dim_param if dim.dim_param in self.symbols else None


def _weights_as_inputs(graph: schema.GraphProto) -> None:
    """Turn the main graph's initializers of more than _KEPT elements into inputs of their
    type and shape: inference then reads no weights (each round serialises the model), while
    small ones (shapes, axes) keep their values for it."""
    inputs = {value.name for value in graph.input}
    kept = []
    for tensor in graph.initializer:
        if int(np.prod(tensor.dims)) <= _KEPT or tensor.name in inputs:
            kept.append(tensor)
        else:
            graph.input.append(
                helpers.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            )
    del graph.initializer[:]
    graph.initializer.extend(kept)


def outer_constants_inside(graph: schema.GraphProto, outer: dict | None = None) -> None:
    """Give every subgraph of `graph` (in place; a copy for inference) an initializer of each
    small constant it reads from an enclosing graph (a Constant node's tensor or an
    initializer of at most _KEPT elements). ONNX shape inference reads a constant input's value
    (a ReduceSum's axes, a Reshape's shape) only from the graph that holds the node: a body's
    `ReduceSum(x, axes)` with `axes` a Constant of the main graph (as TorchScript exports
    write them) left its output of unknown rank, and a list appending it was refused."""
    visible = dict(outer or {})
    visible.update((tensor.name, tensor) for tensor in graph.initializer if _small(tensor))
    for node in graph.node:
        value = next(
            (a.t for a in node.attribute if a.name == "value" and a.type == a.TENSOR), None
        )
        constant = node.op_type == "Constant" and node.domain in ("", "ai.onnx")
        if constant and value is not None and _small(value):
            visible[node.output[0]] = value
    for node in graph.node:
        for _, body in subgraphs(node):
            own = defined_names(body)
            for name in captured_names(body):
                if name in visible and name not in own:
                    tensor = body.initializer.add()
                    tensor.CopyFrom(visible[name])
                    tensor.name = name
            outer_constants_inside(body, visible)


def _small(tensor: schema.TensorProto) -> bool:
    return int(np.prod(tensor.dims)) <= _KEPT


def _carried_values(model: schema.ModelProto) -> list[tuple]:
    """(body input, body output, initial value name, final value name, the Loop's graph) of
    every tensor a Loop carries. The final value (the Loop's output) is the initial value or a
    body output, so it has the assumed shape too: it is declared so in the Loop's graph."""
    found = []
    for graph, _ in all_graphs(model.graph, "main"):
        for node in graph.node:
            if not is_loop(node):
                continue
            body = next(body for name, body in subgraphs(node) if name == "body")
            for index, initial in enumerate(node.input[2:]):
                body_input, body_output = body.input[2 + index], body.output[1 + index]
                if body_input.type.HasField("tensor_type"):
                    final = node.output[index] if index < len(node.output) else ""
                    found.append((body_input, body_output, initial, final, graph))
    return found


def _declare(value: schema.ValueInfoProto, shape: Shape) -> None:
    """Declare `shape` on a tensor-typed value (None: no shape)."""
    tensor_type = value.type.tensor_type
    tensor_type.ClearField("shape")
    if shape is None:
        return
    declared = tensor_type.shape
    declared.SetInParent()
    for dim in shape:
        made = declared.dim.add()
        if isinstance(dim, int):
            made.dim_value = dim
        elif dim is not None:
            made.dim_param = dim


def _join(a: Shape, b: Shape) -> Shape:
    """The most precise shape both `a` and `b` have."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))
