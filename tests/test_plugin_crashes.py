"""Valid models whose IR crashed OpenVINO's CPU plugin natively (issue 9, items 1 and 2).

Compiling and running IR that may crash the plugin happens in a subprocess, so that a
regression fails the test instead of killing pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import ConversionError
from tests.child_process import run_python_surviving
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

ROOT = Path(__file__).resolve().parents[1]

# Converts, saves, validates, compiles (CPU, f32) and runs every run against onnxruntime.
_COMPARE = """
import sys
from pathlib import Path
import numpy as np, onnx
from tests.harness import assert_matches_onnxruntime
stored = np.load(sys.argv[2])
runs = {}
for key in stored.files:
    run, name = key.split("/", 1)
    runs.setdefault(int(run), {})[name] = stored[key]
ordered = [runs[i] for i in sorted(runs)]
assert_matches_onnxruntime(onnx.load(sys.argv[1]), ordered, Path(sys.argv[3]))
"""


def assert_matches_onnxruntime_in_subprocess(
    made: onnx.ModelProto, runs: list[dict[str, np.ndarray]], directory: Path
) -> None:
    """`harness.assert_matches_onnxruntime` in a child process; a native crash fails the test."""
    onnx.save(made, directory / "model.onnx")
    np.savez(
        directory / "feeds.npz",
        **{f"{i}/{name}": value for i, feeds in enumerate(runs) for name, value in feeds.items()},
    )
    result = run_python_surviving(["-c", _COMPARE, "model.onnx", "feeds.npz", "."], directory)
    assert result.returncode == 0, result.stderr[-3000:]


# -- item 1 ---------------------------------------------------------------------------------------
def while_loops_nested_sharing_an_initializer_condition() -> onnx.ModelProto:
    """Outer and inner while-Loops (no trip count) whose conditions both read the boolean
    initializer `keep`: x counts up to `limit` in the outer loop, y in the inner one."""
    inner = loop_body(
        [
            node("Add", ["y", "one"], ["y_next"]),
            node("Less", ["y_next", "limit"], ["y_below"]),
            node("And", ["y_below", "keep"], ["y_go"]),
        ],
        [typed("y", T.FLOAT, [])],
        [typed("y_go", T.BOOL, []), typed("y_next", T.FLOAT, [])],
        iteration="j",
        condition="y_cond",
    )
    outer = loop_body(
        [
            node("Add", ["x", "one"], ["x_next"]),
            node("Less", ["x_next", "limit"], ["x_below"]),
            node("Loop", ["", "x_below", "x_next"], ["x_inner"], body=inner),
            node("Less", ["x_inner", "limit"], ["inner_below"]),
            node("And", ["inner_below", "keep"], ["x_go"]),
        ],
        [typed("x", T.FLOAT, [])],
        [typed("x_go", T.BOOL, []), typed("x_inner", T.FLOAT, [])],
    )
    main = graph(
        [
            node("Less", ["x0", "limit"], ["start"]),
            node("Loop", ["", "start", "x0"], ["x_final"], body=outer),
        ],
        [typed("x0", T.FLOAT, [])],
        [typed("x_final", T.FLOAT, [])],
        [const("limit", 5.0), const("one", 1.0), const("keep", True, np.bool_)],
    )
    return model(main)


def test_while_loops_nested_sharing_an_initializer_condition_compile_and_match(tmp_path):
    runs = [{"x0": np.array(value, np.float32)} for value in (0.0, 2.5, 4.5, 7.0, -3.0)]
    assert_matches_onnxruntime_in_subprocess(
        while_loops_nested_sharing_an_initializer_condition(), runs, tmp_path
    )


@pytest.mark.parametrize("optimize", ["none", "default"])
def test_each_nested_loop_input_gets_a_constant_of_its_own(optimize):
    """The trigger of item 1: one boolean Constant feeding a Loop's invariant input (read by
    the Loop's condition) and another operation. A Constant feeding a Loop feeds nothing else.
    (Optimising, OpenVINO's MOC pass moves such Constants into the inner body instead.)"""
    made = while_loops_nested_sharing_an_initializer_condition()
    converted = ov_loops.translate(made, optimize=optimize).model
    (outer,) = [op for op in converted.get_ordered_ops() if op.get_type_name() == "Loop"]
    checked = 0
    for op in outer.get_function().get_ordered_ops():
        if op.get_type_name() != "Constant":
            continue
        targets = op.output(0).get_target_inputs()
        if any(target.get_node().get_type_name() == "Loop" for target in targets):
            assert len(targets) == 1, f"{op.get_friendly_name()} feeds a Loop and more"
            checked += 1
    assert checked >= 2 or optimize != "none"  # `keep` and `limit` reach the inner Loop


# -- item 2 ---------------------------------------------------------------------------------------
def loops_nested_with_stacked_scan_outputs(depth: int) -> onnx.ModelProto:
    """`depth` nested Loops, each running `M` (a graph input) times; the innermost stacks its
    carried scalar, every other level stacks the stack of the level inside it, so the outermost
    scan output has rank `depth` (and a Loop port of that rank)."""
    body = None
    for level in range(depth):  # 0 is the innermost
        value, scan = f"x{level}", f"scan{level}"
        if body is None:
            nodes = [node("Add", [value, "one"], [f"{value}_next"])]
            stacked = f"{value}_next"
        else:
            inner = [f"{value}_next", f"stack{level}"]
            nodes = [node("Loop", ["M", "", value], inner, body=body)]
            stacked = f"stack{level}"
        nodes += [
            node("Identity", [f"go{level}"], [f"go{level}_out"]),
            node("Identity", [stacked], [scan]),
        ]
        body = loop_body(
            nodes,
            [typed(value, T.FLOAT, [])],
            [typed(f"go{level}_out", T.BOOL, []), typed(f"{value}_next", T.FLOAT, [])]
            + [typed(scan, T.FLOAT, None)],
            iteration=f"i{level}",
            condition=f"go{level}",
        )
    main = graph(
        [node("Loop", ["M", "", "x"], ["x_final", "stacked"], body=body)],
        [typed("x", T.FLOAT, []), typed("M", T.INT64, [])],
        [typed("x_final", T.FLOAT, []), typed("stacked", T.FLOAT, None)],
        [const("one", 1.0)],
    )
    return model(main)


def test_deeply_nested_loops_with_scan_outputs_of_rank_13_compile_and_match(tmp_path):
    """The CPU plugin dies with SIGFPE on a Loop port of rank 13 or more; 13 nested Loops
    stacking scalars make one. Such scan outputs leave the body flattened and are reshaped
    after the Loop (per-iteration shapes dynamic here: trip counts are a graph input)."""
    runs = [{"x": np.array(0.5, np.float32), "M": np.array(n, np.int64)} for n in (2, 0, 1, 2)]
    assert_matches_onnxruntime_in_subprocess(
        loops_nested_with_stacked_scan_outputs(13), runs, tmp_path
    )


def scan_stacking_rank_12_values(axis: int, direction: int) -> onnx.ModelProto:
    """A Scan whose per-iteration output has rank 12, stacked along `axis` in `direction`."""
    shape = [1] * 11 + [2]
    body = graph(
        [
            node("Add", ["state", "x_t"], ["sum"]),
            node("Identity", ["sum"], ["state_out"]),
            node("Reshape", ["sum", "shape"], ["big"]),
        ],
        [typed("state", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("state_out", T.FLOAT, [2]), typed("big", T.FLOAT, shape)],
        [const("shape", shape, np.int64)],
        name="body",
    )
    scan = node(
        "Scan",
        ["state0", "xs"],
        ["state_final", "bigs"],
        body=body,
        num_scan_inputs=1,
        scan_output_axes=[axis],
        scan_output_directions=[direction],
    )
    main = graph(
        [scan],
        [typed("state0", T.FLOAT, [2]), typed("xs", T.FLOAT, [3, 2])],
        [typed("state_final", T.FLOAT, [2]), typed("bigs", T.FLOAT, None)],
    )
    return model(main)


def test_scan_output_of_rank_13_on_an_inner_axis_reversed_compiles_and_matches(tmp_path):
    """Static per-iteration shape, stacked on axis 5 in reverse: flattened, then reshaped and
    transposed back after the Loop."""
    feeds = {"state0": np.array([1, 2], np.float32), "xs": np.arange(6, dtype=np.float32)}
    feeds["xs"] = feeds["xs"].reshape(3, 2)
    assert_matches_onnxruntime_in_subprocess(scan_stacking_rank_12_values(5, 1), [feeds], tmp_path)


def test_loop_port_of_rank_above_12_is_refused():
    """Ports other than scan outputs are not flattened: a loop-carried rank-13 value is refused
    at convert time, naming the loop and the value, rather than crash the plugin."""
    shape = [1] * 13
    body = loop_body(
        [node("Add", ["x", "one"], ["x_next"]), node("Identity", ["cond_in"], ["go"])],
        [typed("x", T.FLOAT, shape)],
        [typed("go", T.BOOL, []), typed("x_next", T.FLOAT, shape)],
    )
    main = graph(
        [node("Loop", ["M", "", "x0"], ["y"], body=body)],
        [typed("x0", T.FLOAT, shape)],
        [typed("y", T.FLOAT, shape)],
        [const("M", 3, np.int64), const("one", 1.0)],
    )
    with pytest.raises(ConversionError, match=r"main/Loop_0: Loop-5 input 2 \('x0'\) has rank 13"):
        ov_loops.translate(model(main))


def scan_whose_body_declares_another_state_rank() -> onnx.ModelProto:
    """A Scan whose body declares its state [2] while the state fed is [T, 2] (found by fuzzing):
    the frontend gives the state a dynamic rank."""
    body = graph(
        [node("Identity", ["x_t"], ["s_out"]), node("Identity", ["s_in"], ["previous"])],
        [typed("s_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("previous", T.FLOAT, [2])],
        name="body",
    )
    main = graph(
        [node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1)],
        [typed("s0", T.FLOAT, [3, 2]), typed("x", T.FLOAT, [3, 2])],
        [typed("s", T.FLOAT, None), typed("ys", T.FLOAT, None)],
    )
    return model(main)


def loop_carried_value_changing_rank() -> onnx.ModelProto:
    """A loop-carried scalar the body returns as [1]: its rank differs between iterations."""
    body = loop_body(
        [node("Unsqueeze", ["x", "axes"], ["x_next"]), node("Identity", ["cond_in"], ["go"])],
        [typed("x", T.FLOAT, None)],
        [typed("go", T.BOOL, []), typed("x_next", T.FLOAT, None)],
        initializers=[const("axes", [0], np.int64)],
    )
    main = graph(
        [node("Loop", ["M", "", "x0"], ["y"], body=body)],
        [typed("M", T.INT64, []), typed("x0", T.FLOAT, [])],
        [typed("y", T.FLOAT, None)],
    )
    return model(main)


@pytest.mark.parametrize(
    "build", [scan_whose_body_declares_another_state_rank, loop_carried_value_changing_rank]
)
def test_loop_port_of_dynamic_rank_is_refused_not_written(build, tmp_path):
    """The CPU plugin refuses to compile a Loop with a port of dynamic rank: convert says so in
    one line (exit 1) and writes nothing, instead of exiting 0 with IR that cannot run."""
    source = tmp_path / "model.onnx"
    onnx.save(build(), source)
    target = tmp_path / "out.xml"
    result = subprocess.run(
        [sys.executable, "-m", "ov_loops", "convert", str(source), "-o", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "dynamic rank" in lines[0] and "main/" in lines[0], lines
    assert not target.exists() and not target.with_suffix(".bin").exists()
