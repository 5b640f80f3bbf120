"""--stateful on every kind of loop it accepts (lower/stateful.py): reverse scans refused,
states of the types the CPU plugin cannot keep stored in i32/f32, static state shapes kept,
nested Scan-8 accepted, and every Loop/Scan scenario refused in one line or equal, fed whole,
to the conversion without --stateful."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest

import ov_loops
from ov_loops.errors import ConversionError
from tests.harness import assert_close, assert_one_line_error, compile_f32, run_cli
from tests.loop_scenarios import SCENARIOS as LOOP_SCENARIOS
from tests.onnx_builders import ELEMENT_TYPES, T, const, graph, loop_body, model, node, typed
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS
from tests.scenarios import SCENARIOS
from tests.sequence_append_scenarios import APPENDED, NOT_APPENDED
from tests.sequence_scenarios import SEQUENCE_SCENARIOS

RNG = np.random.default_rng(17)


def _is_init_guard(op) -> bool:
    """Whether ReadValue or Assign `op` is a loop's init guard (lower/stateful.py)."""
    return op.get_variable_id().endswith("/init_guard")


def _without_guard(ops) -> list:
    return [op for op in ops if not _is_init_guard(op)]


def _feed_chunks(compiled, feeds: list[dict]) -> list[list[np.ndarray]]:
    """The outputs of each of `feeds`, run in order on one request."""
    request = compiled.create_infer_request()
    return [[o.copy() for o in request.infer(f).values()] for f in feeds]


def _reverse_running_sum(inputs: int, outputs: int) -> onnx.ModelProto:
    """s += x_t over the rows of x; scans out s; directions `inputs` and `outputs` (0 or 1)."""
    body = graph(
        [node("Add", ["s_in", "x_t"], ["s_out"]), node("Identity", ["s_out"], ["y_t"])],
        [typed("s_in", T.FLOAT, [3]), typed("x_t", T.FLOAT, [3])],
        [typed("s_out", T.FLOAT, [3]), typed("y_t", T.FLOAT, [3])],
        name="body",
    )
    scan = node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                scan_input_directions=[inputs], scan_output_directions=[outputs])  # fmt: skip
    main = graph(
        [scan],
        [typed("s0", T.FLOAT, [3]), typed("x", T.FLOAT, ["T", 3])],
        [typed("s", T.FLOAT, [3]), typed("ys", T.FLOAT, ["T", 3])],
    )
    return model(main)


@pytest.mark.parametrize("inputs, outputs, what", [(1, 0, "inputs"), (0, 1, "outputs")])
def test_a_top_level_reverse_scan_is_refused_in_one_line(inputs, outputs, what):
    """Before the refusal, scan_reverse_axis1_prepend converted and ran: fed x (3 x 6) in two
    chunks of 3 columns it gave the whole pass's final state (a sum commutes) but scan outputs
    up to 3.79 away from the whole pass's (each chunk's running sum reversed on its own)."""
    made = _reverse_running_sum(inputs, outputs)
    with pytest.raises(ConversionError, match=f"main/Scan_0: --stateful: .*{what} in reverse"):
        ov_loops.convert(made, stateful=True)
    compile_f32(ov_loops.convert(made))  # without --stateful it converts


def test_the_cli_refuses_a_reverse_scan_with_exit_1(tmp_path):
    source = tmp_path / "reverse.onnx"
    onnx.save(SCAN_SCENARIOS["scan_reverse_axis1_prepend"]()[0], source)
    result = run_cli("convert", str(source), "-o", str(tmp_path / "r.xml"), "--stateful")
    assert_one_line_error(result, 1, "main/Scan_0", "in reverse cannot stream")
    assert not (tmp_path / "r.xml").exists()


def _typed_accumulator(element: int) -> onnx.ModelProto:
    """acc += x_t (of type `element`) and an int64 counter n += 1 over the rows of x (trip
    count Shape(x)[0]); outputs the last acc, the last n and every acc."""
    body = loop_body(
        [node("Gather", ["x", "i"], ["x_t"], axis=0), node("Add", ["acc_in", "x_t"], ["acc_out"]),
         node("Identity", ["acc_out"], ["acc_row"]), node("Add", ["n_in", "one"], ["n_out"]),
         node("Identity", ["cond_in"], ["cond_out"])],
        [typed("acc_in", element, [2]), typed("n_in", T.INT64, [])],
        [typed("cond_out", T.BOOL, []), typed("acc_out", element, [2]),
         typed("n_out", T.INT64, []), typed("acc_row", element, [2])],
        [const("one", 1, np.int64)],
    )  # fmt: skip
    main = graph(
        [node("Shape", ["x"], ["shape"]), node("Gather", ["shape", "zero"], ["steps"], axis=0),
         node("Loop", ["steps", "", "acc0", "n0"], ["acc", "n", "rows"], body=body)],
        [typed("x", element, ["T", 2]), typed("acc0", element, [2]), typed("n0", T.INT64, [])],
        [typed("acc", element, [2]), typed("n", T.INT64, []), typed("rows", element, ["T", 2])],
        [const("zero", 0, np.int64)],
    )  # fmt: skip
    return model(main)


# f64 is stored as f32: each call rounds the state to f32 once (relative error 2**-24 a call),
# and the plugin computes the f64 Add in f32 anyway; rtol 1e-6 covers both.
F64_RTOL = 1e-6


@pytest.mark.parametrize("name", ["int64", "uint64", "uint32", "int16", "uint16", "float64"])
def test_a_state_the_cpu_cannot_keep_is_stored_in_32_bits_and_streams(name, tmp_path):
    element, dtype = ELEMENT_TYPES[name]
    made = _typed_accumulator(element)
    xml = tmp_path / "m.xml"
    ov_loops.save(ov_loops.convert(made, stateful=True), xml, compress_to_fp16=False)
    text = xml.read_text()
    stored = "f32" if name == "float64" else "i32"
    states = [line for line in text.splitlines() if "variable_type" in line]
    states = [line for line in states if "/init_guard" not in line]  # the guard is f32
    count = sum(f'variable_type="{stored}"' in line for line in states)
    assert count == (1 if name == "float64" else 2), text
    compiled = compile_f32(xml)
    x = RNG.normal(size=(7, 2)) * 100 if name == "float64" else RNG.integers(0, 90, (7, 2))
    first = 2**31 + 5 if name == "uint32" else 3  # u32 -> i32 -> u32 keeps the bits
    x, acc0, n0 = x.astype(dtype), np.array([first, 5], dtype), np.array(2**31 - 20, np.int64)
    feeds = [{"x": x[a:b], "acc0": acc0, "n0": n0} for a, b in ((0, 3), (3, 3), (3, 7))]
    calls = _feed_chunks(compiled, feeds)
    rows = np.concatenate([c[2] for c in calls])
    want = acc0 + np.cumsum(x, 0, dtype=dtype)
    assert calls[-1][1] == 2**31 - 13  # the counter, exact in i32 range
    if name == "float64":
        np.testing.assert_allclose(rows, want, rtol=F64_RTOL)
        np.testing.assert_allclose(calls[-1][0], want[-1], rtol=F64_RTOL)
    else:
        np.testing.assert_array_equal(rows, want)
        np.testing.assert_array_equal(calls[-1][0], want[-1])


def test_only_the_types_the_cpu_cannot_keep_are_converted():
    """The f32 state reads its fed value directly; the int64 counter through a Convert to i32."""
    converted = ov_loops.convert(_typed_accumulator(T.FLOAT), stateful=True)
    reads = {
        op.input_value(0).get_node().get_type_name(): op.get_output_element_type(0).get_type_name()
        for op in converted.get_ordered_ops()
        if op.get_type_name() == "ReadValue" and not _is_init_guard(op)
    }
    assert reads == {"Parameter": "f32", "Convert": "i32"}


def test_a_while_loop_with_a_static_state_streams(tmp_path):
    """y += x while sum(y) < limit (no trip count, no initial condition; ONNX's own example).
    Its Variable keeps y's static shape [2]: with every dim dynamic the CPU plugin failed at
    run time ("Can't reorder data with dynamic shapes", at the Assign). Its trip count does
    not come from a chunk: a call with limit 10 then one with 25 goes on from the state, as
    one call with 25 does (sum(y) rises by 3 a step from 0: 4 steps, then 5 more)."""
    made, _ = LOOP_SCENARIOS["loop_no_trip_count_no_condition"]()
    xml = tmp_path / "m.xml"
    ov_loops.save(ov_loops.convert(made, stateful=True), xml, compress_to_fp16=False)
    assert 'variable_shape="2"' in xml.read_text()
    compiled = compile_f32(xml)
    x, y0 = np.array([1.0, 2.0], np.float32), np.array([0.5, -0.5], np.float32)
    feeds = [{"x": x, "y0": y0, "limit": np.array(limit, np.float32)} for limit in (10, 25)]
    want = y0 + np.arange(1, 10)[:, None] * x  # y after each of the 9 steps
    (whole,) = _feed_chunks(compiled, feeds[1:])
    chunked = _feed_chunks(compiled, feeds)
    for final, rows in (whole, (chunked[1][0], np.concatenate([c[1] for c in chunked]))):
        np.testing.assert_allclose(final, want[-1], rtol=1e-6)
        np.testing.assert_allclose(rows, want, rtol=1e-6)
    assert len(chunked[0][1]) == 4


def _grown_from_a_shared_value() -> onnx.ModelProto:
    """t = tanh(s); c = t * W ([2, 2]), then for each row x_i of X: c = Concat(c, t * P +
    sum(x_i), axis 1) (issue 20, the differential campaign's seed 2100500044 cut down)."""
    body = loop_body(
        [node("Gather", ["X", "i"], ["x_i"], axis=0),
         node("ReduceSum", ["x_i"], ["total"], keepdims=0),
         node("Mul", ["t", "P"], ["tp"]), node("Add", ["tp", "total"], ["part"]),
         node("Concat", ["c_in", "part"], ["c_out"], axis=1),
         node("Identity", ["cond_in"], ["go"])],
        [typed("c_in", T.FLOAT, [2, None])],
        [typed("go", T.BOOL, []), typed("c_out", T.FLOAT, [2, None])],
    )  # fmt: skip
    main = graph(
        [node("Tanh", ["s"], ["t"]), node("Mul", ["t", "W"], ["c0"]),
         node("Shape", ["X"], ["shape"]), node("Gather", ["shape", "zero"], ["rows"], axis=0),
         node("Loop", ["rows", "", "c0"], ["c"], body=body)],
        [typed("s", T.FLOAT, []), typed("X", T.FLOAT, [None, 2])],
        [typed("c", T.FLOAT, [2, None])],
        [const("W", [[2.0, 2.0], [1.0, -1.0]]), const("P", [[1.0], [2.0]]),
         const("zero", 0, np.int64)],
    )  # fmt: skip
    return model(main)


@pytest.mark.parametrize("form", ["in memory", "saved"])
@pytest.mark.parametrize("optimize", ["default", "max"])
def test_a_grown_state_whose_initial_value_shares_a_node_with_the_loop_streams(
    optimize, form, tmp_path
):
    """The initial value t * W and the loop's hoisted t * P read one tanh: the CPU plugin's
    snippets fuse the three into one Subgraph of two outputs, and its
    MoveReadValueInputsToSubgraph, moving the init guard's sums, failed to compile on it
    ("get_element_type() must be called on a node with exactly one output", issue 20). Now
    it compiles, and X fed in chunks of 3 and 2 rows gives the whole pass's c."""
    made = _grown_from_a_shared_value()
    converted = ov_loops.convert(made, optimize=optimize, stateful=True)
    if form == "saved":
        ov_loops.save(converted, tmp_path / "m.xml", compress_to_fp16=False)
        converted = tmp_path / "m.xml"
    x = RNG.standard_normal((5, 2)).astype(np.float32)
    s = np.array(0.7, np.float32)
    chunks = _feed_chunks(compile_f32(converted), [{"s": s, "X": x[:3]}, {"s": s, "X": x[3:]}])
    (whole,) = compile_f32(ov_loops.convert(made, optimize=optimize))({"s": s, "X": x}).values()
    assert whole.shape == (2, 7)
    assert_close(whole, chunks[-1][0], "c after the last chunk", rtol=1e-5, atol=1e-6)


def _loop_around_a_scan8() -> onnx.ModelProto:
    """Opset 8: a Loop over the rows of x (T, B, S, 2) whose body runs a Scan-8 (batch B,
    sequence S) adding each x[t, b, s] to h[b]; h is the Loop's carried value."""
    scan_body = graph(
        [node("Add", ["s_in", "x_s"], ["s_out"]), node("Identity", ["s_out"], ["y_s"])],
        [typed("s_in", T.FLOAT, [2]), typed("x_s", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("y_s", T.FLOAT, [2])],
        name="scan_body",
    )
    body = loop_body(
        [node("Gather", ["x", "i"], ["x_t"], axis=0),
         node("Scan", ["", "h_in", "x_t"], ["h_out", "ys"], body=scan_body, num_scan_inputs=1),
         node("Identity", ["h_out"], ["h_row"]), node("Identity", ["cond_in"], ["cond_out"])],
        [typed("h_in", T.FLOAT, ["B", 2])],
        [typed("cond_out", T.BOOL, []), typed("h_out", T.FLOAT, ["B", 2]),
         typed("h_row", T.FLOAT, ["B", 2])],
    )  # fmt: skip
    main = graph(
        [node("Shape", ["x"], ["shape"]), node("Gather", ["shape", "zero"], ["steps"], axis=0),
         node("Loop", ["steps", "", "h0"], ["h", "hs"], body=body)],
        [typed("x", T.FLOAT, ["T", "B", "S", 2]), typed("h0", T.FLOAT, ["B", 2])],
        [typed("h", T.FLOAT, ["B", 2]), typed("hs", T.FLOAT, ["T", "B", 2])],
        [const("zero", 0, np.int64)],
    )  # fmt: skip
    return model(main, opset=8)


def test_a_scan8_inside_a_loop_body_is_accepted_and_the_loop_streams():
    """Only a top-level Scan-8 is refused (its batch loop keeps no state); one in a body is
    part of its loop's iteration and keeps none, as it needs none."""
    converted = ov_loops.translate(_loop_around_a_scan8(), stateful=True)
    states = {loop.path: len(_without_guard(loop.states)) for loop in converted.loops}
    assert states == {"main/Loop_2": 1, "main/Loop_2/body/Scan_1": 0}, states
    compiled = compile_f32(converted.model)
    x, h0 = RNG.normal(size=(5, 2, 3, 2)).astype(np.float32), np.ones((2, 2), np.float32)
    calls = _feed_chunks(compiled, [{"x": x[a:b], "h0": h0} for a, b in ((0, 2), (2, 5))])
    want = h0 + np.cumsum(x.sum(2), 0)
    np.testing.assert_allclose(calls[-1][0], want[-1], rtol=1e-5, atol=1e-6)
    rows = np.concatenate([call[1] for call in calls])
    np.testing.assert_allclose(rows, want, rtol=1e-5, atol=1e-6)


def test_one_value_feeding_two_carried_values_gets_two_variables():
    """s and m both start from s0 (s += x_t, m = max(m, x_t)): before, both Variables were
    named main/Loop_2/s0 and the CPU plugin refused the model ("ReadValue ... doesn't have
    sibling output")."""
    body = loop_body(
        [node("Gather", ["x", "i"], ["x_t"], axis=0), node("Add", ["s_in", "x_t"], ["s_out"]),
         node("Max", ["m_in", "x_t"], ["m_out"]), node("Identity", ["cond_in"], ["cond_out"])],
        [typed("s_in", T.FLOAT, [2]), typed("m_in", T.FLOAT, [2])],
        [typed("cond_out", T.BOOL, []), typed("s_out", T.FLOAT, [2]), typed("m_out", T.FLOAT, [2])],
    )  # fmt: skip
    main = graph(
        [node("Shape", ["x"], ["shape"]), node("Gather", ["shape", "zero"], ["steps"], axis=0),
         node("Loop", ["steps", "", "s0", "s0"], ["s", "m"], body=body)],
        [typed("x", T.FLOAT, ["T", 2]), typed("s0", T.FLOAT, [2])],
        [typed("s", T.FLOAT, [2]), typed("m", T.FLOAT, [2])],
        [const("zero", 0, np.int64)],
    )  # fmt: skip
    converted = ov_loops.translate(model(main), stateful=True)
    ids = [op.get_variable_id() for op in _without_guard(converted.model.get_sinks())]
    assert len(set(ids)) == 2, ids
    x, s0 = RNG.normal(size=(6, 2)).astype(np.float32), np.zeros(2, np.float32)
    feeds = [{"x": x[a:b], "s0": s0} for a, b in ((0, 4), (4, 4), (4, 6))]
    calls = _feed_chunks(compile_f32(converted.model), feeds)
    for want, got in zip(calls[0], calls[1]):  # a zero-length chunk returns each its own state
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(calls[-1][0], x.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(calls[-1][1], np.maximum(x.max(0), 0), rtol=1e-6)


# Every Loop, Scan and list scenario (about 10 s in all on this 2-core VM). Refused in one line:
# the reverse Scans and the top-level Scan-8s; every other one must compile and, fed each run
# whole (after reset_state), give the conversion without --stateful's outputs.
ALL_SCENARIOS = {
    **{("scenario", n): b for n, b in SCENARIOS.items()},
    **{("list", n): b for n, b in SEQUENCE_SCENARIOS.items()},
    **{("appended", n): b for n, b in APPENDED.items()},
    **{("not appended", n): b for n, b in NOT_APPENDED.items()},
}
REFUSED = {
    "scan_reverse_axis1_prepend": "in reverse cannot stream",
    "scan_bidirectional_same_input_twice": "in reverse cannot stream",
    "scan8_without_sequence_lens": "a Scan-8 keeps no state",
    "scan8_sequence_lens_variable_lengths": "a Scan-8 keeps no state",
    "scan8_sequence_lens_reverse": "a Scan-8 keeps no state",
    "scan8_sequence_lens_static_shapes": "a Scan-8 keeps no state",
}


@pytest.mark.parametrize("form", ["in memory", "saved"])
@pytest.mark.parametrize("key", sorted(ALL_SCENARIOS), ids=lambda key: key[1])
def test_every_scenario_is_refused_in_one_line_or_fed_whole_gives_the_plain_outputs(
    key, form, tmp_path
):
    """In memory and as the IR `ov_loops.save` writes (the CLI's output), read back: the IR
    does not keep the ReadValues' rt_info, so there the loops' init guards do the work."""
    made, runs = ALL_SCENARIOS[key]()
    name = key[1]
    if name in REFUSED:
        with pytest.raises(ConversionError, match=REFUSED[name]) as refused:
            ov_loops.convert(made, stateful=True)
        assert "\n" not in str(refused.value)
        return
    converted = ov_loops.convert(made, stateful=True)
    if form == "saved":
        ov_loops.save(converted, tmp_path / "m.xml", compress_to_fp16=False)
        converted = tmp_path / "m.xml"
    stateful = compile_f32(converted)
    plain = compile_f32(ov_loops.convert(made))
    streaming, whole = stateful.create_infer_request(), plain.create_infer_request()
    for index, run in enumerate(runs):
        feeds = run if isinstance(run, dict) else run[0]
        streaming.reset_state()
        want, got = whole.infer(feeds), streaming.infer(feeds)
        for want_output, got_output in zip(plain.outputs, stateful.outputs):
            what = f"run {index}, output {want_output.get_any_name()}"
            assert_close(want[want_output], got[got_output], what, rtol=1e-5, atol=1e-6)


LIST_BUILT_BEFORE_THE_LOOP = [  # (one carried unchanged keeps no state: test_stateful_exports)
    SEQUENCE_SCENARIOS["list_starting_non_empty_read_and_written_by_position"],
    SEQUENCE_SCENARIOS["cache_updated_in_an_if_in_the_body"],
]


@pytest.mark.parametrize("build", LIST_BUILT_BEFORE_THE_LOOP, ids=lambda b: b.__name__)
def test_a_saved_ir_of_a_list_built_before_the_loop_compiles_and_keeps_its_state(build, tmp_path):
    """The IR does not keep the ReadValues' rt_info DisableInitSubgraphFusing: read back, these
    failed to compile ("Invalid graph status") before the loop's init guard
    (lower/stateful.py). Now the IR read back gives the plain conversion's outputs, and a call
    with M = 0 and a longer, different x returns the list the first call left (its state), not
    the one this x builds. (A chunked run cannot equal the whole one here: each body reads the
    iteration number, which starts from 0 on every call.)"""
    made, runs = build()
    ov_loops.save(ov_loops.convert(made, stateful=True), tmp_path / "m.xml")
    saved, plain = compile_f32(tmp_path / "m.xml"), compile_f32(ov_loops.convert(made))
    later = {"M": np.array(0, np.int64), "x": np.concatenate([runs[0]["x"]] * 2) + 100}
    first, second = _feed_chunks(saved, [runs[0], later])
    fresh = list(plain(later).values())
    for index, (want, got) in enumerate(zip(plain(runs[0]).values(), first)):
        assert_close(want, got, f"output {index}", rtol=1e-5, atol=1e-6)
    kept = [index for index, value in enumerate(second) if value.size]  # not a scan output
    assert kept, [value.shape for value in second]
    for index in kept:
        assert_close(first[index], second[index], f"kept output {index}", rtol=1e-6, atol=1e-6)
    assert any(
        fresh[i].shape != second[i].shape or not np.allclose(fresh[i], second[i]) for i in kept
    )


def test_without_its_init_guard_a_saved_ir_of_a_list_does_not_compile(tmp_path):
    """What the guard prevents: the IR of one of them read back with the guard's Assign taken
    out, so the CPU plugin moves each state's initial computation into its ReadValue. If this
    starts compiling, OpenVINO fixed the fused form and the guard may go."""
    made, _ = SEQUENCE_SCENARIOS["list_starting_non_empty_read_and_written_by_position"]()
    ov_loops.save(ov_loops.convert(made, stateful=True), tmp_path / "m.xml")
    read = ov.Core().read_model(str(tmp_path / "m.xml"))
    (guard,) = [sink for sink in read.get_sinks() if _is_init_guard(sink)]
    read.remove_sink(guard)
    with pytest.raises(RuntimeError, match="Invalid graph status"):
        compile_f32(read)


def test_states_starting_from_model_inputs_get_no_init_guard():
    """The guard is only for states whose initial value is computed: from a Parameter (or a
    Constant) the CPU plugin moves nothing."""
    made, _ = SCAN_SCENARIOS["scan_forward_running_sum"]()  # s0, a model input
    assert not any(_is_init_guard(op) for op in ov_loops.convert(made, stateful=True).get_sinks())
    made, _ = SEQUENCE_SCENARIOS["cache_updated_in_an_if_in_the_body"]()
    guards = [op for op in ov_loops.convert(made, stateful=True).get_sinks() if _is_init_guard(op)]
    assert [op.get_variable_id() for op in guards] == ["main/Loop_2/init_guard"]


def _top_level_scan(made: onnx.ModelProto) -> onnx.NodeProto | None:
    """The model's one top-level Scan-9+ whose scan inputs are graph inputs, if it has one."""
    scans = [n for n in made.graph.node if n.op_type == "Scan"]
    if len(scans) != 1 or made.opset_import[0].version < 9:
        return None
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in scans[0].attribute}
    sequences = scans[0].input[len(scans[0].input) - attributes["num_scan_inputs"] :]
    graph_inputs = {value.name for value in made.graph.input}
    return scans[0] if set(sequences) <= graph_inputs else None


CHUNKABLE_SCANS = sorted(
    n for n, b in SCAN_SCENARIOS.items() if n not in REFUSED and _top_level_scan(b()[0])
)


@pytest.mark.parametrize("name", CHUNKABLE_SCANS)
def test_every_top_level_scan_scenario_fed_in_chunks_gives_the_whole_pass(name):
    """Each scan input cut along its axis into halves with an empty chunk between: the last
    call's states and the scan outputs joined along their axes are the plain conversion's
    whole pass (reverse scans are refused, above)."""
    made, runs = SCAN_SCENARIOS[name]()
    scan = _top_level_scan(made)
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in scan.attribute}
    count = attributes["num_scan_inputs"]
    states = len(scan.input) - count
    feeds = runs[0] if isinstance(runs[0], dict) else runs[0][0]
    axes = dict(zip(scan.input[states:], attributes.get("scan_input_axes", [0] * count)))
    axes = {input_name: axis % feeds[input_name].ndim for input_name, axis in axes.items()}
    length = feeds[scan.input[states]].shape[axes[scan.input[states]]]
    cuts = [0, length // 2, length // 2, length]
    request = compile_f32(ov_loops.convert(made, stateful=True)).create_infer_request()
    calls = []
    for low, high in zip(cuts, cuts[1:]):
        chunk = {n: np.take(v, range(low, high), axis=axes[n]) if n in axes else v
                 for n, v in feeds.items()}  # fmt: skip
        calls.append({o.get_any_name(): v.copy() for o, v in request.infer(chunk).items()})
    plain = compile_f32(ov_loops.convert(made))
    whole = {o.get_any_name(): v for o, v in plain(feeds).items()}
    output_axes = attributes.get("scan_output_axes", [0] * (len(scan.output) - states))
    for index, output in enumerate(scan.output):
        if index < states:
            got = calls[-1][output]
        else:
            axis = output_axes[index - states] % whole[output].ndim
            got = np.concatenate([c[output] for c in calls if c[output].size], axis=axis)
        np.testing.assert_allclose(got, whole[output], rtol=1e-5, atol=1e-5, err_msg=output)
