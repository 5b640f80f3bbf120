"""`ov-loops validate` on garbage IR: findings or one InputError line (exit 2), never a traceback.

Regression tests for the tracebacks of issue 9 (item 10), each named for its class, and a
structure-aware mutation test: attributes of port_map entries, back edges, ports, dims, edges
and Const data in the valid samples deleted, made non-integer, huge, negative or swapped, and
elements removed.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lxml import etree

import ov_loops
from ov_loops.errors import InputError
from ov_loops.ir.validate import show
from tests.harness import assert_one_line_error, run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
VALID = sorted((SAMPLES / "valid").glob("*.xml"))
MUTANTS = 1000  # mutated samples the campaign tries (each one to three mutations)


def _mutated(tmp_path: Path, mutate, name: str = "loop_all_ports", keep_bin: bool = True) -> Path:
    """The valid sample `name` with `mutate(root)` applied, written to tmp_path."""
    tree = etree.parse(str(SAMPLES / "valid" / f"{name}.xml"))
    mutate(tree.getroot())
    xml = tmp_path / f"{name}.xml"
    tree.write(str(xml))
    if keep_bin:
        xml.with_suffix(".bin").write_bytes((SAMPLES / "valid" / f"{name}.bin").read_bytes())
    return xml


def _loop(root):
    return next(layer for layer in root.iter("layer") if layer.get("type") == "Loop")


def _body_layer(root, name):
    return next(layer for layer in _loop(root).iter("layer") if layer.get("name") == name)


def _codes(xml: Path) -> set[str]:
    return {finding.code for finding in ov_loops.validate(xml).findings}


# -- item 10: each traceback class -------------------------------------------------------------
def test_top_level_loop_without_body_is_st001_not_a_traceback(tmp_path):
    xml = _mutated(tmp_path, lambda r: _loop(r).remove(_loop(r).find("body")))
    assert _codes(xml) == {"ST001"}
    result = run_cli("validate", str(xml))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "error ST001" in result.stdout and "no <body>" in result.stdout


def test_show_on_loop_without_body_prints_its_ports(tmp_path):
    xml = _mutated(tmp_path, lambda r: _loop(r).remove(_loop(r).find("body")))
    lines = show(xml)
    assert lines[0].startswith("Loop 'accumulate'") and "(no <body> with <layers>)" in lines[1]
    assert any(line.strip().startswith("sliced") for line in lines)


def test_sp001_on_counter_parameter_without_port_judges_its_data(tmp_path):
    def drop_port(root):
        counter = _body_layer(root, "i")
        counter.remove(counter.find("output"))

    assert _codes(_mutated(tmp_path, drop_port)) == {"ST003"}  # the edge from its port 0

    def drop_port_and_make_f32(root):
        drop_port(root)
        _body_layer(root, "i").find("data").set("element_type", "f32")

    assert _codes(_mutated(tmp_path, drop_port_and_make_f32)) == {"ST003", "SP001"}


@pytest.mark.parametrize("stride", ["x", "1.5", "99999999999999999999", ""])
def test_wr003_on_non_integer_stride_is_ax007(tmp_path, stride):
    def set_stride(root):
        output = next(e for e in _loop(root).find("port_map") if e.get("axis") is not None)
        output.set("stride", stride)

    assert _codes(_mutated(tmp_path, set_stride)) == {"AX007"}


@pytest.mark.parametrize("size", ["x", "8.0", "-8", "99999999999999999999"])
def test_non_integer_const_size_without_bin_is_bin001(tmp_path, size):
    def set_sizes(root):
        for layer in root.iter("layer"):
            if layer.get("type") == "Const":
                layer.find("data").set("size", size)

    xml = _mutated(tmp_path, set_sizes, keep_bin=False)
    report = ov_loops.validate(xml)
    assert {finding.code for finding in report.findings} == {"BIN001"}
    assert report.exit_code == 2


def test_malformed_port_or_edge_is_one_input_error_line(tmp_path):
    xml = _mutated(tmp_path, lambda r: _loop(r).find("input/port/..").find("port").set("id", "a"))
    assert_one_line_error(run_cli("validate", str(xml)), 2, "malformed <port>")
    xml = _mutated(tmp_path, lambda r: r.find("edges/edge").set("to-port", "1e3"))
    assert_one_line_error(run_cli("validate", str(xml)), 2, "malformed <edge>")


# -- mutation ----------------------------------------------------------------------------------
GARBAGE = ("", "x", "1.5", "-7", "-1", "99999999999999999999999", "2147483648", "0x10", " 3 ")
INT_ATTRIBUTES = {
    "input": ("external_port_id", "internal_layer_id", "axis", "start", "end", "stride"),
    "output": ("external_port_id", "internal_layer_id", "axis", "part_size", "purpose"),
    "edge": ("from-layer", "to-layer", "from-port", "to-port"),
    "port": ("id", "precision"),
    "data": ("offset", "size", "shape", "element_type"),
    "layer": ("id", "type"),
}
REMOVABLE = (
    *("body", "then_body", "else_body", "layers", "port_map", "back_edges"),
    *("port", "dim", "edge", "input", "output", "data"),
)


def _mutate_once(root, rng: random.Random) -> None:
    """One structure-aware change: an element removed, a <dim> garbled, or an attribute deleted,
    garbled or swapped with a peer's (nothing when nothing of the chosen kind is left)."""
    choice = rng.random()
    if choice < 0.15:
        elements = [e for e in root.iter(*REMOVABLE) if e.getparent() is not None]
        if elements:
            element = rng.choice(elements)
            element.getparent().remove(element)
    elif choice < 0.25:
        dims = list(root.iter("dim"))
        if dims:
            rng.choice(dims).text = rng.choice(GARBAGE)
    else:
        elements = list(root.iter(*INT_ATTRIBUTES))
        if elements:
            _mutate_attribute(root, rng.choice(elements), rng)


def _mutate_attribute(root, element, rng: random.Random) -> None:
    name = rng.choice(INT_ATTRIBUTES[element.tag])
    action = rng.random()
    if action < 0.2:
        element.attrib.pop(name, None)
    elif action < 0.4:
        peers = [e for e in root.iter(element.tag) if name in e.attrib]
        element.set(name, rng.choice(peers).get(name) if peers else "0")
    else:
        element.set(name, rng.choice(GARBAGE))


def _survives(xml: Path) -> None:
    """validate and show raise nothing but InputError."""
    try:
        ov_loops.validate(xml)
        show(xml)
    except InputError:
        pass


def test_mutated_samples_give_findings_or_input_error_never_an_exception(tmp_path):
    rng = random.Random(9)
    sources = {path: etree.parse(str(path)) for path in VALID}
    for tried in range(MUTANTS):  # a fixed count: the same mutants on every machine
        source = rng.choice(VALID)
        root = etree.fromstring(etree.tostring(sources[source]))
        for _ in range(rng.randint(1, 3)):
            _mutate_once(root, rng)
        xml = tmp_path / f"{source.stem}.xml"
        xml.write_bytes(etree.tostring(root))
        xml.with_suffix(".bin").write_bytes(source.with_suffix(".bin").read_bytes())
        try:
            _survives(xml)
        except Exception as exc:  # report the mutant that broke it
            kept = tmp_path / f"mutant_{tried}.xml"
            kept.write_bytes(xml.read_bytes())
            raise AssertionError(f"{type(exc).__name__}: {exc} on {kept}") from exc


def test_mutated_samples_never_print_a_traceback_on_the_cli(tmp_path):
    rng = random.Random(17)
    for index in range(4):
        root = etree.parse(str(SAMPLES / "valid" / "nested_loops.xml")).getroot()
        for _ in range(3):
            _mutate_once(root, rng)
        xml = tmp_path / f"mutant_{index}.xml"
        xml.write_bytes(etree.tostring(root))
        xml.with_suffix(".bin").write_bytes((SAMPLES / "valid" / "nested_loops.bin").read_bytes())
        result = run_cli("validate", str(xml), "--show")
        assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr
