"""IR reference kernels of OpenVINO's recurrent sequence ops: RNNSequence-5, GRUSequence-5,
LSTMSequence-5 (forward and reverse; inputs X [B, T, I], initial states [B, 1, H],
sequence_lengths [B], W [1, gates * H, I], R [1, gates * H, H], B [1, gates * H]; outputs
Y [B, 1, T, H] and the last states [B, 1, H]).

Semantics (OpenVINO op specs "RNNSequence-5", "GRUSequence-5", "LSTMSequence-5", whose cells
are RNNCell-3, GRUCell-3 and LSTMCell-4)::

    for t in range(T) (reverse: from T-1 down):  # a row b steps only while t < lengths[b]
        RNN   h = f(x_t W^T + h R^T + B)
        GRU   z, r = f(x_t Wz^T + h Rz^T + Bz), f(x_t Wr^T + h Rr^T + Br)
              n = g(x_t Wh^T + (r * h) Rh^T + Bh)                linear_before_reset = 0
              n = g(x_t Wh^T + Bh + r * (h Rh^T + Rbh))          linear_before_reset = 1
              h = (1 - z) * n + z * h
        LSTM  f, i, c~, o = f(.), f(.), g(.), f(.) of x_t W^T + h R^T + B (gate order f, i, c, o)
              c = f * c + i * c~;  h = o * h_(c)
        Y[b, 0, t] = h (0 where row b does not step);  outputs Y, h (and c) of each row
    f, g, h_ = activations; clip and bidirectional sequences are not supported (an error)
"""

from __future__ import annotations

import numpy as np

from ov_loops.errors import ConversionError

ACTIVATIONS = {
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
    "relu": lambda v: np.maximum(v, 0),
}
DEFAULTS = {
    "RNNSequence": "tanh",
    "GRUSequence": "sigmoid,tanh",
    "LSTMSequence": "sigmoid,tanh,tanh",
}


def _activations(layer) -> list:
    names = layer.data.get("activations") or DEFAULTS[layer.type]
    return [ACTIVATIONS[name.strip()] for name in names.split(",")]


def _rnn_step(layer, act, x, states, W, R, B):
    (h,) = states
    return [act[0](x @ W.T + h @ R.T + B)]


def _gru_step(layer, act, x, states, W, R, B):
    (h,) = states
    size = h.shape[1]
    xs = x @ W.T
    hs = h @ R.T
    z = act[0](xs[:, :size] + hs[:, :size] + B[:size])
    r = act[0](xs[:, size : 2 * size] + hs[:, size : 2 * size] + B[size : 2 * size])
    if layer.data.get("linear_before_reset", "false") == "true":
        n = act[1](
            xs[:, 2 * size :] + B[2 * size : 3 * size] + r * (hs[:, 2 * size :] + B[3 * size :])
        )
    else:
        n = act[1](xs[:, 2 * size :] + (r * h) @ R[2 * size :].T + B[2 * size :])
    return [(1 - z) * n + z * h]


def _lstm_step(layer, act, x, states, W, R, B):
    h, c = states
    gates = np.split(x @ W.T + h @ R.T + B, 4, axis=1)
    forget, update, fresh, out = (
        act[0](gates[0]),
        act[0](gates[1]),
        act[1](gates[2]),
        act[0](gates[3]),
    )
    c = forget * c + update * fresh
    return [out * act[2](c), c]


STEPS = {
    "RNNSequence": (_rnn_step, 1),
    "GRUSequence": (_gru_step, 1),
    "LSTMSequence": (_lstm_step, 2),
}


def _sequence(layer, x):
    step, count = STEPS[layer.type]
    X, states, lengths = x[0], [s[:, 0] for s in x[1 : 1 + count]], x[1 + count]
    W, R, B = (array[0] for array in x[2 + count : 5 + count])
    direction = layer.data.get("direction", "forward")
    if direction not in ("forward", "reverse") or W.shape[0] != R.shape[0]:
        raise ConversionError(f"{layer.type} '{layer.name}': direction {direction} not supported")
    if float(layer.data.get("clip", 0) or 0) > 0:
        raise ConversionError(f"{layer.type} '{layer.name}': clip not supported")
    act = _activations(layer)
    batch, steps = X.shape[:2]
    Y = np.zeros((batch, 1, steps, states[0].shape[1]), X.dtype)
    order = range(steps) if direction == "forward" else range(steps - 1, -1, -1)
    for t in order:
        stepping = (t < lengths)[:, None]
        fresh = step(layer, act, X[:, t], states, W, R, B)
        states = [np.where(stepping, new, old).astype(X.dtype) for new, old in zip(fresh, states)]
        Y[:, 0, t] = np.where(stepping, states[0], 0)
    return [Y, *(state[:, None] for state in states)]


SEQUENCE_KERNELS = {name: _sequence for name in STEPS}
