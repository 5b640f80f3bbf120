"""ONNX Loops carrying a list that TorchScript builds by appending, each named for what it
exercises, in the shape torch.onnx.export gives them: M = Gather(Shape(X), 0), a constant true
condition, a hidden state h and a list carried, `SequenceInsert(list, h)` in the body, the list
stacked or concatenated after the loop.

APPENDED (the fast path applies: the rewritten model has no sequence op left) and NOT_APPENDED
(it must not: append inside an If, list read in the body or after the loop by position, insert
at a position, elements of varying length concatenated). Each builder returns (model, runs);
the runs have different trip counts (T) and, with an inner loop, inner trip counts (K).
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.onnx_builders import T, const, graph, loop_body, model, node, typed
from tests.registry import Registry

APPENDED: Registry = Registry("append-only list scenario")
NOT_APPENDED: Registry = Registry("list scenario outside the fast path")
appended = APPENDED.register
not_appended = NOT_APPENDED.register

B, H = 2, 3


def _list(name: str) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, None)


def _cell(h_in: str, x: str, h_out: str) -> list[onnx.NodeProto]:
    """h_out = tanh(h_in @ W + x): the RNN step every scenario runs."""
    return [
        node("MatMul", [h_in, "W"], [f"{h_out}_hw"]),
        node("Add", [f"{h_out}_hw", x], [f"{h_out}_sum"]),
        node("Tanh", [f"{h_out}_sum"], [h_out]),
    ]


def _torch_loop(body_nodes, after, outputs, initial=None, extra_inputs=()) -> onnx.ModelProto:
    """Main graph: M = X.shape[0], Loop(M, true, h0, list) whose body reads x = X[i] and runs
    `body_nodes` (which make h_out and list_out); `after` reads h_final and list_final."""
    initial = initial or [node("SequenceEmpty", [], ["list0"], dtype=T.FLOAT)]
    body = loop_body(
        [node("Gather", ["X", "i"], ["x"], axis=0), *body_nodes, node("Identity", ["c"], ["go"])],
        [typed("h_in", T.FLOAT, None), _list("list_in")],
        [typed("go", T.BOOL, []), typed("h_out", T.FLOAT, None), _list("list_out")],
        condition="c",
    )
    nodes = [
        node("Shape", ["X"], ["X_shape"]),
        node("Gather", ["X_shape", "zero"], ["M"], axis=0),
        node("Constant", [], ["true"], value=onnx.helper.make_tensor("", T.BOOL, [], [True])),
        *initial,
        node("Loop", ["M", "true", "h0", "list0"], ["h_final", "list_final"], body=body),
        *after,
    ]
    inputs = [typed("X", T.FLOAT, ["T", B, H]), typed("h0", T.FLOAT, [B, H]), *extra_inputs]
    weights = [const("W", np.linspace(-1, 1, H * H).reshape(H, H)), const("zero", 0, np.int64)]
    return model(graph(nodes, inputs, outputs, weights))


def _runs(*trip_counts: int, **extra) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(len(trip_counts))
    return [
        {
            "X": rng.normal(size=(t, B, H)).astype(np.float32),
            "h0": rng.normal(size=(B, H)).astype(np.float32),
            **{name: np.array(value, np.int64) for name, value in extra.items()},
        }
        for t in trip_counts
    ]


def _appending(after, outputs, initial=None):
    body = [
        *_cell("h_in", "x", "h_out"),
        node("SequenceInsert", ["list_in", "h_out"], ["list_out"]),
    ]
    return _torch_loop(body, after, [typed("h_final", T.FLOAT, [B, H]), *outputs], initial)


_STARTING_WITH_TWO = [
    node("Add", ["h0", "h0"], ["h0_twice"]),
    node("SequenceConstruct", ["h0", "h0_twice"], ["list0"]),
]


def concatenated_list(axis: int, new_axis: int, prepended: bool = False) -> onnx.ModelProto:
    """The list of h stacked (new_axis 1) or concatenated on `axis`; with `prepended`, the
    list starts as [h0, h0 * 2]."""
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=axis, new_axis=new_axis)]
    initial = _STARTING_WITH_TWO if prepended else None
    return _appending(after, [typed("Y", T.FLOAT, None)], initial)


def _concat(axis: int, new_axis: int):
    return concatenated_list(axis, new_axis), _runs(3, 5, 1)


@appended
def stack_axis_0():
    """torch.stack(out): [T, B, H]."""
    return _concat(0, 1)


@appended
def stack_axis_1():
    """torch.stack(out, 1): [B, T, H] (a Transpose of the scan output)."""
    return _concat(1, 1)


@appended
def stack_axis_last_negative():
    """torch.stack(out, -1): axis -1 ranges over rank + 1, so [B, H, T]."""
    return _concat(-1, 1)


@appended
def cat_axis_0():
    """torch.cat(out): [T * B, H] (a Reshape of the scan output)."""
    return _concat(0, 0)


@appended
def cat_axis_1():
    """torch.cat(out, 1): [B, T * H] (Transpose, then Reshape)."""
    return _concat(1, 0)


@appended
def cat_axis_first_negative():
    """torch.cat(out, -2): axis -2 of rank 2 is axis 0."""
    return _concat(-2, 0)


@appended
def stack_and_length_of_one_list():
    """Two readers of one list: stack it and take its length (= the iterations run)."""
    after = [
        node("ConcatFromSequence", ["list_final"], ["Y"], axis=1, new_axis=1),
        node("SequenceLength", ["list_final"], ["n"]),
    ]
    outputs = [typed("Y", T.FLOAT, None), typed("n", T.INT64, [])]
    return _appending(after, outputs), _runs(4, 2)


@appended
def list_starting_with_two_tensors_stacked_and_concatenated():
    """out = [h0, h0 * 2] before the loop: the prepended tensors come first. Zero iterations
    are defined here (the list is never empty), so a run with T = 0 is included."""
    after = [
        node("ConcatFromSequence", ["list_final"], ["S"], axis=-1, new_axis=1),
        node("ConcatFromSequence", ["list_final"], ["C"], axis=1, new_axis=0),
        node("SequenceLength", ["list_final"], ["n"]),
    ]
    outputs = [typed("S", T.FLOAT, None), typed("C", T.FLOAT, None), typed("n", T.INT64, [])]
    return _appending(after, outputs, _STARTING_WITH_TWO), _runs(3, 0, 6)


@appended
def list_never_read_after_the_loop():
    """The final list is unused: the appends go away, no scan output is added."""
    return _appending([], []), _runs(2, 4)


@appended
def two_lists_in_one_loop():
    """hs.append(h); xs.append(x * h): two lists of one loop, stacked on 1 and cat on -1."""
    body = [
        *_cell("h_in", "x", "h_out"),
        node("SequenceInsert", ["list_in", "h_out"], ["list_out"]),
        node("Mul", ["x", "h_out"], ["xh"]),
        node("SequenceInsert", ["other_in", "xh"], ["other_out"]),
    ]
    made = _torch_loop(
        body,
        [
            node("ConcatFromSequence", ["list_final"], ["Y"], axis=1, new_axis=1),
            node("ConcatFromSequence", ["other_final"], ["Z"], axis=-1, new_axis=0),
        ],
        [typed("Y", T.FLOAT, None), typed("Z", T.FLOAT, None)],
    )
    loop = next(each for each in made.graph.node if each.op_type == "Loop")
    loop.input.append("list0")  # both lists start from the same SequenceEmpty
    loop.output.append("other_final")
    loop.attribute[0].g.input.append(_list("other_in"))
    loop.attribute[0].g.output.append(_list("other_out"))
    return made, _runs(2, 5)


def _inner_loop(list_name: str, stacked: str, axis: int) -> list[onnx.NodeProto]:
    """A Loop of K steps inside a body: g = tanh(g @ W + x) appended to its own list, stacked
    on `axis` into `stacked`; g_final becomes h_out."""
    inner = loop_body(
        [
            *_cell("g_in", "x", "g_out"),
            node("SequenceInsert", ["inner_in", "g_out"], ["inner_out"]),
            node("Identity", ["c2"], ["go2"]),
        ],
        [typed("g_in", T.FLOAT, None), _list("inner_in")],
        [typed("go2", T.BOOL, []), typed("g_out", T.FLOAT, None), _list("inner_out")],
        iteration="j",
        condition="c2",
    )
    return [
        node("SequenceEmpty", [], [list_name], dtype=T.FLOAT),
        node("Loop", ["K", "", "h_in", list_name], ["h_out", "inner_final"], body=inner),
        node("ConcatFromSequence", ["inner_final"], [stacked], axis=axis, new_axis=1),
    ]


@appended
def lists_in_loops_nested_2_deep():
    """for i: (inner = []; for j in range(K): inner.append(g)); out.append(stack(inner, 1));
    then stack(out): [T, B, K, H]."""
    body = [
        *_inner_loop("inner0", "inner_stacked", 1),
        node("SequenceInsert", ["list_in", "inner_stacked"], ["list_out"]),
    ]
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=1)]
    outputs = [typed("h_final", T.FLOAT, [B, H]), typed("Y", T.FLOAT, None)]
    made = _torch_loop(body, after, outputs, extra_inputs=[typed("K", T.INT64, [])])
    return made, _runs(3, 2, K=2) + _runs(4, K=3)


@appended
def list_appended_in_the_inner_loop_only():
    """The outer loop carries no list; its body's inner loop builds and stacks one, which the
    outer loop emits as a scan output: [T, K, B, H]."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["x"], axis=0),
            *_inner_loop("inner0", "inner_stacked", 0),
            node("Identity", ["c"], ["go"]),
        ],
        [typed("h_in", T.FLOAT, None)],
        [
            typed("go", T.BOOL, []),
            typed("h_out", T.FLOAT, None),
            typed("inner_stacked", T.FLOAT, None),
        ],
        condition="c",
    )
    nodes = [
        node("Shape", ["X"], ["X_shape"]),
        node("Gather", ["X_shape", "zero"], ["M"], axis=0),
        node("Loop", ["M", "", "h0"], ["h_final", "Y"], body=body),
    ]
    inputs = [typed("X", T.FLOAT, ["T", B, H]), typed("h0", T.FLOAT, [B, H])]
    inputs.append(typed("K", T.INT64, []))
    outputs = [typed("h_final", T.FLOAT, [B, H]), typed("Y", T.FLOAT, None)]
    weights = [const("W", np.linspace(-1, 1, H * H).reshape(H, H)), const("zero", 0, np.int64)]
    made = model(graph(nodes, inputs, outputs, weights))
    return made, _runs(2, K=4) + _runs(5, 3, K=1)


def _threaded(trip_count_nodes, condition_nodes, after, outputs) -> onnx.ModelProto:
    """for i in range(T): for j in range(K_i): h = cell(h, X[i]); out.append(h): the list is
    carried through the inner loop. `trip_count_nodes` make K_i ("K_i"), `condition_nodes` the
    inner body's condition ("go2")."""
    inner = loop_body(
        [
            *_cell("g_in", "x", "g_out"),
            node("SequenceInsert", ["inner_in", "g_out"], ["inner_out"]),
            *condition_nodes,
        ],
        [typed("g_in", T.FLOAT, None), _list("inner_in")],
        [typed("go2", T.BOOL, []), typed("g_out", T.FLOAT, None), _list("inner_out")],
        iteration="j",
        condition="c2",
    )
    body = [
        *trip_count_nodes,
        node("Loop", ["K_i", "true", "h_in", "list_in"], ["h_out", "list_out"], body=inner),
    ]
    made = _torch_loop(body, after, outputs, extra_inputs=[typed("K", T.INT64, [])])
    made.graph.initializer.append(const("two", 2, np.int64))
    return made


_INNER_RUNS_ITS_TRIP_COUNT = [node("Identity", ["true"], ["go2"])]


@appended
def list_threaded_through_an_inner_loop():
    """for i: for j in range(K): out.append(h); stack(out, 1) and len(out): [B, T * K, H]."""
    after = [
        node("ConcatFromSequence", ["list_final"], ["Y"], axis=1, new_axis=1),
        node("SequenceLength", ["list_final"], ["n"]),
    ]
    outputs = [typed("Y", T.FLOAT, None), typed("n", T.INT64, [])]
    trip_count = [node("Identity", ["K"], ["K_i"])]
    made = _threaded(trip_count, _INNER_RUNS_ITS_TRIP_COUNT, after, outputs)
    return made, _runs(3, 2, K=2) + _runs(4, K=3)


@appended
def list_threaded_through_an_inner_loop_of_constant_count():
    """for i: for j in range(2): out.append(h); cat(out): [T * 2 * B, H]. The inner trip count
    is a Constant in the outer body."""
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=0)]
    trip_count = [node("Constant", [], ["K_i"], value=onnx.numpy_helper.from_array(np.array(2)))]
    made = _threaded(trip_count, _INNER_RUNS_ITS_TRIP_COUNT, after, [typed("Y", T.FLOAT, None)])
    return made, _runs(3, 1, K=0) + _runs(2, K=0)


# -- outside the fast path -------------------------------------------------------------------
def _stacked_after(body_nodes, after=None, extra_inputs=(), initializers=()):
    """A torch loop whose body runs the cell into h_out and then `body_nodes`; stack after."""
    after = after or [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=1)]
    outputs = [typed("h_final", T.FLOAT, [B, H]), typed("Y", T.FLOAT, None)]
    body = [*_cell("h_in", "x", "h_out"), *body_nodes]
    made = _torch_loop(body, after, outputs, None, extra_inputs)
    made.graph.initializer.extend(initializers)
    return made


@not_appended
def append_inside_an_if():
    """if flag: out.append(h): the append does not run in every iteration."""
    then = graph(
        [node("SequenceInsert", ["list_in", "h_out"], ["then_list"])],
        [],
        [_list("then_list")],
        name="then",
    )
    otherwise = graph(
        [node("Identity", ["list_in"], ["else_list"])], [], [_list("else_list")], name="else"
    )
    body = [node("If", ["flag"], ["list_out"], then_branch=then, else_branch=otherwise)]
    made = _stacked_after(body, extra_inputs=[typed("flag", T.BOOL, [])])
    runs = _runs(3, 5)
    for run in runs:
        run["flag"] = np.array(True)
    return made, runs


@not_appended
def list_read_by_position_in_the_body():
    """out.append(h); out[0] is read inside the loop (SequenceAt in the body)."""
    body = [
        node("SequenceInsert", ["list_in", "h_out"], ["list_out"]),
        node("SequenceAt", ["list_out", "zero"], ["first"]),
        node("Identity", ["first"], ["unused_first"]),
    ]
    return _stacked_after(body), _runs(3, 5)


@not_appended
def list_read_by_position_after_the_loop():
    """out[0] after the loop."""
    after = [node("SequenceAt", ["list_final", "zero"], ["Y"])]
    body = [node("SequenceInsert", ["list_in", "h_out"], ["list_out"])]
    return _stacked_after(body, after), _runs(3, 5)


@not_appended
def insert_at_a_position():
    """out.insert(0, h): SequenceInsert with a position."""
    body = [node("SequenceInsert", ["list_in", "h_out", "zero"], ["list_out"])]
    return _stacked_after(body), _runs(3, 5)


@not_appended
def elements_of_varying_length_concatenated():
    """out.append(h.flatten()[: i + 1]); torch.cat(out): the element grows every iteration."""
    body = _APPEND_A_GROWING_PIECE
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=0)]
    return _stacked_after(body, after, initializers=_SLICING_CONSTANTS), _runs(3, 5)


_APPEND_A_GROWING_PIECE = [  # out.append(h.flatten()[: i + 1])
    node("Reshape", ["h_out", "minus_one_1d"], ["flat"]),
    node("Add", ["i", "one"], ["i_plus_one"]),
    node("Unsqueeze", ["i_plus_one", "zero_1d"], ["end"]),
    node("Slice", ["flat", "zero_1d", "end"], ["piece"]),
    node("SequenceInsert", ["list_in", "piece"], ["list_out"]),
]
_SLICING_CONSTANTS = [
    const("minus_one_1d", [-1], np.int64),
    const("zero_1d", [0], np.int64),
    const("one", 1, np.int64),
]


@not_appended
def inner_trip_count_varying_per_outer_iteration():
    """for i: for j in range(i + 2): out.append(h): the inner loops append different counts."""
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=1)]
    trip_count = [node("Add", ["i", "two"], ["K_i"])]
    made = _threaded(trip_count, _INNER_RUNS_ITS_TRIP_COUNT, after, [typed("Y", T.FLOAT, None)])
    return made, _runs(3, 4, K=1)


@not_appended
def inner_loop_stopping_early():
    """for i: for j in range(K): out.append(h); if j >= i: break: different counts again."""
    after = [node("ConcatFromSequence", ["list_final"], ["Y"], axis=0, new_axis=1)]
    condition = [node("Less", ["j", "i"], ["go2"])]
    trip_count = [node("Identity", ["K"], ["K_i"])]
    made = _threaded(trip_count, condition, after, [typed("Y", T.FLOAT, None)])
    return made, _runs(3, 4, K=3)


@not_appended
def length_of_a_list_of_varying_elements():
    """out.append(h.flatten()[: i + 1]); len(out): no stack demands elements of one shape."""
    body = _APPEND_A_GROWING_PIECE
    after = [node("SequenceLength", ["list_final"], ["Y"])]
    made = _stacked_after(body, after, initializers=_SLICING_CONSTANTS)
    made.graph.output[1].type.tensor_type.elem_type = T.INT64  # a length, not a stack
    return made, _runs(3, 5)
