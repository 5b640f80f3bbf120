"""`check`'s divergence locator: faults injected on the device or in the IR reference at known
places (tests/divergence_faults.py) are located there, for ONNX and IR inputs."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
import ov_loops.checking.divergence as divergence
import ov_loops.checking.run as check_run
import ov_loops.reference.ir_reference as ir_reference
from ov_loops.checking.probes import LOOP_TYPES
from tests.divergence_faults import FAULTS, Fault


def _output_named(graph: ov.Model, tensor: str) -> ov.Output | None:
    """The output carrying `tensor` in `graph` or in a loop body in it."""
    for op in graph.get_ordered_ops():
        for output in op.outputs():
            if tensor in output.get_names():
                return output
        if op.get_type_name() in LOOP_TYPES:
            found = _output_named(op.get_function(), tensor)
            if found is not None:
                return found
    return None


def _bumped_above(value: ov.Output, above: float, bump: float) -> ov.Output:
    """value + bump where value > above, else value."""
    threshold, step = (ops.constant(np.array(v, np.float32)) for v in (above, bump))
    return ops.select(ops.greater(value, threshold), ops.add(value, step), value).output(0)


def _inject_on_device(model: ov.Model, fault: Fault) -> None:
    """The converted model computes the fault's tensor + bump where it exceeds `above`; the
    faulty value takes the tensor's names, as if OpenVINO's op computed it."""
    value = _output_named(model, fault.tensor)
    assert value is not None, f"no tensor {fault.tensor} in the converted model"
    consumers = list(value.get_target_inputs())
    faulty = _bumped_above(value, fault.above, fault.bump)
    for consumer in consumers:
        consumer.replace_source_output(faulty)
    names = value.get_names()
    value.get_tensor().set_names(set())
    faulty.get_tensor().set_names(names)


def _inject_in_ir_reference(monkeypatch, fault: Fault) -> None:
    """The IR reference's layer `fault.layer` adds `bump` where its output exceeds `above`."""
    for kind, kernel in list(ir_reference.KERNELS.items()):

        def faulty(layer, inputs, kernel=kernel):
            outputs = kernel(layer, inputs)
            if layer.name != fault.layer:
                return outputs
            value = np.asarray(outputs[0])
            return [np.where(value > fault.above, value + fault.bump, value).astype(value.dtype)]

        monkeypatch.setitem(ir_reference.KERNELS, kind, faulty)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_divergence_is_located_where_the_fault_strikes(name, tmp_path, monkeypatch):
    fault = FAULTS[name]()
    onnx.save(fault.model, tmp_path / "model.onnx")
    target = tmp_path / "model.onnx"
    if fault.as_ir:
        target = tmp_path / "model.xml"
        ov_loops.save(ov_loops.convert(fault.model), target)
    if fault.layer is not None:
        _inject_in_ir_reference(monkeypatch, fault)
    if fault.tensor is not None:
        translate = check_run._translate

        def faulty(source):
            conversion = translate(source)
            _inject_on_device(conversion.model, fault)
            return conversion

        monkeypatch.setattr(check_run, "_translate", faulty)
    report = ov_loops.check(target, inputs=fault.feeds)
    assert not report.ok, "\n".join(report.lines())
    found = report.divergence
    assert found is not None
    text = "\n".join(report.lines())
    assert {key: getattr(found, key) for key in fault.expected} == fault.expected, text
    if "text" in fault.also:
        assert fault.also["text"] in found.text(), found.text()


def test_a_locator_that_cannot_run_says_so_and_the_verdict_stands(tmp_path, monkeypatch):
    def crashing(*args):
        raise RuntimeError("Exception from src/plugin.cpp:1:\nthe plugin gave up")

    monkeypatch.setattr(divergence, "run_isolated", crashing)
    fault = FAULTS["expand_before_a_scan_in_the_ir_reference"]()
    target = tmp_path / "model.xml"
    ov_loops.save(ov_loops.convert(fault.model), target)
    _inject_in_ir_reference(monkeypatch, fault)
    report = ov_loops.check(target, inputs=fault.feeds)
    assert report.exit_code == 1 and report.divergence.kind == "unlocated"
    expected = "first divergence not located: the instrumented model failed: the plugin gave up"
    assert report.lines()[-2].strip() == expected
