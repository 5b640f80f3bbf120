"""The conversion driver: ONNX -> OpenVINO with every Loop and Scan translated into a Loop-5.

Body operators are converted by OpenVINO's own ONNX frontend. Each loop node is replaced by a
placeholder (frontends.onnx.placeholders); a ConversionExtension expands it: the body is typed
from the values arriving at the placeholder and converted by the same frontend (recursively, so
nested loops are ours too), the loop becomes a LoopIR (frontends.onnx.loopir, scan8), and a
lowering chosen for the target turns it into graph values (lower.select).

The frontend calls the extension through C++, which drops Python exception types: each
expansion's outcome (its reports, or its error) is recorded by loop key and read by the graph
conversion that contains the loop, which returns it.
"""

from __future__ import annotations

import io
import time
import weakref

import onnx
import openvino as ov
from openvino.frontend import FrontEndManager
from openvino.frontend.onnx import ConversionExtension

from ov_loops.conversion.report import Conversion, ConvertedLoop, rederived
from ov_loops.conversion.unsupported import unsupported_ops
from ov_loops.errors import (
    ConversionError,
    OvLoopsError,
    UnsupportedError,
    UnsupportedItem,
    message_line,
)
from ov_loops.frontends.onnx import body_types as types_of
from ov_loops.frontends.onnx.body_types import rank
from ov_loops.frontends.onnx.load.opsets import opset_version
from ov_loops.frontends.onnx.load.types import known_types
from ov_loops.frontends.onnx.load.weights import MappedFiles
from ov_loops.frontends.onnx.ops.layout import (
    LoopBody,
    PlaceholderValues,
    TensorType,
    normalize_axis,
)
from ov_loops.frontends.onnx.ops.loop import OnnxLoop
from ov_loops.frontends.onnx.ops.port_types import check_arriving, check_body_outputs
from ov_loops.frontends.onnx.ops.scan import OnnxScan
from ov_loops.frontends.onnx.ops.scan8 import batch_loop_ir
from ov_loops.frontends.onnx.ops.to_loop_ir import onnx_loop_ir
from ov_loops.frontends.onnx.placeholders import PLACEHOLDER_DOMAIN, replace_loops
from ov_loops.logs import progress
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.concat_copies import copy_loop_outputs_into_concats
from ov_loops.loopir.passes.levels import check_optimize_level
from ov_loops.loopir.passes.pipeline import CPU, TargetProfile
from ov_loops.lower.select import lower
from ov_loops.lower.stateful import is_top_level

MAX_SHAPE_RELAXATIONS = 8
READERS = {"Loop": OnnxLoop, "Scan": OnnxScan}
MAIN = -1  # the key of the main graph among loops' parents

Outcome = list[ConvertedLoop] | OvLoopsError


class Converter:
    """Converts one ONNX model: the registry of its loops, from placeholder to expansion."""

    def __init__(
        self,
        model: onnx.ModelProto,
        target: TargetProfile = CPU,
        optimize: str = "default",
        input_shapes: dict[str, ov.PartialShape] | None = None,
    ) -> None:
        self._model = model
        self._input_shapes = input_shapes or {}
        self._target = target
        self._optimize = check_optimize_level(optimize)
        self._outer_types = known_types(model)
        self._loops: dict[int, LoopBody] = {}
        self._children: dict[int, list[int]] = {}
        self._templates: dict[int, onnx.GraphProto] = {}
        self._outcomes: dict[int, Outcome] = {}
        self._unsupported: list[UnsupportedItem] = []
        self._files = MappedFiles()  # of tensors kept in files, mapped while converting
        self._frontend = FrontEndManager().load_by_framework("onnx")
        expand = _weak_callback(self._expand)
        for op in READERS:
            self._frontend.add_extension(ConversionExtension(op, PLACEHOLDER_DOMAIN, expand))

    def convert(self) -> Conversion:
        """The converted model and its per-loop report; UnsupportedError lists every
        unsupported op and loop, ConversionError (or its subclasses) says what else failed."""
        with self._files:  # the frontend has copied every tensor kept in a file once done
            return self._converted()

    def _converted(self) -> Conversion:
        graph = replace_loops(self._model.graph, "main", self._registrar(MAIN))
        self._register_nested_loops()
        if self._unsupported:  # before the frontend sees the model: some of these crash it
            raise UnsupportedError(self._unsupported)
        main = onnx.ModelProto()
        main.CopyFrom(self._model)
        main.graph.CopyFrom(graph)
        _add_placeholder_opset(main)
        model, loops, error = self._convert_graph(main, graph, "main", MAIN)
        if isinstance(error, UnsupportedError):  # a loop refused: listed with the others
            self._unsupported.extend(error.items)
            error = None
        if self._unsupported:
            raise UnsupportedError(self._unsupported)
        if error is not None:
            raise error
        # No MOC pass on the whole model (openvino.convert_model runs one): it turned a model
        # input passed through to an output into a Parameter read by its Result, losing the
        # input's name (test_check's loop_body_passthrough_outputs); bodies get it (simplify.py).
        self._frontend.normalize(model)
        if self._optimize != "none":  # MOC on a body may prune its nested Loops' ports
            loops = rederived(model, loops)
        copy_loop_outputs_into_concats(model)
        declared = types_of.with_declared_inputs(model, self._model.graph, self._input_shapes)
        declared.add_sinks([sink for loop in loops for sink in loop.states])
        return Conversion(declared, loops)

    # -- registry ----------------------------------------------------------------------------
    def _registrar(self, parent: int):
        def register(node: onnx.NodeProto, path: str) -> tuple[int, list[str]]:
            loop = READERS[node.op_type].read(node, path, opset_version(self._model, node.domain))
            self._unsupported.extend(loop.unsupported_types(self._outer_types))
            key = len(self._loops)
            self._loops[key] = loop
            self._children.setdefault(parent, []).append(key)
            return key, loop.placeholder_inputs()

        return register

    def _register_nested_loops(self) -> None:
        """Read the loops of every body at every depth (a body's template registers its loops),
        so that every unsupported loop is known before the frontend runs."""
        key = 0
        while key < len(self._loops):
            self._template(key)
            key += 1

    def _template(self, key: int) -> onnx.GraphProto:
        """The loop's body with its own nested loops replaced by placeholders (made once)."""
        if key not in self._templates:
            loop = self._loops[key]
            path = f"{loop.path}/body"
            self._templates[key] = replace_loops(loop.body, path, self._registrar(key))
        return self._templates[key]

    # -- frontend ----------------------------------------------------------------------------
    def _convert_graph(
        self, model: onnx.ModelProto, graph: onnx.GraphProto, path: str, parent: int
    ) -> tuple[ov.Model, list[ConvertedLoop], OvLoopsError | None]:
        """Convert `model`, whose loops are the children of `parent`; `graph` is the graph as
        the user wrote it, for node paths. Returns the model, the reports of its loops (in the
        order the frontend expanded them) and the first error of one of them."""
        children = self._children.get(parent, [])
        for key in children:
            self._outcomes.pop(key, None)
        self._files.refer_to_memory(model)
        try:
            loaded = self._frontend.load(io.BytesIO(model.SerializeToString()))
            if parent == MAIN:
                _set_input_shapes(loaded, self._input_shapes)
            converted = self._frontend.convert_partially(loaded)
        except Exception as exc:  # OpenVINO raises plain RuntimeErrors with long messages
            raise ConversionError(f"{path}: OpenVINO cannot convert: {message_line(exc)}") from None
        opset_of = lambda domain: opset_version(self._model, domain)  # noqa: E731
        self._unsupported.extend(unsupported_ops(converted, graph, path, opset_of))
        reports: list[ConvertedLoop] = []
        expanded = [o for key, o in self._outcomes.items() if key in children]  # in their order
        for outcome in expanded:
            if isinstance(outcome, OvLoopsError):
                return converted, reports, outcome
            reports.extend(outcome)
        return converted, reports, None

    # -- the extension -----------------------------------------------------------------------
    def _expand(self, context) -> list[ov.Output]:
        key = context.get_attribute("key")
        loop = self._loops[key]
        values = [context.get_input(i) for i in range(context.get_input_size())]
        start = time.perf_counter()
        try:
            outputs, reports = self._translate(key, loop, loop.split(values))
        except OvLoopsError as exc:
            self._outcomes[key] = exc
            raise
        except Exception as exc:
            self._outcomes[key] = ConversionError(f"{loop.path}: {message_line(exc)}")
            raise
        self._outcomes[key] = reports
        progress(f"{loop.path} converted", time.perf_counter() - start)
        return outputs[: len(loop.node.output)]

    def _translate(
        self, key: int, layout: LoopBody, values: PlaceholderValues
    ) -> tuple[list[ov.Output], list[ConvertedLoop]]:
        """Translate one loop from its values by role: all its outputs and its reports. A
        Scan-8 is a batch loop whose body scans one entry (frontends.onnx.scan8). An ill-typed
        port is refused first (frontends.onnx.port_types)."""
        check_arriving(layout, values)
        if not layout.batched:
            return self._lower(layout, *self._loop_ir(key, layout, values))
        if self._target.stateful and is_top_level(layout.path):  # a nested one keeps none
            raise ConversionError(f"{layout.path}: --stateful: a Scan-8 keeps no state")

        def scan_entry(entry: PlaceholderValues):
            return self._lower(layout, *self._loop_ir(key, layout, entry))

        return self._lower(layout, *batch_loop_ir(layout, values, scan_entry))

    def _lower(
        self, layout: LoopBody, loop: LoopIR, nested: list[ConvertedLoop]
    ) -> tuple[list[ov.Output], list[ConvertedLoop]]:
        """The loop lowered for the target, and its report (then its nested loops' unless it
        was folded away)."""
        lowered = lower(loop, self._target, self._optimize)
        report = ConvertedLoop(
            loop.path,
            loop.op,
            lowered.spec,
            lowered.folded,
            tuple(layout.node.output),
            lowered.carried,
            lowered.applied,
            lowered.becomes,
            lowered.states,
            lowered.not_unrolled,
        )
        return lowered.values, [report] if lowered.folded else [report, *nested]

    def _loop_ir(
        self, key: int, layout: LoopBody, values: PlaceholderValues
    ) -> tuple[LoopIR, list[ConvertedLoop]]:
        """The LoopIR of one (unbatched) loop fed `values`, and the reports of its body's loops."""
        self._refuse_strings(layout, values)
        slice_axes = [
            normalize_axis(entry.axis, rank(value), f"{layout.path}: input '{entry.source}'")
            for entry, value in zip(layout.sliced, values.sliced)
        ]
        trip = trips.trip_count(
            values.trip_count,
            values.sliced,
            slice_axes,
            layout.sliced_lengths_must_agree,
            layout.path,
        )
        start = trips.initial_condition(values.condition)
        body, nested = self._convert_body(key, layout, values, slice_axes)
        results = body.get_results()
        stacked_axes = []
        for entry in layout.stacked_outputs:
            value_rank = rank(results[entry.index].input_value(0))
            stacked_rank = None if value_rank is None else value_rank + 1
            where = f"{layout.path}: output {entry.index}"
            stacked_axes.append(normalize_axis(entry.axis, stacked_rank, where))
        loop = onnx_loop_ir(layout, body, values, (trip, start), slice_axes, stacked_axes)
        return loop, nested

    def _refuse_strings(self, layout: LoopBody, values: PlaceholderValues) -> None:
        """String tensors may not flow through a Loop: OpenVINO's CPU plugin cannot run them."""
        items = _string_tensors(layout, values)
        if items:
            self._unsupported.extend(items)
            raise ConversionError(f"{layout.path}: string tensors in a loop")

    def _convert_body(
        self, key: int, layout: LoopBody, values: PlaceholderValues, slice_axes: list[int]
    ) -> tuple[ov.Model, list[ConvertedLoop]]:
        """Convert the body, typed from the outer values; return it and its loops' reports.

        Loop-carried values start with the shapes they enter with. When the body returns a
        different shape, the differing dimensions (or the rank) become dynamic and the body is
        converted again, until the shapes settle: a fixed point, so static shapes are kept only
        where every iteration provably has them. A body condition input that declares no shape
        gets the loop's condition's.
        """
        template = self._template(key)
        declared = {value.name: value for value in template.input}
        carried_types = [
            types_of.tensor_type(value, declared.get(name))
            for value, name in zip(values.carried, layout.carried_inputs)
        ]
        capture_types = [types_of.tensor_type(value, None) for value in values.captures]
        slice_types = [
            types_of.tensor_type(value, None).without_axis(axis)
            for value, axis in zip(values.sliced, slice_axes)
        ]
        condition = values.condition
        condition_shape = (
            (1,) if condition is not None and types_of.shape_of(condition) == (1,) else ()
        )
        for _ in range(MAX_SHAPE_RELAXATIONS):
            body_proto = layout.body_model(
                template, carried_types, capture_types, slice_types, self._model, condition_shape
            )
            _add_placeholder_opset(body_proto)
            body, nested, error = self._convert_graph(
                body_proto, template, f"{layout.path}/body", key
            )
            if error is not None:
                raise error
            check_body_outputs(layout, [each.elem_type for each in carried_types], body)
            relaxed = _relaxed(layout, carried_types, body)
            if relaxed == carried_types:
                types_of.add_unread_parameters(
                    body, zip(layout.carried_inputs, values.carried, carried_types)
                )
                return body, nested
            carried_types = relaxed
        raise ConversionError(f"{layout.path}: loop-carried shapes did not settle")


def _relaxed(layout: LoopBody, carried_types: list[TensorType], body: ov.Model) -> list:
    results = body.get_results()
    return [
        types_of.relax(entering, results[out].input_value(0))
        for entering, out in zip(carried_types, layout.carried_outputs)
    ]


def _string_tensors(layout: LoopBody, values: PlaceholderValues) -> list[UnsupportedItem]:
    """An unsupported item per string tensor entering the loop."""
    names = [*layout.carried_sources, *layout.captures, *(entry.source for entry in layout.sliced)]
    return [
        UnsupportedItem(
            layout.op,
            layout.node.domain,
            layout.opset,
            layout.path,
            f"string tensor '{name}' in a loop (OpenVINO's CPU plugin cannot run it)",
        )
        for name, value in zip(names, [*values.carried, *values.captures, *values.sliced])
        if value.get_element_type() == ov.Type.string
    ]


def convert_model(
    model: onnx.ModelProto,
    target: TargetProfile = CPU,
    optimize: str = "default",
    input_shapes: dict[str, ov.PartialShape] | None = None,
) -> Conversion:
    """Convert a loaded, checked ONNX model for `target` (CPU: every CPU-plugin workaround),
    optimising loops at level `optimize` (pipeline.OPTIMIZE_LEVELS); `input_shapes` are given
    to the frontend for the main graph's inputs (frontends.onnx.load.io_edits: bounded dims)."""
    return Converter(model, target, optimize, input_shapes).convert()


def _set_input_shapes(loaded, shapes: dict[str, ov.PartialShape]) -> None:
    """Give the frontend the main graph's input shapes, bounded dims (which the ONNX model
    cannot state) included; an input nothing reads has no place (with_declared_inputs)."""
    for name, shape in shapes.items():
        place = loaded.get_place_by_tensor_name(name)
        if place is not None:
            loaded.set_partial_shape(place, shape)


def _add_placeholder_opset(model: onnx.ModelProto) -> None:
    if opset_version(model, PLACEHOLDER_DOMAIN) is None:
        model.opset_import.append(onnx.helper.make_opsetid(PLACEHOLDER_DOMAIN, 1))


def _weak_callback(method):
    """A callable for the frontend's ConversionExtension that does not keep the method's object
    alive: the FrontEnd holds the extension in C++, so a bound method there would make a cycle
    (object -> FrontEnd -> extension -> object) that Python's collector cannot see, and every
    Converter would leak with its models and graphs."""
    reference = weakref.WeakMethod(method)

    def call(*args):
        return reference()(*args)

    return call
