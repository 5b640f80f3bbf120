"""Matching one RNN, GRU or LSTM step from its new states back to the step input and old states.

The equations each matcher accepts are in lower/cell_patterns.py; the weights come out in
OpenVINO's layouts and gate orders (RNNSequence-5, GRUSequence-5, LSTMSequence-5: W
[gates * H, I], R [gates * H, H], B [gates * H], or [4 * H] for a GRU with
linear_before_reset: z, r, then the candidate's input and state biases).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov

from ov_loops.lower.cell_patterns import (
    RNN_ACTIVATIONS,
    SIGMOID,
    TANH,
    Affine,
    Gate,
    Matcher,
    NoMatch,
    activation_input,
    affine,
    gate,
    key,
    operand_orders,
    product,
)


@dataclass(frozen=True)
class CellWeights:
    """A recognised step: the cell kind ("RNN", "GRU", "LSTM"), its weights in OpenVINO's layout
    and gate order, its activations, and (GRU) linear_before_reset."""

    kind: str
    W: np.ndarray
    R: np.ndarray
    B: np.ndarray
    activations: tuple[str, ...]
    linear_before_reset: bool = False


def stacked(kind: str, gates: list[Gate], extra_bias: list[np.ndarray] = ()) -> CellWeights:
    """The weights of `gates` (already in OpenVINO's order) stacked, f32."""
    W = np.concatenate([g.W for g in gates]).astype(np.float32)
    R = np.concatenate([g.R for g in gates]).astype(np.float32)
    B = np.concatenate([g.bias for g in gates] + list(extra_bias)).astype(np.float32)
    activations = {"RNN": (), "GRU": ("sigmoid", "tanh"), "LSTM": ("sigmoid", "tanh", "tanh")}
    return CellWeights(kind, W, R, B, activations[kind], bool(len(extra_bias)))


def match_rnn(m: Matcher, h_new: ov.Output) -> CellWeights:
    """h' = f(x W + h R + b)."""
    node = m.op(h_new, tuple(RNN_ACTIVATIONS))
    weights = stacked("RNN", [gate(m, affine(m, node.input_value(0)))])
    name = RNN_ACTIVATIONS[node.get_type_name()]
    return CellWeights("RNN", weights.W, weights.R, weights.B, (name,))


def match_lstm(m: Matcher, h_new: ov.Output, c_new: ov.Output, c: ov.Output) -> CellWeights:
    """c' = sigmoid(f) * c + sigmoid(i) * tanh(g); h' = sigmoid(o) * tanh(c')."""
    o_pre, c_read = product(m, h_new, SIGMOID, TANH)
    if key(c_read) != key(c_new):
        raise NoMatch
    add = m.op(c_new, ("Add",))

    def split(forget: ov.Output, update: ov.Output) -> tuple[ov.Output, ...]:
        f_pre, state = product(m, forget, SIGMOID, None)
        if key(state) != key(c):
            raise NoMatch
        return (f_pre, *product(m, update, SIGMOID, TANH))

    f_pre, i_pre, g_pre = m.first(*(lambda a=a, b=b: split(a, b) for a, b in operand_orders(add)))
    return stacked("LSTM", [gate(m, affine(m, pre)) for pre in (f_pre, i_pre, g_pre, o_pre)])


def match_gru(m: Matcher, h_new: ov.Output, h: ov.Output) -> CellWeights:
    """h' = (1 - z) * n + z * h in either of two forms; the candidate n with or without
    linear_before_reset."""
    z_pre, n = m.first(lambda: _blend_difference(m, h_new, h), lambda: _blend_sum(m, h_new, h))
    n_pre = activation_input(m, n, TANH)
    z = gate(m, affine(m, z_pre))
    return m.first(lambda: _candidate(m, n_pre, z, h), lambda: _candidate_lbr(m, n_pre, z))


def _blend_difference(m: Matcher, h_new: ov.Output, h: ov.Output) -> tuple[ov.Output, ov.Output]:
    """h' = n + z * (h - n): z's pre-activation and n."""
    add = m.op(h_new, ("Add",))

    def attempt(n: ov.Output, scaled: ov.Output) -> tuple[ov.Output, ov.Output]:
        z_pre, difference = product(m, scaled, SIGMOID, None)
        subtract = m.op(difference, ("Subtract",))
        if key(subtract.input_value(0)) != key(h) or key(subtract.input_value(1)) != key(n):
            raise NoMatch
        return z_pre, n

    return m.first(*(lambda a=a, b=b: attempt(a, b) for a, b in operand_orders(add)))


def _blend_sum(m: Matcher, h_new: ov.Output, h: ov.Output) -> tuple[ov.Output, ov.Output]:
    """h' = (1 - z) * n + z * h: z's pre-activation and n."""
    add = m.op(h_new, ("Add",))

    def attempt(kept: ov.Output, fresh: ov.Output) -> tuple[ov.Output, ov.Output]:
        z_pre, state = product(m, kept, SIGMOID, None)
        if key(state) != key(h):
            raise NoMatch
        multiply = m.op(fresh, ("Multiply",))

        def complement(c: ov.Output, n: ov.Output) -> tuple[ov.Output, ov.Output]:
            subtract = m.op(c, ("Subtract",))
            one = m.constant(subtract.input_value(0))
            if one is None or not np.all(one == 1):
                raise NoMatch
            if key(activation_input(m, subtract.input_value(1), SIGMOID)) != key(z_pre):
                raise NoMatch
            return z_pre, n

        orders = operand_orders(multiply)
        return m.first(*(lambda c=c, n=n: complement(c, n) for c, n in orders))

    return m.first(*(lambda a=a, b=b: attempt(a, b) for a, b in operand_orders(add)))


def _candidate(m: Matcher, n_pre: ov.Output, z: Gate, h: ov.Output) -> CellWeights:
    """n = tanh(x Wn + (r * h) Rn + b), r = sigmoid(x Wr + h Rr + br)."""
    form = affine(m, n_pre)
    reset = [source for source, _ in form.terms.values() if m.role(source) == "other"]
    if len(reset) != 1:
        raise NoMatch
    r_pre, state = product(m, reset[0], SIGMOID, None)
    if key(state) != key(h):
        raise NoMatch
    matrix = form.terms[key(reset[0])][1]
    rest = Affine({k: t for k, t in form.terms.items() if k != key(reset[0])}, form.bias)
    n = gate(m, rest, ("x",))
    n = Gate(n.W, matrix.T, n.bias)
    return stacked("GRU", [z, gate(m, affine(m, r_pre)), n])


def _candidate_lbr(m: Matcher, n_pre: ov.Output, z: Gate) -> CellWeights:
    """n = tanh(x Wn + bx + r * (h Rn + bh)), the sum in any order and grouping."""
    r_pre, state_form, input_form = _reset_sum(m, n_pre)
    if input_form is None:
        raise NoMatch
    x_part, h_part = gate(m, input_form, ("x",)), gate(m, state_form, ("h",))
    n = Gate(x_part.W, h_part.R, x_part.bias)
    return stacked("GRU", [z, gate(m, affine(m, r_pre)), n], [h_part.bias])


def _reset_sum(m: Matcher, value: ov.Output) -> tuple[ov.Output, Affine, Affine | None]:
    """value = sum of affine terms and one r * (affine in h): r's pre-activation, that affine
    form, and the sum of the others (None when there are none)."""
    node = value.get_node()
    if node.get_type_name() == "Multiply":
        r_pre, inner = product(m, value, SIGMOID, None)
        return r_pre, affine(m, inner), None
    add = m.op(value, ("Add",))

    def attempt(a: ov.Output, b: ov.Output) -> tuple[ov.Output, Affine, Affine]:
        r_pre, state_form, others = _reset_sum(m, a)
        bias = m.constant(b)
        if bias is not None:
            zero = Affine({}, np.zeros(state_form.bias.size))
            other = (others or zero).with_bias(bias)
        else:
            other = affine(m, b) if others is None else others.plus(affine(m, b))
        return r_pre, state_form, other

    return m.first(*(lambda a=a, b=b: attempt(a, b) for a, b in operand_orders(add)))
