"""The conversion driver: ONNX -> OpenVINO with every loop op translated into a Loop-5.

Body operators are converted by OpenVINO's own ONNX frontend. Each loop node's op reads its
layout (frontends.onnx.ops.registry) and the node is replaced by a placeholder
(frontends.onnx.ops.placeholders); a ConversionExtension expands it: the op translates the loop into
a LoopIR from the values arriving (frontends.onnx.ops), asking the driver through a
`LoopContext` to convert its typed body with the same frontend (recursively, so nested loops are
ours too), and a lowering chosen for the target turns it into graph values (lower.select).

The frontend calls the extension through C++, which drops Python exception types: each
expansion's outcome (its reports, or its error) is recorded for the graph conversion that
contains the loop, which returns it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import openvino as ov

from ov_loops.conversion.body_forms import BodyForms
from ov_loops.conversion.collector import existing_objects_frozen
from ov_loops.conversion.frontend import Frontend
from ov_loops.conversion.if_ranks import refuse_ifs_of_dynamic_rank
from ov_loops.conversion.report import Conversion, ConvertedLoop, rederived
from ov_loops.conversion.unsupported import unsupported_ops
from ov_loops.errors import (
    ConversionError,
    OvLoopsError,
    UnsupportedError,
    UnsupportedItem,
    message_line,
)
from ov_loops.frontends.onnx.load.prepare import PreparedModel
from ov_loops.frontends.onnx.load.weights import MappedFiles, refer_to_files
from ov_loops.frontends.onnx.ops import registry
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout
from ov_loops.frontends.onnx.ops.placeholders import (
    PLACEHOLDER_DOMAIN,
    replace_loops,
    with_placeholder_opset,
)
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.body_types import with_declared_inputs
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import CapturedNames
from ov_loops.frontends.onnx.proto.types import known_types, only_tensors
from ov_loops.heap import without_fast_bins
from ov_loops.logs import progress
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import DEFAULT_LOWERING, LoweringOptions
from ov_loops.lower.select import lower
from ov_loops.lower.shared_ops import share_ops
from ov_loops.ovgraph import ops_by_type, walk
from ov_loops.record import Record

MAIN = -1  # the key of the main graph among loops' parents

Outcome = list[ConvertedLoop] | OvLoopsError


class Converter:
    """Converts one ONNX model: the registry of its loops, from placeholder to expansion."""

    def __init__(
        self,
        prepared: PreparedModel,
        options: LoweringOptions = DEFAULT_LOWERING,
        input_shapes: dict[str, ov.PartialShape] | None = None,
        shares_weights: bool = False,
    ) -> None:
        self._model = model = prepared.model
        self._shares_weights = shares_weights
        self._sequences = prepared.sequences
        self._captured = CapturedNames()  # the loops' bodies at every depth, each walked once
        self._input_shapes = input_shapes or {}
        self._options = options
        # outer types only matter when a value may be other than a tensor (unsupported_types)
        self._outer_types = {} if only_tensors(model) else known_types(model)
        self._loops: dict[int, OnnxLoopLayout] = {}
        self._templates: dict[int, schema.GraphProto] = {}
        self._parents: dict[int, int] = {}
        self._expanded: dict[int, list[Outcome]] = {}  # per graph being converted
        self._unsupported: list[UnsupportedItem] = []
        self._files = MappedFiles()  # of tensors kept in files, mapped while converting
        self._body_forms = BodyForms()
        self._guarded_counts: dict = {}  # trip counts by source value (loopir/trip_count.py)
        self._frontend = Frontend(self._expand, registry.op_types(), PLACEHOLDER_DOMAIN)

    def convert(self) -> Conversion:
        """The converted model and its per-loop report; UnsupportedError lists every
        unsupported op and loop, ConversionError (or its subclasses) says what else failed."""
        # the frontend has copied every tensor kept in a file once done
        with self._files, without_fast_bins(), existing_objects_frozen():
            return self._converted()

    def _converted(self) -> Conversion:
        graph = replace_loops(
            self._model.graph, "main", self._registrar(MAIN, True), self._registrar(MAIN)
        )
        self._register_nested_loops()
        self._options = self._options.replace(loops=len(self._loops))
        if self._unsupported:  # before the frontend sees the model: some of these crash it
            raise UnsupportedError(self._unsupported)
        main = schema.ModelProto()
        main.CopyFrom(self._model)
        main.graph.CopyFrom(graph)
        model, loops, error = self._convert_graph(with_placeholder_opset(main), graph, "main", MAIN)
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
        walked = walk(model)  # one walk of every body for share_ops and the steps below
        share_ops(model, walked)  # before the workarounds: a copy they make must stay its own
        stateful = self._options.target.stateful
        # ONNX RNN/GRU/LSTM ops, before the workarounds: a guard of their final states on a
        # chunk of no time step then falls back to the state read, and the Assign stores that
        assigns, streamed = _streamed_recurrent_ops(model) if stateful else ((), ())
        # the types present (the ops share_ops dropped were of types it kept one of), the
        # Loops; walked again after streaming added ops
        present = ops_by_type(model) if streamed else walked.by_type
        if self._options.optimize != "none":  # MOC on a body may prune its nested Loops' ports
            loops = rederived(loops, present.get("Loop", ()))
        self._options.target.apply_model_workarounds(model, present.keys())
        if "If" in present:
            refuse_ifs_of_dynamic_rank(model)
        declared = with_declared_inputs(model, self._model.graph, self._input_shapes)
        declared.add_sinks([sink for loop in loops for sink in loop.states] + list(assigns))
        return Conversion(declared, loops, list(streamed))

    # -- registry ----------------------------------------------------------------------------
    def _registrar(self, parent: int, in_main_graph: bool = False):
        """Registers a loop node whose graph is the body of loop `parent` (MAIN: the main graph
        or an If branch in it; `in_main_graph`: the main graph itself)."""

        def register(node: schema.NodeProto, path: str) -> tuple[int, list[str]]:
            opset = opset_version(self._model, node.domain)
            op_class = registry.lookup(node, opset)
            loop = op_class.read(node, path, opset, self._sequences, self._captured)
            loop.in_main_graph = in_main_graph
            loop.in_loop_body = parent != MAIN
            self._unsupported.extend(loop.unsupported_types(self._outer_types))
            key = len(self._loops)
            self._loops[key] = loop
            self._parents[key] = parent
            return key, loop.placeholder_inputs()

        return register

    def _register_nested_loops(self) -> None:
        """Read the loops of every body at every depth (a body's template registers its loops),
        so that every unsupported loop is known before the frontend runs."""
        key = 0
        while key < len(self._loops):
            self._template(key)
            key += 1

    def _template(self, key: int) -> schema.GraphProto:
        """The loop's body with its own nested loops replaced by placeholders (made once)."""
        if key not in self._templates:
            loop = self._loops[key]
            path = f"{loop.path}/body"
            self._templates[key] = replace_loops(loop.body, path, self._registrar(key))
        return self._templates[key]

    # -- frontend ----------------------------------------------------------------------------
    def _convert_graph(
        self, model: schema.ModelProto, graph: schema.GraphProto, path: str, parent: int
    ) -> tuple[ov.Model, list[ConvertedLoop], OvLoopsError | None]:
        """Convert `model`, whose loops are the children of `parent`; `graph` is the graph as
        the user wrote it, for node paths. Returns the model, the reports of its loops (in the
        order the frontend expanded them) and the first error of one of them."""
        self._expanded[parent] = []
        root = refer_to_files(model) if parent == MAIN and self._shares_weights else None
        if root is None:
            self._files.refer_to_memory(model)
        if parent == MAIN:
            converted = self._frontend.convert(model, path, self._input_shapes, root)
            cloned = False
        else:  # a body: once per form (body_forms.py)
            convert = partial(self._frontend.convert, model, path, {})
            converted, cloned = self._body_forms.converted(model, convert)
        if not cloned:  # a clone's form had no unconverted op
            opset_of = lambda domain: opset_version(self._model, domain)  # noqa: E731
            self._unsupported.extend(unsupported_ops(converted, graph, path, opset_of))
        reports: list[ConvertedLoop] = []
        for outcome in self._expanded[parent]:  # in the order the frontend expanded them
            if isinstance(outcome, OvLoopsError):
                return converted, reports, outcome
            reports.extend(outcome)
        return converted, reports, None

    # -- the extension -----------------------------------------------------------------------
    def _expand(self, context) -> list[ov.Output]:
        key = context.get_attribute("key")
        self._files.release_resident_pages()  # the tensors are copied by now (weights.py)
        layout = self._loops[key]
        values = [context.get_input(i) for i in range(context.get_input_size())]
        start = time.perf_counter()
        try:
            loop, nested = layout.loop_ir(layout.split(values), self._context(key))
            outputs, reports = self._lower(layout, loop, nested)
        except OvLoopsError as exc:
            self._expanded[self._parents[key]].append(exc)
            raise
        except Exception as exc:
            error = ConversionError(f"{layout.path}: {message_line(exc)}")
            self._expanded[self._parents[key]].append(error)
            raise
        self._expanded[self._parents[key]].append(reports)
        progress(f"{layout.path} converted", time.perf_counter() - start)
        return outputs[: len(layout.node.output)]

    def _context(self, key: int) -> _LoopContext:
        layout = self._loops[key]
        return _LoopContext(
            self._template(key),
            self._model,
            self._options.target.stateful and layout.in_main_graph,
            partial(self._convert_body, key),
            partial(self._lower, layout),
            self._unsupported.extend,
            self._guarded_counts,
        )

    def _convert_body(
        self, key: int, body: schema.ModelProto
    ) -> tuple[ov.Model, list[ConvertedLoop]]:
        """The typed body of loop `key` converted, and its loops' reports; raise their error."""
        path = f"{self._loops[key].path}/body"
        converted, nested, error = self._convert_graph(
            with_placeholder_opset(body), self._template(key), path, key
        )
        if error is not None:
            raise error
        return converted, nested

    def _lower(
        self, layout: OnnxLoopLayout, loop: LoopIR, nested: list[ConvertedLoop]
    ) -> tuple[list[ov.Output], list[ConvertedLoop]]:
        """The loop lowered for the target, and its report (then its nested loops' unless it
        was folded away)."""
        lowered = lower(loop, self._options)
        report = ConvertedLoop.of(loop.path, loop.op, tuple(layout.node.output), lowered)
        return lowered.values, [report] if lowered.folded else [report, *nested]


class _LoopContext(Record):
    """What the translation of one loop asks of its converter (ops.body.LoopContext)."""

    __slots__ = ("template", "model", "keeps_state", "convert", "lower", "refuse", "guarded_counts")

    def __init__(
        self,
        template: schema.GraphProto,
        model: schema.ModelProto,
        keeps_state: bool,
        convert: Callable[[schema.ModelProto], tuple[ov.Model, list[ConvertedLoop]]],
        lower: Callable[[LoopIR, list], tuple[list[ov.Output], list[ConvertedLoop]]],
        refuse: Callable[[list[UnsupportedItem]], None],
        guarded_counts: dict,
    ) -> None:
        self.template = template
        self.model = model
        self.keeps_state = keeps_state
        self.convert = convert
        self.lower = lower
        self.refuse = refuse
        self.guarded_counts = guarded_counts


def convert_model(
    model: PreparedModel,
    options: LoweringOptions = DEFAULT_LOWERING,
    input_shapes: dict[str, ov.PartialShape] | None = None,
    shares_weights: bool = False,
) -> Conversion:
    """Convert a loaded, prepared ONNX model (frontends.onnx.load) lowering its loops as
    `options` say (by default for CPU, every CPU-plugin workaround, at level "default"), and
    the target's model-level workarounds; `input_shapes` are given to the frontend for the main
    graph's inputs (frontends.onnx.load.io_edits: bounded dims). `shares_weights`: the main
    graph's tensors kept in files (the model's own file read without its weights, or
    external-data files) become Constants sharing those files' pages, not copies
    (weights.refer_to_files): the model needs the files unchanged while it lives, and the
    process's working directory is their root while the frontend converts the main graph."""
    return Converter(model, options, input_shapes, shares_weights).convert()


def _streamed_recurrent_ops(model: ov.Model) -> tuple[tuple[ov.Node, ...], tuple[str, ...]]:
    """lower/stateful_ops.py's `stream_recurrent_ops`, imported by stateful conversions only."""
    from ov_loops.lower.stateful_ops import stream_recurrent_ops

    return stream_recurrent_ops(model)
