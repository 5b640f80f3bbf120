"""Read OpenVINO IR XML (v10/v11) safely into a small graph model, and Loop layers into LoopSpecs.

The parser refuses DTDs (so no entity can be declared), never resolves entities or touches the
network, and keeps lxml's limits on node size and depth (huge_tree off).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from lxml import etree

from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    TRIP_COUNT_INPUT,
    TRIP_COUNT_UNBOUNDED,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.errors import InputError, reading
from ov_loops.ir.kinds import KEPT_TYPES, LOOP_TYPES

SLICING = ("axis", "start", "stride", "part_size", "end")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
DECIMAL = re.compile(r"\s*[+-]?[0-9]{1,40}\s*")


def integer(text: str | None) -> int | None:
    """`text` as an int64, or None when it is missing, not an integer or out of int64 range.

    The one accessor for integer attributes: OpenVINO's IR reader parses them with stoll (or as
    unsigned 64-bit), so anything else makes the IR unreadable; callers turn None into a finding.
    """
    if text is None:
        return None
    if len(text) < 19 and text.isascii() and text.isdigit():  # the common case: < 10**18
        return int(text)
    if not DECIMAL.fullmatch(text):
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


@dataclass(frozen=True)
class Port:
    """A layer port: precision and dims as written (no <dim> is a scalar or an unknown rank)."""

    id: int
    precision: str | None
    dims: tuple[int, ...]


@dataclass
class Layer:
    """A layer; its ports are read from the XML when first asked for (most never are)."""

    id: str
    name: str
    type: str
    version: str
    line: int
    data: dict[str, str]
    element: etree._Element | None = field(repr=False)  # None: streamed past, attributes only
    body: Graph | None = None  # Loop / TensorIterator
    branches: list[Graph] = field(default_factory=list)  # If: then_body, else_body
    source: Path | None = None  # the IR file, for error messages

    @property
    def is_loop(self) -> bool:
        return self.type in LOOP_TYPES

    @cached_property
    def inputs(self) -> dict[int, Port]:
        return {} if self.element is None else _ports(self.element.find("input"), self.source)

    @cached_property
    def outputs(self) -> dict[int, Port]:
        return {} if self.element is None else _ports(self.element.find("output"), self.source)

    def subgraphs(self) -> list[Graph]:
        return ([self.body] if self.body is not None else []) + self.branches

    def declared_rank(self) -> int | None:
        """A Parameter's rank from its `shape` attribute ("..." is unknown); None otherwise."""
        shape = self.data.get("shape")
        if self.type != "Parameter" or shape is None or shape.strip() in ("...", "?"):
            return None
        return 0 if shape.strip() == "" else len(shape.split(","))


@dataclass(frozen=True, slots=True)
class Edge:
    from_layer: str
    from_port: int
    to_layer: str
    to_port: int


@dataclass
class Graph:
    layers: dict[str, Layer]
    edges: list[Edge]

    def of_type(self, kind: str) -> list[Layer]:
        """Layers of one type in document order (the order of a body's Parameters/Results)."""
        return [layer for layer in self.layers.values() if layer.type == kind]

    @cached_property
    def _producers(self) -> dict[tuple[str, int], Edge]:
        return {(edge.to_layer, edge.to_port): edge for edge in self.edges}

    def producer(self, layer_id: str, port: int) -> tuple[Layer, int] | None:
        """The layer and output port feeding `layer_id`'s input `port`."""
        edge = self._producers.get((layer_id, port))
        source = self.layers.get(edge.from_layer) if edge else None
        return (source, edge.from_port) if source is not None else None


@dataclass(frozen=True)
class PortMapEntry:
    kind: str  # "input" or "output"
    attrs: dict[str, str]
    line: int

    def int(self, name: str, default: int | None = None) -> int | None:
        """The attribute as an int64; `default` when absent, None when not an int64 integer."""
        value = self.attrs.get(name)
        return default if value is None else integer(value)

    def malformed(self, names: tuple[str, ...]) -> list[str]:
        """Those of `names` that are present but not int64 integers."""
        return [name for name in names if name in self.attrs and self.int(name) is None]

    def describe(self) -> str:
        shown = " ".join(f'{key}="{value}"' for key, value in self.attrs.items())
        return f"<{self.kind} {shown}/>"


@dataclass(frozen=True)
class BackEdge:
    from_layer: str
    to_layer: str
    line: int

    def describe(self) -> str:
        return f'<edge from-layer="{self.from_layer}" to-layer="{self.to_layer}"/>'


@dataclass
class IRDocument:
    """A parsed IR: the main graph, and where its .bin is (read on demand, never whole)."""

    path: Path
    graph: Graph
    bin_path: Path
    bin_size: int | None

    def read_bin(self, offset: int, size: int) -> bytes | None:
        if self.bin_size is None or offset < 0 or size < 0 or offset + size > self.bin_size:
            return None
        with self.bin_path.open("rb") as stream:
            stream.seek(offset)
            return stream.read(size)


PROLOG_BYTES = 1 << 16


def read_ir(
    path: str | Path,
    stream: bool = True,
    kept: tuple[str, ...] | None = None,
    hold: Callable[[etree._Element, Layer], bool] | None = None,
) -> IRDocument:
    """Parse `path` (.xml) and find its .bin; raise InputError when either is unreadable.

    With `stream`, the main graph is streamed: a top-level layer whose type is not in `kept`
    (default `KEPT_TYPES`: Loop, TensorIterator, If) keeps only its attributes and is freed at
    once, without its subgraphs; a kept layer keeps its XML and subgraphs, so memory grows with
    the size of those layers, not of the whole IR (`kept=()`: with the size of the attributes;
    `subgraph_elements` then reads the others one at a time). Without, every layer keeps its
    XML (to execute the graph). `hold` (with `kept=()`) is called with the XML and attributes
    of each main-graph layer with subgraphs (KEPT_TYPES) as it ends, in document order: its
    XML is kept for the caller when it returns True, freed otherwise.
    """
    path = Path(path)
    with reading(path, "an IR file"), path.open("rb") as handle:
        prolog = handle.read(PROLOG_BYTES)
    head = prolog.split(b"<net", 1)[0]
    if b"<!DOCTYPE" in head or b"<!ENTITY" in head or b"<!DOCTYPE" in prolog:
        raise InputError(f"{path}: DTDs and entity declarations are not allowed in IR XML")
    kept = KEPT_TYPES if kept is None else kept
    layers: dict[str, Layer] = {}
    edges: list[Edge] = []
    keeps = lambda element: not stream or element.get("type") in kept  # noqa: E731
    held: set[etree._Element] = set()

    def keep(element: etree._Element) -> bool:
        return keeps(element) or element in held

    with _well_formed(path):
        for element in _main_graph_elements(path, keep):
            if element.tag == "edge":
                edges.append(_read_edge(element, path, layers))
                continue
            layer = _read_layer(element, path, keeps(element))
            layers[layer.id] = layer
            if hold is not None and element.get("type") in KEPT_TYPES and hold(element, layer):
                held.add(element)
    graph = Graph(layers, edges)
    bin_path = path.with_suffix(".bin")
    bin_size = bin_path.stat().st_size if bin_path.is_file() else None
    document = IRDocument(path, graph, bin_path, bin_size)
    _require_bin(document, walk_layers(graph))
    return document


def subgraph_elements(path: Path):
    """The main graph's layers with subgraphs (KEPT_TYPES), in document order, each parsed
    again from the file at `path` and freed once the next is asked for."""
    with _well_formed(path):
        for element in _main_graph_elements(path, lambda _: False):
            if element.tag == "layer" and element.get("type") in KEPT_TYPES:
                yield element


def read_subgraph_layer(document: IRDocument, element: etree._Element) -> Layer:
    """A main-graph layer with subgraphs read whole from its XML (refused like `read_ir` when
    its Consts need the missing .bin)."""
    full = _read_layer(element, document.path, keep=True)
    _require_bin(document, walk_layer(full))
    return full


@contextmanager
def _well_formed(path: Path):
    try:
        yield
    except etree.XMLSyntaxError as exc:
        raise InputError(_other_kind(path) or f"{path}: not well-formed XML ({exc})") from None


def _other_kind(path: Path) -> str | None:
    """What `path`, which is not XML, is when a user may take it for an IR: the .bin of an IR
    beside it, or an ONNX model (a protobuf with a graph); None otherwise."""
    xml = path.with_suffix(".xml")
    if path.suffix == ".bin" and xml.is_file():
        return f"{path}: the weights of the IR {xml}; give the .xml"
    try:
        with path.open("rb") as handle:
            onnx_like = _has_graph_field(handle)
    except OSError:
        return None
    if not onnx_like:
        return None
    renamed = " (named .xml: name it .onnx)" if path.suffix == ".xml" else ""
    return (
        f"{path}: an ONNX model{renamed}, not an OpenVINO IR: ov-loops convert converts it, "
        "ov-loops check runs it"
    )


def _has_graph_field(handle) -> bool:
    """Whether the stream is a protobuf message starting with field 1 (ONNX's ir_version) and
    holding field 7 (its graph) at top level: walked in the wire format, fields skipped, so
    the reader stays free of the onnx package.

        for (field, wire_type) in message: skip its value; graph if field 7 and length-delimited
    """
    first = True
    while True:
        key = _varint(handle)
        if key is None or (first and key != 0x08):
            return False
        first, field_number, wire_type = False, key >> 3, key & 7
        if wire_type == 2 and field_number == 7:
            return True
        if wire_type == 0:
            if _varint(handle) is None:
                return False
            continue
        size = _varint(handle) if wire_type == 2 else {1: 8, 5: 4}.get(wire_type)
        if size is None:
            return False
        handle.seek(size, 1)


def _varint(handle) -> int | None:
    """A protobuf varint read from the stream; None at its end or past 10 bytes."""
    value = 0
    for shift in range(0, 70, 7):
        byte = handle.read(1)
        if not byte:
            return None
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value
    return None


def _require_bin(document: IRDocument, layers) -> None:
    if document.bin_size is None and any(_has_data(layer) for layer in layers):
        raise InputError(f"{document.bin_path}: no such file (the IR has Const data)")


def _main_graph_elements(path: Path, keep: Callable[[etree._Element], bool]):
    """The main graph's <layer> and <edge> elements, each as it ends; once the caller asks for
    the next, an element `keep` refuses is freed with what came before it. lxml reports only
    <layer> and <edge> elements (those of bodies too: a body's are read with its layer); going
    through every start and end of every element in Python made validating an IR of 1,000 loops
    9% slower (3.8 s of CPU against 3.4 s)."""
    events = etree.iterparse(
        str(path),
        events=("end",),
        tag=("layer", "edge"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
    )
    for _, element in events:
        section = element.getparent()
        root = None if section is None else section.getparent()
        if root is None or root.getparent() is not None or root.tag != "net":
            continue  # the root, an element of a body, or not an IR (refused below)
        if (section.tag, element.tag) not in (("layers", "layer"), ("edges", "edge")):
            continue
        yield element
        if element.tag == "edge" or not keep(element):  # a kept layer's XML stays
            element.clear()
            while element.getprevious() is not None:  # free what came before
                del section[0]
    root = events.root
    if root is None or root.tag != "net" or root.find("layers") is None:
        raise InputError(f"{path}: not an OpenVINO IR (no <net> with <layers>)")


def _has_data(layer: Layer) -> bool:
    """A Const whose size is not a positive integer (0, garbage) needs no .bin; BIN001 judges it."""
    return layer.type == "Const" and (integer(layer.data.get("size")) or 0) > 0


def read_graph(element: etree._Element, path: Path) -> Graph:
    """A (body) graph, kept whole in memory."""
    layers: dict[str, Layer] = {}
    for node in element.find("layers"):
        if node.tag == "layer":
            layer = _read_layer(node, path, keep=True)
            layers[layer.id] = layer
    edges_element = element.find("edges")
    edges = [
        _read_edge(node, path, layers)
        for node in (edges_element if edges_element is not None else [])
        if node.tag == "edge"
    ]
    return Graph(layers, edges)


def _read_edge(node: etree._Element, path: Path, layers: dict[str, Layer]) -> Edge:
    """An edge; the ids of layers in `layers` are their string objects, not copies (a graph
    names each layer in its edges: a main graph of 1,000 loops held 1 MiB of copies)."""
    from_port, to_port = integer(node.get("from-port")), integer(node.get("to-port"))
    if from_port is None or to_port is None:
        raise InputError(f"{path}:{node.sourceline}: malformed <edge> (ports must be integers)")
    from_layer = _layer_id(node.get("from-layer"), layers)
    return Edge(from_layer, from_port, _layer_id(node.get("to-layer"), layers), to_port)


def _layer_id(text: str | None, layers: dict[str, Layer]) -> str | None:
    """`text`, as the id string of the layer it names when that is in `layers`."""
    layer = layers.get(text)
    return text if layer is None else layer.id


def _read_layer(node: etree._Element, path: Path, keep: bool) -> Layer:
    """A layer; with `keep`, its XML stays for its ports, port_map and subgraphs."""
    layer_id = node.get("id")
    if layer_id is None:
        raise InputError(f"{path}:{node.sourceline}: <layer> without an id")
    data = node.find("data")
    layer = Layer(
        id=layer_id,
        name=node.get("name", ""),
        type=sys.intern(node.get("type", "")),  # a few values, each in many layers
        version=sys.intern(node.get("version", "")),
        line=node.sourceline or 0,
        data=dict(data.attrib) if data is not None else {},
        element=node if keep else None,
        source=path,
    )
    if not keep:
        return layer
    body = node.find("body")
    if body is not None and body.find("layers") is not None:
        layer.body = read_graph(body, path)
    for tag in ("then_body", "else_body"):
        branch = node.find(tag)
        if branch is not None and branch.find("layers") is not None:
            layer.branches.append(read_graph(branch, path))
    return layer


def _ports(element: etree._Element | None, path: Path | None) -> dict[int, Port]:
    ports = {}
    for port in element.iterchildren("port") if element is not None else ():
        port_id = integer(port.get("id"))
        dims = tuple([integer(dim.text) for dim in port.iterchildren("dim")])
        if port_id is None or None in dims:
            raise InputError(
                f"{path}:{port.sourceline}: malformed <port> (its id and dims must be integers)"
            )
        ports[port_id] = Port(port_id, port.get("precision"), dims)
    return ports


def walk_layers(graph: Graph):
    """Every layer of `graph` and of the bodies and branches nested in it."""
    for layer in graph.layers.values():
        yield from walk_layer(layer)


def walk_layer(layer: Layer):
    """`layer` and every layer of the bodies and branches nested in it."""
    yield layer
    for inner in layer.subgraphs():
        yield from walk_layers(inner)


def loops(document: IRDocument, graph: Graph | None = None, path: str = ""):
    """(layer path, graph holding it, layer) for every Loop/TensorIterator, outermost first."""
    graph = document.graph if graph is None else graph
    for layer in graph.layers.values():
        yield from layer_loops(document, graph, layer, path)


def layer_loops(document: IRDocument, graph: Graph, layer: Layer, path: str = ""):
    """loops' triples for `layer` (of `graph`, under `path`) and the loops nested in it."""
    layer_path = f"{path}/{layer.name}" if path else layer.name
    if layer.is_loop:
        yield layer_path, graph, layer
    for inner in layer.subgraphs():
        yield from loops(document, inner, layer_path)


def port_map(layer: Layer) -> list[PortMapEntry]:
    element = None if layer.element is None else layer.element.find("port_map")
    if element is None:
        return []
    return [
        PortMapEntry(entry.tag, dict(entry.attrib), entry.sourceline or 0)
        for entry in element
        if entry.tag in ("input", "output")
    ]


def back_edges(layer: Layer) -> list[BackEdge]:
    element = None if layer.element is None else layer.element.find("back_edges")
    if element is None:
        return []
    return [
        BackEdge(edge.get("from-layer", ""), edge.get("to-layer", ""), edge.sourceline or 0)
        for edge in element
        if edge.tag == "edge"
    ]


def constant_value(document: IRDocument, layer: Layer) -> int | None:
    """The single integer (or boolean, as 0/1) a scalar or [1] Const holds, from the .bin."""
    if layer.type != "Const":
        return None
    widths = {"i64": 8, "i32": 4, "boolean": 1, "u8": 1}
    width = widths.get(layer.data.get("element_type"))
    offset, size = integer(layer.data.get("offset")), integer(layer.data.get("size"))
    raw = document.read_bin(offset, size) if width == size and offset is not None else None
    return None if raw is None else int.from_bytes(raw, "little", signed=True)


def loop_spec(document: IRDocument, graph: Graph, layer: Layer) -> LoopSpec:
    """Read a (well-formed) Loop or TensorIterator layer as a LoopSpec.

    Input external ports are the layer's input port ids; output external ports are written as
    number_of_inputs + output index and read back as the output index. A malformed layer raises
    KeyError or TypeError (run the validator for the full story).
    """
    body = layer.body or Graph({}, [])
    parameters = {p.id: i for i, p in enumerate(body.of_type("Parameter"))}
    results = {r.id: i for i, r in enumerate(body.of_type("Result"))}
    edges = {edge.to_layer: edge.from_layer for edge in back_edges(layer)}
    sliced, merged, invariant, concatenated, last_values = [], [], [], [], []
    current = condition = None
    for entry in port_map(layer):
        internal = entry.attrs.get("internal_layer_id")
        purpose = entry.attrs.get("purpose")
        external = entry.int("external_port_id")
        slicing = {name: entry.int(name) for name in SLICING if name in entry.attrs}
        if entry.kind == "input":
            if purpose == "current_iteration":
                current = parameters[internal]
            elif "axis" in slicing:
                sliced.append(SlicedInput(external, parameters[internal], **slicing))
            elif internal in edges:
                merged.append(MergedInput(external, parameters[internal], results[edges[internal]]))
            else:
                invariant.append(InvariantInput(external, parameters[internal]))
        elif purpose == "execution_condition":
            condition = results[internal]
        elif external is not None and external >= 0:
            index = external - len(layer.inputs)
            if "axis" in slicing:
                concatenated.append(ConcatenatedOutput(index, results[internal], **slicing))
            else:
                last_values.append(LastValueOutput(index, results[internal]))
    source, count = TRIP_COUNT_INPUT, None
    if layer.type == "Loop":
        producer = graph.producer(layer.id, 0)
        value = constant_value(document, producer[0]) if producer else None
        if value is not None:
            source, count = (
                (TRIP_COUNT_UNBOUNDED, None) if value < 0 else (TRIP_COUNT_CONSTANT, value)
            )
    return LoopSpec(
        trip_count_source=source,
        trip_count=count,
        sliced_inputs=tuple(sorted(sliced, key=_port)),
        merged_inputs=tuple(sorted(merged, key=_port)),
        invariant_inputs=tuple(sorted(invariant, key=_port)),
        concatenated_outputs=tuple(sorted(concatenated, key=_port)),
        last_value_outputs=tuple(sorted(last_values, key=_port)),
        current_iteration=current,
        execution_condition=condition,
    )


def _port(entry) -> int:
    return entry.external_port
