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
    key: bytes | None  # None: no other layer can repeat it
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


ELEMENTS = etree.XPath("count(descendant::*)")


@dataclass
class Occurrences:
    """`read_ir`'s `hold`: records every main-graph layer with subgraphs and holds the XML of
    the first of each key while the held layers total at most `budget` XML elements (memory
    grows with the distinct layers, up to the budget; the others are parsed again when
    needed). Keys are made only for layers of a type and size another has (a repeat has the
    size of what it repeats); a layer of a size of its own has no key (None: no repeat)."""

    budget: int
    listed: list[Occurrence] = field(default_factory=list)
    _firsts: dict[tuple[str | None, int], int] = field(default_factory=dict)
    _counts: dict[bytes, int] = field(default_factory=dict)
    _keys: dict[bytes, bytes] = field(default_factory=dict)
    _held: int = 0
    _again: Iterator[tuple[int, etree._Element]] | None = None

    def __call__(self, element: etree._Element, attributes: Layer) -> bool:
        size = int(ELEMENTS(element))
        first = self._firsts.setdefault((element.get("type"), size), len(self.listed))
        key = None
        if first < len(self.listed):  # another layer of its type and size came first
            self._keyed(self.listed[first])
            key = self._counted(layer_key(element))
        hold = (key is None or self._counts[key] == 1) and self._held + size <= self.budget
        self._held += size if hold else 0
        self.listed.append(Occurrence(attributes, key, element if hold else None))
        return hold

    def _keyed(self, occurrence: Occurrence) -> None:
        """Give the first layer of a type and size its key, from its XML (when held)."""
        if occurrence.key is None and occurrence.element is not None:
            occurrence.key = self._counted(layer_key(occurrence.element))

    def _counted(self, key: bytes) -> bytes:
        key = self._keys.setdefault(key, key)  # repeats share one bytes object
        self._counts[key] = self._counts.get(key, 0) + 1
        return key

    def repeated(self, occurrence: Occurrence) -> bool:
        """Whether another layer has the occurrence's key."""
        return occurrence.key is not None and self._counts[occurrence.key] > 1

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
