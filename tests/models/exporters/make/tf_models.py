"""TensorFlow / Keras models exported by tf2onnx (run in /work/exporters/tf-venv; see README.md).

Keras models are wrapped in a `tf.function` with an input_signature whose batch and time dims
are None (tf2onnx names them unk__N), and exported with `tf2onnx.convert.from_function`, as
users export Keras 3 models; expected outputs are the model's eager outputs. Graph outputs
keep tf2onnx's names (Identity:0, Identity_1:0, ...), in the order the function returns them.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_io import Registry, rand  # noqa: E402

SCRIPT = "make/tf_models.py"
EXPORTER = f"tf2onnx {tf2onnx.__version__}"
FRAMEWORK = f"tensorflow {tf.__version__}, keras {keras.__version__}"
OPSET = 17
model = Registry(SCRIPT, EXPORTER, FRAMEWORK)


def spec(*shape, dtype=tf.float32, name=None):
    return tf.TensorSpec(list(shape), dtype, name=name)


def export(
    name,
    fn,
    signature,
    sets,
    *,
    exercises,
    time_axis=None,
    rnn_like=False,
    notes=None,
    opset=OPSET,
    before_call=None,
):
    """Export tf.function `fn`; expected = fn's eager outputs in the graph's output order."""
    function = tf.function(fn, input_signature=signature)
    proto, _ = tf2onnx.convert.from_function(function, input_signature=signature, opset=opset)
    out_names = [o.name for o in proto.graph.output]
    in_names = [s.name for s in signature]
    graph_inputs = [i.name for i in proto.graph.input]
    results = []
    for inputs in sets:
        if before_call is not None:
            before_call()
        outs = fn(*[tf.constant(inputs[k]) for k in in_names])
        outs = tf.nest.flatten(outs)
        assert len(outs) == len(out_names), (name, len(outs), out_names)
        results.append({k: np.asarray(v) for k, v in zip(out_names, outs)})
    renamed = [{g: s[k] for g, k in zip(graph_inputs, in_names)} for s in sets]
    if time_axis is not None:
        time_axis = {graph_inputs[in_names.index(k)]: v for k, v in time_axis.items()}
    about = {"time_axis": time_axis, "rnn_like": rnn_like, "notes": notes}
    return model.save(name, proto, renamed, results, exercises, **about)


def keras_seq(
    name,
    layer_fn,
    exercises,
    *,
    features=4,
    rnn_like=True,
    time_axis=True,
    seed=0,
    notes=None,
    x_fn=None,
):
    """A Keras model x[B,T,F] -> layer(s); two input sets with other batch and time sizes."""
    keras.utils.set_random_seed(seed)
    inp = keras.Input((None, features), name="x")
    out = layer_fn(inp)
    m = keras.Model(inp, out)
    x_fn = x_fn or (lambda s, b, t: rand(s, b, t, features))
    sets = [{"x": x_fn(seed + 1, 2, 5)}, {"x": x_fn(seed + 2, 3, 8)}]
    return export(
        name,
        lambda x: m(x),
        [spec(None, None, features, name="x")],
        sets,
        exercises=exercises,
        time_axis={"x": 1} if time_axis else None,
        rnn_like=rnn_like,
        notes=notes,
    )


@model
def tf_keras_simple_rnn_sequences():
    return keras_seq(
        "tf_keras_simple_rnn_sequences",
        lambda x: keras.layers.SimpleRNN(8, return_sequences=True)(x),
        "Keras SimpleRNN(return_sequences=True), dynamic batch and time",
    )


@model
def tf_keras_simple_rnn_last():
    return keras_seq(
        "tf_keras_simple_rnn_last",
        lambda x: keras.layers.SimpleRNN(8)(x),
        "Keras SimpleRNN returning the last output only",
        seed=10,
    )


@model
def tf_keras_gru_reset_after():
    return keras_seq(
        "tf_keras_gru_reset_after",
        lambda x: keras.layers.GRU(8, return_sequences=True)(x),
        "Keras GRU (reset_after=True, the default: recurrent bias apart)",
        seed=20,
    )


@model
def tf_keras_gru_reset_before():
    return keras_seq(
        "tf_keras_gru_reset_before",
        lambda x: keras.layers.GRU(8, reset_after=False, return_sequences=True)(x),
        "Keras GRU(reset_after=False): reset gate applied before the recurrent matmul",
        seed=30,
    )


@model
def tf_keras_lstm_return_state():
    return keras_seq(
        "tf_keras_lstm_return_state",
        lambda x: keras.layers.LSTM(8, return_sequences=True, return_state=True)(x),
        "Keras LSTM(return_sequences=True, return_state=True): sequence, h and c outputs",
        seed=40,
        notes="tf2onnx rewrites keras LSTM into an ONNX LSTM op: no Loop",
    )


@model
def tf_keras_gru_go_backwards():
    return keras_seq(
        "tf_keras_gru_go_backwards",
        lambda x: keras.layers.GRU(6, go_backwards=True, return_sequences=True)(x),
        "Keras GRU(go_backwards=True): the loop runs over the reversed time axis",
        seed=50,
        time_axis=False,
        notes="go_backwards: chunked streaming is not meaningful",
    )


@model
def tf_keras_bidirectional_gru():
    return keras_seq(
        "tf_keras_bidirectional_gru",
        lambda x: keras.layers.Bidirectional(keras.layers.GRU(6, return_sequences=True))(x),
        "Keras Bidirectional(GRU): a forward and a backward loop, concatenated",
        seed=60,
        time_axis=False,
        notes="bidirectional: chunked streaming is not meaningful",
    )


@model
def tf_keras_bidirectional_lstm_sum():
    return keras_seq(
        "tf_keras_bidirectional_lstm_sum",
        lambda x: keras.layers.Bidirectional(keras.layers.LSTM(5), merge_mode="sum")(x),
        "Keras Bidirectional(LSTM, merge_mode='sum') returning the last outputs",
        seed=65,
        time_axis=False,
        notes="tf2onnx rewrites keras LSTM into an ONNX LSTM op: no Loop (two of them)",
    )


def _padded(seed, b, t, features=4):
    x = rand(seed, b, t, features)
    lengths = np.random.default_rng(seed).integers(1, t + 1, size=b)
    for i, n in enumerate(lengths):
        x[i, n:] = 0.0
    return x


@model
def tf_keras_masking_lstm():
    return keras_seq(
        "tf_keras_masking_lstm",
        lambda x: keras.layers.LSTM(8)(keras.layers.Masking(0.0)(x)),
        "Keras Masking(0.0) + LSTM: padded steps keep the state (a mask select in the loop)",
        seed=70,
        x_fn=_padded,
        notes="the last output is the last unmasked step's: the loop keeps it in its state, so "
        "chunks of the time axis give the whole sequence's",
    )


@model
def tf_keras_masking_gru_sequences():
    return keras_seq(
        "tf_keras_masking_gru_sequences",
        lambda x: keras.layers.GRU(6, return_sequences=True)(keras.layers.Masking(0.0)(x)),
        "Keras Masking(0.0) + GRU(return_sequences=True)",
        seed=75,
        x_fn=_padded,
    )


@keras.saving.register_keras_serializable(package="corpus")
class MinimalRNNCell(keras.layers.Layer):
    """The custom-cell example of Keras' RNN documentation, with a leak term."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="kernel"
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), initializer="orthogonal", name="recurrent_kernel"
        )

    def call(self, inputs, states):
        prev = states[0]
        h = keras.ops.tanh(
            keras.ops.matmul(inputs, self.kernel) + keras.ops.matmul(prev, self.recurrent_kernel)
        )
        h = 0.8 * h + 0.2 * prev
        return h, [h]


@model
def tf_keras_custom_cell_rnn():
    return keras_seq(
        "tf_keras_custom_cell_rnn",
        lambda x: keras.layers.RNN(MinimalRNNCell(8), return_sequences=True)(x),
        "keras.layers.RNN over a user-written cell (matmuls, tanh, leak)",
        seed=80,
    )


@model
def tf_keras_rnn_lstm_cell():
    return keras_seq(
        "tf_keras_rnn_lstm_cell",
        lambda x: keras.layers.RNN(
            keras.layers.LSTMCell(8), return_sequences=True, return_state=True
        )(x),
        "keras.layers.RNN(LSTMCell) with return_state: an LSTM that tf2onnx keeps as a Loop "
        "(keras.layers.LSTM becomes an ONNX LSTM op)",
        seed=83,
    )


@model
def tf_keras_stacked_rnn_cells():
    cells = [keras.layers.GRUCell(6), keras.layers.LSTMCell(5)]
    return keras_seq(
        "tf_keras_stacked_rnn_cells",
        lambda x: keras.layers.RNN(keras.layers.StackedRNNCells(cells), return_sequences=True)(x),
        "keras.layers.RNN(StackedRNNCells([GRUCell, LSTMCell])): two cells in one loop body",
        seed=85,
    )


@model
def tf_keras_stacked_lstm_gru_dense():
    def layers(x):
        x = keras.layers.LSTM(8, return_sequences=True)(x)
        x = keras.layers.GRU(6, return_sequences=True)(x)
        return keras.layers.Dense(3)(x)

    return keras_seq(
        "tf_keras_stacked_lstm_gru_dense",
        layers,
        "LSTM -> GRU -> Dense: an ONNX LSTM op then a GRU Loop",
        seed=90,
        notes="tf2onnx rewrites keras LSTM into an ONNX LSTM op: no Loop; the GRU stays a Loop",
    )


@model
def tf_keras_conv1d_gru_classifier():
    def layers(x):
        x = keras.layers.Conv1D(8, 3, padding="causal", activation="relu")(x)
        x = keras.layers.GRU(8)(x)
        return keras.layers.Dense(4, activation="softmax")(x)

    return keras_seq(
        "tf_keras_conv1d_gru_classifier",
        layers,
        "causal Conv1D front end -> GRU (last state) -> softmax classifier",
        seed=95,
        time_axis=False,
        notes="causal conv before the loop: chunking needs the conv's history",
    )


def _state_in_out(name, layer, states, seed, notes=None):
    keras.utils.set_random_seed(seed)
    x_in = keras.Input((None, 4), name="x")
    state_in = [keras.Input((8,), name=s) for s in states]
    outs = layer(x_in, initial_state=state_in)
    m = keras.Model([x_in, *state_in], outs)
    sets = []
    for k, (b, t) in enumerate([(2, 5), (1, 9)]):
        one = {"x": rand(seed + 10 * k + 1, b, t, 4)}
        one.update({s: rand(seed + 10 * k + 2 + i, b, 8, scale=0.5) for i, s in enumerate(states)})
        sets.append(one)
    sig = [spec(None, None, 4, name="x")] + [spec(None, 8, name=s) for s in states]
    return export(
        name,
        lambda x, *st: m([x, *st]),
        sig,
        sets,
        exercises=f"Keras {type(layer).__name__} with initial_state inputs and return_state "
        "outputs: the stateful-by-hand streaming pattern (feed the returned state back)",
        time_axis={"x": 1},
        rnn_like=True,
        notes=notes,
    )


@model
def tf_keras_lstm_state_in_out():
    return _state_in_out(
        "tf_keras_lstm_state_in_out",
        keras.layers.LSTM(8, return_sequences=True, return_state=True),
        ["h0", "c0"],
        100,
        notes="tf2onnx rewrites keras LSTM into an ONNX LSTM op: no Loop",
    )


@model
def tf_keras_gru_state_in_out():
    return _state_in_out(
        "tf_keras_gru_state_in_out",
        keras.layers.GRU(8, return_sequences=True, return_state=True),
        ["h0"],
        105,
    )


@model
def tf_keras_gru_stateful_batch2():
    keras.utils.set_random_seed(110)
    inp = keras.Input((None, 4), batch_size=2, name="x")
    layer = keras.layers.GRU(6, stateful=True, return_sequences=True)
    m = keras.Model(inp, layer(inp))
    sets = [{"x": rand(111, 2, 5, 4)}, {"x": rand(112, 2, 9, 4)}]
    layer.reset_states()
    return export(
        "tf_keras_gru_stateful_batch2",
        lambda x: m(x),
        [spec(2, None, 4, name="x")],
        sets,
        exercises="Keras GRU(stateful=True) with a fixed batch of 2: the state Variable is "
        "read as the initial state (frozen by tf2onnx at its export-time value, zeros); "
        "expected outputs are from a reset state",
        time_axis={"x": 1},
        rnn_like=True,
        before_call=layer.reset_states,
    )


# ---------------------------------------------------------------- tf.function loops


@model
def tf_while_loop_count_input():
    def fn(x, n):
        def body(i, acc):
            return i + 1, acc * 0.9 + tf.cast(i, tf.float32)

        return tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), x])

    sets = [
        {"x": rand(200, 2, 3), "n": np.array(6, np.int32)},
        {"x": rand(201, 4, 3), "n": np.array(0, np.int32)},
    ]
    return export(
        "tf_while_loop_count_input",
        fn,
        [spec(None, 3, name="x"), spec(dtype=tf.int32, name="n")],
        sets,
        exercises="tf.while_loop(i < n) with the count n a graph input (0 in set 2)",
    )


@model
def tf_while_loop_newton():
    def fn(a):
        def cond(x, k):
            return tf.logical_and(tf.reduce_max(tf.abs(x * x - a)) > 1e-4, k < 50)

        return tf.while_loop(
            cond, lambda x, k: (0.5 * (x + a / x), k + 1), [tf.ones_like(a), tf.constant(0)]
        )

    sets = [{"a": np.abs(rand(210, 5)) + 0.5}, {"a": np.abs(rand(211, 7)) * 10 + 0.1}]
    return export(
        "tf_while_loop_newton",
        fn,
        [spec(None, name="a")],
        sets,
        exercises="tf.while_loop with a data-dependent stop (Newton square root)",
    )


@model
def tf_while_tensor_array():
    def fn(x):
        steps = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=steps)

        def body(i, h, ta):
            h = tf.tanh(h * 0.8 + x[i])
            return i + 1, h, ta.write(i, h * 2.0)

        _, h, ta = tf.while_loop(
            lambda i, h, ta: i < steps, body, [tf.constant(0), tf.zeros_like(x[0]), ta]
        )
        return h, ta.stack()

    sets = [{"x": rand(220, 6, 3)}, {"x": rand(221, 10, 2)}]
    return export(
        "tf_while_tensor_array",
        fn,
        [spec(None, None, name="x")],
        sets,
        exercises="tf.while_loop writing a TensorArray (stacked after the loop), T from tf.shape",
        time_axis={"x": 0},
        rnn_like=True,
    )


@model
def tf_scan_cumulative():
    def fn(xs):
        return tf.scan(lambda acc, x: acc * 0.5 + x, xs, initializer=tf.zeros_like(xs[0]))

    sets = [{"xs": rand(230, 5, 3)}, {"xs": rand(231, 9, 4)}]
    return export(
        "tf_scan_cumulative",
        fn,
        [spec(None, None, name="xs")],
        sets,
        exercises="tf.scan with an initializer (leaky cumulative sum)",
        time_axis={"xs": 0},
        rnn_like=True,
    )


@model
def tf_scan_reverse_tuple():
    def fn(xs):
        def step(acc, x):
            s, m = acc
            return s + x, tf.maximum(m, x)

        init = (tf.zeros_like(xs[0]), tf.fill(tf.shape(xs[0]), -1e9))
        return tf.scan(step, xs, initializer=init, reverse=True)

    sets = [{"xs": rand(240, 5, 3)}, {"xs": rand(241, 8, 2)}]
    return export(
        "tf_scan_reverse_tuple",
        fn,
        [spec(None, None, name="xs")],
        sets,
        exercises="tf.scan(reverse=True) with a tuple accumulator (sum and running max)",
        notes="tf2onnx bug: the exported Loop stacks the outputs in processing order and "
        "never reverses them, so the ONNX model (and onnxruntime) differ from TensorFlow; "
        "expected.npz is TensorFlow's",
    )


@model
def tf_nested_while():
    def fn(x, n, m):
        def outer(i, acc):
            def inner(j, a):
                return j + 1, a + tf.cast(i * j, tf.float32) * 0.1

            _, acc = tf.while_loop(lambda j, a: j < m, inner, [tf.constant(0), acc])
            return i + 1, tf.tanh(acc)

        return tf.while_loop(lambda i, acc: i < n, outer, [tf.constant(0), x])[1]

    sets = [
        {"x": rand(250, 2, 3), "n": np.array(3, np.int32), "m": np.array(4, np.int32)},
        {"x": rand(251, 5, 3), "n": np.array(2, np.int32), "m": np.array(0, np.int32)},
    ]
    return export(
        "tf_nested_while",
        fn,
        [spec(None, 3, name="x"), spec(dtype=tf.int32, name="n"), spec(dtype=tf.int32, name="m")],
        sets,
        exercises="tf.while_loop nested in tf.while_loop, both counts inputs (inner 0 in set 2)",
    )


@model
def tf_while_loop_f64():
    def fn(x, n):
        def body(i, v):
            return i + 1, tf.sin(v) * 1.5 + 0.1

        return tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x])[1]

    sets = [
        {"x": rand(260, 4).astype(np.float64), "n": np.array(7, np.int32)},
        {"x": rand(261, 9).astype(np.float64), "n": np.array(2, np.int32)},
    ]
    return export(
        "tf_while_loop_f64",
        fn,
        [spec(None, dtype=tf.float64, name="x"), spec(dtype=tf.int32, name="n")],
        sets,
        exercises="tf.while_loop on float64 values",
    )


@model
def tf_keras_gru_opset13():
    keras.utils.set_random_seed(270)
    inp = keras.Input((None, 3), name="x")
    m = keras.Model(inp, keras.layers.GRU(5, return_sequences=True)(inp))
    sets = [{"x": rand(271, 2, 4, 3)}, {"x": rand(272, 5, 6, 3)}]
    return export(
        "tf_keras_gru_opset13",
        lambda x: m(x),
        [spec(None, None, 3, name="x")],
        sets,
        exercises="Keras GRU exported at opset 13",
        time_axis={"x": 1},
        rnn_like=True,
        opset=13,
    )


if __name__ == "__main__":
    model.main()
