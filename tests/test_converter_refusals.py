"""`convert` refuses what it cannot turn into IR that OpenVINO loads: one line, exit 1, nothing
written, and every unsupported item listed before OpenVINO's frontend can crash on it."""

from __future__ import annotations

import onnx
import pytest

from ov_loops.conversion.driver import convert_model
from ov_loops.errors import ConversionError, UnsupportedError, UnsupportedItem
from tests.harness import assert_one_line_error, run_cli, write
from tests.onnx_builders import T, graph, loop_body, model, node, typed


def _sequence(name: str) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, None)


def _assert_refused(tmp_path, made: onnx.ModelProto, *fragments: str) -> None:
    """`convert` exits 1 with one stderr line holding `fragments` and writes nothing."""
    source = write(tmp_path, made)
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out.xml"))
    assert_one_line_error(result, 1, *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


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


def test_sequence_split_outside_a_loop_and_read_in_its_body_are_both_unsupported(tmp_path):
    """SplitToSequence with lengths known only at run time becomes a util:: op in the main
    graph; the body that reads the sequence at the iteration number holds another."""
    ones = onnx.helper.make_tensor("ones", T.INT64, [1], [1])
    body = graph(
        [
            node("SequenceAt", ["parts", "i"], ["part"]),
            node("Add", ["acc_in", "part"], ["acc_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("i", T.INT64, [1]), typed("cond_in", T.BOOL, []), typed("acc_in", T.FLOAT, [1])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [1])],
        name="body",
    )
    main = graph(
        [
            node("Shape", ["data"], ["data_shape"]),
            node("ConstantOfShape", ["data_shape"], ["lengths"], value=ones),
            node("SplitToSequence", ["data", "lengths"], ["parts"], axis=0, name="split"),
            node("Loop", ["M", "", "acc0"], ["acc"], body=body, name="sum_parts"),
        ],
        [typed("data", T.FLOAT, ["N"]), typed("M", T.INT64, []), typed("acc0", T.FLOAT, [1])],
        [typed("acc", T.FLOAT, [1])],
    )
    _assert_refused(
        tmp_path,
        model(main, 16),
        "2 unsupported",
        "ai.onnx.SplitToSequence-16 at main/split",
        "ai.onnx.SequenceAt-16 at main/sum_parts/body/SequenceAt_0",
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


def _scan_body() -> onnx.GraphProto:
    return graph(
        [node("Add", ["s_in", "x_t"], ["s_out"]), node("Identity", ["s_out"], ["y_t"])],
        [typed("s_in", T.FLOAT, None), typed("x_t", T.FLOAT, None)],
        [typed("s_out", T.FLOAT, None), typed("y_t", T.FLOAT, None)],
        name="body",
    )


def _scan_with_inputs(inputs: list[str], opset: int) -> onnx.ModelProto:
    main = graph(
        [node("Scan", inputs, ["s", "ys"], body=_scan_body(), num_scan_inputs=1, name="scan")],
        [typed("s0", T.FLOAT, None), typed("X", T.FLOAT, None)],
        [typed("s", T.FLOAT, None), typed("ys", T.FLOAT, None)],
    )
    return model(main, opset)


def _loop_with_omitted_carried_value() -> onnx.ModelProto:
    body = loop_body(
        [node("Identity", ["cond_in"], ["keep"]), node("Identity", ["v_in"], ["v_out"])],
        [typed("v_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("v_out", T.FLOAT, [2])],
    )
    inner = node("Loop", ["M", "", ""], ["v"], body=body, name="inner")
    outer_body = loop_body(
        [inner, node("Identity", ["cond_in"], ["keep"])],
        [],
        [typed("keep", T.BOOL, []), typed("v", T.FLOAT, [2])],
    )
    main = graph(
        [node("Loop", ["M", ""], ["vs"], body=outer_body, name="outer")],
        [typed("M", T.INT64, [])],
        [typed("vs", T.FLOAT, None)],
    )
    return model(main)


@pytest.mark.parametrize(
    "made, fragment",
    [
        (
            _scan_with_inputs(["", "X"], 17),
            "main/scan: Scan input 0 (initial state for body input 's_in') is omitted",
        ),
        (
            _scan_with_inputs(["s0", ""], 17),
            "main/scan: Scan input 1 (scan input for body input 'x_t') is omitted",
        ),
        (
            _scan_with_inputs(["", "", "X"], 8),
            "main/scan: Scan input 1 (initial state for body input 's_in') is omitted",
        ),
        (
            _loop_with_omitted_carried_value(),
            "main/outer/body/inner: Loop input 2 (initial value for body input 'v_in') is omitted",
        ),
    ],
    ids=["scan9_state", "scan9_scan_input", "scan8_state", "nested_loop_carried_value"],
)
def test_omitted_required_loop_input_is_refused(tmp_path, made, fragment):
    """The checker accepts an empty name for a required Loop/Scan input; the IR written for it
    could not be loaded by OpenVINO."""
    _assert_refused(tmp_path, made, fragment)


def test_loop_with_fewer_than_two_inputs_is_refused_by_the_converter():
    """The ONNX checker refuses it on the CLI (exit 2); a ModelProto handed to the converter
    directly gets a ConversionError naming the node."""
    body = loop_body([node("Identity", ["cond_in"], ["keep"])], [], [typed("keep", T.BOOL, [])])
    main = graph([node("Loop", ["M"], [], body=body, name="short")], [typed("M", T.INT64, [])], [])
    with pytest.raises(ConversionError, match="^main/short: Loop needs inputs M and cond"):
        convert_model(model(main))


def test_unsupported_items_of_one_node_are_listed_in_a_fixed_order():
    """Items at the same path and op are ordered by their description, not by set order."""
    items = [UnsupportedItem("Loop", "", 16, "main/Loop_0", f"reason {name}") for name in "dbca"]
    message = str(UnsupportedError(items))
    assert [message.index(f"reason {name}") for name in "abcd"] == sorted(
        message.index(f"reason {name}") for name in "abcd"
    )
