"""The walk over a model's graphs that ov_loops' shape inference makes, as onnx's does.

onnx/shape_inference/implementation.cc (ShapeInferenceImplBase, GraphInferencerImpl): a graph
sees its enclosing graphs' values; its declared value_info, inputs and outputs (in that order)
and its initializers (IR >= 4) type their names; each node's inferred output types get fresh
symbols for unknown dims, are merged into a declared type or else appended to value_info (and
copied into a graph output declared without a type). A subgraph's inputs first take the types
its op passes in (merged into the declared ones, then given fresh symbols).
"""

from __future__ import annotations

from collections.abc import Callable

from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.inference.kinds import (
    Sequence,
    Symbols,
    Tensor,
    Type,
    Unsure,
    merge,
    parse_type,
    write_type,
)

Rule = Callable[["NodeContext"], list]


class NodeContext:
    """What a rule reads of one node: its input types, attributes, constant inputs and a way
    to infer its subgraphs."""

    def __init__(self, walk: GraphWalk, node: schema.NodeProto, inputs: list[Type | None]) -> None:
        self.node = node
        self.inputs = inputs
        self.opset = walk.opset
        self.data_prop = walk.data_prop
        self._walk = walk
        self._attrs = {attr.name: attr for attr in node.attribute}

    def attr(self, name: str, default: object = None) -> object:
        """An int, float, ints or tensor attribute's value, or `default` when absent."""
        attr = self._attrs.get(name)
        if attr is None:
            return default
        kinds = schema.AttributeProto
        values = {
            kinds.INT: lambda: attr.i,
            kinds.FLOAT: lambda: attr.f,
            kinds.INTS: lambda: tuple(attr.ints),
            kinds.FLOATS: lambda: tuple(attr.floats),
            kinds.TENSOR: lambda: attr.t,
            kinds.GRAPH: lambda: attr.g,
            kinds.STRING: lambda: attr.s,
            kinds.STRINGS: lambda: tuple(attr.strings),
        }
        if attr.type not in values:
            raise Unsure(f"attribute {name} of type {attr.type}")
        return values[attr.type]()

    def attr_names(self) -> set[str]:
        """The names of the node's attributes."""
        return set(self._attrs)

    def constant(self, index: int) -> schema.TensorProto | None:
        """The value of input `index` when the node's own graph holds it (an initializer or a
        Constant node's tensor), as onnx's getInputData."""
        if index >= len(self.node.input):
            return None
        return self._walk.constants.get(self.node.input[index])

    def tensor(self, index: int) -> Tensor:
        """Input `index`, which must be a tensor of known element type (else onnx fails)."""
        value = self.inputs[index] if index < len(self.inputs) else None
        if not isinstance(value, Tensor) or not value.elem:
            raise Unsure(f"input {index} of {self.node.op_type} is not a typed tensor")
        return value

    def sequence(self, index: int) -> Tensor:
        """The element of sequence input `index`, of known element type."""
        value = self.inputs[index] if index < len(self.inputs) else None
        if not isinstance(value, Sequence) or value.elem is None or not value.elem.elem:
            raise Unsure(f"input {index} of {self.node.op_type} is not a typed sequence")
        return value.elem

    def subgraph(self, graph: schema.GraphProto, inputs: list[Type | None]) -> list[Type | None]:
        """The output types of `graph` inferred with `inputs` as its input types."""
        inner = GraphWalk(self._walk.rules, self._walk.symbols, self.opset, self.data_prop)
        return inner.infer(graph, self._walk.scope, inputs)


class GraphWalk:
    """Infers one graph in place (value_info appended, outputs and inputs refined)."""

    def __init__(
        self, rules: dict[str, Rule], symbols: Symbols, opset: int, data_prop: bool
    ) -> None:
        self.rules = rules
        self.symbols = symbols
        self.opset = opset
        self.data_prop = data_prop  # onnx's data propagation: rules reading values may differ
        self.scope: dict[str, Type] = {}
        self.constants: dict[str, schema.TensorProto] = {}

    def infer(
        self,
        graph: schema.GraphProto,
        outer: dict[str, Type],
        inputs: list[Type | None] | None = None,
    ) -> list[Type | None]:
        """Infer `graph` seeing `outer`; `inputs`: the types a subgraph's op passes in."""
        if inputs is not None:
            self._refine_inputs(graph, inputs)
        self.scope = dict(outer)
        own: dict[str, schema.ValueInfoProto] = {}
        untyped: dict[str, schema.ValueInfoProto] = {}
        for value in [*graph.value_info, *graph.input, *graph.output]:
            declared = parse_type(value.type)
            if declared is None:
                untyped[value.name] = value
            else:
                self.scope[value.name] = declared
                own[value.name] = value
        if graph.sparse_initializer:
            raise Unsure("a sparse initializer")
        for tensor in graph.initializer:
            self.constants[tensor.name] = tensor
            self.scope.setdefault(tensor.name, Tensor(tensor.data_type, tuple(tensor.dims)))
        for node in graph.node:
            self._node(graph, node, own, untyped)
        return [parse_type(value.type) for value in graph.output]

    def _refine_inputs(self, graph: schema.GraphProto, inputs: list[Type | None]) -> None:
        if len(inputs) != len(graph.input):
            raise Unsure("a subgraph's inputs differ in number from its op's")
        if {value.name for value in graph.input} & {t.name for t in graph.initializer}:
            raise Unsure("a subgraph input is also an initializer")
        for value, given in zip(graph.input, inputs):
            if given is None:
                continue
            refined = self.symbols.materialize(merge(given, parse_type(value.type)))
            value.ClearField("type")
            write_type(refined, value.type)

    def _node(
        self,
        graph: schema.GraphProto,
        node: schema.NodeProto,
        own: dict[str, schema.ValueInfoProto],
        untyped: dict[str, schema.ValueInfoProto],
    ) -> None:
        inputs = []
        for name in node.input:
            if name and name not in self.scope:
                raise Unsure(f"input {name} of {node.op_type} has no type")
            inputs.append(self.scope.get(name) if name else None)
        outputs = self.rules[node.op_type](NodeContext(self, node, inputs))
        value = node.attribute[0] if node.op_type == "Constant" and node.attribute else None
        if value is not None and value.name == "value" and value.type == value.TENSOR:
            self.constants[node.output[0]] = value.t  # onnx's getInputData reads it too
        for name, inferred in zip(node.output, outputs):
            if not name or inferred is None:
                continue
            inferred = self.symbols.materialize(inferred)
            if name in own:
                merged = merge(inferred, self.scope[name])
                own[name].ClearField("type")
                write_type(merged, own[name].type)
                self.scope[name] = merged
                continue
            if name in self.scope:
                raise Unsure(f"{name} is defined twice")
            made = graph.value_info.add()
            made.name = name
            write_type(inferred, made.type)
            if name in untyped:
                write_type(inferred, untyped[name].type)
            own[name] = made
            self.scope[name] = inferred
