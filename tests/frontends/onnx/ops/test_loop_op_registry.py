"""The loop-op registry (frontends/onnx/ops/registry.py), the sequence rewrite's record of the
parts it made (the side table the Loop layout reads), and the kinds an IR marks on its carried
parts (which `check` of an IR reads back)."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from ov_loops.checking.carried import ir_layout
from ov_loops.checking.device import core
from ov_loops.contract.kinds import OPTIONAL, OPTIONAL_SEQUENCE, SEQUENCE, TENSOR
from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.ops import registry
from ov_loops.frontends.onnx.ops.loop import OnnxLoop
from ov_loops.frontends.onnx.ops.scan import OnnxScan
from ov_loops.frontends.onnx.ops.scan8 import OnnxScan8
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts
from tests.sequence_scenarios import SEQUENCE_SCENARIOS


def _node(op: str, domain: str = "") -> onnx.NodeProto:
    return onnx.helper.make_node(op, [], [], domain=domain)


@pytest.mark.parametrize(
    "op, domain, opset, expected",
    [
        ("Loop", "", 1, OnnxLoop),
        ("Loop", "ai.onnx", 23, OnnxLoop),
        ("Loop", "", None, OnnxLoop),
        ("Scan", "", 8, OnnxScan8),
        ("Scan", "", 9, OnnxScan),
        ("Scan", "ai.onnx", 23, OnnxScan),
        ("Scan", "", None, OnnxScan),
    ],
)
def test_an_op_is_read_by_the_class_registered_for_its_opset(op, domain, opset, expected):
    assert registry.lookup(_node(op, domain), opset) is expected
    assert expected.op == op


def test_the_registry_knows_the_loop_ops_and_nothing_else():
    assert registry.op_types() == ["Loop", "Scan"]
    assert registry.is_loop_op(_node("Scan")) and registry.is_loop_op(_node("Loop", "ai.onnx"))
    assert not registry.is_loop_op(_node("Loop", "acme")) and not registry.is_loop_op(_node("If"))
    with pytest.raises(ConversionError, match="Scan '' of opset 7 is not a loop"):
        registry.lookup(_node("Scan"), 7)


@pytest.mark.parametrize("opsets", [(9, None), (5, 8), (20, 21), (1, None)])
def test_a_registration_overlapping_another_raises(opsets, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", list(registry._REGISTERED))
    with pytest.raises(ValueError, match="Twin reads ai.onnx:Scan opsets"):
        registry.loop_op("Scan", opsets=opsets)(type("Twin", (), {}))
    assert registry.lookup(_node("Scan"), 9) is OnnxScan


def test_a_new_op_is_one_registration(monkeypatch):
    """What a new loop op's module does: the placeholders, the driver's extension and `check`
    ask the registry, so they know it."""
    monkeypatch.setattr(registry, "_REGISTERED", list(registry._REGISTERED))
    made = registry.loop_op("While", opsets=(1, None), domain="acme")(type("While", (), {}))
    assert registry.lookup(_node("While", "acme"), 3) is made and made.op == "While"
    assert registry.is_loop_op(_node("While", "acme")) and not registry.is_loop_op(_node("While"))
    assert registry.op_types() == ["Loop", "Scan", "While"]


def test_the_sequence_record_groups_only_the_parts_it_made():
    """A sequence's first part keeps the body input's name, which another Loop's body may use
    for a tensor: the record groups a sequence's parts only where they all follow in order."""
    parts = SequenceParts({SEQUENCE.part_names("s"): SEQUENCE})
    assert parts.carried_kinds(["h", *SEQUENCE.part_names("s")]) == [TENSOR, SEQUENCE]
    assert parts.carried_kinds(["s", "h"]) == [TENSOR, TENSOR]
    assert parts.carried_kinds(["s", "s.sizes", "s.ranks"]) == [TENSOR, TENSOR, TENSOR]


def test_the_ir_marks_each_carried_kind_and_check_reads_it_back(tmp_path):
    """An Optional of a tensor and an Optional of a sequence, carried: the IR says which is
    which (by their part names alone an Optional of a tensor looked like a sequence)."""
    made, _ = SEQUENCE_SCENARIOS["optional_tensor_and_optional_sequence_carried"]()
    ov_loops.save(ov_loops.convert(made, optimize="none"), tmp_path / "model.xml")
    model = core().read_model(str(tmp_path / "model.xml"))
    [loop] = [op for op in model.get_ordered_ops() if op.get_type_name() == "Loop"]
    found = [(value.kind, value.device) for value in ir_layout(loop)]
    assert found == [(OPTIONAL, (0, 1, 2, 3)), (OPTIONAL_SEQUENCE, (4, 5, 6, 7, 8))]


def test_an_ir_without_marks_groups_parts_by_their_names():
    """An IR written before the kinds were marked: ov-loops' part names make a sequence."""
    names = ["h", *SEQUENCE.part_names("s")]
    parameters = [ops.parameter([-1], ov.Type.f32, name=name) for name in names]
    body = ov.Model(
        [ops.result(p) for p in parameters] + [ops.result(ops.constant(True))], parameters
    )
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, len(names)])
    for parameter, result in zip(parameters, body.get_results()):
        outer = ops.parameter([-1], ov.Type.f32)
        loop.set_merged_input(parameter, outer.output(0), result.output(0))
    found = [(value.name, value.kind) for value in ir_layout(loop)]
    assert found == [("h", TENSOR), ("s", SEQUENCE)]
