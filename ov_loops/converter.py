"""ONNX -> OpenVINO with every Loop translated by ov-loops into a Loop-5.

Body operators are converted by OpenVINO's own ONNX frontend. Each Loop is replaced by a
placeholder (see onnx_io.placeholders); a ConversionExtension expands the placeholder: it types
the body from the values arriving at the placeholder, converts the body with the same frontend
(recursively, so nested loops are ours too) and emits the Loop-5.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
from openvino._offline_transformations import apply_fused_names_cleanup, apply_moc_transformations
from openvino.frontend import FrontEndManager
from openvino.frontend.onnx import ConversionExtension

from ov_loops.errors import ConversionError, OvLoopsError, UnsupportedError, UnsupportedItem
from ov_loops.loops import guards
from ov_loops.loops.onnx_loop import OnnxLoop, TensorType
from ov_loops.loops.spec import LoopSpec
from ov_loops.loops.to_openvino import build_loop
from ov_loops.onnx_io.load import opset_version
from ov_loops.onnx_io.placeholders import PLACEHOLDER_DOMAIN, replace_loops
from ov_loops.onnx_io.scopes import node_label, subgraphs
from ov_loops.onnx_io.types import known_types, onnx_elem_type

MAX_SHAPE_RELAXATIONS = 8
NOT_CONVERTED = {"NotSupportedONNXNode", "ONNXFrameworkNode", "FrameworkNode"}


@dataclass(frozen=True)
class ConvertedLoop:
    """What became of one ONNX loop: its node path and LoopSpec, or why it was folded away."""

    path: str
    op: str
    spec: LoopSpec | None
    folded: str | None = None

    def summary(self) -> str:
        if self.spec is None:
            return f"{self.path}: {self.op} folded ({self.folded})"
        return f"{self.path}: {self.op} -> Loop-5; {self.spec.summary()}"


@dataclass
class Conversion:
    """The converted model and what became of each loop, outermost first."""

    model: ov.Model
    loops: list[ConvertedLoop] = field(default_factory=list)


class Converter:
    """Converts one ONNX model; holds the registry of loops between placeholder and expansion."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self._model = model
        self._outer_types = known_types(model)
        self._loops: dict[int, OnnxLoop] = {}
        self._templates: dict[int, onnx.GraphProto] = {}
        self._unsupported: list[UnsupportedItem] = []
        self._error: OvLoopsError | None = None
        self._reports: list[list[ConvertedLoop]] = []
        self._frontend = FrontEndManager().load_by_framework("onnx")
        self._frontend.add_extension(ConversionExtension("Loop", PLACEHOLDER_DOMAIN, self._expand))

    # -- public ------------------------------------------------------------------------------
    def convert(self) -> Conversion:
        graph = replace_loops(self._model.graph, "main", self._register)
        main = onnx.ModelProto()
        main.CopyFrom(self._model)
        main.graph.CopyFrom(graph)
        self._add_placeholder_opset(main)
        with self._collecting() as loops:
            model = self._convert_graph(main, graph, "main")
        if self._unsupported:
            raise UnsupportedError(self._unsupported)
        if self._error is not None:
            raise self._error
        self._frontend.normalize(model)
        # What openvino.convert_model applies to ONNX models too (Identity removal, constant
        # weight layouts, ...); bodies included.
        apply_moc_transformations(model, cf=False, smart_reshape=True)
        apply_fused_names_cleanup(model)
        return Conversion(model, loops)

    # -- registry ----------------------------------------------------------------------------
    def _register(self, node: onnx.NodeProto, path: str) -> tuple[int, list[str]]:
        loop = OnnxLoop.read(node, path, opset_version(self._model, node.domain))
        self._unsupported.extend(loop.unsupported_types(self._outer_types))
        key = len(self._loops)
        self._loops[key] = loop
        return key, loop.placeholder_inputs()

    def _template(self, key: int) -> onnx.GraphProto:
        """The loop's body with its own nested loops replaced by placeholders (made once)."""
        if key not in self._templates:
            loop = self._loops[key]
            self._templates[key] = replace_loops(loop.body, f"{loop.path}/body", self._register)
        return self._templates[key]

    @contextmanager
    def _collecting(self):
        reports: list[ConvertedLoop] = []
        self._reports.append(reports)
        try:
            yield reports
        finally:
            self._reports.pop()

    def _add_placeholder_opset(self, model: onnx.ModelProto) -> None:
        if opset_version(model, PLACEHOLDER_DOMAIN) is None:
            model.opset_import.append(onnx.helper.make_opsetid(PLACEHOLDER_DOMAIN, 1))

    # -- frontend ----------------------------------------------------------------------------
    def _convert_graph(self, model: onnx.ModelProto, graph: onnx.GraphProto, path: str) -> ov.Model:
        """Convert `model`; `graph` is the graph as the user wrote it, for node paths."""
        try:
            loaded = self._frontend.load(io.BytesIO(model.SerializeToString()))
            converted = self._frontend.convert_partially(loaded)
        except Exception as exc:  # OpenVINO raises plain RuntimeErrors with long messages
            raise ConversionError(f"{path}: OpenVINO cannot convert: {_first_line(exc)}") from None
        self._collect_unsupported(converted, graph, path)
        return converted

    def _collect_unsupported(self, model: ov.Model, graph: onnx.GraphProto, path: str) -> None:
        nodes = dict(_nodes_by_output(graph, path))
        for op in _walk(model):
            if op.get_type_name() not in NOT_CONVERTED:
                continue
            node, node_path = nodes.get(op.get_friendly_name(), (None, path))
            if node is None:
                self._unsupported.append(
                    UnsupportedItem(op.get_friendly_name(), "?", None, node_path)
                )
            elif node.domain != PLACEHOLDER_DOMAIN:  # placeholders record their own error
                opset = opset_version(self._model, node.domain)
                self._unsupported.append(
                    UnsupportedItem(node.op_type, node.domain, opset, node_path)
                )

    # -- the extension -----------------------------------------------------------------------
    def _expand(self, context) -> list[ov.Output]:
        key = context.get_attribute("key")
        loop = self._loops[key]
        values = [context.get_input(i) for i in range(context.get_input_size())]
        try:
            return self._translate(key, loop, values)
        except OvLoopsError as exc:
            self._error = self._error or exc
            raise
        except Exception as exc:
            self._error = self._error or ConversionError(f"{loop.path}: {_first_line(exc)}")
            raise

    def _translate(self, key: int, loop: OnnxLoop, values: list[ov.Output]) -> list[ov.Output]:
        trip_value, condition_value, carried, captures, sliced = loop.split(values)
        trip = guards.trip_count(trip_value, sliced)
        start = guards.initial_condition(condition_value)
        body, nested = self._convert_body(key, loop, carried, captures + sliced, start)
        if trip.proven_zero or start.constant is False:
            outputs = self._fold(loop, trip, carried, body)
        else:
            outputs = self._emit(loop, trip, start, carried, captures, sliced, body)
            self._reports[-1].extend(nested)
        return outputs[: len(loop.node.output)]

    def _convert_body(
        self,
        key: int,
        loop: OnnxLoop,
        carried: list[ov.Output],
        reads: list[ov.Output],
        start: guards.InitialCondition,
    ) -> tuple[ov.Model, list[ConvertedLoop]]:
        """Convert the body, typed from the outer values.

        Loop-carried values start with the shapes they enter with. When the body returns a
        different shape, the differing dimensions (or the rank) become dynamic and the body is
        converted again, until the shapes settle: a fixed point, so static shapes are kept only
        where every iteration provably has them. `reads` are the captured values, then the
        sliced sources (of which the body sees one part, axis 0 removed).
        """
        template = self._template(key)
        carried_types = [
            _tensor_type(value, declared) for value, declared in zip(carried, template.input[2:])
        ]
        condition_shape = (1,) if _shape_of(start.value) == (1,) else ()
        capture_types = [_tensor_type(value, None) for value in reads[: len(loop.captures)]]
        slice_types = [
            _tensor_type(value, None).without_leading_axis()
            for value in reads[len(loop.captures) :]
        ]
        for _ in range(MAX_SHAPE_RELAXATIONS):
            body_proto = loop.body_model(
                template, carried_types, condition_shape, capture_types, slice_types, self._model
            )
            self._add_placeholder_opset(body_proto)
            with self._collecting() as nested:
                body = self._convert_graph(body_proto, template, f"{loop.path}/body")
            relaxed = [
                _relax(loop.path, declared, result.input_value(0))
                for declared, result in zip(carried_types, body.get_results()[1:])
            ]
            if relaxed == carried_types:
                return body, nested
            carried_types = relaxed
        raise ConversionError(f"{loop.path}: loop-carried shapes did not settle")

    def _fold(
        self, loop: OnnxLoop, trip: guards.TripCount, carried: list[ov.Output], body: ov.Model
    ) -> list[ov.Output]:
        """The results of a loop that provably runs zero times: initial values, empty stacks."""
        reason = "trip count 0" if trip.proven_zero else "initial condition false"
        self._reports[-1].append(
            ConvertedLoop(loop.path, "Loop", None, f"runs zero times: {reason}")
        )
        scan_results = body.get_results()[1 + loop.carried_count :]
        folded = [guards.passthrough(value) for value in carried]
        return folded + [guards.empty_stack(result.input_value(0)) for result in scan_results]

    def _emit(
        self,
        loop: OnnxLoop,
        trip: guards.TripCount,
        start: guards.InitialCondition,
        carried: list[ov.Output],
        captures: list[ov.Output],
        sliced: list[ov.Output],
        body: ov.Model,
    ) -> list[ov.Output]:
        """Build the Loop-5 (and its zero-iteration guard) from the converted body."""
        constants = {
            name: value for name, value in zip(loop.captures, captures) if guards.is_constant(value)
        }
        parameters = _inline_constants(body.get_parameters(), constants)
        parameters = _with_leading_axis(parameters, {entry.body_input for entry in loop.sliced})
        parameter_index = {
            name: index
            for index, parameter in enumerate(parameters)
            for name in parameter.output(0).get_names()
        }
        spec = loop.spec(parameter_index, trip.source, trip.constant)

        results = body.get_results()
        new_results = list(results[: 1 + loop.carried_count])
        for result in results[1 + loop.carried_count :]:  # scan outputs get a leading 1
            unsqueezed = ops.unsqueeze(result.input_value(0), ops.constant([0], ov.Type.i64))
            new_results.append(ops.result(unsqueezed))
        body = ov.Model(new_results, parameters, f"{loop.path}/body")

        invariant_values = [
            value for name, value in zip(loop.captures, captures) if name not in constants
        ]
        external = {entry.external_port: value for entry, value in zip(spec.merged_inputs, carried)}
        for entry, value in zip(spec.invariant_inputs, invariant_values):
            external[entry.external_port] = value
        for entry, value in zip(spec.sliced_inputs, sliced):
            external[entry.external_port] = value
        outputs = build_loop(
            spec, body, trip.value, start.value, external, loop.node.name or loop.path
        )
        guarded = guards.guard_zero_iterations(outputs[loop.carried_count :], trip, start)
        self._reports[-1].append(ConvertedLoop(loop.path, "Loop", spec))
        return outputs[: loop.carried_count] + guarded


def convert_model(model: onnx.ModelProto) -> Conversion:
    """Convert a loaded, checked ONNX model."""
    return Converter(model).convert()


# -- helpers ------------------------------------------------------------------------------------
def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Check ", "Exception from src"))]
    return (useful or lines or [type(exc).__name__])[0]


def _tensor_type(value: ov.Output, declared: onnx.ValueInfoProto | None) -> TensorType:
    """The type a body input gets from the outer value (falling back to what the body declares)."""
    element = value.get_element_type()
    elem_type = onnx_elem_type(element)
    if elem_type == 0 and declared is not None and declared.type.HasField("tensor_type"):
        elem_type = declared.type.tensor_type.elem_type
    return TensorType(elem_type, _shape_of(value))


def _shape_of(value: ov.Output) -> tuple[int | None, ...] | None:
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in shape)


def _relax(path: str, entering: TensorType, leaving: ov.Output) -> TensorType:
    """The loop-carried type that covers both the entering value and the body's output."""
    produced = onnx_elem_type(leaving.get_element_type())
    if entering.elem_type and produced and produced != entering.elem_type:
        raise ConversionError(
            f"{path}: body output '{leaving.get_any_name()}' has element type "
            f"{onnx.helper.tensor_dtype_to_string(produced)} but its loop-carried input enters as "
            f"{onnx.helper.tensor_dtype_to_string(entering.elem_type)}"
        )
    left, right = entering.shape, _shape_of(leaving)
    if left is None or right is None or len(left) != len(right):
        shape = None
    else:
        shape = tuple(a if a == b else None for a, b in zip(left, right))
    return TensorType(entering.elem_type or produced, shape)


def _inline_constants(parameters, constants: dict[str, ov.Output]) -> list:
    """Replace body Parameters fed by outer Constants with copies of those Constants.

    The CPU plugin pre-packs constant MatMul weights; as invariant inputs they would not be.
    The data is copied: a Constant sharing the outer one's buffer dangles once the outer graph
    drops it (seen as wrong results). Returns the Parameters that remain.
    """
    remaining = []
    for parameter in parameters:
        names = parameter.output(0).get_names() & constants.keys()
        if not names:
            remaining.append(parameter)
            continue
        source = constants[next(iter(names))].get_node()
        inlined = ov.op.Constant(source.get_tensor_view(), shared_memory=False)
        parameter.output(0).replace(inlined.output(0))
    return remaining


def _with_leading_axis(parameters, names: set[str]) -> list:
    """Give the named Parameters a leading axis of 1 (a sliced part), squeezed in the body."""
    updated = []
    for parameter in parameters:
        if not parameter.output(0).get_names() & names:
            updated.append(parameter)
            continue
        shape = parameter.get_partial_shape()
        part_shape = ov.PartialShape([1, *shape]) if shape.rank.is_static else shape
        part = ops.parameter(part_shape, parameter.get_element_type())
        part.output(0).set_names(parameter.output(0).get_names())
        squeezed = ops.squeeze(part, ops.constant(np.array([0], np.int64)))
        parameter.output(0).replace(squeezed.output(0))
        updated.append(part)
    return updated


def _nodes_by_output(graph: onnx.GraphProto, path: str):
    """(name, (node, node path)) for nodes of `graph` and its non-Loop subgraphs, by node name
    and by output name."""
    for index, node in enumerate(graph.node):
        node_path = f"{path}/{node_label(node, index)}"
        for name in (node.name, *node.output):  # the frontend names nodes either way
            if name:
                yield name, (node, node_path)
        if node.domain != PLACEHOLDER_DOMAIN:
            for attr_name, sub in subgraphs(node):
                yield from _nodes_by_output(sub, f"{node_path}/{attr_name}")


def _walk(model: ov.Model):
    """Every op of `model` and of the bodies the frontend made (If, TensorIterator).

    Loop bodies are ours: their ops were collected when the body was converted.
    """
    for op in model.get_ordered_ops():
        yield op
        kind = op.get_type_name()
        if kind == "If":
            yield from _walk(op.get_then_body())
            yield from _walk(op.get_else_body())
        elif kind == "TensorIterator":
            yield from _walk(op.get_function())
