"""Bodies of one form are converted by the frontend once (conversion/body_forms.py): the others
are clones renamed, and the IR is the one converting each body gives, but for the numbers of
ops named by their type."""

from __future__ import annotations

import io
import re

import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper

import ov_loops
from benchmarks.generated_models import nested_loops, sequential_loops
from ov_loops.conversion import body_forms, frontend
from ov_loops.conversion.body_forms import BodyForms, body_form

AUTO_NAME = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9]*)_\d+(?![0-9])")


def _body(prefix: str, op: str = "Add") -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, [f"{prefix}x", "one"], [f"{prefix}y"])],
        f"{prefix}body",
        [helper.make_tensor_value_info(f"{prefix}x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(f"{prefix}y", TensorProto.FLOAT, [2])],
        [helper.make_tensor("one", TensorProto.FLOAT, [2], [1.0, 1.0])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_forms_are_equal_for_bodies_differing_in_names_only():
    (form_a, names_a), (form_b, names_b) = body_form(_body("a_")), body_form(_body("b_"))
    assert form_a == form_b
    assert names_a == ["a_body", "a_x", "one", "a_y"] and names_b[1] == "b_x"
    assert body_form(_body("a_", "Mul"))[0] != form_a


def test_a_body_holding_a_subgraph_has_no_form():
    model = nested_loops(2)
    loop = model.graph.node[0]
    body = helper.make_model(loop.attribute[0].g)
    assert body_form(body) is None


def _counting_frontend(monkeypatch) -> list[str]:
    paths = []
    convert = frontend.Frontend.convert

    def counted(self, model, path, *rest):
        paths.append(path)
        return convert(self, model, path, *rest)

    monkeypatch.setattr(frontend.Frontend, "convert", counted)
    return paths


def _ir(model: ov.Model, tmp_path, name: str) -> str:
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, xml, compress_to_fp16=False)
    return AUTO_NAME.sub(r"\1_N", xml.read_text())


@pytest.mark.parametrize("level", ["none", "default"])
def test_loops_of_one_form_convert_their_body_once_into_the_same_ir(monkeypatch, tmp_path, level):
    paths = _counting_frontend(monkeypatch)
    once = ov_loops.convert(sequential_loops(5), optimize=level)
    assert len(paths) == 1 + 1  # the main graph, one body
    monkeypatch.setattr(BodyForms, "converted", lambda self, body, convert: (convert(), False))
    each = ov_loops.convert(sequential_loops(5), optimize=level)
    assert len(paths) == 2 + 1 + 5
    assert _ir(once, tmp_path, "once") == _ir(each, tmp_path, "each")


def test_a_renamed_body_names_its_ops_and_tensors_as_the_frontend_does(monkeypatch):
    forms = BodyForms()
    first, second = _body("a_"), _body("b_")
    converter = ov.frontend.FrontEndManager().load_by_framework("onnx")

    def converted(body):
        return converter.convert(converter.load(io.BytesIO(body.SerializeToString())))

    assert forms.converted(first, lambda: converted(first))[1] is False
    renamed, cloned = forms.converted(second, lambda: pytest.fail("converted again"))
    assert cloned
    direct = converted(second)

    def names(model):
        return [
            (
                op.get_type_name(),
                AUTO_NAME.sub(r"\1_N", op.get_friendly_name()),
                [sorted(out.get_names()) for out in op.outputs()],
            )
            for op in model.get_ordered_ops()
        ]

    assert names(renamed) == names(direct)
    assert renamed.get_friendly_name() == "b_body"


def test_a_form_whose_names_cannot_be_mapped_is_converted_each_time(monkeypatch):
    monkeypatch.setattr(body_forms._Renaming, "of", classmethod(lambda cls, model, names: None))
    paths = _counting_frontend(monkeypatch)
    ov_loops.convert(sequential_loops(3))
    assert len(paths) == 1 + 3


def _loops_with_unsupported_op(count: int) -> onnx.ModelProto:
    nodes = []
    for k in range(count):
        body = helper.make_graph(
            [
                helper.make_node("Identity", [f"c{k}"], [f"c{k}_out"]),
                helper.make_node("Foo", [f"x{k}"], [f"y{k}"], domain="custom"),
            ],
            f"body{k}",
            [
                helper.make_tensor_value_info(f"i{k}", TensorProto.INT64, []),
                helper.make_tensor_value_info(f"c{k}", TensorProto.BOOL, []),
                helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, [2]),
            ],
            [
                helper.make_tensor_value_info(f"c{k}_out", TensorProto.BOOL, []),
                helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, [2]),
            ],
        )
        source = "x" if k == 0 else f"out{k - 1}"
        nodes.append(helper.make_node("Loop", ["n", "", source], [f"out{k}"], body=body))
    graph = helper.make_graph(
        nodes,
        "main",
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info(f"out{count - 1}", TensorProto.FLOAT, [2])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def test_an_op_left_unconverted_is_reported_in_every_body_of_its_form():
    with pytest.raises(ov_loops.UnsupportedError) as raised:
        ov_loops.convert(_loops_with_unsupported_op(3))
    assert [item.op for item in raised.value.items] == ["Foo"] * 3
    assert len({item.path for item in raised.value.items}) == 3
