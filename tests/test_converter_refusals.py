"""`convert` refuses what it cannot turn into IR that OpenVINO loads: one line, exit 1, nothing
written, and every unsupported item listed before OpenVINO's frontend can crash on it."""

from __future__ import annotations

import onnx

from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.test_cli import assert_one_line_error, run_cli, write


def _sequence(name: str) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, None)


def _assert_refused(tmp_path, made: onnx.ModelProto, *fragments: str) -> str:
    source = write(tmp_path, made)
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out.xml"))
    assert_one_line_error(result, 1, *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]
    return result.stderr


def test_framework_ops_for_sequences_and_optionals_are_unsupported(tmp_path):
    """The frontend turns SequenceLength / SequenceAt on an unknown sequence and a returned
    SequenceConstruct into internal util:: ops (SequenceLength, SequenceAt, SequenceMark), which
    no device runs; with Optional ops they are all listed, If branches included."""
    then_branch = graph(
        [node("SequenceAt", ["s", "k"], ["picked"])],
        [],
        [typed("picked", T.FLOAT, None)],
        name="then",
    )
    else_branch = graph(
        [node("Identity", ["x"], ["same"])], [], [typed("same", T.FLOAT, None)], name="else"
    )
    main = graph(
        [
            node("SequenceLength", ["s"], ["n"]),
            node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch),
            node("SequenceConstruct", ["x", "x"], ["pair"], name="make_pair"),
            node("Optional", ["x"], ["maybe"]),
            node("OptionalHasElement", ["maybe"], ["has"]),
        ],
        [_sequence("s"), typed("k", T.INT64, []), typed("c", T.BOOL, []), typed("x", T.FLOAT, [2])],
        [
            typed("n", T.INT64, []),
            typed("y", T.FLOAT, None),
            _sequence("pair"),
            typed("has", T.BOOL, []),
        ],
    )
    _assert_refused(
        tmp_path,
        model(main, 18),
        "5 unsupported",
        "ai.onnx.SequenceLength-18 at main/SequenceLength_0",
        "ai.onnx.SequenceAt-18 at main/If_1/then_branch/SequenceAt_0",
        "ai.onnx.SequenceConstruct-18 at main/make_pair",
        "ai.onnx.Optional-18 at main/Optional_3",
        "ai.onnx.OptionalHasElement-18 at main/OptionalHasElement_4",
    )


def _sequence_loop(name: str, initial: str) -> onnx.NodeProto:
    body = graph(
        [node("Identity", ["cond_in"], ["keep"]), node("Identity", ["s_in"], ["s_out"])],
        [typed("i", T.INT64, []), typed("cond_in", T.BOOL, []), _sequence("s_in")],
        [typed("keep", T.BOOL, []), _sequence("s_out")],
        name="body",
    )
    return node("Loop", ["M", "", initial], [f"{name}_s"], body=body, name=name)


def test_sequence_loop_in_if_branch_is_reported_before_the_frontend_runs(tmp_path):
    """A Sequence-carrying Loop in an If branch, and another one in the body of a Loop in the
    other branch: both are listed, before OpenVINO's frontend (which fails or crashes on them)
    sees the model. Run through the CLI, so a crash fails the test rather than pytest."""
    then_branch = graph(
        [
            node("SequenceConstruct", ["x", "x"], ["s0"]),
            _sequence_loop("seq_loop", "s0"),
            node("SequenceLength", ["seq_loop_s"], ["n_then"]),
        ],
        [],
        [typed("n_then", T.INT64, [])],
        name="then",
    )
    inner_body = loop_body(
        [
            node("SequenceConstruct", ["x"], ["t0"]),
            _sequence_loop("inner_seq_loop", "t0"),
            node("SequenceLength", ["inner_seq_loop_s"], ["count"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [],
        [typed("keep", T.BOOL, []), typed("count", T.INT64, [])],
    )
    else_branch = graph(
        [
            node("Loop", ["M", ""], ["counts"], body=inner_body, name="outer"),
            node("ReduceSum", ["counts"], ["n_else"], keepdims=0),
        ],
        [],
        [typed("n_else", T.INT64, [])],
        name="else",
    )
    main = graph(
        [node("If", ["c"], ["n"], then_branch=then_branch, else_branch=else_branch, name="pick")],
        [typed("M", T.INT64, []), typed("c", T.BOOL, []), typed("x", T.FLOAT, [2])],
        [typed("n", T.INT64, [])],
    )
    _assert_refused(
        tmp_path,
        model(main),
        "2 unsupported",
        "ai.onnx.Loop-17 at main/pick/then_branch/seq_loop (sequence-typed loop-carried value",
        "ai.onnx.Loop-17 at main/pick/else_branch/outer/body/inner_seq_loop (sequence-typed",
    )
