"""The user's input shapes and types and output cut, applied to the ONNX model before its passes.

Inputs are set in the ONNX graph itself (static dims as dims, element types of untyped inputs
as types), so that ONNX shape inference, OpenVINO's frontend and every loop body see them;
bounded dims (`1..8`), which ONNX cannot state, are given to OpenVINO's frontend for the main
graph (`shapes`). An input given another type than the model declares keeps the model's type
inside: the converted model takes the type given and converts it at the input (`retype`).
"""

from __future__ import annotations

import logging

import openvino as ov
from openvino.preprocess import PrePostProcessor

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.input_specs import InputShape
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import (
    all_graphs,
    captured_names,
    defined_names,
    subgraphs,
)
from ov_loops.frontends.onnx.proto.types import onnx_elem_type, ov_element_type

log = logging.getLogger(__name__)


class InputOutputEdits:
    """Input shapes and types to set, and output tensors to cut the main graph at."""

    def __init__(self, inputs: list[InputShape], outputs: list[str]) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.shapes: dict[str, ov.PartialShape] = {}  # what the frontend gets, once applied
        self.retyped: dict[str, ov.Type] = {}  # inputs the model takes in another type
        # how the shapes give one symbolic dim of the model two lengths, if they do
        self.conflict: str | None = None

    def apply(self, model: schema.ModelProto) -> None:
        """Edit `model` in place; InputError names the input or tensor that cannot be edited."""
        if self.inputs:
            self.conflict = symbol_conflict(model, self.inputs)
            self.shapes, self.retyped = set_inputs(model, self.inputs)
        if self.outputs:
            cut_outputs(model, self.outputs)

    def retype(self, model: ov.Model) -> None:
        """Make each `retyped` input of the converted `model` a Parameter of the type given,
        converted at the input to the type the model computes with (as OpenVINO's
        preprocessing does: Parameter(given) -> Convert(declared))."""
        if not self.retyped:
            return
        steps = PrePostProcessor(model)
        for name, element in self.retyped.items():
            steps.input(name).tensor().set_element_type(element)
            declared = model.input(name).get_element_type().get_type_name()
            given = element.get_type_name()
            log.info("input '%s': %s, converted to the model's %s", name, given, declared)
        steps.build()


def model_inputs(graph: schema.GraphProto) -> list[schema.ValueInfoProto]:
    """The graph's inputs a user feeds (those with an initializer are constants)."""
    initializers = {init.name for init in graph.initializer}
    return [value for value in graph.input if value.name not in initializers]


def set_inputs(
    model: schema.ModelProto, given: list[InputShape]
) -> tuple[dict[str, ov.PartialShape], dict[str, ov.Type]]:
    """Set the shapes and types `given` on the model's inputs; return the shapes by name, and
    the types given to inputs the model declares of another type (left as declared).

    Entries are all named or all unnamed (the model's inputs in order). A shape must have the
    rank the model declares, and each dim the model declares static must lie in the given one.
    """
    inputs = model_inputs(model.graph)
    resolved = _resolve(given, [value.name for value in inputs])
    retyped = {}
    for value in inputs:
        entry = resolved.get(value.name)
        if entry is not None and not _set_input(value, entry):
            retyped[value.name] = entry.element
    shapes = {name: entry.shape for name, entry in resolved.items() if entry.shape is not None}
    return shapes, retyped


def symbol_conflict(model: schema.ModelProto, given: list[InputShape]) -> str | None:
    """How the shapes `given` make one symbolic dim of the model (an ONNX dim_param, which names
    one length wherever it appears) two lengths, e.g. "dim B is 3 in input 'x' and 2 in input
    'c0'" (the first such pair, in the model's input order); None when they do not. A model
    may still convert then (nothing combines the two); when it cannot, this is the cause."""
    inputs = model_inputs(model.graph)
    resolved = _resolve(given, [value.name for value in inputs])
    seen: dict[str, tuple[int, str]] = {}
    for value in inputs:
        entry = resolved.get(value.name)
        if entry is None or entry.shape is None or entry.shape.rank.is_dynamic:
            continue
        for declared, dim in zip(value.type.tensor_type.shape.dim, entry.shape):
            if not declared.dim_param or not dim.is_static:
                continue
            length, first = seen.setdefault(declared.dim_param, (dim.get_length(), value.name))
            if length != dim.get_length():
                return (
                    f"dim {declared.dim_param} is {length} in input '{first}' and "
                    f"{dim.get_length()} in input '{value.name}'"
                )
    return None


def _resolve(given: list[InputShape], names: list[str]) -> dict[str, InputShape]:
    listed = ", ".join(names) or "none"
    named = [entry.name is not None for entry in given]
    if any(named) and not all(named):
        raise InputError("input: name every input or none (unnamed ones go by position)")
    if not all(named):
        if len(given) > len(names):
            raise InputError(f"input: {len(given)} shapes for {len(names)} inputs ({listed})")
        return {name: InputShape(name, e.shape, e.element) for name, e in zip(names, given)}
    resolved: dict[str, InputShape] = {}
    for entry in given:
        if entry.name not in names:
            raise InputError(f"input '{entry.name}' is not an input of the model: {listed}")
        if entry.name in resolved:
            raise InputError(f"input '{entry.name}' is given twice")
        resolved[entry.name] = entry
    return resolved


def _set_input(value: schema.ValueInfoProto, entry: InputShape) -> bool:
    """Set `entry`'s shape on `value`, and its type (`_set_type`); False when the model keeps
    the type it declares."""
    if value.type.WhichOneof("value") not in (None, "tensor_type"):
        raise InputError(f"input '{value.name}' is not a tensor: its shape cannot be set")
    tensor = value.type.tensor_type
    typed = entry.element is None or _set_type(value.name, tensor, entry.element)
    if entry.shape is not None:
        declared = list(tensor.shape.dim) if tensor.HasField("shape") else None
        _check_shape(value.name, entry.shape, declared)
        symbols = [dim.dim_param for dim in declared or []]
        tensor.ClearField("shape")
        tensor.shape.SetInParent()
        for index, dim in enumerate(entry.shape):
            made = tensor.shape.dim.add()
            if dim.is_static:
                made.dim_value = dim.get_length()
            elif index < len(symbols) and symbols[index]:
                made.dim_param = symbols[index]
    return typed


def _set_type(name: str, tensor: schema.TypeProto.Tensor, element: ov.Type) -> bool:
    """Set `element` on an input the model leaves untyped (or types alike, or in a type OpenVINO
    lacks); False, leaving it, when the model declares another type (converted at the input)."""
    elem_type, spelled = onnx_elem_type(element), element.get_type_name()
    if elem_type == 0:
        raise InputError(f"input '{name}': ONNX has no element type {spelled}")
    if tensor.elem_type == schema.TensorProto.STRING and elem_type != tensor.elem_type:
        raise InputError(f"input '{name}': the model declares strings, not {spelled}")
    if tensor.elem_type in (0, elem_type) or ov_element_type(tensor.elem_type) is None:
        tensor.elem_type = elem_type
        return True
    return False


def _check_shape(name: str, shape: ov.PartialShape, declared: list | None) -> None:
    if declared is None:
        return
    text = "[" + ",".join(_dim_text(dim) for dim in declared) + "]"
    if shape.rank.get_length() != len(declared):
        raise InputError(
            f"input '{name}': shape {shape} has rank {shape.rank.get_length()}, the model "
            f"declares {text} (rank {len(declared)})"
        )
    for index, (dim, model_dim) in enumerate(zip(shape, declared)):
        if model_dim.HasField("dim_value") and not dim.compatible(
            ov.Dimension(model_dim.dim_value)
        ):
            raise InputError(
                f"input '{name}': dim {index} is {dim} in {shape}, the model declares "
                f"{model_dim.dim_value} ({text})"
            )


def _dim_text(dim: schema.TensorShapeProto.Dimension) -> str:
    if dim.HasField("dim_value"):
        return str(dim.dim_value)
    return dim.dim_param or "?"


def cut_outputs(model: schema.ModelProto, names: list[str]) -> None:
    """Make `names` (main-graph tensors) the model's outputs, in that order, and drop the nodes
    they do not need; the model's inputs are all kept."""
    graph = model.graph
    known = defined_names(graph)
    for index, name in enumerate(names):
        if name in names[:index]:
            raise InputError(f"output '{name}' is given twice")
        if name not in known:
            raise InputError(_unknown_output(graph, name))
    declared = {value.name: value for value in (*graph.input, *graph.value_info, *graph.output)}
    outputs = [declared.get(name) or schema.ValueInfoProto(name=name) for name in names]
    kept = _needed_nodes(graph, set(names))
    graph.ClearField("output")
    graph.output.extend(outputs)
    nodes = [node for index, node in enumerate(graph.node) if index in kept]
    graph.ClearField("node")
    graph.node.extend(nodes)


def _unknown_output(graph: schema.GraphProto, name: str) -> str:
    for each, path in all_graphs(graph, "main"):
        if each is not graph and name in defined_names(each):
            return f"output '{name}' is inside {path}: only main-graph tensors can be outputs"
    return f"output '{name}': no such tensor in the main graph"


def _needed_nodes(graph: schema.GraphProto, names: set[str]) -> set[int]:
    """Indices of the nodes the values `names` are computed from (in any node order)."""
    needed, kept = set(names), set()
    changed = True
    while changed:
        changed = False
        for index, node in enumerate(graph.node):
            if index in kept or not needed.intersection(node.output):
                continue
            kept.add(index)
            needed.update(node.input)
            for _, body in subgraphs(node):
                needed.update(captured_names(body))
            changed = True
    return kept
