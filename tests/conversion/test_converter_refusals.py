"""`convert` refuses what it cannot turn into IR that OpenVINO loads: one line, exit 1, nothing
written, and every unsupported item listed before OpenVINO's frontend can crash on it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from ov_loops.conversion.driver import convert_model
from ov_loops.errors import ConversionError, UnsupportedError, UnsupportedItem
from ov_loops.frontends.onnx.load.prepare import PreparedModel
from ov_loops.loopir.passes.pipeline import LoweringOptions, target_profile
from tests.harness import assert_one_line_error, run_cli, write
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed


def _assert_refused(tmp_path, made: onnx.ModelProto, *fragments: str) -> None:
    """`convert` exits 1 with one stderr line holding `fragments` and writes nothing."""
    source = write(tmp_path, made)
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out.xml"))
    assert_one_line_error(result, 1, *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


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
        convert_model(PreparedModel(model(main)))


def test_unsupported_items_of_one_node_are_listed_in_a_fixed_order():
    """Items at the same path and op are ordered by their description, not by set order."""
    items = [UnsupportedItem("Loop", "", 16, "main/Loop_0", f"reason {name}") for name in "dbca"]
    message = str(UnsupportedError(items))
    assert [message.index(f"reason {name}") for name in "abcd"] == sorted(
        message.index(f"reason {name}") for name in "abcd"
    )


def test_a_refused_nested_loop_is_named_not_the_ops_after_it():
    """NPU refuses the innermost loop of three; the ReduceSums reading its outputs were left
    unconverted by the frontend and used to be blamed instead ("ReduceSum-17 ... no OpenVINO
    conversion rule"), the loop's own reason lost."""
    from tests.loop_scenarios import SCENARIOS

    made, _ = SCENARIOS["loop_nested_three_deep_with_captures"]()
    with pytest.raises(UnsupportedError) as raised:
        convert_model(PreparedModel(made), LoweringOptions(target_profile("NPU")))
    [item] = raised.value.items
    assert item.path == "main/Loop_0/body/Loop_0/body/Loop_1" and "NPU needs" in item.reason


def test_a_refused_loop_is_listed_with_the_unsupported_ops_elsewhere():
    """An unknown op beside an NPU-refused loop: both listed; the Neg after the loop is not."""
    body = loop_body(
        [node("Add", ["s_in", "s_in"], ["s_out"]), node("Identity", ["cond_in"], ["go"])],
        [typed("s_in", T.FLOAT, [2])],
        [typed("go", T.BOOL, []), typed("s_out", T.FLOAT, [2])],
    )
    main = graph(
        [
            node("Gizmo", ["x"], ["g"], domain="acme"),
            node("Loop", ["M", "", "x"], ["s"], body=body),
            node("Neg", ["s"], ["n"]),
        ],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("g", T.FLOAT, [2]), typed("n", T.FLOAT, [2])],
    )
    made = onnx.helper.make_model(
        main, opset_imports=[onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("acme", 1)]
    )
    with pytest.raises(UnsupportedError) as raised:
        convert_model(PreparedModel(made), LoweringOptions(target_profile("NPU")))
    assert [(item.op, item.path) for item in raised.value.items] == [
        ("Gizmo", "main/Gizmo_0"),
        ("Loop", "main/Loop_1"),
    ]


def test_a_refused_loop_is_named_not_the_reduce_sum_reading_it(tmp_path):
    """A Loop refused in one line (its carried value gains a dim every iteration: a Loop-5
    port of dynamic rank) read by a ReduceSum: the frontend leaves the ReduceSum unconverted
    too (the failed loop gives it no typed input), and it was reported as an unsupported
    ReduceSum instead of the loop's refusal (differential fuzzing, issue 20; the fuzz case, a
    value entering as [1] and returned as [2], now converts: its zero runs go to an If)."""
    body = loop_body(
        [node("Unsqueeze", ["c_in", "zero"], ["c_out"]), node("Identity", ["cond_in"], ["keep"])],
        [typed("c_in", T.FLOAT, None)],
        [typed("keep", T.BOOL, []), typed("c_out", T.FLOAT, None)],
        initializers=[const("zero", [0], np.int64)],
    )
    main = graph(
        [
            node("Loop", ["M", "", "c0"], ["c"], body=body, name="grows"),
            node("ReduceSum", ["c"], ["total"], keepdims=0),
        ],
        [typed("M", T.INT64, []), typed("c0", T.FLOAT, [1])],
        [typed("total", T.FLOAT, [])],
    )
    _assert_refused(tmp_path, model(main), "main/grows: Loop-5", "dynamic rank")
