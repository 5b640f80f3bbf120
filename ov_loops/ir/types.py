"""A value's element type and shape: as OpenVINO builds it, and as `<port>` annotations state it.

OpenVINO's IR reader builds a Parameter and a Const from their `<data element_type shape>` and
re-infers every other type; `<port precision>` and `<dim>` are annotations it does not check (an
IR whose back-edge Result alone is annotated f16 instead of f32 compiles and runs). So the rules
judge a value by its producing layer (`Value.fact`: a Parameter's or Const's data, or else the
producer's output port) and report a disagreement that only the consuming `<port>` annotations
show as a warning (WR004), not an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ov_loops.ir.reader import Graph, Layer, Port, integer

ERROR, WARNING = "error", "warning"
ELEMENT_PRECISIONS = {
    "f64": "FP64",
    "f32": "FP32",
    "f16": "FP16",
    "bf16": "BF16",
    "boolean": "BOOL",
}
BUILT_FROM_DATA = ("Parameter", "Const")


@dataclass(frozen=True)
class TensorType:
    """Element type as a `<port>` writes it (FP32, I64, BOOL), and dims (None: unknown rank;
    a negative dim is dynamic)."""

    precision: str | None
    dims: tuple[int, ...] | None

    def describe(self) -> str:
        dims = "[?]" if self.dims is None else str(list(self.dims))
        return f"{self.precision or '?'} {dims}"

    def same_precision(self, other: TensorType) -> bool:
        return None in (self.precision, other.precision) or self.precision == other.precision

    def shape_agrees(self, dims: tuple[int, ...] | None) -> bool:
        """Same rank and equal static dims (an unknown rank or dynamic dim agrees with any)."""
        if self.dims is None or dims is None:
            return True
        return len(self.dims) == len(dims) and all(
            a < 0 or b < 0 or a == b for a, b in zip(self.dims, dims)
        )


@dataclass(frozen=True)
class Value:
    """One value seen two ways: from its producing layer, and by the consumer's `<port>`."""

    fact: TensorType | None
    annotation: TensorType | None

    @property
    def shown(self) -> TensorType | None:
        """As the IR's reader sees it: the annotation where there is one."""
        return self.annotation or self.fact

    @property
    def judged(self) -> TensorType | None:
        """As OpenVINO builds it: the producer's type where it is known."""
        return self.fact or self.annotation


def port_precision(element_type: str) -> str:
    """The precision a `<port>` writes for a `<data element_type>`: f32 -> FP32, i64 -> I64."""
    return ELEMENT_PRECISIONS.get(element_type, element_type.upper())


def _precision(text: str | None) -> str | None:
    return None if text is None else {"BOOLEAN": "BOOL"}.get(text.upper(), text.upper())


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """A `<data shape>`: "" is a scalar; "?", "-1" and "1..5" dims are dynamic; "..." or garbage
    is an unknown rank."""
    if text is None or text.strip() in ("...", "?"):
        return None
    if not text.strip():
        return ()
    dims = []
    for dim in text.split(","):
        value = integer(dim)
        if value is None and dim.strip() != "?" and ".." not in dim:
            return None
        dims.append(-1 if value is None else value)
    return tuple(dims)


SHAPE_DIM = re.compile(r"\?|-?[0-9]+|(-?[0-9]+)?\.\.([0-9]+)?")


def readable_shape(text: str) -> bool:
    """Whether OpenVINO's IR reader parses `text` as a shape (measured on 2026.4.1): optionally
    in [ ], "" (a scalar), "..." (any rank), or comma-separated dims each "?", an integer or a
    range "A..B" (either bound may be left out); spaces around each part are ignored."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    if text in ("", "..."):
        return True
    return all(SHAPE_DIM.fullmatch(dim.strip()) for dim in text.split(","))


def port_type(port: Port | None) -> TensorType | None:
    """A `<port>` annotation (no `<dim>` is a scalar or an unknown rank: read as unknown)."""
    if port is None:
        return None
    return TensorType(_precision(port.precision), port.dims or None)


def layer_output(layer: Layer, port_id: int) -> TensorType | None:
    """What `layer` produces on output `port_id`: a Parameter's or Const's data, else its port
    (a Convert's element type is its destination_type: with compress_to_fp16 OpenVINO writes
    FP16 on the port of the f16 -> f32 Convert after a compressed constant)."""
    if layer.type in BUILT_FROM_DATA and "element_type" in layer.data:
        precision = port_precision(layer.data["element_type"])
        return TensorType(precision, parse_shape(layer.data.get("shape")))
    port = port_type(layer.outputs.get(port_id))
    if layer.type == "Convert" and "destination_type" in layer.data and port is not None:
        return TensorType(port_precision(layer.data["destination_type"]), port.dims)
    return port


def value_into(graph: Graph, layer: Layer, port_id: int | None) -> Value:
    """The value feeding `layer`'s input `port_id` in `graph`."""
    producer = graph.producer(layer.id, port_id) if port_id is not None else None
    fact = layer_output(*producer) if producer is not None else None
    return Value(fact, port_type(layer.inputs.get(port_id)))


def result_value(body: Graph, result: Layer) -> Value:
    """The value a body Result returns."""
    return value_into(body, result, min(result.inputs) if result.inputs else 0)


def parameter_value(parameter: Layer) -> Value:
    """A body Parameter's value: its data, and its output port."""
    port_id = min(parameter.outputs) if parameter.outputs else 0
    return Value(layer_output(parameter, port_id), port_type(parameter.outputs.get(port_id)))


def verdict(ok: Callable[..., bool], *values: Value) -> tuple[str, tuple[TensorType, ...]] | None:
    """ERROR with the producers' types when they fail `ok`; WARNING with the annotated types when
    only the annotations do; None when both pass (an unknown side passes)."""
    facts = tuple(value.fact for value in values)
    if None not in facts and not ok(*facts):
        return ERROR, facts
    shown = tuple(value.shown for value in values)
    if None not in shown and not ok(*shown):
        return WARNING, shown
    return None
