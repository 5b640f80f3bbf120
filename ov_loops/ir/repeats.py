"""Repeated loop layers: many IRs repeat one loop (seq1000: 1,000 identical bodies; real
exports: stacked layers), so the validator judges each distinct one once.

Two main-graph layers with subgraphs are repeats when their XML is the same but for what no
rule decides on: the `name`, `names` and `output_names` attributes and `<rt_info>` (read only
for messages, or never), the top-level layer's `id` (read only through the graph holding it)
and line numbers. A clean representative (no finding in its subgraphs, none from a rule that
did not read the holding graph or the .bin) stands for its repeats: of each, only the rules
that read the holding graph run (`Representative.outer_rules`), on the representative's
parsed subgraphs. A repeat of a representative with findings, or whose own outer rules find
something, is read and judged whole, so each finding names its own layer, path and lines.

    key(layer) = XML(layer) - {name, names, output_names, rt_info, top-level id}
    findings(repeat) = [] if clean(key) and outer_rules(repeat) == [] else judge(repeat)
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from ov_loops.errors import InputError
from ov_loops.ir.reader import IRDocument, Layer, subgraph_elements

NAMING_ATTRIBUTES = ("name", "names", "output_names")


def layer_key(element: etree._Element) -> bytes:
    """The XML of a main-graph layer with what no rule decides on left out (module doc)."""
    twin = copy.deepcopy(element)
    etree.strip_elements(twin, "rt_info", with_tail=False)
    etree.strip_attributes(twin, *NAMING_ATTRIBUTES)
    twin.attrib.pop("id", None)
    return etree.tostring(twin, with_tail=False)


@dataclass
class Occurrence:
    """One main-graph layer with subgraphs, in document order: its attributes, its key, and
    its XML while held (None: freed, or never held)."""

    attributes: Layer
    key: bytes
    element: etree._Element | None


@dataclass
class Representative:
    """A clean layer judged whole: its parsed subgraphs, how many loops it holds, and the
    codes of the rules that read the holding graph or the .bin when judging it."""

    layer: Layer
    loops: int
    outer_rules: frozenset[str]

    def stand_in(self, attributes: Layer) -> Layer:
        """`attributes` (a repeat's id, name, line) with the representative's subgraphs and
        ports, which equal the repeat's but for names and lines."""
        twin = dataclasses.replace(
            attributes,
            element=self.layer.element,
            body=self.layer.body,
            branches=self.layer.branches,
        )
        twin.__dict__.update(inputs=self.layer.inputs, outputs=self.layer.outputs)
        return twin


@dataclass
class Occurrences:
    """`read_ir`'s `hold`: records every main-graph layer with subgraphs and holds the XML of
    the first of each key while the held keys total at most `budget` bytes (memory grows with
    the distinct layers, up to the budget; the others are parsed again when needed)."""

    budget: int
    listed: list[Occurrence] = field(default_factory=list)
    _keys: dict[bytes, bytes] = field(default_factory=dict)
    _counts: dict[bytes, int] = field(default_factory=dict)
    _held: int = 0
    _again: Iterator[tuple[int, etree._Element]] | None = None

    def __call__(self, element: etree._Element, attributes: Layer) -> bool:
        key = layer_key(element)
        first = key not in self._keys
        key = self._keys.setdefault(key, key)  # repeats share one bytes object
        self._counts[key] = self._counts.get(key, 0) + 1
        hold = first and self._held + len(key) <= self.budget
        self._held += len(key) if hold else 0
        self.listed.append(Occurrence(attributes, key, element if hold else None))
        return hold

    def repeated(self, occurrence: Occurrence) -> bool:
        """Whether another layer has the occurrence's key."""
        return self._counts[occurrence.key] > 1

    def element(self, index: int, document: IRDocument) -> tuple[etree._Element, bool]:
        """The XML of occurrence `index` (asked for in document order) and whether it was held;
        one not held is parsed again (one more pass over the file for all of them), valid until
        the next is asked for."""
        occurrence = self.listed[index]
        element, occurrence.element = occurrence.element, None
        if element is not None:
            return element, True
        if self._again is None:
            self._again = enumerate(subgraph_elements(document.path))
        for position, again in self._again:
            if position == index:
                return again, False
        raise InputError(f"{document.path}: changed while it was being validated")
