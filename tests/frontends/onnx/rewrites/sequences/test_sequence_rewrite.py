"""The ONNX rewrite of sequence ops (frontends/onnx/rewrites/sequences/sequences.py), op by op: the
rewritten model, run by onnxruntime, gives the original model's outputs (a sequence output read back
from its four tensors), including empty sequences, negative positions and erasing the last
element."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from ov_loops.frontends.onnx.rewrites.sequences.sequences import lower_sequences
from ov_loops.frontends.onnx.sequence_io import from_ir_outputs, has_sequence_io, to_ir_inputs
from tests.harness import onnxruntime_oracle
from tests.onnx_builders import T, graph, model, node, typed

F = np.float32


def _seq_output(name: str) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, None)


def _ab_sequence():
    """s = [a, b, a] with a: [2, 3] and b: [4, 3] (elements of different lengths)."""
    return node("SequenceConstruct", ["a", "b", "a"], ["s"])


AB_INPUTS = [typed("a", T.FLOAT, [2, 3]), typed("b", T.FLOAT, [4, 3])]
AB_FEEDS = {"a": np.arange(6, dtype=F).reshape(2, 3), "b": -np.arange(12, dtype=F).reshape(4, 3)}


def _ab_case(nodes, outputs, extra_inputs=(), extra_feeds=None):
    made = model(graph([_ab_sequence(), *nodes], [*AB_INPUTS, *extra_inputs], outputs), 18)
    return made, {**AB_FEEDS, **(extra_feeds or {})}


def _position(p: int):
    return [typed("p", T.INT64, [])], {"p": np.array(p, np.int64)}


CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


@case
def at_runtime_positions():
    return [
        _ab_case(
            [node("SequenceAt", ["s", "p"], ["y"])], [typed("y", T.FLOAT, None)], *_position(p)
        )
        for p in (0, 1, 2, -1, -3)
    ]


@case
def length_of_empty_and_filled():
    empty = model(graph([node("SequenceEmpty", [], ["s"]), node("SequenceLength", ["s"], ["n"])],
                        [], [typed("n", T.INT64, [])]), 18)  # fmt: skip
    filled = _ab_case([node("SequenceLength", ["s"], ["n"])], [typed("n", T.INT64, [])])
    return [(empty, {}), filled]


@case
def insert_at_end_and_at_positions():
    runs = [_ab_case([node("SequenceInsert", ["s", "b"], ["t"])], [_seq_output("t")])]
    for p in (0, 1, 3, -1, -3):
        runs.append(_ab_case([node("SequenceInsert", ["s", "b", "p"], ["t"])],
                             [_seq_output("t")], *_position(p)))  # fmt: skip
    return runs


@case
def insert_into_empty():
    nodes = [node("SequenceEmpty", [], ["e"]), node("SequenceInsert", ["e", "a"], ["t"])]
    return [_ab_case(nodes, [_seq_output("t")])]


@case
def erase_default_last_and_positions():
    runs = [_ab_case([node("SequenceErase", ["s"], ["t"])], [_seq_output("t")])]
    for p in (0, 1, 2, -1, -3):
        runs.append(_ab_case([node("SequenceErase", ["s", "p"], ["t"])],
                             [_seq_output("t")], *_position(p)))  # fmt: skip
    return runs


@case
def erase_the_only_element():
    nodes = [node("SequenceConstruct", ["a"], ["one"]), node("SequenceErase", ["one"], ["t"]),
             node("SequenceLength", ["t"], ["n"])]  # fmt: skip
    return [_ab_case(nodes, [typed("n", T.INT64, []), _seq_output("t")])]


@case
def concat_from_sequence_axes():
    runs = []
    for axis in (0, -2):  # elements [2, 3], [4, 3], [2, 3] vary along axis 0
        runs.append(_ab_case([node("ConcatFromSequence", ["s"], ["y"], axis=axis)],
                             [typed("y", T.FLOAT, None)]))  # fmt: skip
    nodes = [node("Transpose", ["a"], ["at"]), node("Transpose", ["b"], ["bt"]),
             node("SequenceConstruct", ["at", "bt", "at"], ["u"])]  # fmt: skip
    for axis in (1, -1):  # elements [3, 2], [3, 4], [3, 2] vary along axis 1
        runs.append(_ab_case([*nodes, node("ConcatFromSequence", ["u"], ["y"], axis=axis)],
                             [typed("y", T.FLOAT, None)]))  # fmt: skip
    return runs


@case
def stack_with_new_axis():
    nodes = [node("SequenceConstruct", ["a", "a"], ["u"])]
    return [
        _ab_case(
            [*nodes, node("ConcatFromSequence", ["u"], ["y"], axis=axis, new_axis=1)],
            [typed("y", T.FLOAT, None)],
        )  # fmt: skip
        for axis in (0, 1, 2, -1, -3)
    ]


@case
def split_to_sequence_forms():
    x = typed("x", T.FLOAT, [5, 3])
    feeds = {"x": np.arange(15, dtype=F).reshape(5, 3)}
    forms = [
        ([], {"axis": 0}),
        ([], {"axis": 0, "keepdims": 0}),
        ([], {"axis": -1, "keepdims": 0}),
        (["two"], {"axis": 0}),
        (["sizes"], {"axis": 0}),
        (["one_two"], {"axis": 1}),
    ]
    consts = [
        node("Constant", [], ["two"], value=onnx.numpy_helper.from_array(np.array(2, np.int64))),
        node("Constant", [], ["sizes"],
             value=onnx.numpy_helper.from_array(np.array([1, 0, 4], np.int64))),
        node("Constant", [], ["one_two"],
             value=onnx.numpy_helper.from_array(np.array([1, 2], np.int64))),
    ]  # fmt: skip
    runs = []
    for split, attrs in forms:
        nodes = [*consts, node("SplitToSequence", ["x", *split], ["t"], **attrs)]
        runs.append((model(graph(nodes, [x], [_seq_output("t")]), 18), feeds))
    return runs


@case
def optional_of_tensor_and_sequence():
    nodes = [
        node("Optional", ["a"], ["oa"]),
        node("OptionalHasElement", ["oa"], ["has_a"]),
        node("OptionalGetElement", ["oa"], ["got_a"]),
        node("Optional", ["s"], ["os"]),
        node("OptionalGetElement", ["os"], ["got_s"]),
        node("SequenceLength", ["got_s"], ["n"]),
        node("Optional", [], ["none"], type=onnx.helper.make_tensor_type_proto(T.FLOAT, None)),
        node("OptionalHasElement", ["none"], ["has_none"]),
    ]
    outputs = [typed("has_a", T.BOOL, []), typed("got_a", T.FLOAT, None),
               typed("n", T.INT64, []), typed("has_none", T.BOOL, [])]  # fmt: skip
    return [_ab_case(nodes, outputs)]


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rewritten_model_gives_the_original_outputs(name, opset):
    """At opsets 11 and 13 too: Reshape's allowzero, Unsqueeze's and ReduceSum's axes inputs
    and Min of int64 arrived after them."""
    if opset < 15 and "optional" in name:
        pytest.skip("Optional ops arrived in opset 15")
    for original, feeds in CASES[name]():
        original.opset_import[0].version = opset
        rewritten = onnx.ModelProto()
        rewritten.CopyFrom(original)
        rewritten = lower_sequences(rewritten)
        assert not has_sequence_io(rewritten)
        expected = onnxruntime_oracle(original)(feeds)
        names = [value.name for value in rewritten.graph.input]
        values = to_ir_inputs(original, [feeds[v.name] for v in original.graph.input])
        got = from_ir_outputs(original, onnxruntime_oracle(rewritten)(dict(zip(names, values))))
        for index, wanted in enumerate(expected):
            pairs = zip(wanted, got[index]) if isinstance(wanted, list) else [(wanted, got[index])]
            if isinstance(wanted, list):
                assert len(got[index]) == len(wanted), (name, index)
            for a, b in pairs:
                assert np.asarray(b).shape == np.asarray(a).shape, (name, index)
                np.testing.assert_array_equal(b, a, err_msg=f"{name} output {index}")
