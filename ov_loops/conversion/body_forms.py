"""Bodies of one form converted once: a body whose form (everything but its names) the frontend
converted before becomes a clone of that conversion with its own names.

OpenVINO's ONNX frontend costs 1.3-1.9 ms of CPU for any conversion however small (openvino
2026.4.1: it fills its operator tables each time; a one-op model takes as long), which
`openvino.convert_model` pays once per model and the driver once per loop body. Many loops of
one model often differ in their names only (N sequential loops of one form). The form of a
typed body (`body_form`) is its graph with every name replaced by the position of its first
use; a body converted before in the same conversion (same opsets and functions) is cloned
(`ov.Model.clone`, about 70 us) and renamed::

    friendly name, tensor name  = the name at the same position in this body
    Result "x/sink_port_0"      = this body's name for x, then "/sink_port_0"
    an op named by its type     = the clone's own such name (Constant_123: a new number)

A form is not remembered when that does not name every op (a name the frontend derived
otherwise), when the frontend left an op of it unconverted (so a clone has none to report), nor
when the body holds a subgraph (an If, a nested loop's placeholder) or a tensor kept outside
the message; such bodies are converted each time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import openvino as ov

from ov_loops.conversion.unsupported import unconverted
from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from ov_loops.frontends.onnx.proto import schema
from ov_loops.ovgraph import SUBGRAPH_OPS
from ov_loops.record import Record

_SINK = re.compile(r"(.*)(/sink_port_\d+)")
_EXTERNAL = schema.TensorProto.EXTERNAL
_AUTO = -1  # an op named by its type and number (Node.get_name)


class BodyForms:
    """The bodies of one conversion converted so far, by form."""

    def __init__(self) -> None:
        self._forms: dict[str, _Renaming | None] = {}

    def converted(
        self, body: schema.ModelProto, convert: Callable[[], ov.Model]
    ) -> tuple[ov.Model, bool]:
        """`body` converted, and whether it is a renamed clone: `convert()` for a form not seen
        before (or one that cannot be renamed), else the clone of the earlier conversion named
        as `body` names it (of a form whose conversion left no op unconverted)."""
        form = body_form(body)
        if form is None:
            return convert(), False
        key, names = form
        if key not in self._forms:
            model = convert()  # its caller may change it in place: a copy is kept
            self._forms[key] = None if unconverted(model) else _Renaming.of(model, names)
            return model, False
        renaming = self._forms[key]
        renamed = None if renaming is None else renaming.applied(names)
        return (convert(), False) if renamed is None else (renamed, True)


def body_form(body: schema.ModelProto) -> tuple[str, list[str]] | None:
    """The form of `body` and its names in order of first use (None: a subgraph, a placeholder
    or a tensor kept outside the message). Equal forms differ in their names only."""
    graph = body.graph
    index: dict[str, int] = {}

    def at(name: str) -> int:
        return index.setdefault(name, len(index)) if name else -1

    parts: list = [at(graph.name)]
    for value in (*graph.input, *graph.value_info):
        parts.append((at(value.name), value.type.SerializeToString()))
    for tensor in graph.initializer:
        if tensor.data_location == _EXTERNAL:
            return None
        unnamed = schema.TensorProto()
        unnamed.CopyFrom(tensor)
        unnamed.name = ""
        parts.append((at(tensor.name), unnamed.SerializeToString()))
    if graph.sparse_initializer:
        return None
    for node in graph.node:
        attributes = _attributes(node)
        if attributes is None:
            return None
        inputs = [at(name) for name in node.input]
        outputs = [at(name) for name in node.output]
        parts.append((node.op_type, node.domain, at(node.name), inputs, outputs, attributes))
    for value in graph.output:
        parts.append((at(value.name), value.type.SerializeToString()))
    return repr(parts), list(index)


def _attributes(node: schema.NodeProto) -> list[bytes] | None:
    """The node's attributes as bytes (None: a placeholder, a subgraph or an external tensor)."""
    if node.domain == PLACEHOLDER_DOMAIN:
        return None
    kept = []
    for attribute in node.attribute:
        if attribute.HasField("g") or attribute.graphs:
            return None
        tensors = [attribute.t] if attribute.HasField("t") else []
        if any(tensor.data_location == _EXTERNAL for tensor in [*tensors, *attribute.tensors]):
            return None
        kept.append(attribute.SerializeToString())
    kept.append(node.overload.encode())
    return kept


class _Renaming(Record):
    """A copy of a converted body and, per op in order, its type, its friendly name (the
    position of a name, or _AUTO, and a suffix) and the names of its outputs' tensors
    (positions)."""

    __slots__ = ("model", "ops", "name")

    def __init__(
        self,
        model: ov.Model,
        ops: tuple[tuple[str, int, str, tuple[tuple[int, ...], ...]], ...],
        name: int,
    ) -> None:
        self.model = model
        self.ops = ops
        self.name = name

    @classmethod
    def of(cls, model: ov.Model, names: list[str]) -> _Renaming | None:
        """How `model`, converted from a body of `names`, is renamed (None: it cannot be)."""
        index = {name: at for at, name in enumerate(names)}
        if model.get_friendly_name() not in index:
            return None
        ops = []
        for op in model.get_ordered_ops():
            friendly = _friendly(op, index)
            tensors = [[index.get(name) for name in out.get_names()] for out in op.outputs()]
            if friendly is None or any(None in each for each in tensors):
                return None
            kind = op.get_type_name()
            if kind in SUBGRAPH_OPS or _mentions(op.get_rt_info(), names):
                return None
            ops.append((kind, *friendly, tuple(tuple(each) for each in tensors)))
        return cls(model.clone(), tuple(ops), index[model.get_friendly_name()])

    def applied(self, names: list[str]) -> ov.Model | None:
        """A clone of the model named by `names` (this form's names, another body's); None if
        the clone's ops were not in the same order (not seen: it is cloned in order)."""
        clone = self.model.clone()
        ordered = clone.get_ordered_ops()
        if [op.get_type_name() for op in ordered] != [kind for kind, *_ in self.ops]:
            return None
        clone.set_friendly_name(names[self.name])
        for op, (_, name, suffix, tensors) in zip(ordered, self.ops):
            op.set_friendly_name(op.get_name() if name == _AUTO else names[name] + suffix)
            for out, positions in zip(op.outputs(), tensors):
                if positions:
                    out.set_names({names[at] for at in positions})
        return clone


def _friendly(op: ov.Node, index: dict[str, int]) -> tuple[int, str] | None:
    """The friendly name of `op` as (position of a name, suffix), (_AUTO, "") for its own
    type-and-number name, None when it is neither."""
    friendly = op.get_friendly_name()
    if friendly == op.get_name():
        return _AUTO, ""
    if friendly in index:
        return index[friendly], ""
    sink = _SINK.fullmatch(friendly)
    if sink is not None and sink.group(1) in index:
        return index[sink.group(1)], sink.group(2)
    return None


def _mentions(rt_info, names: list[str]) -> bool:
    """Whether a runtime-info entry holds one of `names` (it could not be renamed)."""
    if not len(rt_info):
        return False
    texts = [f"{key}={value}" for key, value in rt_info.items()]
    return any(name in text for text in texts for name in names)
