"""Ill-typed Loop and Scan ports (issue 20 item 1): onnxruntime refuses each model; convert
refuses it in one line naming the node, the port and the ONNX rule, exit 2, nothing written.
Declared body shapes that disagree with the arriving values are not refused (bodies are typed
from the values), and the converted model matches onnxruntime where onnxruntime runs it."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ov_loops
from ov_loops.errors import InputError
from tests.harness import assert_matches_onnxruntime, assert_one_line_error, run_cli, write
from tests.onnx_builders import T, graph, model, node, typed

NUMPY = {T.INT64: np.int64, T.INT32: np.int32, T.BOOL: np.bool_, T.FLOAT: np.float32}
NUMPY |= {T.DOUBLE: np.float64, T.STRING: np.str_}


def _loop(M=(T.INT64, []), C=(T.BOOL, []), i=(T.INT64, []), c_in=(T.BOOL, []), **carried):
    """v <- v + float(i) three times, stacking v; cond_out = Cast(cond_in, c_out). Each port's
    (element type, shape) can be changed: M, C (outer), i, c_in, c_out (body), v0, v_in, v_out;
    c_declared and v_declared declare cond_out and v_out otherwise than their Casts compute."""
    c_out = carried.get("c_out", (T.BOOL, []))
    v0, v_in = carried.get("v0", (T.FLOAT, [2])), carried.get("v_in", (T.FLOAT, [2]))
    v_out = carried.get("v_out", v_in)
    c_declared, v_declared = carried.get("c_declared", c_out), carried.get("v_declared", v_out)
    body = graph(
        [
            node("Cast", ["i"], ["i_f"], to=v_in[0]),
            node("Add", ["v_in", "i_f"], ["v_sum"]),
            node("Cast", ["v_sum"], ["v_out"], to=v_out[0]),
            node("Identity", ["v_sum"], ["scan"]),
            node("Cast", ["cond_in"], ["cond_out"], to=c_out[0]),
        ],
        [typed("i", *i), typed("cond_in", *c_in), typed("v_in", *v_in)],
        [typed("cond_out", *c_declared), typed("v_out", *v_declared), typed("scan", v_in[0], None)],
        name="body",
    )
    main = graph(
        [node("Loop", ["M", "C", "v0"], ["v", "vs"], body=body, name="loop")],
        [typed("M", *M), typed("C", *C), typed("v0", *v0)],
        [typed("v", v0[0], None), typed("vs", v0[0], None)],
    )
    return model(main)


def _scan(s0=(T.FLOAT, [2]), s_in=(T.FLOAT, [2]), x=(T.FLOAT, [3, 2]), x_t=(T.FLOAT, [2]), **out):
    """s <- s + x_t over the rows of x, stacking s; s_out is Cast(s, out['s_out'])."""
    s_out = out.get("s_out", s_in)
    body = graph(
        [
            node("Add", ["s_in", "x_t"], ["s_sum"]),
            node("Cast", ["s_sum"], ["s_out"], to=s_out[0]),
            node("Identity", ["s_sum"], ["y_t"]),
        ],
        [typed("s_in", *s_in), typed("x_t", *x_t)],
        [typed("s_out", *s_out), typed("y_t", s_in[0], None)],
        name="body",
    )
    main = graph(
        [node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1, name="scan")],
        [typed("s0", *s0), typed("x", *x)],
        [typed("s", s0[0], None), typed("ys", s_in[0], None)],
    )
    return model(main)


ILL_TYPED = {
    "body_inputs_swapped": (
        _loop(i=(T.BOOL, []), c_in=(T.INT64, [])),
        "main/loop: body input 0 'i' is declared tensor(bool); ONNX Loop: the body's inputs are "
        "(iteration_num int64, condition bool",
    ),
    "iteration_int32": (_loop(i=(T.INT32, [])), "body input 0 'i' is declared tensor(int32)"),
    "body_condition_input_float": (
        _loop(c_in=(T.FLOAT, [])),
        "body input 1 'cond_in' is declared tensor(float)",
    ),
    "body_condition_output_float": (
        _loop(c_out=(T.FLOAT, [])),
        "main/loop: body output 0 'cond_out' is tensor(float); ONNX Loop: the body's first "
        "output is the condition, a bool scalar",
    ),
    # declared otherwise than computed: converted from the computed bool (issue 20's fuzz run)
    "body_condition_output_declared_float": (
        _loop(c_declared=(T.FLOAT, [])),
        "main/loop: body output 0 'cond_out' is declared tensor(float); ONNX Loop: the body's "
        "first output is the condition, a bool scalar",
    ),
    "carried_body_output_declared_double": (
        _loop(v_declared=(T.DOUBLE, [2])),
        "main/loop: body output 1 'v_out' is declared tensor(double) but its value 'v_in' enters "
        "as tensor(float); ONNX Loop: a loop-carried value has one element type",
    ),
    "condition_float": (
        _loop(C=(T.FLOAT, [])),
        "main/loop: input cond 'C' is tensor(float); ONNX Loop: cond is a bool scalar",
    ),
    "condition_of_two": (
        _loop(C=(T.BOOL, [2]), c_in=(T.BOOL, None)),
        "input cond 'C' has shape [2]; ONNX Loop: cond is a bool scalar",
    ),
    "trip_count_string": (
        _loop(M=(T.STRING, [])),
        "main/loop: input M 'M' is tensor(string); ONNX Loop: M is an int64 scalar",
    ),
    "trip_count_int32": (_loop(M=(T.INT32, [])), "input M 'M' is tensor(int32)"),
    "trip_count_of_two": (_loop(M=(T.INT64, [2])), "input M 'M' has shape [2]"),
    "carried_initial_double": (
        _loop(v0=(T.DOUBLE, [2])),
        "main/loop: input 'v0' is tensor(double) but body input 'v_in' is declared tensor(float); "
        "ONNX Loop: a loop-carried value has one element type",
    ),
    "carried_body_input_double": (
        _loop(v_in=(T.DOUBLE, [2]), v_out=(T.FLOAT, [2])),
        "input 'v0' is tensor(float) but body input 'v_in' is declared tensor(double)",
    ),
    "scan_state_output_double": (
        _scan(s_out=(T.DOUBLE, [2])),
        "main/scan: body output 0 's_out' is tensor(double) but its value 's_in' enters as "
        "tensor(float); ONNX Scan: a state has one element type",
    ),
    "scan_state_initial_double": (
        _scan(s0=(T.DOUBLE, [2])),
        "main/scan: input 's0' is tensor(double) but body input 's_in' is declared tensor(float)",
    ),
    "scan_input_int64": (
        _scan(x=(T.INT64, [3, 2])),
        "main/scan: scan input 'x' is tensor(int64) but body input 'x_t' is declared "
        "tensor(float); ONNX Scan: a scan input's body input has the scan input's element type",
    ),
}


def _feeds(made: onnx.ModelProto) -> dict[str, np.ndarray]:
    """M = 3, cond true, the rest 0.5 (a string M is "3")."""
    feeds = {}
    for value in made.graph.input:
        tensor = value.type.tensor_type
        shape = [dim.dim_value for dim in tensor.shape.dim]
        fill = {"M": 3, "C": True}.get(value.name, 0.5)
        dtype = NUMPY[tensor.elem_type]
        feeds[value.name] = np.full(shape, "3" if dtype is np.str_ else fill, dtype)
    return feeds


def _onnxruntime_refuses(made: onnx.ModelProto) -> str:
    """onnxruntime's error creating the session or running it (what it refuses with)."""
    try:
        session = ort.InferenceSession(made.SerializeToString(), providers=["CPUExecutionProvider"])
        session.run(None, _feeds(made))
    except Exception as exc:  # onnxruntime raises its own exception types
        return str(exc)
    raise AssertionError("onnxruntime ran the model")


@pytest.mark.parametrize("name", list(ILL_TYPED))
def test_ill_typed_port_is_refused_as_onnxruntime_refuses_it(name):
    made, fragment = ILL_TYPED[name]
    assert _onnxruntime_refuses(made)
    with pytest.raises(InputError) as refused:
        ov_loops.translate(made)
    assert fragment in str(refused.value)
    assert refused.value.exit_code == 2


@pytest.mark.parametrize("name", ["body_inputs_swapped", "trip_count_string"])
def test_cli_refuses_an_ill_typed_port_in_one_line_exit_2_writing_nothing(tmp_path, name):
    made, fragment = ILL_TYPED[name]
    source = write(tmp_path, made)
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out.xml"))
    assert_one_line_error(result, 2, fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


LENIENT = {  # a declared shape onnxruntime reads its own way; the values decide
    "iteration_declared_rank_2": _loop(i=(T.INT64, [1, 1])),
    "trip_count_one_element_rank_2": _loop(M=(T.INT64, [1, 1])),
    "condition_one_element_undeclared_in_body": _loop(C=(T.BOOL, [1]), c_in=(T.BOOL, None)),
    "carried_body_input_declared_rank_2": _loop(v_in=(T.FLOAT, [1, 2]), v_out=(T.FLOAT, [2])),
}


@pytest.mark.parametrize("name", list(LENIENT))
def test_one_element_flags_and_declared_body_ranks_convert_and_match_onnxruntime(tmp_path, name):
    made = LENIENT[name]
    assert_matches_onnxruntime(made, [_feeds(made)], tmp_path)
