"""Validation rules for Loop-5 and TensorIterator-1 layers, each with a stable code.

Ground truth: the Loop-5 spec and ../shared/notes/openvino-loop5.md (how the IR reader classifies
port_map entries, and what the CPU plugin mis-executes). Every rule looks at one loop layer
(`LoopContext`) and yields `(message, entry, line)`; a new rule is one function here plus a
sample in ir_samples/invalid/ and its test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from ov_loops.ir.reader import (
    SLICING,
    BackEdge,
    Graph,
    IRDocument,
    Layer,
    PortMapEntry,
    back_edges,
    constant_value,
    port_map,
)
from ov_loops.ir.types import (
    BUILT_FROM_DATA,
    ERROR,
    WARNING,
    TensorType,
    Value,
    parameter_value,
    port_type,
    readable_shape,
    result_value,
    value_into,
    verdict,
)
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK
from ov_loops.targets import GPU_UNROLL_BELOW

INTEGER_PRECISIONS = {"I32", "I64"}
BOOLEAN_PRECISIONS = {"BOOL", "BOOLEAN", "U8"}
PURPOSES = {"input": "current_iteration", "output": "execution_condition"}


@dataclass
class LoopContext:
    """One Loop/TensorIterator layer with what the rules need to know about it. A rule reads
    what lies outside the layer's XML through `graph` and `document` only (which set
    `read_outside`; no cached property below reads them), and the layer's names, path and
    line numbers only to write messages: the validator judges a repeated layer once by that
    (repeats.py)."""

    _document: IRDocument
    _graph: Graph  # the graph holding the layer
    layer: Layer
    path: str
    read_outside: bool = False

    @property
    def document(self) -> IRDocument:
        self.read_outside = True
        return self._document

    @property
    def graph(self) -> Graph:
        self.read_outside = True
        return self._graph

    @cached_property
    def entries(self) -> list[PortMapEntry]:
        return port_map(self.layer)

    @cached_property
    def edges(self) -> list[BackEdge]:
        return back_edges(self.layer)

    @cached_property
    def body(self) -> Graph:
        return self.layer.body or Graph({}, [])

    @cached_property
    def parameters(self) -> dict[str, Layer]:
        return {layer.id: layer for layer in self.body.of_type("Parameter")}

    @cached_property
    def results(self) -> dict[str, Layer]:
        return {layer.id: layer for layer in self.body.of_type("Result")}

    @property
    def is_loop(self) -> bool:
        return self.layer.type == "Loop"

    def inputs(self) -> list[PortMapEntry]:
        return [e for e in self.entries if e.kind == "input"]

    def outputs(self) -> list[PortMapEntry]:
        return [e for e in self.entries if e.kind == "output"]

    def what_is(self, layer_id: str | None) -> str:
        """'a Const in the body', or 'no layer in the body'."""
        found = self.body.layers.get(layer_id)
        return f"{'a ' + found.type if found else 'no layer'} in the body"

    def external_rank(self, entry: PortMapEntry) -> int | None:
        """Rank of the layer port an entry maps, when the IR states it."""
        port_id = entry.int("external_port_id")
        if entry.kind == "input":
            producer = self.graph.producer(self.layer.id, port_id)
            if producer is not None and producer[0].declared_rank() is not None:
                return producer[0].declared_rank()
            port = self.layer.inputs.get(port_id)
        else:
            port = self.layer.outputs.get(port_id)
        return len(port.dims) if port is not None and port.dims else None

    def constant_input(self, port: int) -> int | None:
        producer = self.graph.producer(self.layer.id, port)
        return constant_value(self.document, producer[0]) if producer else None


Check = Callable[[LoopContext], Iterator[tuple[str, str | None, int]]]


@dataclass(frozen=True)
class Rule:
    """A rule; `target` names the device it is for (`validate --target`), None for every IR."""

    code: str
    severity: str
    summary: str
    check: Check
    target: str | None = None


RULES: list[Rule] = []


def rule_targets() -> tuple[str, ...]:
    """The devices with rules of their own (`validate --target`)."""
    return tuple(sorted({rule.target for rule in RULES if rule.target}))


def rule(code: str, severity: str, summary: str, target: str | None = None):
    def register(check: Check) -> Check:
        RULES.append(Rule(code, severity, summary, check, target))
        return check

    return register


Mismatch = tuple[str, str, "str | None", int]  # severity, message, entry, line


def _judge(
    ok: Callable[..., bool],
    values: tuple[Value, ...],
    describe: Callable[..., str],
    entry: str | None,
    line: int,
) -> Iterator[Mismatch]:
    """A mismatch when `values` fail `ok` (see types.verdict), described from the types judged."""
    found = verdict(ok, *values)
    if found:
        severity, types = found
        yield severity, describe(*types), entry, line


def _errors(mismatches: Iterator[Mismatch]):
    """The mismatches the producing layers show (the rule's own errors)."""
    for severity, message, entry, line in mismatches:
        if severity == ERROR:
            yield message, entry, line


def _same_type(first: TensorType, second: TensorType) -> bool:
    return first.same_precision(second) and first.shape_agrees(second.dims)


def _same_element_type(first: TensorType, second: TensorType) -> bool:
    return first.same_precision(second)


def _same_shape(first: TensorType, second: TensorType) -> bool:
    return first.shape_agrees(second.dims)


# -- structure -------------------------------------------------------------------------------
@rule("ST001", ERROR, "a loop layer has a <body> with <layers> and a <port_map>")
def _structure(loop: LoopContext):
    if loop.layer.body is None:
        yield "the layer has no <body> with <layers>", None, loop.layer.line
    if loop.layer.element.find("port_map") is None:
        yield "the layer has no <port_map>", None, loop.layer.line


@rule("ST002", ERROR, "every input port of a body layer is the end of an edge")
def _body_inputs_fed(loop: LoopContext):
    """OpenVINO refuses a body with an input port no edge ends at, when it reads the IR
    ("Argument has 0 outputs"); a body without <edges> is the common case, one finding."""
    body = loop.body
    if body.layers and not body.edges:
        yield "the body has no <edges>", None, loop.layer.line
        return
    ends = {(edge.to_layer, edge.to_port) for edge in body.edges}
    for layer in body.layers.values():
        for port in layer.inputs:
            if (layer.id, port) not in ends:
                yield (
                    f"input port {port} of body layer {layer.id} '{layer.name}' ({layer.type}) "
                    "is the end of no edge",
                    None,
                    layer.line,
                )


@rule("ST003", ERROR, "every body edge joins an output port to an input port of body layers")
def _body_edges_join_ports(loop: LoopContext):
    """OpenVINO refuses an edge from or to a port its layer does not have when it reads the IR
    ("Can not find output port with id 0 in layer i": a current_iteration Parameter whose
    <output> port was removed)."""
    layers = loop.body.layers
    for edge in loop.body.edges:
        source, target = layers.get(edge.from_layer), layers.get(edge.to_layer)
        text = f"edge {edge.from_layer}:{edge.from_port} -> {edge.to_layer}:{edge.to_port}"
        for layer_id, layer, port, kind in (
            (edge.from_layer, source, edge.from_port, "output"),
            (edge.to_layer, target, edge.to_port, "input"),
        ):
            if layer is None:
                yield f"{text}: the body has no layer {layer_id}", None, loop.layer.line
            elif port not in (layer.outputs if kind == "output" else layer.inputs):
                yield (
                    f"{text}: body layer {layer_id} '{layer.name}' ({layer.type}) has no "
                    f"{kind} port {port}",
                    None,
                    layer.line,
                )


@rule("ST004", ERROR, "body Parameter and Const shapes are shapes OpenVINO can parse")
def _readable_shapes(loop: LoopContext):
    """OpenVINO refuses the IR when it reads a `shape` it cannot parse ("Cannot parse
    dimension: "a"", "Cannot get vector of dimensions! "1,,2" is incorrect")."""
    for layer in loop.body.layers.values():
        shape = layer.data.get("shape")
        if layer.type in BUILT_FROM_DATA and shape is not None and not readable_shape(shape):
            message = f"body {layer.type} {layer.id} '{layer.name}' has shape=\"{shape}\""
            yield f"{message}, which OpenVINO cannot parse", None, layer.line


@rule("ST005", ERROR, "every Result in a body, and in the branches of Ifs in it, has an input")
def _results_have_inputs(loop: LoopContext):
    """OpenVINO refuses the IR when it reads a Result without an input port ("Argument has 0
    outputs (1 expected)": a Parameter of an If's branch retyped as a Result)."""
    pending = [loop.body]
    while pending:
        graph = pending.pop()
        for layer in graph.layers.values():
            pending.extend(layer.branches)
            if layer.type == "Result" and not layer.inputs:
                message = f"body Result {layer.id} '{layer.name}' has no input port"
                yield message, None, layer.line


# -- port_map ------------------------------------------------------------------------------
def _entries_naming(
    entries: list[PortMapEntry], layers: dict[str, Layer], wanted: str, loop: LoopContext
):
    for entry in entries:
        internal = entry.attrs.get("internal_layer_id")
        if internal not in layers:
            message = f"internal_layer_id {internal} is {loop.what_is(internal)}, not a {wanted}"
            yield message, entry.describe(), entry.line


@rule("PM001", ERROR, "every port_map <input> names a body Parameter")
def _input_is_parameter(loop: LoopContext):
    yield from _entries_naming(loop.inputs(), loop.parameters, "Parameter", loop)


@rule("PM002", ERROR, "every port_map <output> names a body Result")
def _output_is_result(loop: LoopContext):
    yield from _entries_naming(loop.outputs(), loop.results, "Result", loop)


@rule("PM003", ERROR, "external_port_id names a port of the layer, or is -1 with a purpose")
def _external_port(loop: LoopContext):
    """An <input> with a negative external_port_id and no purpose feeds its Parameter nothing
    (OpenVINO runs it as zeros: a counter whose purpose was dropped gave 0 in every iteration);
    an <output> so written is WR007 (OpenVINO ignores it)."""
    for entry in loop.entries:
        external = entry.int("external_port_id")
        purpose = entry.attrs.get("purpose")
        ports = loop.layer.inputs if entry.kind == "input" else loop.layer.outputs
        if external is None:
            yield "external_port_id is missing or not an integer", entry.describe(), entry.line
        elif purpose is not None:
            if purpose != PURPOSES[entry.kind]:
                yield (
                    f"purpose '{purpose}' is not valid on an <{entry.kind}>",
                    (entry.describe()),
                    entry.line,
                )
            elif external != -1:
                yield (
                    f"an entry with purpose '{purpose}' must have external_port_id -1",
                    (entry.describe()),
                    entry.line,
                )
        elif external < 0 and entry.kind == "input":
            yield (
                f"external_port_id {external} without a purpose feeds the body Parameter "
                "nothing (OpenVINO runs it as zeros)",
                (entry.describe()),
                entry.line,
            )
        elif external < 0:
            continue  # an output mapping no Loop output: WR007
        elif external not in ports:
            kind = "input" if entry.kind == "input" else "output"
            yield f"the layer has no {kind} port {external}", entry.describe(), entry.line


@rule("PM004", ERROR, "no external port is mapped twice")
def _duplicate_external(loop: LoopContext):
    seen: Counter = Counter()
    for entry in loop.entries:
        external = entry.int("external_port_id")
        if external is None or external < 0:
            continue
        seen[(entry.kind, external)] += 1
        if seen[(entry.kind, external)] == 2:
            yield (
                f"{entry.kind} port {external} is mapped by more than one entry",
                (entry.describe()),
                entry.line,
            )


@rule("PM005", ERROR, "no body Parameter is mapped twice")
def _parameter_mapped_twice(loop: LoopContext):
    seen: Counter = Counter()
    for entry in loop.inputs():
        internal = entry.attrs.get("internal_layer_id")
        seen[internal] += 1
        if seen[internal] == 2 and internal in loop.parameters:
            yield (
                f"body Parameter {internal} is fed by more than one port_map entry",
                (entry.describe()),
                entry.line,
            )


@rule("PM006", ERROR, "every body Parameter is fed (port_map entry or purpose)")
def _parameter_fed(loop: LoopContext):
    """Follows what OpenVINO does, not the spec text, which does not ask that every body
    Parameter be mapped: OpenVINO loads such an IR and runs the Parameter as zeros (an unfed
    counter gave 2 where 4 was right), so the result is silently wrong."""
    fed = {entry.attrs.get("internal_layer_id") for entry in loop.inputs()}
    for parameter in loop.parameters.values():
        if parameter.id not in fed:
            hint = ""
            if parameter.outputs and next(iter(parameter.outputs.values())).precision in (
                INTEGER_PRECISIONS
            ):
                hint = ' (an iteration counter without purpose="current_iteration" runs as 0)'
            yield (
                f"body Parameter {parameter.id} '{parameter.name}' is fed by nothing{hint}",
                (None),
                parameter.line,
            )


@rule("PM007", ERROR, "every data port of the layer is mapped by a port_map entry")
def _unmapped_ports(loop: LoopContext):
    """A Loop's inputs past 0 and 1, a TensorIterator's inputs, and every output need an entry:
    OpenVINO refuses the IR otherwise ("Number of inputs must be the same as number of input
    descriptions", or an out-of-range output index)."""
    mapped = {(entry.kind, entry.int("external_port_id")) for entry in loop.entries}
    special = (0, 1) if loop.is_loop else ()
    for kind, ports in (("input", loop.layer.inputs), ("output", loop.layer.outputs)):
        for port_id in ports:
            if (kind, port_id) not in mapped and not (kind == "input" and port_id in special):
                yield f"{kind} port {port_id} is mapped by no port_map entry", None, loop.layer.line


def _is_invariant(entry: PortMapEntry) -> bool:
    """An input entry without axis or purpose (invariant unless a back edge makes it merged)."""
    return "axis" not in entry.attrs and not entry.attrs.get("purpose")


def _invariant_mismatches(loop: LoopContext, ok=_same_type) -> Iterator[Mismatch]:
    merged = {edge.to_layer for edge in loop.edges}
    for entry in loop.inputs():
        internal = entry.attrs.get("internal_layer_id")
        parameter = loop.parameters.get(internal)
        if parameter is None or internal in merged or not _is_invariant(entry):
            continue
        external = value_into(loop.graph, loop.layer, entry.int("external_port_id"))
        yield from _judge(
            ok,
            (external, parameter_value(parameter)),
            lambda outer, inner, parameter=parameter: (
                f"the input is {outer.describe()} but body Parameter {parameter.id} is "
                f"declared {inner.describe()}"
            ),
            entry.describe(),
            entry.line,
        )


@rule("PM008", ERROR, "an invariant input agrees with its body Parameter in element type")
def _invariant_type(loop: LoopContext):
    """Judged from the layer feeding the input and the Parameter's data. OpenVINO builds the
    body at the declared element type when it reads the IR, and ops refuse mixed types there
    ("Arguments do not have the same element type": an f16 Parameter times the f32 slice).
    A shape alone is WR008: OpenVINO re-infers it."""
    yield from _errors(_invariant_mismatches(loop, _same_element_type))


@rule("PM009", ERROR, "a loop output's body Result has the element type of the layer's port")
def _output_element_type(loop: LoopContext):
    """OpenVINO infers a loop's output from the body Result the entry names, not from the
    layer's <port>: a consumer needing the port's type refuses the IR ("Arguments do not have
    the same element type": the boolean condition Result mapped to an f32 output read by a
    Multiply), and a model output silently changes type (a boolean [] where the IR says f32 [2];
    measured, OpenVINO 2026.4.1). Judged from the layer feeding the Result."""
    for entry in loop.outputs():
        result = loop.results.get(entry.attrs.get("internal_layer_id"))
        port = port_type(loop.layer.outputs.get(entry.int("external_port_id")))
        value = result_value(loop.body, result).judged if result is not None else None
        if entry.attrs.get("purpose") or port is None or value is None:
            continue
        if not value.same_precision(port):
            yield (
                f"body Result {result.id} is {value.describe()} but output port "
                f"{entry.int('external_port_id')} is declared {port.describe()}",
                entry.describe(),
                entry.line,
            )


# -- axes --------------------------------------------------------------------------------------
def _sliced(loop: LoopContext) -> Iterator[PortMapEntry]:
    return (entry for entry in loop.entries if "axis" in entry.attrs)


@rule("AX001", ERROR, "axes are not negative (the IR reader reads them as unsigned)")
def _negative_axis(loop: LoopContext):
    """Follows OpenVINO, not the spec text, which gives axis as an integer: the IR reader parses
    an input's axis as unsigned (axis="-1" is refused at load), and a negative concatenation
    axis loads but fails ("Shape mismatch for tensor iterator port") or misbehaves at run time."""
    for entry in _sliced(loop):
        axis = entry.int("axis")
        if axis is not None and axis < 0:
            consequence = (
                "rejected when the IR is read"
                if entry.kind == "input"
                else "loads but fails or misbehaves at run time"
            )
            yield f"axis {axis} is negative: {consequence}", entry.describe(), entry.line


@rule("AX002", ERROR, "axes are below the rank of the port they slice or concatenate")
def _axis_in_rank(loop: LoopContext):
    for entry in _sliced(loop):
        axis, rank = entry.int("axis"), loop.external_rank(entry)
        if axis is not None and axis >= 0 and rank is not None and axis >= rank:
            yield (
                f"axis {axis} is out of range for the port's rank {rank}",
                (entry.describe()),
                entry.line,
            )


@rule("AX003", ERROR, "part_size equals |stride|")
def _part_size(loop: LoopContext):
    for entry in _sliced(loop):
        stride, part = entry.int("stride", 1), entry.int("part_size", 1)
        if stride and part is not None and part != abs(stride):
            yield (
                f"part_size {part} differs from |stride| {abs(stride)}",
                (entry.describe()),
                entry.line,
            )


@rule("AX004", ERROR, "stride is not 0")
def _stride(loop: LoopContext):
    for entry in _sliced(loop):
        if entry.int("stride", 1) == 0:
            yield "stride 0 never advances", entry.describe(), entry.line


def _part_shape(outer: TensorType, axis: int, part: int) -> tuple[int, ...] | None:
    """One part of `outer` sliced on `axis` (None when the axis is outside its known rank)."""
    if outer.dims is None or not 0 <= axis < len(outer.dims):
        return None
    return outer.dims[:axis] + (part,) + outer.dims[axis + 1 :]


def _part_matches(outer: TensorType, inner: TensorType, axis: int, part: int) -> bool:
    return inner.shape_agrees(_part_shape(outer, axis, part))


def _sliced_shape_mismatches(loop: LoopContext) -> Iterator[Mismatch]:
    for entry in _sliced(loop):
        parameter = loop.parameters.get(entry.attrs.get("internal_layer_id"))
        axis, part = entry.int("axis"), entry.int("part_size", 1)
        if entry.kind != "input" or parameter is None or axis is None or part is None:
            continue
        external = value_into(loop.graph, loop.layer, entry.int("external_port_id"))
        yield from _judge(
            partial(_part_matches, axis=axis, part=part),
            (external, parameter_value(parameter)),
            lambda outer, inner, parameter=parameter, axis=axis, part=part: (
                f"the sliced part has shape {list(_part_shape(outer, axis, part))} but body "
                f"Parameter {parameter.id} is declared {inner.describe()}"
            ),
            entry.describe(),
            entry.line,
        )


@rule("AX005", WARNING, "a sliced part's shape differs from its body Parameter's declared shape")
def _sliced_shape(loop: LoopContext):
    """A warning: the Loop sets a sliced body Parameter's shape from the slice before the body
    runs, so the declared shape matters only when the IR is read, where OpenVINO builds the
    body at it once (measured: x_part declared [3,2], [2] or [1,2,1] for a [1,2] slice reads,
    runs and gives the outputs of the IR declaring [1,2]; declared [1,3], the body's own
    Multiply with a [2] value is refused then, by OpenVINO's message)."""
    yield from _errors(_sliced_shape_mismatches(loop))


@rule("AX006", WARNING, "a concatenated output's shape agrees with the layer's output port")
def _concatenated_shape(loop: LoopContext):
    """A warning: the layer's output <port> is an annotation OpenVINO re-infers (an IR whose
    output port alone is annotated [?,5] for a [1,2] Result compiles and runs)."""
    for entry in _sliced(loop):
        if entry.kind != "output":
            continue
        result = loop.results.get(entry.attrs.get("internal_layer_id"))
        port = loop.layer.outputs.get(entry.int("external_port_id"))
        part = result_value(loop.body, result).shown if result else None
        axis = entry.int("axis")
        if port is None or part is None or axis is None or not port.dims or not part.dims:
            continue
        if len(part.dims) != len(port.dims):
            yield (
                f"body Result {result.id} has rank {len(part.dims)} but output port "
                f"{port.id} has rank {len(port.dims)}",
                entry.describe(),
                entry.line,
            )
            continue
        for index, (inner, outer) in enumerate(zip(part.dims, port.dims)):
            if index != axis and inner >= 0 and outer >= 0 and inner != outer:
                yield (
                    f"dim {index} is {inner} in body Result {result.id} but {outer} in "
                    f"output port {port.id}",
                    entry.describe(),
                    entry.line,
                )
                break


@rule("AX007", ERROR, "slicing attributes are int64 integers")
def _slicing_integers(loop: LoopContext):
    """OpenVINO's IR reader parses them with stoll (axis as unsigned): anything else, or a value
    beyond int64, makes the IR unreadable. It reads start, end, stride and part_size only on an
    entry with an axis: on others they are ignored (the IR runs), so not judged."""
    for entry in loop.entries:
        for name in entry.malformed(SLICING if "axis" in entry.attrs else ()):
            yield (
                f'{name}="{entry.attrs[name]}" is not an int64 integer',
                entry.describe(),
                entry.line,
            )


def _dim_fits(value: TensorType, axis: int, size: int) -> bool:
    """`value`'s dim on `axis` is `size` (or unknown)."""
    dims = value.dims
    return dims is None or not 0 <= axis < len(dims) or dims[axis] < 0 or dims[axis] == size


def _concatenated_part_mismatches(loop: LoopContext) -> Iterator[Mismatch]:
    for entry in _sliced(loop):
        result = loop.results.get(entry.attrs.get("internal_layer_id"))
        axis, part = entry.int("axis"), entry.int("part_size", 1)
        if entry.kind != "output" or result is None or axis is None or part is None:
            continue
        yield from _judge(
            partial(_dim_fits, axis=axis, size=part),
            (result_value(loop.body, result),),
            lambda value, result=result, axis=axis, part=part: (
                f"part_size {part} but body Result {result.id} is {value.describe()}, "
                f"{value.dims[axis]} on axis {axis}"
            ),
            entry.describe(),
            entry.line,
        )


@rule("AX008", ERROR, "a concatenated output's part_size is the body Result's dim on the axis")
def _concatenated_part(loop: LoopContext):
    """Judged from the layer feeding the Result; the CPU plugin refuses a mismatch ("Shape
    mismatch for tensor iterator port")."""
    yield from _errors(_concatenated_part_mismatches(loop))


# -- back edges --------------------------------------------------------------------------------
@rule("BE001", ERROR, "back edges start at a body Result")
def _edge_from_result(loop: LoopContext):
    for edge in loop.edges:
        if edge.from_layer not in loop.results:
            what = loop.what_is(edge.from_layer)
            yield (
                f"from-layer {edge.from_layer} is {what}, not a Result",
                edge.describe(),
                edge.line,
            )


@rule("BE002", ERROR, "back edges end at a body Parameter with a port_map input without axis")
def _edge_to_merged(loop: LoopContext):
    entries = {e.attrs.get("internal_layer_id"): e for e in loop.inputs()}
    for edge in loop.edges:
        entry = entries.get(edge.to_layer)
        if edge.to_layer not in loop.parameters:
            what = loop.what_is(edge.to_layer)
            yield f"to-layer {edge.to_layer} is {what}, not a Parameter", edge.describe(), edge.line
        elif entry is None:
            yield (
                f"body Parameter {edge.to_layer} has no port_map input for its initial value",
                edge.describe(),
                edge.line,
            )
        elif "axis" in entry.attrs or entry.attrs.get("purpose"):
            kind = "a sliced input" if "axis" in entry.attrs else "a special port"
            yield (
                f"body Parameter {edge.to_layer} is {kind}; a back edge needs a merged "
                "input (no axis)",
                edge.describe(),
                edge.line,
            )


@rule("BE003", ERROR, "a body Parameter's back edges all start at one Result")
def _one_edge(loop: LoopContext):
    """Two back edges from different Results into one Parameter: the IR does not say which
    value the next iteration reads (OpenVINO's reader then depends on the edges' order). The
    same edge listed twice is WR009's."""
    sources: dict[str, str] = {}
    for edge in loop.edges:
        first = sources.setdefault(edge.to_layer, edge.from_layer)
        if first != edge.from_layer:
            yield (
                f"body Parameter {edge.to_layer} has back edges from Results {first} and "
                f"{edge.from_layer}",
                edge.describe(),
                edge.line,
            )


def _edge_type_mismatches(loop: LoopContext, ok=_same_type) -> Iterator[Mismatch]:
    for edge in loop.edges:
        result, parameter = loop.results.get(edge.from_layer), loop.parameters.get(edge.to_layer)
        if result is None or parameter is None:
            continue
        yield from _judge(
            ok,
            (result_value(loop.body, result), parameter_value(parameter)),
            lambda source, target, result=result, parameter=parameter: (
                f"Result {result.id} is {source.describe()} but Parameter {parameter.id} is "
                f"{target.describe()}"
            ),
            edge.describe(),
            edge.line,
        )


@rule("BE004", ERROR, "back edge ends agree in element type")
def _edge_types(loop: LoopContext):
    """Judged from the layers that produce the two values (annotations alone give WR004): the
    body is built at the Parameter's declared type when the IR is read, and ops refuse mixed
    types there (an f16 Parameter plus an f32 value). A shape alone is WR008."""
    yield from _errors(_edge_type_mismatches(loop, _same_element_type))


# -- special ports -----------------------------------------------------------------------------
def _scalar_of(precisions: set[str]):
    """A test that a type is a scalar or [1] of one of `precisions` (unknown parts pass)."""

    def test(value: TensorType) -> bool:
        dims = value.dims
        one = dims is None or dims == () or (len(dims) == 1 and (dims[0] == 1 or dims[0] < 0))
        return one and value.precision in (None, *precisions)

    return test


def _integer_scalar(value: TensorType) -> bool:
    return _scalar_of(INTEGER_PRECISIONS)(value)


def _boolean_scalar(value: TensorType) -> bool:
    return _scalar_of(BOOLEAN_PRECISIONS)(value)


def _counter_mismatches(loop: LoopContext) -> Iterator[Mismatch]:
    for entry in loop.inputs() if loop.is_loop else ():
        parameter = loop.parameters.get(entry.attrs.get("internal_layer_id"))
        if entry.attrs.get("purpose") != "current_iteration" or parameter is None:
            continue
        yield from _judge(
            _integer_scalar,
            (parameter_value(parameter),),
            lambda value, parameter=parameter: (
                f"body Parameter {parameter.id} is {value.describe()}, not an integer scalar or [1]"
            ),
            entry.describe(),
            entry.line,
        )


@rule("SP001", ERROR, "current_iteration is an integer scalar or [1] Parameter, mapped once")
def _current_iteration(loop: LoopContext):
    """Judged from the Parameter's element_type and shape (its <port> is only an annotation)."""
    others = Counter(
        e.attrs.get("internal_layer_id") for e in loop.inputs() if not e.attrs.get("purpose")
    )
    targets = {edge.to_layer for edge in loop.edges}
    for entry in loop.inputs():
        internal = entry.attrs.get("internal_layer_id")
        if entry.attrs.get("purpose") != "current_iteration":
            continue
        if not loop.is_loop:
            yield "a TensorIterator has no current_iteration port", entry.describe(), entry.line
        elif others[internal] or internal in targets:
            yield (
                f"body Parameter {internal} is also fed by a port_map entry or back edge",
                entry.describe(),
                entry.line,
            )
    yield from _errors(_counter_mismatches(loop))


def _condition_mismatches(loop: LoopContext) -> Iterator[Mismatch]:
    for entry in loop.outputs() if loop.is_loop else ():
        result = loop.results.get(entry.attrs.get("internal_layer_id"))
        if entry.attrs.get("purpose") != "execution_condition" or result is None:
            continue
        yield from _judge(
            _boolean_scalar,
            (result_value(loop.body, result),),
            lambda value, result=result: (
                f"body Result {result.id} is {value.describe()}, not a boolean scalar or [1]"
            ),
            entry.describe(),
            entry.line,
        )


@rule("SP002", ERROR, "execution_condition is a boolean scalar or [1] Result")
def _execution_condition(loop: LoopContext):
    """Judged from the layer feeding the Result (the Result's <port> is only an annotation)."""
    for entry in loop.outputs():
        if entry.attrs.get("purpose") == "execution_condition" and not loop.is_loop:
            yield "a TensorIterator has no execution_condition port", entry.describe(), entry.line
    yield from _errors(_condition_mismatches(loop))


LOOP_SPECIAL_INPUTS = ((0, "integer", _integer_scalar), (1, "boolean", _boolean_scalar))


def _loop_input_mismatches(loop: LoopContext) -> Iterator[Mismatch]:
    for port_id, wanted, test in LOOP_SPECIAL_INPUTS if loop.is_loop else ():
        if port_id not in loop.layer.inputs:
            continue
        yield from _judge(
            test,
            (value_into(loop.graph, loop.layer, port_id),),
            lambda value, port_id=port_id, wanted=wanted: (
                f"input port {port_id} is {value.describe()}, not a {wanted} scalar or [1]"
            ),
            None,
            loop.layer.line,
        )


@rule("SP003", ERROR, "Loop inputs 0 and 1 are an integer trip count and a boolean condition")
def _loop_inputs(loop: LoopContext):
    """Judged from the layers feeding ports 0 and 1 (the Loop's <port>s are annotations)."""
    if not loop.is_loop:
        return
    for port_id, _, _ in LOOP_SPECIAL_INPUTS:
        if port_id not in loop.layer.inputs:
            yield f"the Loop has no input port {port_id}", None, loop.layer.line
    yield from _errors(_loop_input_mismatches(loop))
    for entry in loop.inputs():
        if entry.int("external_port_id") in (0, 1) and not entry.attrs.get("purpose"):
            yield (
                f"port {entry.int('external_port_id')} is the Loop's "
                f"{'trip count' if entry.int('external_port_id') == 0 else 'condition'} and "
                "may not be in the port_map",
                entry.describe(),
                entry.line,
            )


@rule("SP004", ERROR, "at most one current_iteration and one execution_condition entry")
def _one_purpose_each(loop: LoopContext):
    """OpenVINO counts a second purpose entry as an input description without an input."""
    seen: Counter = Counter()
    for entry in loop.entries:
        purpose = entry.attrs.get("purpose")
        if purpose is None:
            continue
        seen[purpose] += 1
        if seen[purpose] == 2:
            yield f"more than one entry has purpose '{purpose}'", entry.describe(), entry.line


@rule("SP005", ERROR, "a Loop has an execution_condition entry")
def _condition_required(loop: LoopContext):
    """Loop-5 requires the body's condition output; without the entry OpenVINO infers no output
    of the Loop and refuses the IR ("node index is out of range"; a Loop built without one in
    Python fails to compile: "dynamic rank")."""
    purposes = {entry.attrs.get("purpose") for entry in loop.outputs()}
    if loop.is_loop and "execution_condition" not in purposes:
        yield (
            'no port_map <output> has purpose="execution_condition" (the body Result deciding '
            "whether the next iteration runs)",
            None,
            loop.layer.line,
        )


# -- warnings: patterns the CPU plugin mis-executes --------------------------------------------
@rule("WR001", WARNING, "a constant zero trip count with a concatenated output")
def _zero_trip(loop: LoopContext):
    if (
        loop.is_loop
        and loop.constant_input(0) == 0
        and any("axis" in e.attrs for e in loop.outputs())
    ):
        yield (
            "constant trip count 0 with a concatenated output crashes the CPU plugin at "
            "compile time (SIGFPE); fold the loop away",
            None,
            loop.layer.line,
        )


@rule("WR002", WARNING, "a constant false initial execution condition")
def _false_condition(loop: LoopContext):
    if loop.is_loop and loop.constant_input(1) == 0:
        yield (
            "a constant false initial condition gives wrong shapes for last-value outputs "
            "on the CPU plugin; fold the loop away",
            None,
            loop.layer.line,
        )


@rule("WR003", WARNING, "a reversed concatenated output in a Loop")
def _reversed_output(loop: LoopContext):
    if not loop.is_loop:
        return
    for entry in loop.outputs():
        stride, start = entry.int("stride", 1), entry.int("start", 0)
        if "axis" in entry.attrs and ((stride or 0) < 0 or start not in (0, None)):
            yield (
                "a reversed concatenation is outside Loop-5 (start 0, stride 1 only); "
                "reverse after the Loop",
                entry.describe(),
                entry.line,
            )


TYPE_MISMATCHES = {
    "AX005": _sliced_shape_mismatches,
    "AX008": _concatenated_part_mismatches,
    "BE004": _edge_type_mismatches,
    "PM008": _invariant_mismatches,
    "SP001": _counter_mismatches,
    "SP002": _condition_mismatches,
    "SP003": _loop_input_mismatches,
}


@rule("WR004", WARNING, "only <port> annotations disagree (OpenVINO re-infers them)")
def _annotation_only(loop: LoopContext):
    """What AX005, AX008, BE004, PM008 and SP001-SP003 find when the producing layers agree and
    only `<port precision/dims>` annotations do not: OpenVINO compiles and runs such an IR."""
    for code, mismatches in TYPE_MISMATCHES.items():
        for severity, message, entry, line in mismatches(loop):
            if severity == WARNING:
                yield f"{message} (annotations only; {code} if the layers disagreed)", entry, line


LOOP_OUTPUT_RANK_CRASH = MAX_PORT_RANK + 1  # rank 12 runs on the CPU, 13 dies by SIGFPE


@rule("WR005", WARNING, "a Loop output of rank 13 or more (12 nested Loops stacking scans)")
def _high_rank_output(loop: LoopContext):
    """The CPU plugin dies by SIGFPE compiling a Loop with an output (concatenated or last value)
    of rank LOOP_OUTPUT_RANK_CRASH, and fails at inference above it; the same rank inside the
    body is fine, and so is deep nesting that does not raise the rank. 12 Loops nested, each
    stacking its inner Loop's scan output, reach it. Judged from the layer feeding the Result."""
    for entry in loop.outputs():
        result = loop.results.get(entry.attrs.get("internal_layer_id"))
        value = result_value(loop.body, result).judged if result is not None else None
        if entry.attrs.get("purpose") or value is None or value.dims is None:
            continue
        if len(value.dims) >= LOOP_OUTPUT_RANK_CRASH:
            yield (
                f"the output has rank {len(value.dims)}: the CPU plugin dies by SIGFPE at rank "
                f"{LOOP_OUTPUT_RANK_CRASH} and fails above (nested Loops stacking scan outputs "
                "reach it at depth 12)",
                entry.describe(),
                entry.line,
            )


@rule("WR006", WARNING, "a body Parameter before current_iteration's feeds only unread outputs")
def _parameter_dropped_before_iteration(loop: LoopContext):
    """OpenVINO (2026.4.1) removes the body Results of Loop outputs nothing reads, then the
    Parameters nothing reads any more, without moving `current_iteration`'s index down: the
    iteration number goes to another Parameter (wrong results) or compile fails. Warned for a
    Parameter before the iteration's whose every path leads to such Results only."""
    counter = next(
        (e for e in loop.inputs() if e.attrs.get("purpose") == "current_iteration"), None
    )
    order = list(loop.parameters)
    iteration = counter.attrs.get("internal_layer_id") if counter is not None else None
    if not loop.is_loop or iteration not in order:
        return
    live = _live_body_layers(loop)
    read = {edge.from_layer for edge in loop.body.edges}
    before = order[: order.index(iteration)]
    for parameter in before:
        if parameter in read and parameter not in live:
            yield (
                f"body Parameter {parameter} comes before the current_iteration Parameter and "
                "feeds only outputs the graph does not read: OpenVINO drops it without moving "
                "the iteration's index (wrong iteration numbers or a failed compile); put the "
                "current_iteration Parameter first",
                counter.describe(),
                counter.line,
            )


def _live_body_layers(loop: LoopContext) -> set[str]:
    """Body layers a read Loop output, a back edge or the execution condition depends on."""
    read_ports = {e.from_port for e in loop.graph.edges if e.from_layer == loop.layer.id}
    live = {edge.from_layer for edge in loop.edges}
    for entry in loop.outputs():
        if entry.attrs.get("purpose") or entry.int("external_port_id") in read_ports:
            live.add(entry.attrs.get("internal_layer_id"))
    producers: dict[str, list[str]] = {}
    for edge in loop.body.edges:
        producers.setdefault(edge.to_layer, []).append(edge.from_layer)
    pending = list(live)
    while pending:
        for producer in producers.get(pending.pop(), ()):
            if producer not in live:
                live.add(producer)
                pending.append(producer)
    return live


@rule("WR007", WARNING, "an <output> with a negative external_port_id and no purpose")
def _unused_output_entry(loop: LoopContext):
    """OpenVINO reads such an entry as no output of the loop and runs the IR as without it."""
    for entry in loop.outputs():
        external = entry.int("external_port_id")
        if external is not None and external < 0 and entry.attrs.get("purpose") is None:
            yield (
                f"external_port_id {external} without a purpose maps no output of the loop "
                "(OpenVINO ignores the entry)",
                entry.describe(),
                entry.line,
            )


@rule("WR008", WARNING, "an invariant or merged body Parameter's declared shape differs")
def _reinferred_parameter_shape(loop: LoopContext):
    """A body Parameter fed by an invariant input, or across a back edge, is declared with
    another static shape than its value. OpenVINO sets the Parameter's shape from the input
    and relaxes the dims a back edge changes, so it runs the IR (measured: w_in or acc_in
    declared [1] for a [2] value read, run and give the outputs of the IR declaring [2]); the
    body is built once at the declared shape when the IR is read, where a body inconsistent at
    it is refused by OpenVINO's own message."""
    for mismatches in (
        _invariant_mismatches(loop, _same_shape),
        _edge_type_mismatches(loop, _same_shape),
    ):
        for message, entry, line in _errors(mismatches):
            yield f"{message} (OpenVINO re-infers the Parameter's shape)", entry, line


@rule("WR010", WARNING, "two last-value outputs of a Result that is a merged Parameter")
def _outputs_of_a_carried_parameter(loop: LoopContext):
    """Two Loop outputs of the last value of one body Result fed straight by a Parameter with
    a back edge (a value carried unchanged): OpenVINO's CPU plugin (2026.4.1) crashes compiling
    it (SIGSEGV, or "Cannot create ov::Output<ov::Node> from nullptr!"); one output per Result
    compiles. ov-loops' own Loops have one."""
    merged = {edge.to_layer for edge in loop.edges}
    fed_by = {edge.to_layer: edge.from_layer for edge in loop.body.edges}
    seen: Counter = Counter()
    for entry in loop.outputs():
        result = entry.attrs.get("internal_layer_id")
        if entry.attrs.get("purpose") or "axis" in entry.attrs or fed_by.get(result) not in merged:
            continue
        seen[result] += 1
        if seen[result] == 2:
            yield (
                f"a second output of body Result {result}, which returns the merged Parameter "
                f"{fed_by[result]} itself: the CPU plugin crashes compiling it; read one output",
                entry.describe(),
                entry.line,
            )


# -- device targets: what a plugin refuses (validate --target) --------------------------------
@rule("WR009", WARNING, "a back edge listed twice")
def _repeated_edge(loop: LoopContext):
    """The same <edge> twice: OpenVINO reads it as one back edge and runs the IR (measured on
    ir_samples/invalid/WR009.xml: the outputs of the IR listing it once)."""
    seen: Counter = Counter()
    for edge in loop.edges:
        seen[edge.from_layer, edge.to_layer] += 1
        if seen[edge.from_layer, edge.to_layer] == 2:
            yield (
                "the back edge is listed twice (OpenVINO reads it once)",
                edge.describe(),
                edge.line,
            )


@rule("NP001", ERROR, "a Loop's trip count is a Constant (NPU)", target="NPU")
def _npu_constant_trip_count(loop: LoopContext):
    """The NPU compiler unrolls each Loop by its constant number of iterations (its IE
    UnrollTensorIterator pass, LoopRewriter); a trip count computed at run time has none."""
    if loop.is_loop and loop.constant_input(0) is None:
        yield (
            "the trip count is not a Constant: the NPU compiles only loops of a constant number "
            "of iterations (convert with static input shapes and --target NPU)",
            None,
            loop.layer.line,
        )


@rule("NP002", ERROR, "a loop layer's ports have static shapes (NPU)", target="NPU")
def _npu_static_ports(loop: LoopContext):
    """The NPU plugin compiles static shapes only ("to_shape was called on a dynamic shape";
    openvinotoolkit/openvino#26357, #24619). Judged from the layer's <port> dims (-1: dynamic)."""
    ports = [("input", port) for port in loop.layer.inputs.values()]
    ports += [("output", port) for port in loop.layer.outputs.values()]
    for kind, port in ports:
        if any(dim < 0 for dim in port.dims):
            dims = ",".join("?" if dim < 0 else str(dim) for dim in port.dims)
            yield (
                f"{kind} port {port.id} has the dynamic shape [{dims}]: the NPU compiles static "
                "shapes only",
                None,
                loop.layer.line,
            )


@rule("GP001", WARNING, "a short Loop's current_iteration is i32 (GPU)", target="GPU")
def _gpu_unrolled_i32_iteration(loop: LoopContext):
    """The GPU plugin unrolls Loops of fewer than 16 iterations (UnrollTensorIterator) and
    replaces current_iteration by an i64 Constant whatever the Parameter's type, which its i32-only
    kernels then refuse (openvinotoolkit/openvino#34777: ScatterUpdate indices, "No layout format
    available"). ov-loops --target GPU unrolls such loops itself with constants of the type."""
    trips = loop.constant_input(0)
    if not loop.is_loop or trips is None or not 0 <= trips < GPU_UNROLL_BELOW:
        return
    for entry in loop.inputs():
        parameter = loop.parameters.get(entry.attrs.get("internal_layer_id"))
        precision = parameter_value(parameter).judged.precision if parameter else None
        if entry.attrs.get("purpose") == "current_iteration" and precision == "I32":
            yield (
                f"the GPU plugin unrolls this {trips}-iteration Loop and feeds current_iteration "
                "as an i64 Constant to an i32 body (openvino#34777); convert with --target GPU",
                entry.describe(),
                entry.line,
            )
