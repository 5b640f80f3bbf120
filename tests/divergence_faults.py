"""Faults for `check`'s divergence locator, each named for where it strikes: a model, its
feeds, a fault that makes OpenVINO and the reference part ways at a known place, and what the
locator must report there.

A fault adds `bump` to one value wherever that value exceeds `above`: on the device (the
tensor of that name in the converted model, `tensor`) or in the IR reference (the layer of
that name, `layer`), so the first iteration it strikes follows from the data alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx

from tests.onnx_builders import T, const, graph, loop_body, model, node, typed
from tests.registry import Registry
from tests.sequence_scenarios import OPSET, seq

F = np.float32
FAULTS: Registry = Registry("Divergence fault")
fault = FAULTS.register


@dataclass(frozen=True)
class Fault:
    """A model, its feeds, where the fault is injected, and the Divergence fields expected."""

    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    expected: dict
    tensor: str | None = None  # on the device: the converted model's tensor of this name
    layer: str | None = None  # in the IR reference: the IR layer of this name
    above: float = -np.inf
    bump: float = 100.0
    as_ir: bool = False  # check the converted IR instead of the ONNX model
    also: dict = field(default_factory=dict)


def _counter_loop(name: str, trips: str, start: str, outputs: list[str], bump_name: str):
    """Loop `name` over `trips` carrying a (+1 each iteration, node `bump_name`) and b (* 2)."""
    body = loop_body(
        [
            node("Add", ["a_in", "one"], ["a_out"], name=bump_name),
            node("Mul", ["b_in", "two"], ["b_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("a_in", T.FLOAT, [2]), typed("b_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("a_out", T.FLOAT, [2]), typed("b_out", T.FLOAT, [2])],
        initializers=[const("one", np.ones(2)), const("two", np.full(2, 2))],
        iteration=f"{name}_i",
        condition="cond_in",
    )
    return node("Loop", [trips, "", start, "b0"], outputs, body=body, name=name)


def _nested_counters() -> onnx.ModelProto:
    """Loop 'outer' (M times) runs Loop 'inner' (N times) from the outer value acc; acc becomes
    the inner loop's last a: after outer o, inner k, a = acc0 + N * o + k + 1."""
    outer = loop_body(
        [
            _counter_loop("inner", "N", "acc_in", ["a_last", "b_last"], "bump"),
            node("Identity", ["a_last"], ["acc_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("acc_in", T.FLOAT, [2])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, [2])],
        iteration="outer_i",
    )
    main = graph(
        [node("Loop", ["M", "", "acc0"], ["acc"], body=outer, name="outer")],
        [
            typed("M", T.INT64, []),
            typed("N", T.INT64, []),
            typed("acc0", T.FLOAT, [2]),
            typed("b0", T.FLOAT, [2]),
        ],
        [typed("acc", T.FLOAT, [2])],
    )
    return model(main)


NESTED_FEEDS = {
    "M": np.array(4, np.int64),
    "N": np.array(3, np.int64),
    "acc0": np.array([0, -10], F),
    "b0": np.array([1, 2], F),
}


@fault
def nested_loop_inner_value_from_outer_iteration_2():
    """a = 3 * o + k + 1 exceeds 7.5 first at outer 2, inner 1 (a = 8), element [0]."""
    expected = {
        "kind": "carried",
        "where": "main/outer[2]/body/inner[1]",
        "loop_path": "main/outer/body/inner",
        "iterations": (2, 1),
        "carried_index": 0,
        "value": "acc_in",
    }
    return Fault(_nested_counters(), NESTED_FEEDS, expected, tensor="a_out", above=7.5)


@fault
def nested_loop_in_the_ir_reference_from_outer_iteration_3():
    """The same loops checked as IR; the IR reference's 'bump' goes wrong above 9.5 (a = 10 at
    outer 3, inner 0)."""
    expected = {
        "kind": "carried",
        "where": "main/outer[3]/body/inner[0]",
        "iterations": (3, 0),
        "carried_index": 0,
    }
    return Fault(_nested_counters(), NESTED_FEEDS, expected, layer="a_out", above=9.5, as_ir=True)


def _two_counters() -> onnx.ModelProto:
    main = graph(
        [_counter_loop("counters", "M", "a0", ["a", "b"], "bump")],
        [typed("M", T.INT64, []), typed("a0", T.FLOAT, [2]), typed("b0", T.FLOAT, [2])],
        [typed("a", T.FLOAT, [2]), typed("b", T.FLOAT, [2])],
    )
    return model(main)


@fault
def ir_only_second_carried_value_from_iteration_2():
    """b doubles from [3, 4]: 6, 12, 24 > 20 at iteration 2; a (+1) never exceeds it."""
    feeds = {"M": np.array(5, np.int64), "a0": np.zeros(2, F), "b0": np.array([3, 4], F)}
    expected = {
        "kind": "carried",
        "where": "main/counters[2]",
        "iterations": (2,),
        "carried_index": 1,
        "value": "b_in",
    }
    return Fault(_two_counters(), feeds, expected, layer="b_out", above=20, as_ir=True)


def _expand_then_scan() -> onnx.ModelProto:
    """x [3] expanded to [4, 3], then a Scan of running sums over its rows."""
    body = graph(
        [node("Add", ["s_in", "x_t"], ["s_out"]), node("Identity", ["s_out"], ["y_t"])],
        [typed("s_in", T.FLOAT, [3]), typed("x_t", T.FLOAT, [3])],
        [typed("s_out", T.FLOAT, [3]), typed("y_t", T.FLOAT, [3])],
        name="body",
    )
    main = graph(
        [
            node("Expand", ["x", "shape"], ["xs"], name="expand"),
            node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1, name="scan"),
        ],
        [typed("x", T.FLOAT, [3]), typed("s0", T.FLOAT, [3])],
        [typed("s", T.FLOAT, [3]), typed("ys", T.FLOAT, [4, 3])],
        [const("shape", [4, 3], np.int64)],
    )
    return model(main)


EXPAND_FEEDS = {"x": np.array([1, 2, 3], F), "s0": np.zeros(3, F)}


@fault
def expand_before_a_scan_on_the_device():
    """OpenVINO's Expand output is off everywhere: the Scan after it diverges too, but the
    Expand is blamed."""
    expected = {"kind": "node", "node": "Expand 'expand'", "value": "xs", "loop_path": None}
    return Fault(_expand_then_scan(), EXPAND_FEEDS, expected, tensor="xs")


@fault
def expand_before_a_scan_in_the_ir_reference():
    """The IR reference's Broadcast 'expand' is off: the IR locator blames that layer."""
    expected = {"kind": "node", "node": "Broadcast 'expand'", "loop_path": None}
    return Fault(_expand_then_scan(), EXPAND_FEEDS, expected, layer="expand", as_ir=True)


def _list_growing_from_its_last_element() -> onnx.ModelProto:
    """s = [x, 2x, 3x]; M times: s.append(s[-1] + 1) (the read keeps s a carried sequence);
    outputs the concatenated list and its length."""
    body = loop_body(
        [
            node("Constant", [], ["last_at"], value=onnx.numpy_helper.from_array(np.array(-1))),
            node("SequenceAt", ["s_in", "last_at"], ["last"]),
            node("Add", ["last", "one"], ["grown"], name="grow"),
            node("SequenceInsert", ["s_in", "grown"], ["s_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [seq("s_in")],
        [typed("go", T.BOOL, []), seq("s_out")],
        initializers=[const("one", 1.0)],
    )
    main = graph(
        [
            node("Add", ["x", "x"], ["x2"]),
            node("Add", ["x2", "x"], ["x3"]),
            node("SequenceConstruct", ["x", "x2", "x3"], ["s_0"]),
            node("Loop", ["M", "", "s_0"], ["s"], body=body, name="appends"),
            node("ConcatFromSequence", ["s"], ["joined"], axis=0),
            node("SequenceLength", ["s"], ["n"]),
        ],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [3])],
        [typed("joined", T.FLOAT, None), typed("n", T.INT64, [])],
    )
    return model(main, OPSET)


@fault
def sequence_carried_element_appended_in_iteration_2():
    """Appended elements are 3x + i + 1 = [4 + i, 7 + i, 10 + i]: above 11.5 first at
    iteration 2, the list's element 5, position [2]."""
    feeds = {"M": np.array(4, np.int64), "x": np.array([1, 2, 3], F)}
    expected = {
        "kind": "carried",
        "where": "main/appends[2]",
        "iterations": (2,),
        "carried_index": 0,
        "value": "s_0",
        "element": 5,
    }
    fragment = "carried value 0 's_0' element 5 (shape [3]) diverges at [2]: 112 vs reference 12"
    also = {"text": fragment}
    return Fault(
        _list_growing_from_its_last_element(), feeds, expected, "grown", above=11.5, also=also
    )


@fault
def scan_output_only_while_the_state_agrees():
    """The Scan's stacked output (not its state) is off from row 2 on (running sums of [1, 2, 3]
    rows: 3x > 6.5 at row 2): the loop's output is blamed, its carried values agreeing."""
    body = graph(
        [node("Add", ["s_in", "x_t"], ["s_out"]), node("Mul", ["s_out", "three"], ["y_t"])],
        [typed("s_in", T.FLOAT, [3]), typed("x_t", T.FLOAT, [3])],
        [typed("s_out", T.FLOAT, [3]), typed("y_t", T.FLOAT, [3])],
        [const("three", np.full(3, 3))],
        name="body",
    )
    main = graph(
        [node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1, name="scan")],
        [typed("s0", T.FLOAT, [3]), typed("xs", T.FLOAT, [4, 3])],
        [typed("s", T.FLOAT, [3]), typed("ys", T.FLOAT, [4, 3])],
    )
    feeds = {"s0": np.zeros(3, F), "xs": np.ones((4, 3), F)}
    expected = {"kind": "loop output", "node": "Scan 'scan'", "value": "ys"}
    return Fault(model(main), feeds, expected, tensor="y_t", above=6.5)


@fault
def while_loop_stopping_early():
    """keep = a + 0.5 < 10 (a = iteration number): the reference runs 11 iterations; the
    device's a + 0.5 is off from a = 5 on, so it stops after 6, its carried values agreeing."""
    body = loop_body(
        [
            node("Add", ["a_in", "one"], ["a_out"]),
            node("Add", ["a_in", "half"], ["t"]),
            node("Less", ["t", "limit"], ["keep"]),
        ],
        [typed("a_in", T.FLOAT, [])],
        [typed("keep", T.BOOL, []), typed("a_out", T.FLOAT, [])],
        initializers=[const("one", 1.0), const("half", 0.5), const("limit", 10.0)],
    )
    main = graph(
        [node("Loop", ["M", "go", "a0"], ["a"], body=body, name="while")],
        [typed("M", T.INT64, []), typed("go", T.BOOL, []), typed("a0", T.FLOAT, [])],
        [typed("a", T.FLOAT, [])],
    )
    feeds = {"M": np.array(20, np.int64), "go": np.array(True), "a0": np.array(0, F)}
    expected = {
        "kind": "iterations",
        "where": "main/while[6]",
        "iterations": (6,),
        "detail": "the reference runs 11 iterations, the device 6",
    }
    return Fault(model(main), feeds, expected, tensor="t", above=5)
