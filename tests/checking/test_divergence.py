"""`check`'s divergence locator: faults injected on the device or in the IR reference at known
places (tests/divergence_faults.py) are located there, for ONNX and IR inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
import ov_loops.checking.divergence as divergence
import ov_loops.checking.run as check_run
from ov_loops.checking.carried import Carried, difference
from ov_loops.checking.device import core
from ov_loops.checking.inputs import generate_inputs, onnx_input_specs
from ov_loops.checking.probes import LOOP_TYPES
from ov_loops.checking.settings import Settings
from ov_loops.contract.kinds import OPTIONAL_SEQUENCE, SEQUENCE, CarriedKind, pack_sequence
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.reference.ir import kernels
from ov_loops.reference.ir.executor import run_ir
from ov_loops.reference.onnx_reference import run_onnx
from ov_loops.reference.trace import Trace
from tests.divergence_faults import FAULTS, Fault
from tests.scenarios import SCENARIOS
from tests.sequence_scenarios import SEQUENCE_SCENARIOS


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
    for kind, kernel in list(kernels.KERNELS.items()):

        def faulty(layer, inputs, kernel=kernel):
            outputs = kernel(layer, inputs)
            if layer.name != fault.layer:
                return outputs
            value = np.asarray(outputs[0])
            return [np.where(value > fault.above, value + fault.bump, value).astype(value.dtype)]

        monkeypatch.setitem(kernels.KERNELS, kind, faulty)


def faulty_device(monkeypatch, inject) -> None:
    """`check` runs the converted model after `inject(model)` changed it (a fault on the device)."""
    translate = check_run._translate

    def faulty(source, options):
        conversion = translate(source, options)
        inject(conversion.model)
        return conversion

    monkeypatch.setattr(check_run, "_translate", faulty)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_divergence_is_located_where_the_fault_strikes(name, tmp_path, monkeypatch):
    fault = FAULTS[name]()
    onnx.save(fault.model, tmp_path / "model.onnx")
    target = tmp_path / "model.onnx"
    if fault.as_ir:
        target = tmp_path / "model.xml"
        ov_loops.save(ov_loops.convert(fault.model), target, compress_to_fp16=False)
    if fault.layer is not None:
        _inject_in_ir_reference(monkeypatch, fault)
    if fault.tensor is not None:
        faulty_device(monkeypatch, lambda model: _inject_on_device(model, fault))
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
    ov_loops.save(ov_loops.convert(fault.model), target, compress_to_fp16=False)
    _inject_in_ir_reference(monkeypatch, fault)
    report = ov_loops.check(target, inputs=fault.feeds)
    assert report.exit_code == 1 and report.divergence.kind == "unlocated"
    expected = "first divergence not located: the instrumented model failed: the plugin gave up"
    assert report.lines()[-2].strip() == expected


MATCHING = {
    "loop_nested_three_deep_with_captures": SCENARIOS,
    "loop_runtime_trip_count_beyond_int32": SCENARIOS,  # the CPU's i64 trip count in 32 bits
    "scan8_sequence_lens_variable_lengths": SCENARIOS,  # a Scan-8 is two loops of one path
    "append_in_loop_then_stack": SEQUENCE_SCENARIOS,  # a loop without carried values
    "list_starting_non_empty_read_and_written_by_position": SEQUENCE_SCENARIOS,
    "split_to_sequence_feeds_a_loop": SEQUENCE_SCENARIOS,
}


@pytest.mark.parametrize("name", sorted(MATCHING))
def test_the_locator_finds_nothing_where_the_device_matches(name, tmp_path):
    """Run directly on a correct conversion (as ONNX and as IR), the locator locates nothing:
    no misaligned carried values, iteration counts or main-graph values."""
    made, runs = MATCHING[name][name]()
    feeds = runs[0][0] if isinstance(runs[0], tuple) else runs[0]
    settings = Settings("CPU", {}, 0, 1e-4, 1e-5, "f32", 100_000)
    source = load_model(made)
    conversion = ov_loops.translate(made)
    feeds = generate_inputs(onnx_input_specs(source.model), feeds, {}, 0)
    trace = Trace()
    run_onnx(source.model, feeds, trace=trace)
    found = divergence.locate(source, conversion, trace, feeds, settings, str(tmp_path))
    assert (found.kind, found.detail[:28]) == ("unlocated", "the instrumented model agree"), found
    xml = tmp_path / "model.xml"
    ov_loops.save(conversion.model, xml, compress_to_fp16=False)
    trace = Trace()
    run_ir(xml, feeds, trace=trace)
    found = divergence.locate_ir(core().read_model(str(xml)), trace, feeds, settings)
    assert (found.kind, found.detail[:28]) == ("unlocated", "the instrumented model agree"), found


def _sequence_parts(*elements, present=None) -> list[np.ndarray]:
    parts = pack_sequence([np.asarray(e, np.float32) for e in elements], np.float32)
    return parts if present is None else [*parts, np.array(present)]


@pytest.mark.parametrize(
    "kind, reference, device, expected",
    [
        (SEQUENCE, ([1, 2], [3], [4]), ([1, 2], [3]), (2, "the device has 2 elements, the")),
        (SEQUENCE, ([1, 2], [3, 4]), ([1, 2], [3]), (1, "has shape [1], the reference [2]")),
        (SEQUENCE, ([1, 2], [3, 4]), ([1, 2], [3, 5]), (1, "(shape [2]) diverges at [1]: 5 vs")),
        (OPTIONAL_SEQUENCE, (True, [1]), (False,), (None, "it is absent, the reference's present")),
    ],
    ids=["fewer-elements", "element-shape", "element-value", "optional-absent"],
)
def test_a_carried_sequence_is_compared_by_element(kind, reference, device, expected):
    if kind == OPTIONAL_SEQUENCE:
        want = _sequence_parts(*reference[1:], present=reference[0])
        have = _sequence_parts(*device[1:], present=device[0])
    else:
        want, have = _sequence_parts(*reference), _sequence_parts(*device)
    span = tuple(range(len(want)))
    element, detail = difference(Carried(0, "s", kind, span, span), want, have, 1e-4, 1e-5)
    assert element == expected[0] and detail.startswith(expected[1]), (element, detail)


def test_every_part_of_a_kind_compared_whole_is_compared():
    """A carried kind of several tensors that `check` compares whole (not element by element):
    a difference in any part is found, not only in the first."""
    pair = CarriedKind("pair", ("", ".other"))
    want = [np.zeros(2, np.float32), np.zeros(3, np.float32)]
    have = [np.zeros(2, np.float32), np.array([0, 1, 0], np.float32)]
    element, detail = difference(Carried(0, "p", pair, (0, 1), (0, 1)), want, have, 1e-4, 1e-5)
    assert element is None and detail.startswith("part 1: "), detail
    assert difference(Carried(0, "p", pair, (0, 1), (0, 1)), want, want, 1e-4, 1e-5) is None


def test_the_cpu_plugin_fault_in_a_valid_sample_ir_is_located():
    """A valid IR the CPU plugin computes wrong (docs/pitfalls.md: a back edge aliasing its
    Parameter): the IR-only check places it at the first iteration whose carried value differs."""
    report = ov_loops.check(Path(__file__).parents[2] / "ir_samples/valid/loop_all_ports.xml")
    found = report.divergence
    assert report.exit_code == 1 and found is not None, "\n".join(report.lines())
    assert (found.kind, found.where, found.value) == ("carried", "main/accumulate[1]", "acc_in")
