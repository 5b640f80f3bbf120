"""Capture analysis: the outer values a scan's body reads become its invariant inputs, and reads
of a shared variable become reads of the body Parameter that stands for it.

    own      = body Parameters and the shared variables the scan carries
    kind(n)  = "body" if n depends on `own`, else "outer" if on a Parameter or ReadValue
               outside, else "const"
    walk from the body's Results through what they read:
        a shared variable with a body Parameter -> read the Parameter instead
        an "outer" value                        -> captured (a new invariant input)
        a "body" node                           -> inside the body (an error if built before fn)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.theano.arguments import BuilderError
from ov_loops.frontends.theano.body import Body
from ov_loops.frontends.theano.shared_variables import shared_variable


def capture(results: Sequence[ov.Node], body: Body, strict: bool, first_body_node: int) -> None:
    """Outer values the body reads (outputs of nodes that depend on no body Parameter but on a
    Parameter or a shared variable outside, consumed inside the body) become invariant inputs of
    `body`; under `strict` they are an error. Reads of an updated shared variable become reads of
    its carried Parameter (a node built before fn that reads one is an error: it would change
    outside the loop too), and fn's direct reads of a shared non_sequence reads of its Parameter."""
    carried = {variable.value.get_instance_id() for _, variable, _ in body.shared}
    reads = _Reads(
        kind=_classifier({p.get_instance_id() for p in body.parameters} | carried),
        read_through=_read_through(body),
        first_body_node=first_body_node,
        inside={result.get_instance_id() for result in results},
    )
    pending = list(results)
    while pending:
        for target in pending.pop().inputs():
            source = reads.follow(target)
            if source is not None:
                pending.append(source)
    if reads.captured and strict:
        names = ", ".join(sorted({name for c in reads.captured.values() for name in _sources(c)}))
        raise BuilderError(f"fn: uses {names} from outside without non_sequences (strict=True)")
    for value in reads.captured.values():
        body.invariant.append((_read_inside(value, reads.inside), value))


def _read_inside(value: ov.Output, inside: set[int]) -> ov.Node:
    """A new body Parameter for outer `value`, which the nodes `inside` (by id) read instead."""
    parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
    for target in list(value.get_target_inputs()):
        if target.get_node().get_instance_id() in inside:
            target.replace_source_output(parameter.output(0))
    return parameter


def _read_through(body: Body) -> dict[int, ov.Output]:
    """Shared variable node id -> the body Parameter read instead: the carried ones', then the
    Parameters of shared variables passed as non_sequences."""
    read_through = {v.value.get_instance_id(): p.output(0) for p, v, _ in body.shared}
    for parameter, value in body.invariant:
        if shared_variable(value) is not None:
            read_through.setdefault(value.get_node().get_instance_id(), parameter.output(0))
    return read_through


@dataclass
class _Reads:
    """The walk from the body's Results: the nodes found inside the body (by instance id) and
    the outer values captured (by (node id, output index), in the order met)."""

    kind: Callable[[ov.Node], str]
    read_through: dict[int, ov.Output]
    first_body_node: int
    inside: set[int]
    captured: dict[tuple[int, int], ov.Output] = field(default_factory=dict)

    def follow(self, target: ov.Input) -> ov.Node | None:
        """Rewire or record what `target` reads; the node to walk on from, if it is the body's."""
        value = target.get_source_output()
        source = value.get_node()
        key = source.get_instance_id()
        if key in self.read_through:
            target.replace_source_output(self.read_through[key])
            return None
        kind = self.kind(source)
        if kind == "outer":
            self.captured.setdefault((key, value.get_index()), value)
        if kind != "body" or key in self.inside:
            return None
        if key < self.first_body_node:
            raise BuilderError(
                f"fn: reads {source.get_friendly_name()}, built before scan from a "
                "shared variable fn updates: build it inside fn"
            )
        self.inside.add(key)
        return source


def _classifier(own: set[int]) -> Callable[[ov.Node], str]:
    """kind(node): "body" if it depends on a node of `own`, else "outer" if on a Parameter or a
    shared variable (ReadValue) outside, else "const"."""
    kinds: dict[int, str] = {}

    def kind(node: ov.Node) -> str:
        key = node.get_instance_id()
        if key not in kinds:
            if key in own:
                kinds[key] = "body"
            elif node.get_type_name() in ("Parameter", "ReadValue"):
                kinds[key] = "outer"
            else:
                found = {kind(value.get_node()) for value in node.input_values()}
                kinds[key] = "body" if "body" in found else "outer" if "outer" in found else "const"
        return kinds[key]

    return kind


def _sources(value: ov.Output) -> set[str]:
    """The names of the Parameters and shared variables an outer value is computed from."""
    names, pending = set(), [value.get_node()]
    while pending:
        node = pending.pop()
        variable = shared_variable(node)
        if variable is not None or node.get_type_name() in ("Parameter", "ReadValue"):
            names.add(variable.name if variable is not None else node.get_friendly_name())
        else:
            pending.extend(source.get_node() for source in node.input_values())
    return names
