"""proto/inference/control.py: differential tests against onnx's inference on Loops (carried
tensors and lists, scan outputs, declared body types) and Ifs of random declared shapes."""

from __future__ import annotations

import onnx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.onnx_builders import graph, model, node, untyped
from tests.shape_inference_compare import compared
from tests.shape_inference_strategies import SHAPES, T, value


def _sequence(name: str, shape) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, shape)


def _declared(name: str, shape, declare: bool, sequence: bool = False) -> onnx.ValueInfoProto:
    if not declare:
        return untyped(name)
    return _sequence(name, shape) if sequence else value(name, T.FLOAT, shape)


@settings(max_examples=150, deadline=None)
@given(
    st.tuples(SHAPES, SHAPES, SHAPES, SHAPES, SHAPES),
    st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.sampled_from(["Tanh", "Identity"]),
    st.booleans(),
)
def test_loops_answer_as_onnx(shapes, declare, op, data_prop):
    """Loop(M, cond, h, s) carrying tensor h (op(h) + x) and list s (x appended), a scan
    output of h; body inputs and outputs declared or not."""
    h_shape, x_shape, s_shape, body_h, body_s = shapes
    body = graph(
        [
            node(op, ["h_in"], ["t"]),
            node("Add", ["t", "x"], ["h_out"]),
            node("SequenceInsert", ["s_in", "x"], ["s_out"]),
            node("Identity", ["cond_in"], ["cond_out"]),
            node("Identity", ["h_in"], ["scan"]),
        ],
        [
            value("i", T.INT64, []),
            value("cond_in", T.BOOL, []),
            _declared("h_in", body_h, declare[0]),
            _declared("s_in", body_s, declare[1], sequence=True),
        ],
        [
            value("cond_out", T.BOOL, []),
            _declared("h_out", body_h, declare[2]),
            _declared("s_out", body_s, declare[3], sequence=True),
            untyped("scan"),
        ],
    )
    loop = node("Loop", ["M", "c", "h", "s"], ["h_last", "s_last", "scans"], body=body)
    inputs = [
        value("M", T.INT64, []),
        value("c", T.BOOL, []),
        value("h", T.FLOAT, h_shape),
        value("x", T.FLOAT, x_shape),
        _sequence("s", s_shape),
    ]
    made = model(graph([loop], inputs, [untyped(n) for n in loop.output]))
    assert not compared(made, data_prop)


@settings(max_examples=80, deadline=None)
@given(SHAPES, SHAPES, st.booleans())
def test_ifs_answer_as_onnx(then_shape, else_shape, declare):
    """If(c) giving Tanh(a) or Tanh(b): onnx's union of the branches' shapes."""
    branches = [
        graph([node("Tanh", [name], [f"{name}_out"])], [], [untyped(f"{name}_out")], name=name)
        for name in ("a", "b")
    ]
    made = model(
        graph(
            [node("If", ["c"], ["y"], then_branch=branches[0], else_branch=branches[1])],
            [
                value("c", T.BOOL, []),
                value("a", T.FLOAT, then_shape),
                value("b", T.FLOAT, else_shape),
            ],
            [value("y", T.FLOAT, None) if declare else untyped("y")],
        )
    )
    found = compared(made)
    assert found is not None and not found
