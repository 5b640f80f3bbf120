"""Structure-aware mutations of OpenVINO IR XML around Loop-5 and TensorIterator layers.

Each mutation edits an lxml tree in place (or, for the textual ones, the serialised bytes) and
returns what it did, or raises `NotApplicable`; each is registered in TREE_MUTATIONS or
TEXT_MUTATIONS where it is defined. A mutation that touches more than loop layers' port maps,
back edges and bodies (what `validate` is meant to judge) sets `IrMutant.loop_only` False.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from tests.registry import Registry

GARBAGE = ["-1", "-7", "0", "1", "2", "99", "2147483648", "9223372036854775808", "1e3", "1.5",
           "x", "", " 3", "0x10", "-0", "NaN"]  # fmt: skip
SLICING = ["axis", "start", "end", "stride", "part_size"]
ENTRY_ATTRIBUTES = [*SLICING, "external_port_id", "internal_layer_id", "purpose"]
DOCTYPES = [
    b'<!DOCTYPE net [<!ENTITY e "x">]>',
    b'<!DOCTYPE net SYSTEM "file:///etc/hostname">',
    b'<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>',
    b'<!DOCTYPE net [<!ENTITY ext SYSTEM "file:///etc/hostname">]>',
]


class NotApplicable(Exception):
    """The mutation has nothing to act on in this IR."""


@dataclass
class IrMutant:
    """An IR under mutation: its tree (None once serialised by a textual mutation)."""

    tree: etree._ElementTree | None
    bin: bytes
    steps: list[str] = field(default_factory=list)
    text: bytes | None = None
    loop_only: bool = True

    def xml(self) -> bytes:
        if self.text is None:
            self.text = etree.tostring(self.tree, xml_declaration=True, encoding="utf-8")
        return self.text


Mutation = Callable[[IrMutant, random.Random], str]
TREE_MUTATIONS: Registry[Mutation] = Registry("IR tree mutation")
TEXT_MUTATIONS: Registry[Mutation] = Registry("IR text mutation")  # on the serialised bytes


def _pick(rng: random.Random, items: list):
    if not items:
        raise NotApplicable
    return rng.choice(items)


def _loops(mutant: IrMutant) -> list[etree._Element]:
    return [e for e in mutant.tree.iter("layer") if e.get("type") in ("Loop", "TensorIterator")]


def _entries(mutant: IrMutant) -> list[etree._Element]:
    return [e for p in mutant.tree.iter("port_map") for e in p]


# -- loop structure ------------------------------------------------------------------------------
@TREE_MUTATIONS.register
def port_map_entry(mutant: IrMutant, rng: random.Random) -> str:
    entry = _pick(rng, _entries(mutant))
    action = rng.choice(["delete", "duplicate", "swap", "attribute", "attribute", "attribute"])
    parent = entry.getparent()
    if action == "delete":
        parent.remove(entry)
        return f"port_map {entry.tag} {dict(entry.attrib)} deleted"
    if action == "duplicate":
        parent.append(etree.fromstring(etree.tostring(entry)))
        return f"port_map {entry.tag} {dict(entry.attrib)} duplicated"
    if action == "swap":
        other = _pick(rng, [e for e in parent if e is not entry])
        key = rng.choice(["external_port_id", "internal_layer_id"])
        first, second = entry.get(key), other.get(key)
        if first is None or second is None:
            raise NotApplicable
        entry.set(key, second)
        other.set(key, first)
        return f"port_map {key} swapped: {first} <-> {second}"
    values = [*GARBAGE, "current_iteration", "execution_condition"]
    return f"port_map {entry.tag} {_garble(entry, ENTRY_ATTRIBUTES, values, 0.2, rng)}"


def _garble(element, keys: list[str], values: list[str], drop: float, rng) -> str:
    """Remove one of `keys` from `element` (chance `drop`) or set it to one of `values`."""
    key = rng.choice(keys)
    if rng.random() < drop:
        element.attrib.pop(key, None)
        return f"without {key}"
    element.set(key, rng.choice(values))
    return f"{key}={element.get(key)!r}"


@TREE_MUTATIONS.register
def back_edges(mutant: IrMutant, rng: random.Random) -> str:
    edges = [e for b in mutant.tree.iter("back_edges") for e in b]
    action = rng.choice(["delete", "duplicate", "reverse", "garbage", "remove_all"])
    edge = _pick(rng, edges)
    parent = edge.getparent()
    if action == "delete":
        parent.remove(edge)
    elif action == "duplicate":
        parent.append(etree.fromstring(etree.tostring(edge)))
    elif action == "reverse":
        source, target = edge.get("from-layer"), edge.get("to-layer")
        edge.set("from-layer", target or "")
        edge.set("to-layer", source or "")
    elif action == "garbage":
        key = rng.choice(["from-layer", "to-layer", "from-port", "to-port"])
        edge.set(key, rng.choice(GARBAGE))
        return f"back edge {key}={edge.get(key)!r}"
    else:
        parent.getparent().remove(parent)
    return f"back edge {dict(edge.attrib)} {action}"


@TREE_MUTATIONS.register
def loop_body(mutant: IrMutant, rng: random.Random) -> str:
    layer = _pick(rng, _loops(mutant))
    part = rng.choice(["body", "port_map", "port_map", "body/layers", "body/edges", "back_edges"])
    found = layer.find(part)
    if found is None:
        raise NotApplicable
    found.getparent().remove(found)
    return f"{layer.get('type')} '{layer.get('name')}' without <{part}>"


@TREE_MUTATIONS.register
def body_parameter(mutant: IrMutant, rng: random.Random) -> str:
    found = [layer.find("body") for layer in _loops(mutant)]
    body = _pick(rng, [b for b in found if b is not None])
    parameters = [p for p in body.iter("layer") if p.get("type") in ("Parameter", "Result")]
    layer = _pick(rng, parameters)
    data = layer.find("data")
    action = rng.choice(["element_type", "shape", "delete", "type"])
    if action == "element_type" and data is not None:
        data.set("element_type", rng.choice(["f32", "i32", "boolean", "u1", "string", "x", ""]))
    elif action == "shape" and data is not None:
        data.set("shape", rng.choice(["", "1", "2,3", "?", "-1", "x", "1..3", "9999999999999"]))
    elif action == "delete":
        layer.getparent().remove(layer)
    else:
        layer.set("type", rng.choice(["Const", "Parameter", "Result", "Fuzz"]))
    return f"body {layer.get('type')} '{layer.get('name')}' {action}"


# -- anywhere in the IR --------------------------------------------------------------------------
@TREE_MUTATIONS.register
def ports(mutant: IrMutant, rng: random.Random) -> str:
    port = _pick(rng, list(mutant.tree.iter("port")))
    action = rng.choice(["no_id", "garbage_id", "dim", "dim", "precision", "drop"])
    mutant.loop_only = False
    if action == "no_id":
        port.attrib.pop("id", None)
    elif action == "garbage_id":
        port.set("id", rng.choice(GARBAGE))
    elif action == "dim":
        dim = _pick(rng, list(port.iter("dim")))
        dim.text = rng.choice([*GARBAGE, "99999999999999999999", "?"])
        return f"dim {dim.text!r}"
    elif action == "precision":
        port.set("precision", rng.choice(["FP32", "I64", "BOOL", "FP4", "XYZ", ""]))
    else:
        port.getparent().remove(port)
    return f"port {dict(port.attrib)} {action}"


@TREE_MUTATIONS.register
def const_data(mutant: IrMutant, rng: random.Random) -> str:
    consts = [e for e in mutant.tree.iter("layer") if e.get("type") == "Const"]
    data = _pick(rng, [c.find("data") for c in consts if c.find("data") is not None])
    keys = ["offset", "size", "offset", "size", "element_type", "shape"]
    mutant.loop_only = False
    values = [*GARBAGE, "18446744073709551615", "1099511627776"]
    return f"Const data {_garble(data, keys, values, 0.15, rng)}"


@TREE_MUTATIONS.register
def layers(mutant: IrMutant, rng: random.Random) -> str:
    layer = _pick(rng, list(mutant.tree.iter("layer")))
    action = rng.choice(["type", "version", "id", "delete", "edge"])
    mutant.loop_only = False
    if action == "type":
        layer.set("type", rng.choice(["Loop", "TensorIterator", "If", "Fuzz", ""]))
    elif action == "version":
        layer.set("version", rng.choice(["opset1", "opset5", "opset99", "", "x"]))
    elif action == "id":
        layer.set("id", rng.choice(GARBAGE))
    elif action == "delete":
        layer.getparent().remove(layer)
    else:
        edge = _pick(rng, list(mutant.tree.iter("edge")))
        key = rng.choice(["from-layer", "from-port", "to-layer", "to-port"])
        edge.set(key, rng.choice(GARBAGE))
        return f"edge {key}={edge.get(key)!r}"
    return f"layer {layer.get('type')} '{layer.get('name')}' {action} -> {layer.get(action, '')!r}"


# -- textual -------------------------------------------------------------------------------------
@TEXT_MUTATIONS.register
def truncate(mutant: IrMutant, rng: random.Random) -> str:
    text = mutant.xml()
    mutant.text = text[: rng.randrange(len(text))]
    mutant.loop_only = False
    return f"XML truncated at byte {len(mutant.text)} of {len(text)}"


@TEXT_MUTATIONS.register
def doctype(mutant: IrMutant, rng: random.Random) -> str:
    text = mutant.xml()
    declaration, _, rest = text.partition(b"?>")
    dtd = rng.choice(DOCTYPES)
    use = b"&e;" if b"ENTITY e " in dtd else b"&c;" if b"ENTITY c" in dtd else b""
    rest = rest.replace(b"<net ", b"<net note='" + use + b"' ", 1) if use else rest
    mutant.text = declaration + b"?>\n" + dtd + rest
    mutant.loop_only = False
    return f"DOCTYPE {dtd[:40]!r}"


@TEXT_MUTATIONS.register_as("bin")
def bin_file(mutant: IrMutant, rng: random.Random) -> str:
    if not mutant.bin:
        raise NotApplicable
    mutant.bin = mutant.bin[: rng.randrange(len(mutant.bin))]
    mutant.loop_only = False
    return f".bin truncated to {len(mutant.bin)} bytes"
