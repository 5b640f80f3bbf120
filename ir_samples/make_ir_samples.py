"""Regenerate ir_samples/valid/ and ir_samples/invalid/: python ir_samples/make_ir_samples.py

valid/: Loop-5 layers using every kind of port (sliced forward and backward, merged, invariant,
concatenated, last value, current_iteration, execution_condition), nested Loops, a Loop inside
an If, and a TensorIterator-1 (as OpenVINO's own ONNX frontend writes it for a Scan).

invalid/: one file per validator rule, each the `loop_all_ports` sample with one defect, named
in a comment at the top of the file. tests/ir/test_validate.py checks that each yields exactly its
rule and that the valid samples yield no error.
"""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from lxml import etree

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ov_loops  # noqa: E402
from ov_loops.ir.rules import RULES, WARNING  # noqa: E402
from tests import loop_scenarios, scan_scenarios  # noqa: E402


def loop_all_ports(reverse: bool = False) -> ov.Model:
    """acc += x_t * w + i each iteration; every Loop-5 port kind once."""
    i = ops.parameter([], np.int64, name="i")
    acc_in = ops.parameter([2], np.float32, name="acc_in")
    w_in = ops.parameter([2], np.float32, name="w_in")
    x_part = ops.parameter([1, 2], np.float32, name="x_part")
    x_t = ops.squeeze(x_part, ops.constant(np.array([0], np.int64)))
    step = ops.add(ops.multiply(x_t, w_in), ops.convert(i, ov.Type.f32))
    acc_out = ops.add(acc_in, step)
    acc_result = ops.result(acc_out)
    stacked = ops.result(ops.unsqueeze(acc_out, ops.constant(np.array([0], np.int64))))
    keep = ops.result(ops.constant(True))
    body = ov.Model([acc_result, stacked, keep], [i, acc_in, w_in, x_part], "body")

    acc0 = ops.parameter([2], np.float32, name="acc0")
    w = ops.parameter([2], np.float32, name="w")
    x = ops.parameter([3, 2], np.float32, name="x")
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_friendly_name("accumulate")
    loop.set_function(body)
    loop.set_special_body_ports([0, 2])
    loop.set_merged_input(acc_in, acc0.output(0), acc_result.output(0))
    loop.set_invariant_input(w_in, w.output(0))
    if reverse:
        loop.set_sliced_input(x_part, x.output(0), -1, -1, 1, 0, 0)
    else:
        loop.set_sliced_input(x_part, x.output(0), 0, 1, 1, -1, 0)
    last = loop.get_iter_value(acc_result.output(0), -1)
    history = loop.get_concatenated_slices(stacked.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, history], [acc0, w, x], "loop_all_ports")


def valid_samples() -> dict[str, ov.Model]:
    nested, _ = loop_scenarios.loop_nested_three_deep_with_captures()
    in_if, _ = loop_scenarios.loop_inside_if_branches()
    scan, _ = scan_scenarios.scan_reverse_axis1_prepend()
    running_sum, _ = scan_scenarios.scan_forward_running_sum()
    return {
        "loop_all_ports": loop_all_ports(),
        "loop_reverse_sliced_input": loop_all_ports(reverse=True),
        "nested_loops": ov_loops.convert(nested),
        "loop_inside_if": ov_loops.convert(in_if),
        "scan_reverse_axis1_prepend": ov_loops.convert(scan),
        "tensor_iterator": ov.convert_model(io.BytesIO(running_sum.SerializeToString())),
    }


# -- invalid samples: (rule, defect, mutation of the loop_all_ports XML) ---------------------
def _loop(root):
    return next(layer for layer in root.iter("layer") if layer.get("type") == "Loop")


def _entry(root, kind, internal_name):
    loop = _loop(root)
    ids = {layer.get("name"): layer.get("id") for layer in loop.find("body").iter("layer")}
    return next(
        e
        for e in loop.find("port_map").findall(kind)
        if e.get("internal_layer_id") == ids[internal_name]
    )


def _body_layer(root, name):
    return next(
        layer for layer in _loop(root).find("body").iter("layer") if layer.get("name") == name
    )


def _body_id(root, type_name):
    return next(
        layer.get("id")
        for layer in _loop(root).find("body").iter("layer")
        if layer.get("type") == type_name
    )


def _sliced_output(root):
    return next(
        e for e in _loop(root).find("port_map").findall("output") if e.get("axis") is not None
    )


def _set_precision(layer, precision, element_type):
    for port in layer.iter("port"):
        port.set("precision", precision)
    data = layer.find("data")
    if data is not None and "element_type" in data.attrib:
        data.set("element_type", element_type)


def _last_value_output(root):
    return next(
        e
        for e in _loop(root).find("port_map").findall("output")
        if e.get("axis") is None and e.get("purpose") is None
    )


def _condition_entry(root):
    return next(
        e
        for e in _loop(root).find("port_map").findall("output")
        if e.get("purpose") == "execution_condition"
    )


INVALID = {
    "ST001": ("the Loop has no <port_map>", lambda r: _loop(r).remove(_loop(r).find("port_map"))),
    "ST002": (
        "the Loop's <body> has no <edges>",
        lambda r: _loop(r).find("body").remove(_loop(r).find("body").find("edges")),
    ),
    "ST005": (
        "the body Result of acc_out (Result_12) lost its <input> and the edge feeding it",
        lambda r: _result_without_input(r),
    ),
    "PM001": (
        "the invariant input's internal_layer_id names a Const, not a Parameter (and the "
        "Parameter it fed is gone)",
        lambda r: _redirect_invariant(r, _body_id(r, "Const")),
    ),
    "PM002": (
        "the last-value output's internal_layer_id names a Parameter, not a Result",
        lambda r: _last_value_output(r).set("internal_layer_id", _body_layer(r, "w_in").get("id")),
    ),
    "PM003": (
        "an extra last-value output entry maps Result_12 to external port 9, no port of the Loop",
        lambda r: _add_entry(r, "output", external_port_id="9", internal_layer_id=_acc_result(r)),
    ),
    "PM004": (
        "an extra last-value output entry maps Result_12 to external port 5, mapped already",
        lambda r: _add_entry(r, "output", external_port_id="5", internal_layer_id=_acc_result(r)),
    ),
    "PM005": (
        "body Parameter acc_in is fed twice: the invariant entry points at it too, and "
        "the Parameter it fed is gone",
        lambda r: _pm005(r),
    ),
    "PM006": (
        "the current_iteration entry was deleted: the counter Parameter is fed by nothing",
        lambda r: _loop(r).find("port_map").remove(_entry(r, "input", "i")),
    ),
    "AX001": (
        "the sliced input has axis -1",
        lambda r: _entry(r, "input", "x_part").set("axis", "-1"),
    ),
    "AX002": (
        "the sliced input has axis 2 on a rank-2 input",
        lambda r: _entry(r, "input", "x_part").set("axis", "2"),
    ),
    "AX003": (
        "the concatenated output has stride 2 with part_size 1",
        lambda r: _sliced_output(r).set("stride", "2"),
    ),
    "AX004": (
        "the concatenated output has stride 0",
        lambda r: _sliced_output(r).set("stride", "0"),
    ),
    "AX005": (
        "the sliced part is [1,2] but the body Parameter is declared [3,2]: OpenVINO re-infers "
        "it and runs the IR",
        lambda r: _pm_shape(_body_layer(r, "x_part"), "3,2", ["3", "2"]),
    ),
    "AX006": (
        "the concatenated output port is annotated [?,5] but the body Result is [1,2]",
        lambda r: _output_dim(r, "5"),
    ),
    "BE001": (
        "the back edge starts at a Parameter (w_in), not a Result",
        lambda r: (
            _loop(r).find("back_edges/edge").set("from-layer", _body_layer(r, "w_in").get("id"))
        ),
    ),
    "BE002": (
        "the back edge ends at a Const, not a Parameter",
        lambda r: _loop(r).find("back_edges/edge").set("to-layer", _body_id(r, "Const")),
    ),
    "BE003": (
        "body Parameter acc_in has a second back edge, from a second Result of acc_out",
        lambda r: _second_accumulator_edge(r),
    ),
    "BE004": (
        "the back edge joins an f32 Result to an f16 Parameter",
        lambda r: _set_precision(_body_layer(r, "acc_in"), "FP16", "f16"),
    ),
    "SP001": (
        "the current_iteration Parameter is f32",
        lambda r: _set_precision(_body_layer(r, "i"), "FP32", "f32"),
    ),
    "SP002": (
        "execution_condition names the f32 accumulator Result",
        lambda r: _condition_entry(r).set(
            "internal_layer_id", _last_value_output(r).get("internal_layer_id")
        ),
    ),
    "SP003": (
        "the Const feeding the Loop's input port 1 (execution condition) is an i64",
        lambda r: _int64_condition(_producer(r, 1)),
    ),
    "PM007": (
        "the last-value output entry was deleted: output port 5 is mapped by nothing",
        lambda r: _loop(r).find("port_map").remove(_last_value_output(r)),
    ),
    "PM008": (
        "the invariant input is f32 but its body Parameter w_in is declared f16",
        lambda r: _set_precision(_body_layer(r, "w_in"), "FP16", "f16"),
    ),
    "PM009": (
        "the last-value output entry names the boolean condition Result; output port 5 is f32",
        lambda r: _last_value_output(r).set(
            "internal_layer_id", _condition_entry(r).get("internal_layer_id")
        ),
    ),
    "ST003": (
        "the current_iteration Parameter i has no <output> port; a body edge starts there",
        lambda r: _body_layer(r, "i").remove(_body_layer(r, "i").find("output")),
    ),
    "ST004": (
        'the sliced body Parameter x_part has shape="a,b"',
        lambda r: _body_layer(r, "x_part").find("data").set("shape", "a,b"),
    ),
    "SP005": (
        "the execution_condition entry was deleted (its body Result is mapped by nothing)",
        lambda r: _loop(r).find("port_map").remove(_condition_entry(r)),
    ),
    "WR009": (
        "the back edge into acc_in is listed twice",
        lambda r: (
            _loop(r)
            .find("back_edges")
            .append(etree.fromstring(etree.tostring(_loop(r).find("back_edges/edge"))))
        ),
    ),
    "WR007": (
        "an extra output entry maps Result_12 to external_port_id -1 without a purpose",
        lambda r: _add_entry(r, "output", external_port_id="-1", internal_layer_id=_acc_result(r)),
    ),
    "WR008": (
        "the invariant input is [2] but its body Parameter w_in is declared [1]: OpenVINO "
        "re-infers it and runs the IR",
        lambda r: _pm_shape(_body_layer(r, "w_in"), "1", ["1"]),
    ),
    "AX007": (
        "the sliced input's stride 99999999999999999999 overflows int64",
        lambda r: _entry(r, "input", "x_part").set("stride", "99999999999999999999"),
    ),
    "AX008": (
        "the concatenated output has part_size 2 and stride 2 but the body Result is [1,2]",
        lambda r: [_sliced_output(r).set(key, "2") for key in ("part_size", "stride")],
    ),
    "SP004": (
        "a second body Parameter (i2, i64 scalar) also has purpose current_iteration",
        lambda r: _second_counter(r),
    ),
    "WR004": (
        "only the back-edge Result's <port> annotation says f16 (its producer and the "
        "Parameter are f32)",
        lambda r: _body_layer(r, "Result_12").find("input/port").set("precision", "FP16"),
    ),
    "WR005": (
        "the layer feeding the concatenated Result makes a rank-13 value",
        lambda r: _set_dims(_body_layer(r, "Unsqueeze_15").find("output/port"), ["1"] * 12 + ["2"]),
    ),
    "BIN001": (
        "a Const's data lies beyond the end of the .bin",
        lambda r: (
            next(layer for layer in r.iter("layer") if layer.get("type") == "Const")
            .find("data")
            .set("offset", "100000")
        ),
    ),
    "WR003": (
        "the concatenated output is reversed (start -1, stride -1, end 0)",
        lambda r: [
            _sliced_output(r).set(k, v)
            for k, v in (("start", "-1"), ("stride", "-1"), ("end", "0"))
        ],
    ),
}


def _producer(root, port):
    """The main-graph layer feeding the Loop's input `port`."""
    loop = _loop(root)
    edge = next(
        e
        for e in root.find("edges")
        if e.get("to-layer") == loop.get("id") and e.get("to-port") == str(port)
    )
    return next(layer for layer in root.find("layers") if layer.get("id") == edge.get("from-layer"))


def _int64_condition(const):
    """Make the condition Const an i64 reading the trip count's 8 bytes (3, so not false)."""
    _set_precision(const, "I64", "i64")
    const.find("data").attrib.update({"offset": "0", "size": "8"})


def _acc_result(root):
    return _body_layer(root, "Result_12").get("id")


def _add_entry(root, kind, **attrs):
    etree.SubElement(_loop(root).find("port_map"), kind, attrs)


def _second_counter(root):
    counter = etree.fromstring(etree.tostring(_body_layer(root, "i")))
    counter.set("id", "16")
    counter.set("name", "i2")
    counter.tail = None
    _loop(root).find("body/layers").append(counter)
    _add_entry(
        root, "input", external_port_id="-1", internal_layer_id="16", purpose="current_iteration"
    )


def _second_accumulator_edge(root):
    """A copy of acc_out's Result (id 16, fed by the same port) and a back edge from it."""
    body = _loop(root).find("body")
    result = etree.fromstring(etree.tostring(_body_layer(root, "Result_12")))
    result.set("id", "16")
    result.set("name", "Result_12_again")
    result.tail = None
    body.find("layers").append(result)
    feed = next(edge for edge in body.find("edges") if edge.get("to-layer") == _acc_result(root))
    etree.SubElement(body.find("edges"), "edge", {**feed.attrib, "to-layer": "16"})
    etree.SubElement(
        _loop(root).find("back_edges"),
        "edge",
        {"from-layer": "16", "to-layer": _body_layer(root, "acc_in").get("id")},
    )


def _result_without_input(root):
    result = _body_layer(root, "Result_12")
    result.remove(result.find("input"))
    edges = _loop(root).find("body/edges")
    edges.remove(next(edge for edge in edges if edge.get("to-layer") == result.get("id")))


def _set_dims(port, dims):
    for dim in port.findall("dim"):
        port.remove(dim)
    for value in dims:
        etree.SubElement(port, "dim").text = value


def _pm005(root):
    _redirect_invariant(root, _body_layer(root, "acc_in").get("id"))


def _redirect_invariant(root, internal_id):
    """Point the invariant entry at another body layer and remove the Parameter it fed; what
    that Parameter fed reads the other layer instead (so no port is left without an edge)."""
    loop = _loop(root)
    w_in = _body_layer(root, "w_in")
    _entry(root, "input", "w_in").set("internal_layer_id", internal_id)
    body = loop.find("body")
    body.find("layers").remove(w_in)
    target = next(layer for layer in body.iter("layer") if layer.get("id") == internal_id)
    target_port = target.find("output/port").get("id")
    for edge in body.find("edges"):
        if edge.get("from-layer") == w_in.get("id"):
            edge.set("from-layer", internal_id)
            edge.set("from-port", target_port)


def _pm_shape(layer, shape, dims):
    layer.find("data").set("shape", shape)
    _set_dims(layer.find("output/port"), dims)


def _output_dim(root, value):
    loop = _loop(root)
    port_id = _sliced_output(root).get("external_port_id")
    port = loop.find(f"output/port[@id='{port_id}']")
    port.findall("dim")[1].text = value


def _loop_input_constant(root, port, zeros):
    """Point the Const feeding the Loop's input `port` at `zeros` bytes appended to the .bin."""
    _producer(root, port).find("data").set("offset", str(zeros))


WARNINGS = {
    "WR001": (
        "constant trip count 0 with a concatenated output",
        lambda r, zeros: _loop_input_constant(r, 0, zeros),
    ),
    "WR002": (
        "constant false initial condition",
        lambda r, zeros: _loop_input_constant(r, 1, zeros),
    ),
}


def iteration_after_an_output_only_parameter() -> ov.Model:
    """acc += i, 5 times; body Parameters (w_in, acc_in, i): w_in feeds only output 0
    (max(w, w)), which the graph does not read (WR006)."""
    w_in, acc_in = ops.parameter([2], np.float32, name="w_in"), ops.parameter([], np.int64)
    i = ops.parameter([], np.int64, name="i")
    acc_out = ops.add(acc_in, i)
    only_for_output0 = ops.result(ops.maximum(w_in, w_in))
    acc_result, keep = ops.result(acc_out), ops.result(ops.constant(True))
    body = ov.Model([only_for_output0, keep, acc_result], [w_in, acc_in, i], "body")
    w = ops.parameter([2], np.float32, name="w")
    loop = ops.loop(ops.constant(np.int64(5)), ops.constant(True))
    loop.set_friendly_name("sum_of_iterations")
    loop.set_function(body)
    loop.set_special_body_ports([2, 1])
    loop.set_invariant_input(w_in, w.output(0))
    loop.set_merged_input(acc_in, ops.constant(np.int64(0)).output(0), acc_result.output(0))
    loop.get_iter_value(only_for_output0.output(0), -1)
    total = loop.get_iter_value(acc_result.output(0), -1)
    return ov.Model([total], [w], "iteration_after_an_output_only_parameter")


def counting_loop(
    trip_count: ov.Output, x_shape: list[int], counter: ov.Type = ov.Type.i64, name: str = "sums"
) -> ov.Model:
    """acc += x + i for trip_count iterations (i the current_iteration, of type `counter`);
    x of shape `x_shape` (-1: dynamic), an invariant input. For the device-target rules."""
    x_in, acc_in = ops.parameter(x_shape, np.float32), ops.parameter(x_shape, np.float32)
    i = ops.parameter([], counter, name="i")
    acc = ops.result(ops.add(acc_in, ops.add(x_in, ops.convert(i, ov.Type.f32))))
    keep = ops.result(ops.constant(True))
    body = ov.Model([acc, keep], [x_in, acc_in, i], "body")
    x = ops.parameter(x_shape, np.float32, name="x")
    loop = ops.loop(trip_count, ops.constant(True).output(0))
    loop.set_friendly_name(name)
    loop.set_function(body)
    loop.set_special_body_ports([2, 1])
    loop.set_invariant_input(x_in, x.output(0))
    loop.set_merged_input(acc_in, x.output(0), acc.output(0))
    total = loop.get_iter_value(acc.output(0), -1)
    parameters = [x] + [p for p in [trip_count.get_node()] if p.get_type_name() == "Parameter"]
    return ov.Model([total], parameters, name)


def npu_runtime_trip_count() -> ov.Model:
    count = ops.parameter([], np.int64, name="count")
    return counting_loop(count.output(0), [2], name="runtime_count")


def npu_dynamic_shape() -> ov.Model:
    return counting_loop(ops.constant(np.int64(3)).output(0), [-1, 2], name="dynamic_x")


def gpu_i32_iteration() -> ov.Model:
    count = ops.constant(np.int64(5)).output(0)
    return counting_loop(count, [2], ov.Type.i32, name="i32_iteration")


# Samples built as models, not as mutations of loop_all_ports: (rule, defect, model).
BUILT = {
    "WR006": (
        "body Parameter w_in, before current_iteration's, feeds only output 0, which the graph "
        "does not read",
        iteration_after_an_output_only_parameter,
    ),
    "NP001": ("the trip count is a model input (for the NPU)", npu_runtime_trip_count),
    "NP002": ("input x has the dynamic shape [?,2] (for the NPU)", npu_dynamic_shape),
    "GP001": (
        "a 5-iteration Loop with an i32 current_iteration (for the GPU)",
        gpu_i32_iteration,
    ),
}


def _kind(code: str) -> str:
    """ ", a warning" for a warning rule's sample."""
    severity = {rule.code: rule.severity for rule in RULES}.get(code)
    return ", a warning" if severity == WARNING else ""


def _write_with_comment(xml: Path, comment: str) -> None:
    tree = etree.parse(str(xml), etree.XMLParser(remove_blank_text=False))
    tree.getroot().addprevious(etree.Comment(f" defect: {comment} "))
    tree.write(str(xml), xml_declaration=True, encoding="utf-8")
    text = xml.read_text(encoding="utf-8")
    xml.write_text(text.replace("-->", "-->\n", 1), encoding="utf-8")  # lxml drops its tail


def main() -> None:
    valid, invalid = HERE / "valid", HERE / "invalid"
    for folder in (valid, invalid):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    for name, model in valid_samples().items():
        ov.save_model(model, str(valid / f"{name}.xml"), compress_to_fp16=False)
    base = valid / "loop_all_ports.xml"
    for code, (defect, mutate) in INVALID.items():
        tree = etree.parse(str(base))
        mutate(tree.getroot())
        target = invalid / f"{code}.xml"
        tree.write(str(target), xml_declaration=True, encoding="utf-8")
        shutil.copyfile(base.with_suffix(".bin"), target.with_suffix(".bin"))
        _write_with_comment(target, f"{defect} ({code}{_kind(code)})")
    data = base.with_suffix(".bin").read_bytes()
    for code, (defect, mutate) in WARNINGS.items():  # the Const now reads 8 zero bytes
        tree = etree.parse(str(base))
        mutate(tree.getroot(), len(data))
        target = invalid / f"{code}.xml"
        tree.write(str(target), xml_declaration=True, encoding="utf-8")
        target.with_suffix(".bin").write_bytes(data + bytes(8))
        _write_with_comment(target, f"{defect} ({code}, a warning)")
    for code, (defect, build) in BUILT.items():
        target = invalid / f"{code}.xml"
        ov.save_model(build(), str(target), compress_to_fp16=False)
        _write_with_comment(target, f"{defect} ({code}{_kind(code)})")
    print(
        f"wrote {len(list(valid.glob('*.xml')))} valid and "
        f"{len(list(invalid.glob('*.xml')))} invalid samples"
    )


if __name__ == "__main__":
    main()
