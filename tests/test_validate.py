"""`ov-loops validate`: each invalid sample yields exactly its rule, valid samples none; unreadable
input exits 2 in one line; --show and --format json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ov_loops
from ov_loops.ir.rules import RULES
from ov_loops.ir.validate import BIN_CODE
from tests.test_cli import assert_one_line_error, run_cli

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples"
INVALID = sorted(path.stem for path in (SAMPLES / "invalid").glob("*.xml"))
VALID = sorted(path.stem for path in (SAMPLES / "valid").glob("*.xml"))


def test_every_rule_has_an_invalid_sample():
    assert set(INVALID) == {rule.code for rule in RULES} | {BIN_CODE}


@pytest.mark.parametrize("code", INVALID)
def test_invalid_sample_yields_exactly_its_rule(code):
    path = SAMPLES / "invalid" / f"{code}.xml"
    assert f"({code}" in path.read_text().splitlines()[1], "the sample names its defect"
    report = ov_loops.validate(path)
    assert {finding.code for finding in report.findings} == {code}
    expected_exit = 2 if code == BIN_CODE else 0 if code.startswith("WR") else 1
    assert report.exit_code == expected_exit


@pytest.mark.parametrize("name", VALID)
def test_valid_sample_has_no_finding(name):
    report = ov_loops.validate(SAMPLES / "valid" / f"{name}.xml")
    assert report.loops >= 1 and report.findings == []


def test_cli_text_output_names_rule_layer_entry_and_line():
    result = run_cli("validate", str(SAMPLES / "invalid" / "AX001.xml"))
    assert result.returncode == 1, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{SAMPLES / 'invalid' / 'AX001.xml'}:")
    assert "error AX001 layer" in first and "'accumulate'" in first and 'axis="-1"' in first
    assert result.stdout.splitlines()[-1].endswith("1 loop layer(s), 1 error(s), 0 warning(s)")


def test_cli_json_output():
    result = run_cli("validate", str(SAMPLES / "invalid" / "BE003.xml"), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    (finding,) = report["findings"]
    assert finding["code"] == "BE003" and finding["severity"] == "error"
    assert finding["layer_name"] == "accumulate" and finding["entry"].startswith("<edge")
    assert report["errors"] == 1 and report["loops"] == 1


def test_cli_warnings_only_exit_0_and_valid_exit_0():
    assert run_cli("validate", str(SAMPLES / "invalid" / "WR001.xml")).returncode == 0
    assert run_cli("validate", str(SAMPLES / "valid" / "loop_all_ports.xml")).returncode == 0


def test_show_prints_each_loop_nested_loops_indented():
    result = run_cli("validate", str(SAMPLES / "valid" / "nested_loops.xml"), "--show")
    assert result.returncode == 0, result.stderr
    headers = [line for line in result.stdout.splitlines() if "Loop '" in line]
    indents = [len(line) - len(line.lstrip()) for line in headers]
    assert indents == [0, 2, 4], headers
    assert any(
        line.strip().startswith("merged") and "<- back edge from body" in line
        for line in result.stdout.splitlines()
    )
    assert any(line.strip().startswith("current_iteration") for line in result.stdout.splitlines())


def test_show_prints_every_port_kind():
    result = run_cli("validate", str(SAMPLES / "valid" / "loop_all_ports.xml"), "--show")
    kinds = {line.split()[0] for line in result.stdout.splitlines()[1:-1]}
    assert kinds == {
        "merged",
        "invariant",
        "sliced",
        "last-value",
        "concatenated",
        "current_iteration",
        "execution_condition",
    }
    tensor_iterator = run_cli("validate", str(SAMPLES / "valid" / "tensor_iterator.xml"), "--show")
    assert tensor_iterator.stdout.startswith("TensorIterator '")


def _copy_sample(tmp_path, name="loop_all_ports"):
    xml = tmp_path / f"{name}.xml"
    xml.write_bytes((SAMPLES / "valid" / f"{name}.xml").read_bytes())
    (tmp_path / f"{name}.bin").write_bytes((SAMPLES / "valid" / f"{name}.bin").read_bytes())
    return xml


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "not well-formed XML"),
        (b"this is not xml", "not well-formed XML"),
        (b"<net><layers><layer id='0'", "not well-formed XML"),
        (b"<model/>", "not an OpenVINO IR"),
        (
            b'<?xml version="1.0"?><!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>'
            b"<net><layers/></net>",
            "DTDs and entity declarations are not allowed",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE net SYSTEM "http://192.0.2.1/evil.dtd"><net/>',
            "DTDs and entity declarations are not allowed",
        ),
    ],
    ids=["empty", "text", "truncated", "not_ir", "entity_expansion", "external_dtd"],
)
def test_unreadable_ir_exits_2_in_one_line(tmp_path, content, fragment):
    xml = tmp_path / "bad.xml"
    xml.write_bytes(content)
    assert_one_line_error(run_cli("validate", str(xml)), 2, fragment)


def test_truncated_real_ir_exits_2(tmp_path):
    xml = _copy_sample(tmp_path)
    data = xml.read_bytes()
    xml.write_bytes(data[: len(data) // 2])
    assert_one_line_error(run_cli("validate", str(xml)), 2, "not well-formed XML")


def test_missing_xml_and_missing_bin_exit_2(tmp_path):
    assert_one_line_error(run_cli("validate", str(tmp_path / "nope.xml")), 2, "no such file")
    xml = _copy_sample(tmp_path)
    xml.with_suffix(".bin").unlink()
    assert_one_line_error(run_cli("validate", str(xml)), 2, "loop_all_ports.bin: no such file")


def test_short_bin_exits_2_naming_the_const(tmp_path):
    xml = _copy_sample(tmp_path)
    xml.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes()[:4])
    result = run_cli("validate", str(xml))
    assert result.returncode == 2
    assert "BIN001" in result.stdout and "lies outside the 4-byte .bin" in result.stdout
