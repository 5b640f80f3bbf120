"""ONNX -> OpenVINO with every Loop translated by ov-loops into a Loop-5.

Body operators are converted by OpenVINO's own ONNX frontend. Each Loop is replaced by a
placeholder (see frontends.onnx.placeholders); a ConversionExtension expands the
placeholder: it types the body from the values arriving at the placeholder, converts the body
with the same frontend (recursively, so nested loops are ours too) and emits the Loop-5.
"""

from __future__ import annotations

import dataclasses
import io
import weakref
from contextlib import contextmanager

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
from openvino.frontend import FrontEndManager
from openvino.frontend.onnx import ConversionExtension

from ov_loops import ovgraph
from ov_loops.contract.spec import LastValueOutput, LoopSpec
from ov_loops.conversion.report import Conversion, ConvertedLoop
from ov_loops.errors import (
    ConversionError,
    OvLoopsError,
    UnsupportedError,
    UnsupportedItem,
    message_line,
)
from ov_loops.frontends.onnx.layout import (
    LoopBody,
    PlaceholderValues,
    SlicedRead,
    StackedOutput,
    TensorType,
    normalize_axis,
)
from ov_loops.frontends.onnx.loop import OnnxLoop
from ov_loops.frontends.onnx.opsets import opset_version
from ov_loops.frontends.onnx.placeholders import PLACEHOLDER_DOMAIN, replace_loops
from ov_loops.frontends.onnx.scan import OnnxScan
from ov_loops.frontends.onnx.scopes import node_label, subgraphs
from ov_loops.frontends.onnx.types import known_types, onnx_elem_type, ov_element_type
from ov_loops.loopir import trip_count as trips
from ov_loops.loopir.passes import cpu_guards
from ov_loops.loopir.passes.cpu_concats import (
    copy_invariants_into_concats,
    copy_loop_outputs_into_concats,
    refuse_zero_run_reshaped_carry,
)
from ov_loops.lower.loop5 import StackedPart, build_loop, stacked_part, unflatten

MAX_SHAPE_RELAXATIONS = 8
READERS = {"Loop": OnnxLoop, "Scan": OnnxScan}
# Every op the ONNX frontend leaves without a real conversion derives from FrameworkNode: its
# NotSupportedONNXNode and ONNXFrameworkNode, and the internal util:: ops it makes for sequences
# it cannot resolve (SequenceMark, SequenceAt, SequenceLength, ...).
NOT_CONVERTED = "FrameworkNode"


class Converter:
    """Converts one ONNX model; holds the registry of loops between placeholder and expansion."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self._model = model
        self._outer_types = known_types(model)
        self._loops: dict[int, LoopBody] = {}
        self._templates: dict[int, onnx.GraphProto] = {}
        self._unsupported: list[UnsupportedItem] = []
        self._error: OvLoopsError | None = None
        self._reports: list[list[ConvertedLoop]] = []
        self._frontend = FrontEndManager().load_by_framework("onnx")
        expand = _weak_callback(self._expand)
        for op in READERS:
            self._frontend.add_extension(ConversionExtension(op, PLACEHOLDER_DOMAIN, expand))

    # -- public ------------------------------------------------------------------------------
    def convert(self) -> Conversion:
        graph = replace_loops(self._model.graph, "main", self._register)
        self._register_nested_loops()
        if self._unsupported:  # before the frontend sees the model: some of these crash it
            raise UnsupportedError(self._unsupported)
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
        # No MOC pass after this (openvino.convert_model runs one): it would prune and renumber
        # Loop ports after translation, so the IR would no longer be the LoopSpecs reported,
        # and it gained no measurable latency (the CPU plugin does its own clean-up).
        self._frontend.normalize(model)
        copy_loop_outputs_into_concats(model)
        return Conversion(_with_declared_inputs(model, self._model.graph), loops)

    # -- registry ----------------------------------------------------------------------------
    def _register(self, node: onnx.NodeProto, path: str) -> tuple[int, list[str]]:
        loop = READERS[node.op_type].read(node, path, opset_version(self._model, node.domain))
        self._unsupported.extend(loop.unsupported_types(self._outer_types))
        key = len(self._loops)
        self._loops[key] = loop
        return key, loop.placeholder_inputs()

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
            raise ConversionError(f"{path}: OpenVINO cannot convert: {message_line(exc)}") from None
        self._collect_unsupported(converted, graph, path)
        return converted

    def _collect_unsupported(self, model: ov.Model, graph: onnx.GraphProto, path: str) -> None:
        nodes = dict(_nodes_by_output(graph, path))
        for op in _walk(model):
            if not _without_conversion(op):
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
            self._error = self._error or ConversionError(f"{loop.path}: {message_line(exc)}")
            raise

    def _translate(self, key: int, loop: LoopBody, values: list[ov.Output]) -> list[ov.Output]:
        parts = loop.split(values)
        if loop.batched:
            outputs = self._translate_batch(key, loop, parts)
        else:
            outputs = self._translate_parts(key, loop, parts)
        return outputs[: len(loop.node.output)]

    def _translate_parts(
        self, key: int, loop: LoopBody, parts: PlaceholderValues
    ) -> list[ov.Output]:
        """Translate one loop from its values by role; return all its outputs."""
        trip_value, condition_value, carried, captures, sliced, _ = parts
        self._refuse_strings(loop, parts)
        slice_axes = [
            normalize_axis(entry.axis, _rank(value), f"{loop.path}: input '{entry.source}'")
            for entry, value in zip(loop.sliced, sliced)
        ]
        trip = trips.trip_count(
            trip_value, sliced, slice_axes, loop.sliced_lengths_must_agree, loop.path
        )
        start = trips.initial_condition(condition_value)
        slice_types = [
            _tensor_type(value, None).without_axis(axis) for value, axis in zip(sliced, slice_axes)
        ]
        condition_shape = (
            (1,) if condition_value is not None and _shape_of(condition_value) == (1,) else ()
        )
        body, nested = self._convert_body(
            key, loop, carried, captures, sliced, slice_types, condition_shape
        )
        results = body.get_results()
        stacked_axes = [
            normalize_axis(
                entry.axis,
                _plus_one(_rank(results[entry.index].input_value(0))),
                f"{loop.path}: output {entry.index}",
            )
            for entry in loop.stacked_outputs
        ]
        if trip.proven_zero or start.constant is False:
            outputs = self._fold(loop, trip, carried, body, stacked_axes)
        else:
            outputs = self._emit(
                loop, trip, start, carried, captures, sliced, body, slice_axes, stacked_axes
            )
            self._reports[-1].extend(nested)
        return outputs

    def _translate_batch(
        self, key: int, loop: LoopBody, parts: PlaceholderValues
    ) -> list[ov.Output]:
        """Scan-8: a Loop over the batch entries whose body scans one entry.

        Per entry the scan inputs are cut to the entry's sequence length, scanned as a Scan-9
        (the same translation as any Scan), and the scan outputs padded with zeros to the full
        sequence length. States, scan inputs and sequence lengths are sliced on the batch axis;
        final states and scan outputs are concatenated on it.
        """
        entry_of = {}  # outer value -> Parameter holding one batch entry of it

        def entry(value: ov.Output, name: str) -> ov.Output:
            shape = value.get_partial_shape()
            part = ops.parameter(
                shape if shape.rank.is_dynamic else ov.PartialShape(list(shape)[1:]),
                value.get_element_type(),
            )
            part.output(0).set_names({name})
            entry_of[name] = (value, part)
            return part.output(0)

        states = [entry(v, f"{loop.path}/state_{i}") for i, v in enumerate(parts.carried)]
        scans = [entry(v, f"{loop.path}/scan_input_{j}") for j, v in enumerate(parts.sliced)]
        captures = []
        for name, value in zip(loop.captures, parts.captures):
            parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
            parameter.output(0).set_names({name})
            captures.append(parameter)
        zero = ops.constant(np.array([0], np.int64))
        one = ops.constant(np.array([1], np.int64))
        if parts.sequence_lens is not None:
            length = ops.reshape(
                entry(parts.sequence_lens, f"{loop.path}/sequence_length"), one, False
            )
            scans = [ops.slice(x, zero, length, one, zero).output(0) for x in scans]
        full_length = ops.gather(ops.shape_of(entry_of[f"{loop.path}/scan_input_0"][1]), zero, zero)

        with self._collecting() as inner_reports:
            inner = self._translate_parts(
                key,
                loop,
                PlaceholderValues(None, None, states, [c.output(0) for c in captures], scans, None),
            )
        results = [ops.result(value) for value in inner[: loop.carried_count]]
        for value in inner[loop.carried_count :]:  # zero-pad to the full sequence length
            missing = ops.subtract(full_length, ops.gather(ops.shape_of(value), zero, zero))
            rest = ops.slice(ops.shape_of(value), one, ops.constant(np.array([2**31 - 1])), one)
            zeros = ops.broadcast(
                ops.convert(ops.constant(np.float32(0)), value.get_element_type()),
                ops.concat([missing, rest], 0),
            )
            results.append(ops.result(ops.concat([value, zeros], 0)))

        names = list(entry_of)
        batch = _BatchOfScans(
            node=loop.node,
            path=loop.path,
            opset=loop.opset,
            body=onnx.GraphProto(),
            captures=list(loop.captures),
            sliced=[SlicedRead(name, name) for name in names],
            carried_sources=[],
            carried_inputs=[],
            carried_outputs=[],
            stacked_outputs=[StackedOutput(i) for i in range(len(results))],
        )
        body = ov.Model(
            results, [*captures, *(entry_of[n][1] for n in names)], f"{loop.path}/batch"
        )
        sliced = [entry_of[name][0] for name in names]
        axes = [0] * len(names)
        trip = trips.trip_count(None, sliced, axes, True, loop.path)
        start = trips.initial_condition(None)
        stacked_axes = [0] * len(results)
        # An empty batch: states [0, *state], scan outputs [0, T, *element] with T from the input.
        sequence_length = ops.gather(ops.shape_of(parts.sliced[0], ov.Type.i64), one, zero)
        empty_shapes = []
        for index, result in enumerate(results):
            dims = ovgraph.empty_dims(result.input_value(0), 0)
            if dims is None:
                empty_shapes.append(None)
            elif index < loop.carried_count:
                empty_shapes.append(ops.constant(np.array(dims, np.int64)).output(0))
            else:
                element = ops.constant(np.array(dims[2:], np.int64))
                empty_shapes.append(ops.concat([zero, sequence_length, element], 0).output(0))
        if trip.proven_zero:
            outputs = self._fold(batch, trip, [], body, stacked_axes)
        else:
            outputs = self._emit(
                batch,
                trip,
                start,
                [],
                parts.captures,
                sliced,
                body,
                axes,
                stacked_axes,
                empty_shapes,
            )
            self._reports[-1].extend(inner_reports)
        return outputs

    def _refuse_strings(self, loop: LoopBody, parts: PlaceholderValues) -> None:
        """String tensors may not flow through a Loop: OpenVINO's CPU plugin cannot run them."""
        names = [*loop.carried_sources, *loop.captures, *(entry.source for entry in loop.sliced)]
        strings = [
            name
            for name, value in zip(names, [*parts.carried, *parts.captures, *parts.sliced])
            if value.get_element_type() == ov.Type.string
        ]
        for name in strings:
            reason = f"string tensor '{name}' in a loop (OpenVINO's CPU plugin cannot run it)"
            self._unsupported.append(
                UnsupportedItem(loop.op, loop.node.domain, loop.opset, loop.path, reason)
            )
        if strings:
            raise ConversionError(f"{loop.path}: string tensors in a loop")

    def _convert_body(
        self,
        key: int,
        loop: LoopBody,
        carried: list[ov.Output],
        captures: list[ov.Output],
        sliced: list[ov.Output],
        slice_types: list[TensorType],
        condition_shape: tuple[int, ...] = (),
    ) -> tuple[ov.Model, list[ConvertedLoop]]:
        """Convert the body, typed from the outer values (`condition_shape`: the loop's
        condition's, fed to a body condition input that declares no shape).

        Loop-carried values start with the shapes they enter with. When the body returns a
        different shape, the differing dimensions (or the rank) become dynamic and the body is
        converted again, until the shapes settle: a fixed point, so static shapes are kept only
        where every iteration provably has them.
        """
        template = self._template(key)
        declared = {value.name: value for value in template.input}
        carried_types = [
            _tensor_type(value, declared.get(name))
            for value, name in zip(carried, loop.carried_inputs)
        ]
        capture_types = [_tensor_type(value, None) for value in captures]
        for _ in range(MAX_SHAPE_RELAXATIONS):
            body_proto = loop.body_model(
                template, carried_types, capture_types, slice_types, self._model, condition_shape
            )
            self._add_placeholder_opset(body_proto)
            with self._collecting() as nested:
                body = self._convert_graph(body_proto, template, f"{loop.path}/body")
            results = body.get_results()
            relaxed = [
                _relax(loop.path, entering, results[out].input_value(0))
                for entering, out in zip(carried_types, loop.carried_outputs)
            ]
            if relaxed == carried_types:
                _add_unread_parameters(body, zip(loop.carried_inputs, carried, carried_types))
                return body, nested
            carried_types = relaxed
        raise ConversionError(f"{loop.path}: loop-carried shapes did not settle")

    def _fold(
        self,
        loop: LoopBody,
        trip: trips.TripCount,
        carried: list[ov.Output],
        body: ov.Model,
        stacked_axes: list[int],
    ) -> list[ov.Output]:
        """The results of a loop that provably runs zero times: initial values, empty stacks."""
        reason = "trip count 0" if trip.proven_zero else "initial condition false"
        self._reports[-1].append(loop.report(None, f"runs zero times: {reason}"))
        results = body.get_results()
        folded = [ovgraph.passthrough(value) for value in carried]
        for entry, axis in zip(loop.stacked_outputs, stacked_axes):
            folded.append(ovgraph.empty_stack(results[entry.index].input_value(0), axis))
        return folded

    def _emit(
        self,
        loop: LoopBody,
        trip: trips.TripCount,
        start: trips.InitialCondition,
        carried: list[ov.Output],
        captures: list[ov.Output],
        sliced: list[ov.Output],
        body: ov.Model,
        slice_axes: list[int],
        stacked_axes: list[int],
        empty_shapes: list[ov.Output | None] | None = None,
    ) -> list[ov.Output]:
        """Build the Loop-5 (with its zero-iteration guard and output reversal) from the body.

        `empty_shapes` are the stacked outputs' shapes after zero iterations, when the caller
        knows them better than the body's static dims do.
        """
        constants = {
            name: value
            for name, value in zip(loop.captures, captures)
            if ovgraph.is_constant(value)
        }
        parameters = _inline_constants(body.get_parameters(), constants)
        parts = {entry.body_input: axis for entry, axis in zip(loop.sliced, slice_axes)}
        parameters = _with_part_axis(parameters, parts)
        parameter_index = {
            name: index
            for index, parameter in enumerate(parameters)
            for name in parameter.output(0).get_names()
        }
        spec = loop.spec(parameter_index, trip.source, trip.constant, slice_axes, stacked_axes)

        results = list(body.get_results())
        _guard_body(loop, spec, parameters, results, trip.runtime or start.runtime)
        stacked_per_iteration = [results[entry.index] for entry in loop.stacked_outputs]
        spec, stacking = _stack_per_iteration(loop, spec, results, stacked_axes)
        if spec.execution_condition is None:  # Loop-5 requires a condition output
            results.append(ops.result(ops.constant(True)))
            spec = dataclasses.replace(spec, execution_condition=len(results) - 1)
        body = ov.Model(results, parameters, f"{loop.path}/body")

        external = _external_inputs(
            loop, spec, set(parameter_index) - constants.keys(), carried, captures, sliced
        )
        outputs = build_loop(spec, body, trip.value, start.value, external, loop.path)
        if empty_shapes is None:
            empty_shapes = [
                ovgraph.empty_shape(per_iteration.input_value(0), axis)
                for per_iteration, axis in zip(stacked_per_iteration, stacked_axes)
            ]
        zero = cpu_guards.runs_zero(trip, start)
        end = loop.carried_count + len(stacking)
        stacked = unflatten(stacking, outputs[loop.carried_count : end], outputs[end:], zero)
        stacked = cpu_guards.guard_zero_iterations(stacked, stacked_axes, empty_shapes, zero)
        last_values = cpu_guards.guard_last_values(outputs[: loop.carried_count], carried, zero)
        stacked = [
            ovgraph.reverse(value, axis) if entry.reverse else value
            for value, entry, axis in zip(stacked, loop.stacked_outputs, stacked_axes)
        ]
        self._reports[-1].append(loop.report(spec))
        return last_values + stacked


def _guard_body(
    loop: LoopBody, spec: LoopSpec, parameters: list, results: list, may_run_zero: bool
) -> None:
    """The CPU-plugin workarounds inside the body: captures reaching a Concat are copied, a
    carried value reshaped in a loop that may run zero times is refused, and every back edge
    that is not an unchanged value carries a computed copy (`results` is updated in place)."""
    copy_invariants_into_concats(parameters, [e.body_parameter for e in spec.invariant_inputs])
    if may_run_zero:
        refuse_zero_run_reshaped_carry(loop, parameters, results, spec.merged_inputs)
    for merged in spec.merged_inputs:
        value = results[merged.body_result].input_value(0)
        if value.get_node() != parameters[merged.body_parameter]:
            results[merged.body_result] = ops.result(ovgraph.copy(value))


def _external_inputs(
    loop: LoopBody,
    spec: LoopSpec,
    read: set[str],
    carried: list[ov.Output],
    captures: list[ov.Output],
    sliced: list[ov.Output],
) -> dict[int, ov.Output]:
    """The outer value of each port_map input, by external port. Captures and sliced inputs the
    converted body no longer reads (not in `read`: the frontend drops unread Parameters, e.g.
    under a folded loop; inlined constants) are not inputs, as in the spec."""
    kept_captures = [value for name, value in zip(loop.captures, captures) if name in read]
    read_sliced = [value for entry, value in zip(loop.sliced, sliced) if entry.body_input in read]
    external = {}
    for entries, values in (
        (spec.merged_inputs, carried),
        (spec.invariant_inputs, kept_captures),
        (spec.sliced_inputs, read_sliced),
    ):
        external.update((entry.external_port, value) for entry, value in zip(entries, values))
    return external


def _stack_per_iteration(
    loop: LoopBody, spec: LoopSpec, results: list, stacked_axes: list[int]
) -> tuple[LoopSpec, list[StackedPart]]:
    """Make each scan output's body Result one part per iteration (see `stacked_part`), in
    `results`; return the spec with the Loop's concatenation axes and the last-value outputs
    that carry per-iteration shapes out (after all others), and the parts."""
    parts = [
        stacked_part(results[entry.index].input_value(0), axis)
        for entry, axis in zip(loop.stacked_outputs, stacked_axes)
    ]
    port_axes = {}
    for entry, part in zip(loop.stacked_outputs, parts):
        results[entry.index] = ops.result(part.value)
        port_axes[entry.index] = part.port_axis
    concatenated = tuple(
        dataclasses.replace(output, axis=port_axes[output.body_result])
        for output in spec.concatenated_outputs
    )
    shape_outputs = []
    next_port = len(spec.concatenated_outputs) + len(spec.last_value_outputs)
    for part in parts:
        if part.body_shape is not None:
            results.append(ops.result(part.body_shape))
            shape_outputs.append(LastValueOutput(next_port + len(shape_outputs), len(results) - 1))
    spec = dataclasses.replace(
        spec,
        concatenated_outputs=concatenated,
        last_value_outputs=(*spec.last_value_outputs, *shape_outputs),
    )
    return spec, parts


class _BatchOfScans(LoopBody):
    """The outer loop of a Scan-8: one iteration per batch entry."""

    op = "Scan-8 batch"


def convert_model(model: onnx.ModelProto) -> Conversion:
    """Convert a loaded, checked ONNX model."""
    return Converter(model).convert()


# -- helpers ------------------------------------------------------------------------------------
def _weak_callback(method):
    """A callable for the frontend's ConversionExtension that does not keep the method's object
    alive: the FrontEnd holds the extension in C++, so a bound method there would make a cycle
    (object -> FrontEnd -> extension -> object) that Python's collector cannot see, and every
    Converter would leak with its models and graphs."""
    reference = weakref.WeakMethod(method)

    def call(*args):
        return reference()(*args)

    return call


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


def _with_declared_inputs(model: ov.Model, graph: onnx.GraphProto) -> ov.Model:
    """The model with a Parameter for every input the ONNX graph declares, in its order: the
    frontend drops inputs nothing reads, and users feed them by name all the same."""
    initializers = {init.name for init in graph.initializer}
    existing = {
        name: parameter
        for parameter in model.get_parameters()
        for name in parameter.output(0).get_names()
    }
    ordered = [
        existing.get(value.name) or _declared_parameter(value)
        for value in graph.input
        if value.name not in initializers
    ]
    ordered += [p for p in model.get_parameters() if all(p != q for q in ordered)]
    if len(ordered) == len(model.get_parameters()) and all(
        a == b for a, b in zip(ordered, model.get_parameters())
    ):
        return model
    return ov.Model(model.get_results(), ordered, model.get_friendly_name())


def _declared_parameter(value: onnx.ValueInfoProto) -> ov.Node:
    """A Parameter of the type and shape a graph input declares (for an input nothing reads)."""
    tensor = value.type.tensor_type
    element = ov_element_type(tensor.elem_type)
    if element is None:
        name = onnx.helper.tensor_dtype_to_string(tensor.elem_type)
        raise ConversionError(f"main: input '{value.name}': OpenVINO has no element type {name}")
    shape = ov.PartialShape.dynamic()
    if tensor.HasField("shape"):
        shape = ov.PartialShape(
            [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
        )
    parameter = ops.parameter(shape, element, name=value.name)
    parameter.output(0).set_names({value.name})
    return parameter


def _rewrite_parameters(parameters, by_name: dict, rewrite) -> list:
    """Call `rewrite(parameter, by_name[its name])` for each Parameter named in `by_name`; it
    returns the Parameter to keep in its place, or None to drop it. Others are kept as they are."""
    kept = []
    for parameter in parameters:
        names = parameter.output(0).get_names() & by_name.keys()
        replacement = rewrite(parameter, by_name[next(iter(names))]) if names else parameter
        if replacement is not None:
            kept.append(replacement)
    return kept


def _inline_constants(parameters, constants: dict[str, ov.Output]) -> list:
    """Replace body Parameters fed by outer Constants with copies of those Constants.

    The CPU plugin pre-packs constant MatMul weights; as invariant inputs they would not be.
    The data is copied: a Constant sharing the outer one's buffer dangles once the outer graph
    drops it (seen as wrong results). A nested Loop that reads the Parameter gets a Constant of
    its own: the CPU plugin (2026.4.1) dies with SIGSEGV in compile_model when one boolean
    Constant feeds both a Loop's invariant input that the Loop's execution condition reads and
    another operation. Returns the Parameters that remain.
    """

    def inline(parameter, value: ov.Output) -> None:
        def copy() -> ov.Node:
            return ov.op.Constant(value.get_node().get_tensor_view(), shared_memory=False)

        shared = None
        for target in parameter.output(0).get_target_inputs():
            if target.get_node().get_type_name() == "Loop":
                constant = copy()
            else:
                shared = shared or copy()
                constant = shared
            target.replace_source_output(constant.output(0))

    return _rewrite_parameters(parameters, constants, inline)


def _add_unread_parameters(body: ov.Model, declared) -> None:
    """Add Parameters for loop-carried body inputs the body never reads (the frontend drops
    them); their merged inputs still need them. `declared` holds (name, outer value, type)."""
    present = {
        name for parameter in body.get_parameters() for name in parameter.output(0).get_names()
    }
    missing = []
    for name, value, value_type in declared:
        if name in present:
            continue
        shape = (
            ov.PartialShape.dynamic()
            if value_type.shape is None
            else ov.PartialShape([-1 if dim is None else dim for dim in value_type.shape])
        )
        parameter = ops.parameter(shape, value.get_element_type())
        parameter.output(0).set_names({name})
        missing.append(parameter)
    if missing:
        body.add_parameters(missing)


def _with_part_axis(parameters, part_axes: dict[str, int]) -> list:
    """Give the named Parameters (sliced parts) a length-1 axis, squeezed away in the body."""

    def with_axis(parameter, axis: int):
        shape = parameter.get_partial_shape()
        if shape.rank.is_static:
            dims = list(shape)
            shape = ov.PartialShape([*dims[:axis], 1, *dims[axis:]])
        part = ops.parameter(shape, parameter.get_element_type())
        part.output(0).set_names(parameter.output(0).get_names())
        squeezed = ops.squeeze(part, ops.constant(np.array([axis], np.int64)))
        parameter.output(0).replace(squeezed.output(0))
        return part

    return _rewrite_parameters(parameters, part_axes, with_axis)


def _rank(value: ov.Output) -> int | None:
    shape = value.get_partial_shape()
    return None if shape.rank.is_dynamic else shape.rank.get_length()


def _plus_one(rank: int | None) -> int | None:
    return None if rank is None else rank + 1


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


def _without_conversion(op: ov.Node) -> bool:
    """Whether the frontend left `op` unconverted: its type derives from FrameworkNode."""
    info = op.get_type_info()
    while info is not None:
        if info.name == NOT_CONVERTED:
            return True
        info = info.parent
    return False


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
