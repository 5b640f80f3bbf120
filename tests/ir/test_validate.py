"""`ov-loops validate`: each invalid sample yields exactly its rule, valid samples none; unreadable
input exits 2 in one line; --show and --format json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

import ov_loops
from ov_loops.ir.rules import RULES, WARNING
from ov_loops.ir.validate import BIN_CODE, show
from tests import scan_scenarios
from tests.harness import F32, assert_one_line_error, run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
INVALID = sorted(path.stem for path in (SAMPLES / "invalid").glob("*.xml"))
VALID = sorted(path.stem for path in (SAMPLES / "valid").glob("*.xml"))


def test_every_rule_has_an_invalid_sample():
    assert set(INVALID) == {rule.code for rule in RULES} | {BIN_CODE}


@pytest.mark.parametrize("code", INVALID)
def test_invalid_sample_yields_exactly_its_rule(code):
    path = SAMPLES / "invalid" / f"{code}.xml"
    assert f"({code}" in path.read_text().splitlines()[1], "the sample names its defect"
    target = {rule.code: rule.target for rule in RULES}.get(code)
    report = ov_loops.validate(path, target)
    assert {finding.code for finding in report.findings} == {code}
    if target is not None:  # a device's rule runs for that device only
        assert ov_loops.validate(path).findings == []
    severity = {rule.code: rule.severity for rule in RULES}.get(code)
    expected_exit = 2 if code == BIN_CODE else 0 if severity == WARNING else 1
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


@pytest.mark.parametrize("name", ["model.onnx", "model.xml"])
def test_an_onnx_model_given_to_validate_is_named_as_one(tmp_path, name):
    """It said "not well-formed XML (Start tag expected ...)", sending the user to the XML."""
    model = tmp_path / name
    model.write_bytes((SAMPLES / "rnn_scan.onnx").read_bytes())
    result = run_cli("validate", str(model))
    assert_one_line_error(result, 2, f"{name}: an ONNX model")
    assert "ov-loops convert converts it" in result.stderr
    assert ("name it .onnx" in result.stderr) == name.endswith(".xml")


def test_the_bin_of_an_ir_given_to_validate_names_its_xml(tmp_path):
    xml = _copy_sample(tmp_path)
    result = run_cli("validate", str(xml.with_suffix(".bin")))
    assert_one_line_error(result, 2, f"the weights of the IR {xml}; give the .xml")


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


# -- issue 9 item 16: misses -------------------------------------------------------------------
def _mutated(tmp_path, name, mutate):
    """loop_all_ports with `mutate(root)` applied, written as tmp_path/name.xml."""
    tree = etree.parse(str(SAMPLES / "valid" / "loop_all_ports.xml"))
    mutate(tree.getroot())
    xml = tmp_path / f"{name}.xml"
    tree.write(str(xml))
    xml.with_suffix(".bin").write_bytes((SAMPLES / "valid" / "loop_all_ports.bin").read_bytes())
    return xml


def _loop(root):
    return next(layer for layer in root.iter("layer") if layer.get("type") == "Loop")


def _body_layer(root, name):
    return next(layer for layer in _loop(root).iter("layer") if layer.get("name") == name)


def _entry(root, predicate):
    return next(entry for entry in _loop(root).find("port_map") if predicate(entry))


def _set_dims(port, dims):
    for dim in port.findall("dim"):
        port.remove(dim)
    for value in dims:
        etree.SubElement(port, "dim").text = str(value)


def test_unmapped_loop_input_port_is_pm007(tmp_path):
    def drop_invariant(root):
        _loop(root).find("port_map").remove(
            _entry(root, lambda e: e.get("external_port_id") == "3")
        )

    findings = ov_loops.validate(_mutated(tmp_path, "unmapped", drop_invariant)).findings
    assert any(f.code == "PM007" and "input port 3" in f.message for f in findings)


@pytest.mark.parametrize("value", ["0.5", "1e2", "99999999999999999999", "-99999999999999999999"])
def test_non_integer_or_overflowing_axis_is_ax007(tmp_path, value):
    xml = _mutated(
        tmp_path,
        "axis",
        lambda r: _entry(r, lambda e: e.get("axis") is not None).set("axis", value),
    )
    assert {f.code for f in ov_loops.validate(xml).findings} == {"AX007"}


# -- issue 9 item 17: annotation-only mismatches are warnings, and OpenVINO runs them ----------
ANNOTATION_ONLY = {
    "back_edge_result_precision": lambda r: (
        _body_layer(r, "Result_12").find("input/port").set("precision", "FP16")
    ),
    "back_edge_result_dims": lambda r: _set_dims(
        _body_layer(r, "Result_12").find("input/port"), [3]
    ),
    "condition_result_precision": lambda r: (
        _body_layer(r, "Result_19").find("input/port").set("precision", "FP32")
    ),
    "loop_condition_port": lambda r: _loop(r).find("input/port[@id='1']").set("precision", "FP32"),
    "loop_trip_count_port": lambda r: _loop(r).find("input/port[@id='0']").set("precision", "FP32"),
    "sliced_parameter_port": lambda r: _set_dims(
        _body_layer(r, "x_part").find("output/port"), [1, 3]
    ),
    "counter_parameter_port": lambda r: (
        _body_layer(r, "i").find("output/port").set("precision", "FP32")
    ),
    "invariant_parameter_port": lambda r: _set_dims(
        _body_layer(r, "w_in").find("output/port"), [3]
    ),
    "concatenated_result_port": lambda r: _set_dims(
        _body_layer(r, "Result_16").find("input/port"), [2, 2]
    ),
}

RUN_IRS = """
import json, sys, numpy as np, openvino as ov
core = ov.Core()
config = json.loads(sys.argv[1])
for path in sys.argv[2:]:
    try:
        model = core.read_model(path)
        compiled = core.compile_model(model, "CPU", config)
        inputs = [np.full(list(p.get_shape()), 0.5, np.float32) for p in model.inputs]
        outputs = [np.asarray(v).ravel().tolist() for v in compiled(inputs).values()]
        print(path, "ran", outputs, flush=True)
    except Exception as exc:
        print(path, "refused", flush=True)
"""


def _run_in_openvino(paths: list[Path]) -> dict[str, str]:
    """Each IR's outputs (as text) or 'refused', compiled and run on CPU in a subprocess."""
    result = subprocess.run(
        [sys.executable, "-c", RUN_IRS, json.dumps(F32), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_annotation_only_mismatches_are_wr004_and_run_in_openvino(tmp_path):
    paths = [_mutated(tmp_path, name, mutate) for name, mutate in ANNOTATION_ONLY.items()]
    for path in paths:
        report = ov_loops.validate(path)
        assert {f.code for f in report.findings} == {"WR004"}, (path.stem, report.findings)
        assert report.exit_code == 0
    valid = SAMPLES / "valid" / "loop_all_ports.xml"
    outcomes = _run_in_openvino([valid, *paths])
    assert outcomes[str(valid)].startswith("ran ")
    for path in paths:
        assert outcomes[str(path)] == outcomes[str(valid)], path.stem


def test_type_errors_judged_from_layers_are_refused_by_openvino():
    codes = ["AX008", "BE004", "PM007", "PM008", "SP001", "SP002", "SP003", "AX007"]
    outcomes = _run_in_openvino([SAMPLES / "invalid" / f"{code}.xml" for code in codes])
    assert set(outcomes.values()) == {"refused"}, outcomes


def test_second_current_iteration_runs_in_openvino_but_gives_wrong_results(tmp_path):
    """SP004 follows the spec: OpenVINO loads the IR, feeds one counter and leaves the other 0."""

    def count_with_second(root):
        _loop(root).find("port_map").remove(
            _entry(root, lambda e: e.get("purpose") == "current_iteration")
        )
        second = etree.fromstring(etree.tostring(_body_layer(root, "i")))
        second.set("id", "16")
        _loop(root).find("body/layers").append(second)
        for purpose_id in ("0", "16"):
            etree.SubElement(
                _loop(root).find("port_map"),
                "input",
                external_port_id="-1",
                internal_layer_id=purpose_id,
                purpose="current_iteration",
            )
        for edge in _loop(root).find("body/edges"):
            if edge.get("from-layer") == "0":
                edge.set("from-layer", "16")

    xml = _mutated(tmp_path, "two_counters", count_with_second)
    assert {f.code for f in ov_loops.validate(xml).findings} == {"SP004"}
    valid = SAMPLES / "valid" / "loop_all_ports.xml"
    outcomes = _run_in_openvino([valid, xml])
    assert outcomes[str(xml)].startswith("ran ") and outcomes[str(xml)] != outcomes[str(valid)]


# -- issue 9 item 2: Loop outputs of rank 13 crash the CPU plugin -------------------------------
def _stacked_scans(depth: int):
    """`depth` nested Loops, each stacking its inner Loop's scan output: the outermost Loop's
    output has rank depth + 1."""
    import numpy as np
    import openvino as ov
    import openvino.opset15 as ops

    def level(remaining: int) -> ov.Model:
        value = ops.parameter([2], np.float32)
        zero = ops.constant(np.array([0], np.int64))
        if remaining == 0:
            step = ops.add(value, ops.constant(np.ones(2, np.float32)))
            return ov.Model([ops.result(step), ops.result(ops.unsqueeze(step, zero))], [value])
        body = level(remaining - 1)
        condition = ops.result(ops.constant(True))
        body.add_results([condition])
        loop = ops.loop(ops.constant(np.int64(2)), ops.constant(True))
        loop.set_function(body)
        loop.set_special_body_ports([-1, 2])
        loop.set_merged_input(
            body.get_parameters()[0], value.output(0), body.get_results()[0].output(0)
        )
        last = loop.get_iter_value(body.get_results()[0].output(0), -1)
        stacked = loop.get_concatenated_slices(body.get_results()[1].output(0), 0, 1, 1, -1, 0)
        return ov.Model([ops.result(last), ops.result(ops.unsqueeze(stacked, zero))], [value])

    return level(depth)


@pytest.mark.parametrize("depth, warned", [(11, False), (12, True)])
def test_twelve_nested_loops_stacking_scans_are_wr005(tmp_path, depth, warned):
    import openvino as ov

    xml = tmp_path / "stacked.xml"
    ov.save_model(_stacked_scans(depth), str(xml))
    report = ov_loops.validate(xml)
    assert report.loops == depth
    wr005 = [f for f in report.findings if f.code == "WR005"]
    assert [f.code for f in report.findings] == [f.code for f in wr005]
    assert len(wr005) == (1 if warned else 0)
    if warned:
        assert "rank 13" in wr005[0].message and wr005[0].layer_path.count("/") == 0


REFUSE_ONNX_OPENVINO_NUMPY = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("openvino", "onnx", "numpy", "onnxruntime"):
            raise ImportError("refused " + name)
sys.meta_path.insert(0, Refuse())
"""
VALIDATE_EACH = """
import json
import ov_loops
from ov_loops.ir.validate import show
print(json.dumps({
    path: [json.loads(ov_loops.validate(path).to_json()), show(path)] for path in sys.argv[1:]
}))
"""
CLI_MAIN = """
import runpy
sys.argv[0] = "ov-loops"
runpy.run_module("ov_loops", run_name="__main__")
"""


def _without_onnx_openvino_numpy(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", REFUSE_ONNX_OPENVINO_NUMPY + script, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_validator_imports_and_runs_with_lxml_alone(tmp_path):
    """The bundled samples and a mutated one give the same findings as in this process, with
    onnx, OpenVINO, numpy and onnxruntime refused by the import system."""

    def drop_invariant(root):
        _loop(root).find("port_map").remove(
            _entry(root, lambda e: e.get("external_port_id") == "3")
        )

    paths = [str(path) for path in sorted(SAMPLES.glob("*/*.xml"))]
    paths.append(str(_mutated(tmp_path, "unmapped", drop_invariant)))
    result = _without_onnx_openvino_numpy(VALIDATE_EACH, *paths)
    assert result.returncode == 0, result.stderr
    in_process = {
        path: [json.loads(ov_loops.validate(path).to_json()), show(path)] for path in paths
    }
    assert json.loads(result.stdout) == in_process
    assert any(finding["code"] == "PM007" for finding in in_process[paths[-1]][0]["findings"])


@pytest.mark.parametrize(
    "args",
    [
        ["invalid/AX001.xml"],
        ["valid/nested_loops.xml", "--show"],
        ["invalid/BE003.xml", "--format", "json"],
    ],
)
def test_cli_validate_runs_with_lxml_alone(args):
    argv = ["validate", str(SAMPLES / args[0]), *args[1:]]
    result = _without_onnx_openvino_numpy(CLI_MAIN, *argv)
    expected = run_cli(*argv)
    assert (result.returncode, result.stdout) == (expected.returncode, expected.stdout)
    assert result.stdout and not result.stderr


def test_wr006_sample_fails_in_openvino_and_the_converter_never_writes_it(tmp_path):
    """The sample (a Parameter read only for an unread output, before the iteration's) does not
    compile on OpenVINO 2026.4.1; the unrolled loop that showed the fault, converted at max,
    has its iteration Parameter first and no WR006."""
    sample = SAMPLES / "invalid" / "WR006.xml"
    assert _run_in_openvino([sample]) == {str(sample): "refused"}
    model, _ = scan_scenarios.scan_state_overwritten_by_an_unchanged_one()
    conversion = ov_loops.translate(model, optimize="max")
    assert any("unrolled" in done for loop in conversion.loops for done in loop.optimizations)
    path = tmp_path / "unrolled.xml"
    ov_loops.save(conversion.model, path)
    assert ov_loops.validate(path).findings == []


# -- issue 20 item 3: misses (IRs OpenVINO cannot read, or reads otherwise than written) --------
def test_st003_st004_sp005_samples_are_refused_by_openvino():
    """A current_iteration Parameter without its output port ("Can not find output port with id
    0"), shape="a,b" ("Cannot parse dimension"), no execution_condition entry ("node index is
    out of range"): all three were 0 findings."""
    codes = ["ST003", "ST004", "SP005"]
    outcomes = _run_in_openvino([SAMPLES / "invalid" / f"{code}.xml" for code in codes])
    assert set(outcomes.values()) == {"refused"}, outcomes


READ_OUTPUT_TYPES = """
import sys, openvino as ov
for path in sys.argv[1:]:
    try:
        model = ov.Core().read_model(path)
        print(path, ",".join(o.get_element_type().get_type_name() for o in model.outputs))
    except Exception:
        print(path, "refused")
"""


def _with_a_multiply_consumer(directory: Path) -> Path:
    """loop_all_ports whose last value is multiplied by acc0 before its Result."""
    import openvino as ov
    import openvino.opset15 as ops

    from ir_samples.make_ir_samples import loop_all_ports

    built = loop_all_ports()
    result = built.get_results()[0]
    product = ops.multiply(result.input_value(0), built.get_parameters()[0])
    result.input(0).replace_source_output(product.output(0))
    built.validate_nodes_and_infer_types()
    xml = directory / "consumer.xml"
    ov.save_model(built, str(xml), compress_to_fp16=False)
    return xml


def _condition_as_last_value(root):
    """The last-value output entry names the boolean execution_condition Result."""
    condition = _entry(root, lambda e: e.get("purpose") == "execution_condition")
    last = _entry(root, lambda e: e.tag == "output" and e.get("axis") is e.get("purpose") is None)
    last.set("internal_layer_id", condition.get("internal_layer_id"))


def test_pm009_openvino_changes_the_output_type_or_refuses_a_typed_consumer(tmp_path):
    """The last-value output names the boolean condition Result while its port says FP32 [2]:
    read as it is, OpenVINO makes the model's output boolean; read by a Multiply, it refuses."""
    sample = SAMPLES / "invalid" / "PM009.xml"
    port = _loop(etree.parse(str(sample)).getroot()).find("output/port[@id='5']")
    assert port.get("precision") == "FP32"
    consumer = _with_a_multiply_consumer(tmp_path)
    tree = etree.parse(str(consumer))
    _condition_as_last_value(tree.getroot())
    mutated = tmp_path / "consumer_pm009.xml"
    tree.write(str(mutated))
    mutated.with_suffix(".bin").write_bytes(consumer.with_suffix(".bin").read_bytes())
    assert {f.code for f in ov_loops.validate(mutated).findings} == {"PM009"}
    result = subprocess.run(
        [sys.executable, "-c", READ_OUTPUT_TYPES, str(sample), str(mutated), str(consumer)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert outcomes == {
        str(sample): "boolean,f32",
        str(mutated): "refused",
        str(consumer): "f32,f32",
    }, result.stderr[-2000:]


# -- issue 20 item 4: false alarms (IRs OpenVINO reads, runs and computes as the reference) -----
def _weighted_scan():
    """s <- s + x_t * w over the rows of x (w captured): a Loop with a sliced, an invariant and
    a merged input, which the CPU computes right (loop_all_ports it does not: see README)."""
    from tests.onnx_builders import T, graph, model, node, typed

    body = graph(
        [
            node("Mul", ["x_t", "w"], ["xw"]),
            node("Add", ["s_in", "xw"], ["s_out"]),
            node("Identity", ["s_out"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("y_t", T.FLOAT, [2])],
        name="body",
    )
    main = graph(
        [node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1, name="scan")],
        [typed("s0", T.FLOAT, [2]), typed("x", T.FLOAT, [3, 2]), typed("w", T.FLOAT, [2])],
        [typed("s", T.FLOAT, [2]), typed("ys", T.FLOAT, [3, 2])],
    )
    return model(main)


def _parameter_of(root, kind: str):
    """The body Parameter of the Loop's sliced, invariant or merged input."""
    loop = _loop(root)
    merged = {edge.get("to-layer") for edge in loop.find("back_edges")}
    for entry in loop.find("port_map").findall("input"):
        internal = entry.get("internal_layer_id")
        found = (
            "sliced"
            if entry.get("axis") is not None
            else "merged"
            if internal in merged
            else "invariant"
        )
        if found == kind:
            return next(
                layer for layer in loop.find("body").iter("layer") if layer.get("id") == internal
            )
    raise AssertionError(kind)


def _declare(layer, dims: list[int]) -> None:
    layer.find("data").set("shape", ",".join(map(str, dims)))
    _set_dims(layer.find("output/port"), dims)


def _unused_output_entry(root):
    loop = _loop(root)
    last = next(e for e in loop.find("port_map").findall("output") if e.get("axis") is None)
    etree.SubElement(
        loop.find("port_map"),
        "output",
        external_port_id="-1",
        internal_layer_id=last.get("internal_layer_id"),
    )


REINFERRED = {
    "sliced_declared_1x1": ({"AX005"}, lambda r: _declare(_parameter_of(r, "sliced"), [1, 1])),
    "sliced_declared_rank_1": ({"AX005"}, lambda r: _declare(_parameter_of(r, "sliced"), [2])),
    "invariant_declared_1": ({"WR008"}, lambda r: _declare(_parameter_of(r, "invariant"), [1])),
    "merged_declared_1": ({"WR008"}, lambda r: _declare(_parameter_of(r, "merged"), [1])),
    "output_entry_minus_1": ({"WR007"}, _unused_output_entry),
}


@pytest.mark.parametrize("name", list(REINFERRED))
def test_reinferred_shapes_and_unmapped_output_entries_are_warnings_and_run_right(tmp_path, name):
    """AX005 (was an error), WR008 (PM008 / BE004 on shapes, were errors) and WR007 (PM003, was
    an error): OpenVINO reads the IR, runs it and matches the IR reference on the CPU."""
    codes, mutate = REINFERRED[name]
    ov_loops.save(ov_loops.convert(_weighted_scan()), tmp_path / "base.xml")
    tree = etree.parse(str(tmp_path / "base.xml"))
    mutate(tree.getroot())
    xml = tmp_path / f"{name}.xml"
    tree.write(str(xml))
    xml.with_suffix(".bin").write_bytes((tmp_path / "base.bin").read_bytes())
    report = ov_loops.validate(xml)
    assert {f.code for f in report.findings} == codes and report.exit_code == 0, report.findings
    assert all(f.severity == WARNING for f in report.findings)
    assert ov_loops.check(xml).ok


def test_an_input_entry_minus_1_without_purpose_stays_pm003_openvino_feeds_it_zeros(tmp_path):
    def drop_purpose(root):
        del _entry(root, lambda e: e.get("purpose") == "current_iteration").attrib["purpose"]

    xml = _mutated(tmp_path, "no_purpose", drop_purpose)
    assert {f.code for f in ov_loops.validate(xml).findings} == {"PM003"}
    valid = SAMPLES / "valid" / "loop_all_ports.xml"
    outcomes = _run_in_openvino([valid, xml])
    assert outcomes[str(xml)].startswith("ran ") and outcomes[str(xml)] != outcomes[str(valid)]


@pytest.mark.parametrize("attribute", ["part_size", "start", "end", "stride"])
def test_slicing_attributes_are_judged_only_on_entries_with_an_axis(tmp_path, attribute):
    """OpenVINO reads start, end, stride and part_size only on a port_map entry with an axis:
    on one without (a merged input) part_size="" runs and matches the IR reference (a false
    alarm of the issue-20 fuzz run), on a sliced entry it makes the IR unreadable."""
    xml = _copy_sample(tmp_path)
    text = xml.read_text()
    merged = '<input external_port_id="2" internal_layer_id="1" />'
    xml.write_text(text.replace(merged, merged.replace(" />", f' {attribute}="" />')))
    assert ov_loops.validate(xml).findings == []
    sliced = re.search(r'<input axis="0" external_port_id="4"[^>]*>', text).group(0)
    broken = re.sub(f'{attribute}="[^"]*"', f'{attribute}=""', sliced)
    xml.write_text(text.replace(sliced, broken))
    assert [finding.code for finding in ov_loops.validate(xml).findings] == ["AX007"]


@pytest.mark.parametrize(
    "sample", [f"invalid/{code}" for code in INVALID] + [f"valid/{n}" for n in VALID]
)
def test_parsing_once_finds_what_parsing_twice_finds(sample, monkeypatch):
    """Loop layers' XML of up to ONE_PASS_ELEMENTS is held while the IR is parsed once; more
    is parsed again (bounded memory): the same findings, in the same order, either way."""
    from ov_loops.ir import validate as validating

    path = SAMPLES / f"{sample}.xml"
    once = ov_loops.validate(path, "GPU")
    monkeypatch.setattr(validating, "ONE_PASS_ELEMENTS", 0)
    twice = ov_loops.validate(path, "GPU")
    assert (once.loops, once.findings) == (twice.loops, twice.findings)
    assert once.loops > 0 or sample.startswith("invalid/")
