"""An Abs of a rank-1 Concat that other ops read too (issue 20, item 4).

OpenVINO's AbsSinking (MOC, and the CPU plugin's compilation) rewrites such a Concat's inputs to
their Abs, so the other readers read |Concat|: `ReduceMean(Concat(s, s))` of a negative `s`
came out positive, in loop bodies and in the main graph, at every optimisation level (at
default and max the IR itself carried it: simplify-body's MOC had made the rewrite). The
converter gives the Abs a computed copy of its input (pass copy-concats-before-abs, and the
driver for the main graph and If branches). Run on the CPU in f32 against onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
import pytest
from openvino._offline_transformations import apply_moc_transformations

from tests.harness import assert_matches_onnxruntime, compile_f32
from tests.onnx_builders import T, graph, loop_body, model, node, typed

NEGATIVE = np.array([-1.0, -2.0], np.float32)


def _mean_and_abs(source: str) -> list[onnx.NodeProto]:
    """c = Concat(source, source); m = ReduceMean(c) (kept as [1]); a = Abs(c)."""
    return [
        node("Concat", [source, source], ["c"], axis=0),
        node("ReduceMean", ["c"], ["m"], keepdims=1),
        node("Abs", ["c"], ["a"]),
    ]


def main_graph() -> onnx.ModelProto:
    return model(
        graph(
            _mean_and_abs("s"),
            [typed("s", T.FLOAT, [2])],
            [typed("m", T.FLOAT, [1]), typed("a", T.FLOAT, [4])],
        )
    )


def if_branch() -> onnx.ModelProto:
    then_branch = graph(
        _mean_and_abs("s"), [], [typed("m", T.FLOAT, [1]), typed("a", T.FLOAT, [4])], name="then"
    )
    else_branch = graph(
        [node("Neg", ["s"], ["n"]), node("Concat", ["n", "n"], ["twice"], axis=0)],
        [],
        [typed("n", T.FLOAT, [2]), typed("twice", T.FLOAT, [4])],
        name="else",
    )
    return model(
        graph(
            [node("If", ["flag"], ["m", "a"], then_branch=then_branch, else_branch=else_branch)],
            [typed("s", T.FLOAT, [2]), typed("flag", T.BOOL, [])],
            [typed("m", T.FLOAT, None), typed("a", T.FLOAT, [4])],
        )
    )


def _loop(body_nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    """acc += m each iteration, a stacked: M iterations from acc0."""
    body = loop_body(
        [
            *body_nodes,
            node("Add", ["acc_in", "m"], ["acc_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("acc_in", T.FLOAT, [2])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, [2]), typed("a", T.FLOAT, [4])],
    )
    return model(
        graph(
            [node("Loop", ["M", "", "acc0"], ["acc", "all"], body=body)],
            [typed("M", T.INT64, []), typed("acc0", T.FLOAT, [2])],
            [typed("acc", T.FLOAT, [2]), typed("all", T.FLOAT, [None, 4])],
        )
    )


def loop_body_concat() -> onnx.ModelProto:
    return _loop(_mean_and_abs("acc_in"))


def loop_body_after_identity() -> onnx.ModelProto:
    """An Identity before the Concat: simplify-body's MOC removes it, so its result is kept."""
    return _loop([node("Identity", ["acc_in"], ["t"]), *_mean_and_abs("t")])


def loop_body_abs_through_a_view() -> onnx.ModelProto:
    """The Abs reads the Concat through a Reshape to its own shape (removed before AbsSinking)."""
    concat, mean, _ = _mean_and_abs("t")
    four = onnx.numpy_helper.from_array(np.array([4]))
    view = [node("Constant", [], ["four"], value=four), node("Reshape", ["c", "four"], ["v"])]
    identity = node("Identity", ["acc_in"], ["t"])
    return _loop([identity, concat, mean, *view, node("Abs", ["v"], ["a"])])


MODELS = {
    "main_graph": (main_graph, [{"s": NEGATIVE}]),
    "if_branch": (if_branch, [{"s": NEGATIVE, "flag": np.array(True)}]),
    **{
        builder.__name__: (builder, [{"M": np.array(3, np.int64), "acc0": NEGATIVE}])
        for builder in (loop_body_concat, loop_body_after_identity, loop_body_abs_through_a_view)
    },
}


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_mean_of_a_concat_also_read_by_abs_keeps_its_sign(name, optimize, tmp_path):
    build, runs = MODELS[name]
    assert_matches_onnxruntime(build(), runs, tmp_path, optimize=optimize)


def _plain_openvino_model() -> ov.Model:
    """The upstream repro: mean(Concat(x, x)) and |Concat(x, x)| of an f32 [2] x."""
    x = ops.parameter([2], np.float32, name="x")
    both = ops.concat([x, x], 0)
    mean = ops.reduce_mean(both, ops.constant(np.array([0], np.int64)), False)
    return ov.Model([mean, ops.abs(both)], [x])


def test_openvino_still_sinks_abs_into_a_concat_that_others_read():
    """The fault the copy guards against, in OpenVINO alone: when this fails, OpenVINO's
    AbsSinking checks the Concat's readers and the copy may go (README pitfall row)."""
    compiled = compile_f32(_plain_openvino_model())
    mean = compiled({"x": NEGATIVE})[compiled.outputs[0]]
    assert mean == pytest.approx(1.5)  # the right value is -1.5
    moc = _plain_openvino_model()
    apply_moc_transformations(moc, cf=False)
    concat = next(op for op in moc.get_ordered_ops() if op.get_type_name() == "Concat")
    assert [value.get_node().get_type_name() for value in concat.input_values()] == ["Abs"] * 2
