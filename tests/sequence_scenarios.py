"""ONNX Loop scenarios carrying Sequence- and Optional-typed values (issue 12), each named for
what it exercises: PyTorch-style lists built, read, written and concatenated in and around loops.

Every builder returns (model, runs): tensor inputs and outputs only, two or more runs with
different trip counts and list lengths.
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.registry import Registry

SEQUENCE_SCENARIOS: Registry = Registry("Sequence scenario")
scenario = SEQUENCE_SCENARIOS.register
F = np.float32
OPSET = 18


def seq(name: str, elem_type: int = T.FLOAT) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, elem_type, None)


def optional(name: str, inner: onnx.TypeProto) -> onnx.ValueInfoProto:
    return onnx.helper.make_value_info(name, onnx.helper.make_optional_type_proto(inner))


def ints(name: str, values) -> onnx.NodeProto:
    array = np.array(values, np.int64)
    return node("Constant", [], [name], value=onnx.numpy_helper.from_array(array))


def _x_runs(trips, length: int = 3):
    """Runs with trip count M and x = [length] values that differ per run."""
    return [
        {"M": np.array(m, np.int64), "x": np.linspace(-1, 1, length, dtype=F) + m} for m in trips
    ]


def _scaled_by_iteration(out: str) -> list[onnx.NodeProto]:
    """out = x * (i + 1), in a Loop body with iteration number i and captured x."""
    return [
        node("Cast", ["i"], ["i_f"], to=T.FLOAT),
        node("Add", ["i_f", "one_f"], ["i_1"]),
        node("Mul", ["x", "i_1"], [out]),
    ]


ONE_F = onnx.numpy_helper.from_array(np.array(1, F), "one_f")


def _loop_model(body_nodes, carried_in, body_out, before, loop_outs, after, outputs, inputs=None):
    body = loop_body(
        [*body_nodes, node("Identity", ["cond_in"], ["go"])],
        carried_in,
        [typed("go", T.BOOL, []), *body_out],
        initializers=[ONE_F],
    )
    carried = [value.name.replace("_in", "_0") for value in carried_in]
    nodes = [*before, node("Loop", ["M", "", *carried], loop_outs, body=body), *after]
    inputs = inputs or [typed("M", T.INT64, []), typed("x", T.FLOAT, [None])]
    return model(graph(nodes, inputs, outputs), OPSET)


def _list_from_empty(body_nodes, after, outputs):
    """A Loop over M whose body makes list s_out from s_in, starting from SequenceEmpty;
    `after` reads the final list s."""
    empty = [node("SequenceEmpty", [], ["s_0"])]
    return _loop_model(body_nodes, [seq("s_in")], [seq("s_out")], empty, ["s"], after, outputs)


@scenario
def append_in_loop_then_stack():
    """list.append(x * (i + 1)) M times from an empty list, torch.stack after, and len()."""
    made = _list_from_empty(
        [*_scaled_by_iteration("v"), node("SequenceInsert", ["s_in", "v"], ["s_out"])],
        [
            node("ConcatFromSequence", ["s"], ["stacked"], axis=0, new_axis=1),
            node("SequenceLength", ["s"], ["n"]),
        ],
        [typed("stacked", T.FLOAT, None), typed("n", T.INT64, [])],
    )
    return made, _x_runs([4, 1, 7])


@scenario
def list_starting_non_empty_read_and_written_by_position():
    """[x, 2x, 3x]: each iteration reads s[-1] and s[i % len], inserts their sum at position 1,
    pops the last element every other iteration (SequenceErase at -1 / default); scans len()."""
    body = [
        node("SequenceLength", ["s_in"], ["n"]),
        node("Mod", ["i", "n"], ["k"]),
        node("SequenceAt", ["s_in", "minus_one"], ["last"]),
        node("SequenceAt", ["s_in", "k"], ["kth"]),
        node("Add", ["last", "kth"], ["sum"]),
        node("SequenceInsert", ["s_in", "sum", "one"], ["grown"]),
        node("SequenceErase", ["grown"], ["popped"]),
        node("Mod", ["i", "two"], ["parity"]),
        node("Equal", ["parity", "zero"], ["even"]),
        node("If", ["even"], ["s_out"],
             then_branch=graph([node("Identity", ["popped"], ["t"])], [], [seq("t")]),
             else_branch=graph([node("Identity", ["grown"], ["f"])], [], [seq("f")])),
        node("SequenceLength", ["s_out"], ["n_scan"]),
    ]  # fmt: skip
    consts = [ints("minus_one", -1), ints("one", 1), ints("two", 2), ints("zero", 0)]
    made = _loop_model(
        [*consts, *body],
        [seq("s_in")],
        [seq("s_out"), typed("n_scan", T.INT64, [])],
        [
            node("Add", ["x", "x"], ["x2"]),
            node("Add", ["x2", "x"], ["x3"]),
            node("SequenceConstruct", ["x", "x2", "x3"], ["s_0"]),
        ],
        ["s", "lengths"],
        [
            node("ConcatFromSequence", ["s"], ["joined"], axis=0),
            node("SequenceLength", ["s"], ["n_final"]),
        ],  # fmt: skip
        [
            typed("joined", T.FLOAT, None),
            typed("lengths", T.INT64, [None]),
            typed("n_final", T.INT64, []),
        ],  # fmt: skip
    )
    return made, _x_runs([5, 2, 0])


def _prefix_nodes(out: str) -> list[onnx.NodeProto]:
    """out = x[: i % len(x) + 1] (a piece whose length changes with i)."""
    return [
        ints("zero_1", [0]),
        ints("one_1", [1]),
        node("Shape", ["x"], ["x_len"]),
        node("Unsqueeze", ["i", "zero_1"], ["i_1d"]),
        node("Mod", ["i_1d", "x_len"], ["i_mod"]),
        node("Add", ["i_mod", "one_1"], ["end"]),
        node("Slice", ["x", "zero_1", "end"], [out]),
    ]


@scenario
def pieces_of_varying_length_concatenated():
    """Text-like pieces x[: i % len + 1] appended, then concatenated along their varying axis
    (ConcatFromSequence axis 0, no new axis): lengths are carried, no padding."""
    made = _list_from_empty(
        [*_prefix_nodes("piece"), node("SequenceInsert", ["s_in", "piece"], ["s_out"])],
        [node("ConcatFromSequence", ["s"], ["joined"], axis=0)],
        [typed("joined", T.FLOAT, None)],
    )
    return made, _x_runs([4, 9], length=4)


@scenario
def rows_of_varying_width_concatenated_along_axis_1():
    """Pieces of shape [2, k] (k varies) concatenated along axis 1 (ConcatFromSequence without a
    new axis, at a non-leading axis)."""
    body = [
        *_prefix_nodes("piece"),
        node("Neg", ["piece"], ["negated"]),
        node("Unsqueeze", ["piece", "zero_1"], ["row_a"]),
        node("Unsqueeze", ["negated", "zero_1"], ["row_b"]),
        node("Concat", ["row_a", "row_b"], ["block"], axis=0),
        node("SequenceInsert", ["s_in", "block"], ["s_out"]),
    ]
    made = _list_from_empty(
        body,
        [node("ConcatFromSequence", ["s"], ["joined"], axis=-1)],
        [typed("joined", T.FLOAT, None)],
    )
    return made, _x_runs([3, 6], length=3)


def _sum_of_elements(sequence: str, count: str, trip: str = "count") -> list[onnx.NodeProto]:
    """A Loop over the `count` elements of `sequence` (captured) summing ReduceSum(element)."""
    body = loop_body(
        [
            node("SequenceAt", [sequence, "i"], ["element"]),
            node("ReduceSum", ["element"], ["part"], keepdims=0),
            node("Add", ["acc_in", "part"], ["acc_out"]),
            node("Identity", ["cond_in"], ["go"]),
            node("Identity", ["part"], ["part_scan"]),
        ],
        [typed("acc_in", T.FLOAT, [])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, []), typed("part_scan", T.FLOAT, [])],
    )
    return [
        node("SequenceLength", [sequence], [count]),
        onnx.helper.make_node("Constant", [], ["acc_0"], value=onnx.numpy_helper.from_array(
            np.array(0, F))),
        node("Loop", [trip, "", "acc_0"], ["total", "parts"], body=body),
    ]  # fmt: skip


def _split_runs():
    return [{"x": np.arange(n * 3, dtype=F).reshape(n, 3) - n} for n in (5, 2, 8)]


@scenario
def split_to_sequence_feeds_a_loop():
    """SplitToSequence of x along its dynamic-length axis 0 (no split, keepdims 0), read
    element by element by a Loop (a captured sequence read at the iteration number)."""
    nodes = [
        node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        *_sum_of_elements("rows", "count"),
    ]
    outputs = [typed("total", T.FLOAT, []), typed("parts", T.FLOAT, [None])]
    return model(graph(nodes, [typed("x", T.FLOAT, [None, 3])], outputs), OPSET), _split_runs()


@scenario
def split_in_chunks_and_by_widths():
    """SplitToSequence with a scalar split (chunks of 2, the last shorter) along axis 0, summed
    by a Loop, and a 1-D split along axis -1, concatenated back.

    (onnxruntime 1.23 dies with SIGFPE on the 1-D split with keepdims=0, which the spec says
    is ignored when a split is given.)"""
    nodes = [
        ints("two", 2),
        ints("widths", [1, 2]),
        node("SplitToSequence", ["x", "two"], ["chunks"], axis=0),
        node("SplitToSequence", ["x", "widths"], ["columns"], axis=-1),
        *_sum_of_elements("chunks", "count"),
        node("SequenceLength", ["columns"], ["n_columns"]),
        node("ConcatFromSequence", ["columns"], ["glued"], axis=1),
    ]
    outputs = [typed("total", T.FLOAT, []), typed("parts", T.FLOAT, [None]),
               typed("n_columns", T.INT64, []), typed("glued", T.FLOAT, None)]  # fmt: skip
    return model(graph(nodes, [typed("x", T.FLOAT, [None, 3])], outputs), OPSET), _split_runs()


@scenario
def cache_updated_in_an_if_in_the_body():
    """A key/value cache: on odd iterations the oldest entry is erased and a new one appended
    (SequenceErase + SequenceInsert in one If branch), on even ones the cache passes through."""
    update = graph(
        [
            node("SequenceErase", ["s_in", "zero"], ["dropped"]),
            *_scaled_by_iteration("fresh"),
            node("SequenceInsert", ["dropped", "fresh"], ["updated"]),
        ],
        [],
        [seq("updated")],
    )
    keep = graph([node("Identity", ["s_in"], ["kept"])], [], [seq("kept")])
    body = [
        ints("zero", 0),
        ints("two", 2),
        node("Mod", ["i", "two"], ["parity"]),
        node("Cast", ["parity"], ["odd"], to=T.BOOL),
        node("If", ["odd"], ["s_out"], then_branch=update, else_branch=keep),
    ]
    made = _loop_model(
        body,
        [seq("s_in")],
        [seq("s_out")],
        [node("Neg", ["x"], ["nx"]), node("SequenceConstruct", ["x", "nx"], ["s_0"])],
        ["s"],
        [node("ConcatFromSequence", ["s"], ["cache"], axis=0, new_axis=1)],
        [typed("cache", T.FLOAT, None)],
    )
    return made, _x_runs([5, 2, 0])


@scenario
def carried_unchanged_and_read_at_the_iteration_number():
    """A sequence carried through the Loop unchanged, read by SequenceAt(s, i) each iteration."""
    body = [
        node("SequenceAt", ["s_in", "i"], ["element"]),
        node("Identity", ["s_in"], ["s_out"]),
        node("ReduceSum", ["element"], ["part"], keepdims=0),
    ]
    made = _loop_model(
        body,
        [seq("s_in")],
        [seq("s_out"), typed("part", T.FLOAT, [])],
        [node("SplitToSequence", ["x"], ["s_0"], axis=0, keepdims=1)],
        ["s", "parts"],
        [node("SequenceLength", ["s"], ["n"])],
        [typed("parts", T.FLOAT, [None]), typed("n", T.INT64, [])],
        inputs=[typed("M", T.INT64, []), typed("x", T.FLOAT, [None, 2])],
    )
    runs = [{"M": np.array(m, np.int64), "x": np.arange(2 * n, dtype=F).reshape(n, 2) * m}
            for m, n in ((4, 4), (2, 6))]  # fmt: skip
    return made, runs


@scenario
def loop_gated_by_the_length_of_a_list_starting_empty():
    """while len(s) < limit: s.append(...) (no trip count; the condition reads SequenceLength of
    a sequence that starts from SequenceEmpty)."""
    body = loop_body(
        [
            *_scaled_by_iteration("v"),
            node("SequenceInsert", ["s_in", "v"], ["s_out"]),
            node("SequenceLength", ["s_out"], ["n"]),
            node("Less", ["n", "limit"], ["go"]),
        ],
        [seq("s_in")],
        [typed("go", T.BOOL, []), seq("s_out")],
        initializers=[ONE_F],
    )
    nodes = [
        node("SequenceEmpty", [], ["s_0"]),
        node("SequenceLength", ["s_0"], ["n_0"]),
        node("Less", ["n_0", "limit"], ["go_0"]),
        node("Loop", ["", "go_0", "s_0"], ["s"], body=body),
        node("ConcatFromSequence", ["s"], ["joined"], axis=0),
    ]
    inputs = [typed("limit", T.INT64, []), typed("x", T.FLOAT, [None])]
    made = model(graph(nodes, inputs, [typed("joined", T.FLOAT, None)]), OPSET)
    runs = [{"limit": np.array(n, np.int64), "x": np.arange(3, dtype=F) + n} for n in (3, 1, 6)]
    return made, runs


@scenario
def captured_sequence_read_in_the_body():
    """A sequence built outside the Loop, captured by its body, read at i % len(s)."""
    body = [
        node("SequenceLength", ["outer"], ["n"]),
        node("Mod", ["i", "n"], ["k"]),
        node("SequenceAt", ["outer", "k"], ["element"]),
        node("Add", ["acc_in", "element"], ["acc_out"]),
    ]
    made = _loop_model(
        body,
        [typed("acc_in", T.FLOAT, [None])],
        [typed("acc_out", T.FLOAT, [None])],
        [
            node("Neg", ["x"], ["nx"]),
            node("Add", ["x", "x"], ["x2"]),
            node("SequenceConstruct", ["x", "nx", "x2"], ["outer"]),
            node("Identity", ["x"], ["acc_0"]),
        ],  # fmt: skip
        ["acc"],
        [],
        [typed("acc", T.FLOAT, [None])],
    )
    return made, _x_runs([5, 1, 0])


@scenario
def lists_in_loops_nested_two_deep():
    """for i < M: inner = []; for j < i + 1: inner.append(x * (j + 1)); outer.append(
    cat(inner)) -- each Loop carries its own list; the outer list's pieces vary in length."""
    inner = loop_body(
        [
            node("Cast", ["j"], ["j_f"], to=T.FLOAT),
            node("Add", ["j_f", "one_f"], ["j_1"]),
            node("Mul", ["x", "j_1"], ["v"]),
            node("SequenceInsert", ["t_in", "v"], ["t_out"]),
            node("Identity", ["cond_j"], ["go_j"]),
        ],  # fmt: skip
        [seq("t_in")],
        [typed("go_j", T.BOOL, []), seq("t_out")],
        iteration="j",
        condition="cond_j",
    )
    body = [
        ints("one", 1),
        node("Add", ["i", "one"], ["inner_trip"]),
        node("SequenceEmpty", [], ["t_0"]),
        node("Loop", ["inner_trip", "", "t_0"], ["t"], body=inner),
        node("ConcatFromSequence", ["t"], ["row"], axis=0),
        node("SequenceInsert", ["s_in", "row"], ["s_out"]),
    ]
    made = _list_from_empty(
        body,
        [node("ConcatFromSequence", ["s"], ["joined"], axis=0)],
        [typed("joined", T.FLOAT, None)],
    )
    return made, _x_runs([3, 1, 5], length=2)


def _tensor_type(elem_type: int = T.FLOAT) -> onnx.TypeProto:
    return onnx.helper.make_tensor_type_proto(elem_type, None)


@scenario
def optional_tensor_and_optional_sequence_carried():
    """An Optional tensor starting absent (Optional() of a type): y = get(o) + x if present else
    x; and an Optional sequence starting absent, filled as in test_loop16_seq_none."""
    has_then = graph(
        [node("OptionalGetElement", ["o_in"], ["old"]), node("Add", ["old", "x"], ["summed"])],
        [],
        [typed("summed", T.FLOAT, None)],
    )
    seq_then = graph([node("OptionalGetElement", ["q_in"], ["held"])], [], [seq("held")])
    seq_else = graph([node("SequenceEmpty", [], ["fresh"])], [], [seq("fresh")])
    x_branch = graph([node("Identity", ["x"], ["xx"])], [], [typed("xx", T.FLOAT, None)])
    body = [
        node("OptionalHasElement", ["o_in"], ["has"]),
        node("If", ["has"], ["y"], then_branch=has_then, else_branch=x_branch),
        node("Optional", ["y"], ["o_out"]),
        node("OptionalHasElement", ["q_in"], ["has_q"]),
        node("If", ["has_q"], ["current"], then_branch=seq_then, else_branch=seq_else),
        node("SequenceInsert", ["current", "y"], ["appended"]),
        node("Optional", ["appended"], ["q_out"]),
    ]  # fmt: skip
    seq_type = onnx.helper.make_sequence_type_proto(_tensor_type())
    after = [
        node("OptionalHasElement", ["o"], ["present"]),
        node("OptionalGetElement", ["q"], ["got"]),
        node("ConcatFromSequence", ["got"], ["history"], axis=0, new_axis=1),
    ]
    made = _loop_model(
        body,
        [optional("o_in", _tensor_type()), optional("q_in", seq_type)],
        [optional("o_out", _tensor_type()), optional("q_out", seq_type)],
        [
            node("Optional", [], ["o_0"], type=_tensor_type()),
            node("Optional", [], ["q_0"], type=seq_type),
        ],  # fmt: skip
        ["o", "q"],
        after,
        [typed("present", T.BOOL, []), typed("history", T.FLOAT, None)],
    )
    return made, _x_runs([3, 1, 6])
