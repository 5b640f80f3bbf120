"""--stateful on loops as exporters write them (issue 22 items 1-2): only the recurrent state
becomes a Variable (lower/streaming.py); a node name with '/' is still a loop of the main graph;
a loop reading a reversed sequence is refused; the summary names each state; ONNX GRU ops
stream too. On minimal scenarios shaped as jax2onnx and tf2onnx write their loops, and the
bidirectional and backward exports of the corpus (tests/models/exporters; the others are fed in
chunks by tests/models/test_exporter_corpus.py's `stateful` and `stateful-max`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import ConversionError
from tests.harness import assert_close, assert_one_line_error, compile_f32, run_cli, write
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed
from tests.sequence_scenarios import SEQUENCE_SCENARIOS

HIDDEN = 4
RNG = np.random.default_rng(22)
W = (RNG.normal(size=(HIDDEN, HIDDEN)) / 2).astype(np.float32)
R = (RNG.normal(size=(HIDDEN, HIDDEN)) / 2).astype(np.float32)
CORPUS = Path(__file__).parents[1] / "models" / "exporters"


def _exported_rnn(name: str, counter: bool, reversal: list | None = None) -> onnx.ModelProto:
    """h = tanh(x_t W + h R) over the rows of X, as exporters write it: the Loop (node `name`)
    carries the weight W and the whole input X through unchanged (jax2onnx), and, with
    `counter`, a time index t from 0, t + 1 each step, reading row t and stopping at
    t + 1 < T (tf2onnx; else row i, the iteration number). `reversal`: main-graph nodes
    making X from the input "Xin" (a backward RNN)."""
    row = "t_in" if counter else "i"
    nodes = [
        node("Gather", ["X_in", row], ["x_t"], axis=0),
        node("MatMul", ["x_t", "W_in"], ["xw"]),
        node("MatMul", ["h_in", "R"], ["hr"]),
        node("Add", ["xw", "hr"], ["pre"]),
        node("Tanh", ["pre"], ["h_out"]),
        node("Identity", ["h_out"], ["h_row"]),
        node("Identity", ["W_in"], ["W_out"]),
        node("Identity", ["X_in"], ["X_out"]),
    ]
    carried = [typed("h_in", T.FLOAT, ["B", HIDDEN]), typed("W_in", T.FLOAT, [HIDDEN, HIDDEN]),
               typed("X_in", T.FLOAT, ["T", "B", HIDDEN])]  # fmt: skip
    outputs = [typed("h_out", T.FLOAT, ["B", HIDDEN]), typed("W_out", T.FLOAT, [HIDDEN, HIDDEN]),
               typed("X_out", T.FLOAT, ["T", "B", HIDDEN])]  # fmt: skip
    if counter:
        nodes += [node("Add", ["t_in", "one"], ["t_out"]), node("Identity", ["T_in"], ["T_out"]),
                  node("Less", ["t_out", "T_in"], ["cond_out"])]  # fmt: skip
        carried += [typed("t_in", T.INT64, []), typed("T_in", T.INT64, [])]
        outputs += [typed("t_out", T.INT64, []), typed("T_out", T.INT64, [])]
    else:
        nodes.append(node("Identity", ["cond_in"], ["cond_out"]))
    body = loop_body(
        nodes,
        carried,
        [typed("cond_out", T.BOOL, []), *outputs, typed("h_row", T.FLOAT, ["B", HIDDEN])],
        [const("R", R), const("one", 1, np.int64)],
    )
    loop_inputs = ["steps", "", "h0", "W", "X"] + (["t0", "steps"] if counter else [])
    loop_outputs = ["h_last", "W_last", "X_last"] + (["t_last", "T_last"] if counter else [])
    main = graph(
        [*(reversal or []), node("Shape", ["X"], ["shape"]),
         node("Gather", ["shape", "zero"], ["steps"], axis=0),
         node("Loop", loop_inputs, [*loop_outputs, "hs"], body=body, name=name)],
        [typed("Xin" if reversal else "X", T.FLOAT, ["T", "B", HIDDEN]),
         typed("h0", T.FLOAT, ["B", HIDDEN])],
        [typed("h_last", T.FLOAT, ["B", HIDDEN]), typed("hs", T.FLOAT, ["T", "B", HIDDEN])],
        [const("W", W), const("zero", 0, np.int64), const("t0", 0, np.int64)],
    )  # fmt: skip
    return model(main)


def _chunked(compiled, feeds: dict, name: str, axis: int, lengths: list[int]) -> list[dict]:
    """The outputs of each chunk of input `name` cut along `axis` into `lengths`, fed in order
    to one infer request (the other inputs whole on every call)."""
    request = compiled.create_infer_request()
    start, calls = 0, []
    for length in lengths:
        chunk = dict(feeds)
        chunk[name] = np.take(feeds[name], range(start, start + length), axis=axis)
        outputs = request.infer(chunk)
        calls.append({port.get_any_name(): value.copy() for port, value in outputs.items()})
        start += length
    return calls


@pytest.mark.parametrize(
    "name, counter",
    [("Loop_rnn", False), ("model/rnn/while", False), ("model/gru/while", True)],
    ids=["jax-like", "slash-in-name", "tf-like-counter"],
)
@pytest.mark.parametrize("optimize", ["none", "default"])
def test_only_the_recurrent_state_streams_and_chunks_give_the_whole_pass(name, counter, optimize):
    """Fed in chunks of 3, 0, 2 and 4 rows, the last h and the rows of h are the whole pass's.
    Before: W and X became Variables (the model kept reading the first chunk), t one too (row
    t of the second chunk is out of its range), and a loop named 'model/rnn/while' was taken
    for a nested loop and kept no state at all."""
    made = _exported_rnn(name, counter)
    converted = ov_loops.translate(made, optimize=optimize, stateful=True)
    (loop,) = converted.loops
    ids = [sink.get_variable_id() for sink in converted.model.get_sinks()]
    assert ids == [f"main/{name}/h0"], ids
    x = RNG.normal(size=(9, 2, HIDDEN)).astype(np.float32)
    feeds = {"X": x, "h0": RNG.normal(size=(2, HIDDEN)).astype(np.float32)}
    whole = compile_f32(ov_loops.convert(made, optimize=optimize))(feeds)
    calls = _chunked(compile_f32(converted.model), feeds, "X", 0, [3, 0, 2, 4])
    rows = np.concatenate([call["hs"] for call in calls if call["hs"].size])
    for want, got, what in ((whole["h_last"], calls[-1]["h_last"], "h_last"),
                            (whole["hs"], rows, "hs")):  # fmt: skip
        assert_close(want, got, what, rtol=1e-5, atol=1e-6)


def test_the_summary_names_each_state_and_each_counter():
    (loop,) = ov_loops.translate(_exported_rnn("model/gru/while", True), stateful=True).loops
    assert loop.summary().endswith(
        "; --stateful states: 'h0' f32[?,4]; each call starts again: 't0' (counts iterations)"
    ), loop.summary()
    assert "--stateful" not in ov_loops.translate(_exported_rnn("rnn", True)).loops[0].summary()


def test_the_cli_summary_names_the_state(tmp_path):
    source = write(tmp_path, _exported_rnn("Loop_rnn", False))
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out" / "m.xml"), "--stateful")
    assert result.returncode == 0, result.stderr
    assert "--stateful states: 'h0' f32[?,4]" in result.stdout, result.stdout


REVERSALS = {
    "ReverseSequence": [
        node("Shape", ["Xin"], ["in_shape"]),
        node("Gather", ["in_shape", "one_1"], ["batch"], axis=0),
        node("Gather", ["in_shape", "zero_index"], ["length"], axis=0),
        node("Expand", ["length", "batch"], ["lengths"]),
        node("ReverseSequence", ["Xin", "lengths"], ["X"], batch_axis=1, time_axis=0),
    ],
    "Slice step -1": [
        node("Slice", ["Xin", "minus_one", "very_negative", "zero_1", "minus_one"], ["X"])
    ],  # fmt: skip
    "Gather at n - 1 - Range": [
        node("Shape", ["Xin"], ["in_shape"]),
        node("Gather", ["in_shape", "zero_index"], ["length"], axis=0),
        node("Sub", ["length", "one_index"], ["last"]),
        node("Range", ["zero_index", "length", "one_index"], ["forward"]),
        node("Sub", ["last", "forward"], ["backward"]),
        node("Gather", ["Xin", "backward"], ["X"], axis=0),
    ],
}


def _backward_rnn(how: str) -> onnx.ModelProto:
    made = _exported_rnn("backward/while", False, REVERSALS[how])
    made.graph.initializer.extend([
        const(name, value, np.int64)
        for name, value in (("one_index", 1), ("zero_index", 0), ("minus_one", [-1]),
                            ("very_negative", [-(2**62)]), ("zero_1", [0]), ("one_1", [1]))
    ])  # fmt: skip
    return made


@pytest.mark.parametrize("how", sorted(REVERSALS))
def test_a_loop_reading_a_reversed_sequence_is_refused_in_one_line(how):
    """Before, each converted and each chunk was reversed on its own. Without --stateful the
    model converts and runs backwards."""
    made = _backward_rnn(how)
    with pytest.raises(ConversionError, match="reads a reversed sequence") as refused:
        ov_loops.convert(made, stateful=True)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("main/backward/while: --stateful:")
    x = RNG.normal(size=(5, 2, HIDDEN)).astype(np.float32)
    got = compile_f32(ov_loops.convert(made))({"Xin": x, "h0": np.zeros((2, HIDDEN), np.float32)})
    forward = compile_f32(ov_loops.convert(_exported_rnn("rnn", False)))
    want = forward({"X": x[::-1].copy(), "h0": np.zeros((2, HIDDEN), np.float32)})
    assert_close(want["h_last"], got["h_last"], "h_last", rtol=1e-5, atol=1e-6)


def test_the_cli_refuses_a_backward_rnn_with_exit_1_and_writes_nothing(tmp_path):
    source = write(tmp_path, _backward_rnn("ReverseSequence"))
    result = run_cli("convert", str(source), "-o", str(tmp_path / "out" / "m.xml"), "--stateful")
    assert_one_line_error(result, 1, "main/backward/while", "reads a reversed sequence")
    assert not (tmp_path / "out").exists()


def _convolved_rnn(kernel: int, counter: bool) -> onnx.ModelProto:
    """The exported RNN reading X = a causal convolution of Xin over time of `kernel` steps
    (keras' Conv1D(padding="causal") before a GRU: [T, B, H] -> [B, H, T] -> Conv -> back)."""
    conv = [
        node("Transpose", ["Xin"], ["channels_last"], perm=[1, 2, 0]),
        node("Conv", ["channels_last", "K"], ["convolved"], pads=[kernel - 1, 0]),
        node("Transpose", ["convolved"], ["X"], perm=[2, 0, 1]),
    ]
    made = _exported_rnn("conv/while", counter, conv)
    weights = RNG.normal(size=(HIDDEN, HIDDEN, kernel)).astype(np.float32) / kernel
    made.graph.initializer.append(const("K", weights))
    return made


@pytest.mark.parametrize("counter", [False, True], ids=["jax-like", "tf-like-counter"])
def test_a_loop_reading_steps_of_a_convolution_over_time_is_refused_in_one_line(counter):
    """Before, it converted and each chunk's first steps read the convolution's padding, not
    the previous chunk's last steps (the corpus' tf_keras_conv1d_gru_classifier: check
    --chunks 0.05 off). A kernel of one step streams."""
    with pytest.raises(ConversionError, match="over windows of 3 and cannot stream") as refused:
        ov_loops.convert(_convolved_rnn(3, counter), stateful=True)
    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith("main/conv/while: --stateful: the Loop reads steps")
    streamed = ov_loops.convert(_convolved_rnn(1, counter), stateful=True)
    assert streamed.get_sinks()


# -- the exporter corpus --------------------------------------------------------------------
MANIFEST = {m["name"]: m for m in json.loads((CORPUS / "manifest.json").read_text())["models"]}
REFUSED = {  # model -> what the one-line refusal says
    "jax_linen_bidirectional_gru": "reads a reversed sequence",
    "tf_keras_bidirectional_gru": "reads a reversed sequence",
    "tf_keras_gru_go_backwards": "reads a reversed sequence",
    "tf_keras_bidirectional_lstm_sum": "a bidirectional LSTM op cannot stream",
    "tf_keras_conv1d_gru_classifier": "computed by Convolution .* over windows of 3",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_bidirectional_backward_or_convolved_export_is_refused_in_one_line(name):
    with pytest.raises(ConversionError, match=REFUSED[name]) as refused:
        ov_loops.convert(str(CORPUS / f"{name}.onnx"), stateful=True)
    assert "\n" not in str(refused.value)


def test_a_list_carried_unchanged_is_read_from_its_input_on_every_call():
    """A list built from x before the loop and passed through it unchanged is an input of each
    call, not a state: a second call with another x reads that x's list. Before, the list was a
    Variable and the second call read the first call's."""
    made, runs = SEQUENCE_SCENARIOS["carried_unchanged_and_read_at_the_iteration_number"]()
    converted = ov_loops.convert(made, stateful=True)
    assert not converted.get_sinks()
    request = compile_f32(converted).create_infer_request()
    plain = compile_f32(ov_loops.convert(made))
    for run in runs:  # x of 4 rows, then 6, on one request
        got = {port.get_any_name(): value for port, value in request.infer(run).items()}
        for port, want in plain(run).items():
            assert_close(want, got[port.get_any_name()], port.get_any_name(), rtol=0, atol=0)


def _gru_op(direction: str) -> onnx.ModelProto:
    """An ONNX GRU op over X [T, B, 3] (hidden 4) with no initial state (zeros), returning Y
    and Y_h: what torch's dynamo export makes of nn.GRU."""
    directions = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(3)  # the same weights on every call
    weights = [
        const(name, rng.normal(size=(directions, 12, inputs)).astype(np.float32) / 2)
        for name, inputs in (("Wg", 3), ("Rg", 4))
    ]
    main = graph(
        [node("GRU", ["X", "Wg", "Rg"], ["Y", "Y_h"], hidden_size=4, direction=direction)],
        [typed("X", T.FLOAT, ["T", "B", 3])],
        [typed("Y", T.FLOAT, ["T", directions, "B", 4]),
         typed("Y_h", T.FLOAT, [directions, "B", 4])],
        weights,
    )  # fmt: skip
    return model(main)


def test_an_onnx_gru_op_streams_its_state():
    """Fed in chunks of 2, 0 and 3 steps: the rows of Y and the last Y_h are the whole pass's,
    and the chunk of no step returns the state unchanged. Before, the op kept no state (it is
    no loop) and each chunk started from zeros; then a chunk of no step stored the op's
    unwritten final state (the CPU plugin's, empty_sequences.py) and the next chunk went on
    from it."""
    conversion = ov_loops.translate(_gru_op("forward"), stateful=True)
    assert conversion.recurrent_ops == [
        "main/Y: GRU -> GRUSequence-5; --stateful states: 'h' f32[?,1,4]"
    ]
    feeds = {"X": RNG.normal(size=(5, 2, 3)).astype(np.float32)}
    whole = compile_f32(ov_loops.convert(_gru_op("forward")))(feeds)
    calls = _chunked(compile_f32(conversion.model), feeds, "X", 0, [2, 0, 3])
    assert_close(calls[0]["Y_h"], calls[1]["Y_h"], "Y_h", rtol=0, atol=0)
    assert_close(whole["Y"], np.concatenate([c["Y"] for c in calls]), "Y", rtol=1e-5, atol=1e-6)
    assert_close(whole["Y_h"], calls[-1]["Y_h"], "Y_h", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("direction", ["reverse", "bidirectional"])
def test_a_reverse_or_bidirectional_onnx_gru_op_is_refused_in_one_line(direction):
    with pytest.raises(ConversionError, match=f"a {direction} GRU op cannot stream") as refused:
        ov_loops.convert(_gru_op(direction), stateful=True)
    assert "\n" not in str(refused.value) and str(refused.value).startswith("main/Y: --stateful")
