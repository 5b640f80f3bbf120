"""`ov_loops.validate`: every defect of every Loop-5 / TensorIterator-1 layer, one line each."""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ov_loops.ir.reader import (
    Graph,
    IRDocument,
    Layer,
    back_edges,
    integer,
    layer_loops,
    loop_spec,
    port_map,
    read_ir,
    read_subgraph_layer,
    walk_layer,
)
from ov_loops.ir.repeats import Occurrences, Representative
from ov_loops.ir.rules import ERROR, RULES, WARNING, LoopContext, Rule

VALIDATE_JSON_KEYS = (
    "path; loops; errors; warnings; findings [{code, severity, layer_id, layer_name, "
    "layer_path, entry, message, line}]; show (with --show: the lines of each loop's structure)"
)

BIN_CODE = "BIN001"
STRUCTURE_CODE = "ST001"
ONE_PASS_ELEMENTS = 100_000  # distinct loop layers' XML held (about 4 MB; issue 24: the peak)


@dataclass(frozen=True)
class Finding:
    """One defect: stable rule code, severity, the layer, the entry or edge, and a message."""

    code: str
    severity: str
    layer_id: str
    layer_name: str
    layer_path: str
    entry: str | None
    message: str
    line: int

    def text(self, source: Path) -> str:
        where = f" at {self.entry}" if self.entry else ""
        return (
            f"{source}:{self.line}: {self.severity} {self.code} layer {self.layer_id} "
            f"'{self.layer_path}'{where}: {self.message}"
        )


@dataclass
class Report:
    """All findings of one IR, and how the CLI exits on them."""

    path: Path
    loops: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def exit_code(self) -> int:
        """0 no error; 1 an error; 2 the .bin is short (the IR cannot be read)."""
        if any(f.code == BIN_CODE for f in self.findings):
            return 2
        return 1 if self.errors else 0

    def summary(self) -> str:
        return (
            f"{self.path}: {self.loops} loop layer(s), {len(self.errors)} error(s), "
            f"{len(self.warnings)} warning(s)"
        )

    def to_json(self, show: list[str] | None = None) -> str:
        """The report as JSON (keys: `VALIDATE_JSON_KEYS`); with `show`, its lines too."""
        document = {
            "path": str(self.path),
            "loops": self.loops,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [asdict(finding) for finding in self.findings],
        }
        if show is not None:
            document["show"] = show
        return json.dumps(document, indent=2)


def validate(path: str | Path, target: str | None = None) -> Report:
    """Check every Loop/TensorIterator layer of the IR at `path` (nested ones too), with the
    rules of device `target` ("GPU", "NPU": what its plugin refuses) when one is given.

    Raises InputError when the IR cannot be read (missing file, not XML, DTD or entities,
    missing .bin).
    """
    with _cyclic_gc_paused():
        occurrences = Occurrences(ONE_PASS_ELEMENTS)
        document = read_ir(path, kept=(), hold=occurrences)
        return _validate(document, occurrences, target)


@contextmanager
def _cyclic_gc_paused():
    """Reading a large IR makes millions of objects and no garbage cycles; the cyclic
    collector's passes over them made validation time grow faster than the IR's size."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class _Judged:
    """What one main-graph layer with subgraphs contributes to the report."""

    layer_id: str
    bins: list[Finding]
    loops: int
    findings: list[Finding]


def _validate(document: IRDocument, occurrences: Occurrences, target: str | None) -> Report:
    """Two steps: `document` holds the main graph's attributes and edges (read with
    `kept=()`); each layer with subgraphs is then judged (its XML held by `occurrences` or
    parsed again, so memory grows with the distinct such layers up to `ONE_PASS_ELEMENTS`, not
    with the IR), a repeat of a clean one by the rules reading the main graph only (repeats.py).
    The findings come in the order of one pass over the whole IR: BIN001 in layer order, then
    each loop's, outermost first."""
    report = Report(document.path, 0)
    layers = document.graph.layers.values()
    bins = {layer.id: found for layer in layers if (found := list(_bin_findings(document, layer)))}
    loop_findings: list[Finding] = []
    representatives: dict[bytes, Representative] = {}
    for index, occurrence in enumerate(occurrences.listed):
        known = representatives.get(occurrence.key) if occurrence.key is not None else None
        judged = _repeat(document, known, occurrence.attributes, target) if known else None
        if judged is None:
            element, held = occurrences.element(index, document)
            judged, representative = _judge(document, element, target)
            if held and representative is not None and occurrences.repeated(occurrence):
                representatives[occurrence.key] = representative
        bins[judged.layer_id] = judged.bins
        report.loops += judged.loops
        loop_findings.extend(judged.findings)
    report.findings = [finding for layer in layers for finding in bins.get(layer.id, ())]
    report.findings.extend(loop_findings)
    return report


@contextmanager
def _in_graph(graph: Graph, layer: Layer):
    """`layer` in `graph` in place of its attributes while the rules judge it."""
    attributes, graph.layers[layer.id] = graph.layers[layer.id], layer
    try:
        yield
    finally:
        graph.layers[layer.id] = attributes


def _judge(
    document: IRDocument, element, target: str | None
) -> tuple[_Judged, Representative | None]:
    """A main-graph layer with subgraphs read whole and judged; with it, when it is clean
    (repeats.py), the representative of its repeats."""
    graph, layer = document.graph, read_subgraph_layer(document, element)
    judged = _Judged(layer.id, list(_bin_findings(document, layer)), 0, [])
    outer: set[str] = set()
    inner: list[Finding] = []  # the findings of rules that read nothing outside the layer
    with _in_graph(graph, layer):
        for layer_path, holder, loop in layer_loops(document, graph, layer):
            judged.loops += 1
            context = LoopContext(document, holder, loop, layer_path)
            found = list(_loop_findings(context, target, RULES, outer if loop is layer else None))
            judged.findings.extend(found)
            inner.extend(f for f in found if loop is not layer or f.code not in outer)
    clean = not judged.bins and not inner
    return judged, Representative(layer, judged.loops, frozenset(outer)) if clean else None


def _repeat(
    document: IRDocument, known: Representative, attributes: Layer, target: str | None
) -> _Judged | None:
    """A repeat of the clean `known` judged by the rules that read the main graph, run on
    `known`'s subgraphs; None when they find something (then it is judged whole)."""
    judged = _Judged(attributes.id, [], known.loops, [])
    if not known.outer_rules:
        return judged
    twin = known.stand_in(attributes)
    rules = [rule for rule in RULES if rule.code in known.outer_rules]
    with _in_graph(document.graph, twin):
        context = LoopContext(document, document.graph, twin, twin.name)
        found = next(_loop_findings(context, target, rules), None)
    return judged if found is None else None


def _loop_findings(
    context: LoopContext, target: str | None, rules: list[Rule], outer: set[str] | None = None
):
    """The findings of one loop layer by `rules`; the structure rule comes first, and without
    structure the others do not run. With `outer`, the codes of the rules that read outside
    the layer (the holding graph, the .bin) are added to it."""
    layer = context.layer
    for rule in rules:
        if rule.target not in (None, target):
            continue
        context.read_outside = False
        findings = [
            Finding(
                rule.code, rule.severity, layer.id, layer.name, context.path, entry, message, line
            )
            for message, entry, line in rule.check(context)
        ]
        if outer is not None and context.read_outside:
            outer.add(rule.code)
        yield from findings
        if findings and rule.code == STRUCTURE_CODE:
            return


def _bin_findings(document: IRDocument, top: Layer):
    """BIN001: every Const's offset + size lies within the .bin (`top` and its subgraphs')."""
    size = document.bin_size or 0
    for layer in walk_layer(top):
        if layer.type != "Const":
            continue
        offset, length = (integer(layer.data.get(key, "0")) for key in ("offset", "size"))
        if offset is None or length is None:
            message = "offset and size must be int64 integers"
        elif offset < 0 or length < 0 or offset + length > size:
            message = f"Const data [{offset}, {offset + length}) lies outside the {size}-byte .bin"
        else:
            continue
        data = f'<data offset="{layer.data.get("offset")}" size="{layer.data.get("size")}"/>'
        yield Finding(BIN_CODE, ERROR, layer.id, layer.name, layer.name, data, message, layer.line)


def show(path: str | Path) -> list[str]:
    """Each loop's structure, one line per port, nested loops indented (valid or not)."""
    document = read_ir(path)
    return list(_show(document, document.graph, 0))


def _show(document: IRDocument, graph, depth: int):
    for layer in graph.layers.values():
        if layer.is_loop:
            yield from _show_loop(document, graph, layer, depth)
        for inner in layer.branches:
            yield from _show(document, inner, depth)


def _show_loop(document: IRDocument, graph, layer: Layer, depth: int):
    indent = "  " * depth
    body = layer.body
    try:
        spec = loop_spec(document, graph, layer)
        trip = spec.trip_count_source + (
            f" {spec.trip_count}" if spec.trip_count is not None else ""
        )
    except (KeyError, TypeError, ValueError):
        spec, trip = None, "unreadable"
    yield f"{indent}{layer.type} '{layer.name}' (id {layer.id}): trip count {trip}"
    if body is None:
        yield f"{indent}  (no <body> with <layers>)"
    names = {} if body is None else {item.id: item.name for item in body.layers.values()}
    edges = {edge.to_layer: edge.from_layer for edge in back_edges(layer)}
    for entry in port_map(layer):
        internal = entry.attrs.get("internal_layer_id", "?")
        target = f"body {internal} '{names.get(internal, '?')}'"
        external = entry.attrs.get("external_port_id", "?")
        slicing = ", ".join(
            f"{key} {entry.attrs[key]}"
            for key in ("axis", "start", "stride", "part_size", "end")
            if key in entry.attrs
        )
        purpose = entry.attrs.get("purpose")
        if purpose:
            kind, text = purpose, target
        elif entry.kind == "input":
            kind = "sliced" if slicing else "merged" if internal in edges else "invariant"
            text = f"port {external} -> {target}"
            if kind == "merged":
                text += f" <- back edge from body {edges[internal]}"
        else:
            kind = "concatenated" if slicing else "last-value"
            text = f"{target} -> port {external}"
        yield f"{indent}  {kind:19} {text}" + (f" ({slicing})" if slicing else "")
    if body is not None:
        for inner in body.layers.values():
            if inner.is_loop:
                yield from _show_loop(document, body, inner, depth + 1)
            for branch in inner.branches:
                yield from _show(document, branch, depth + 1)
