"""Matching recurrent cell steps in a loop body: affine gate projections and their activations.

A gate's pre-activation is read as an affine form of the body's sources, `sum(source @ M) + b`
over its columns, through MatMul (a constant or constant-fed weight), Add, column slices
(Split, VariadicSplit, Slice on the last axis) and Broadcasts that change nothing. The sources
are the step's input `x` (a view of the sliced part without its length-1 axis), the carried
states, and, for a GRU whose reset gate multiplies the state before its MatMul, that product.
The cells (h' and c' the new states):

    RNN   h' = f(x Wx + h Rh + b)                        f in tanh, sigmoid, relu
    LSTM  c' = sigmoid(i) * c + sigmoid(f_) * tanh(g); h' = sigmoid(o) * tanh(c')   (any order)
    GRU   h' = n + z * (h - n)  or  (1 - z) * n + z * h, z = sigmoid(.), n = tanh(.)
          n = tanh(x Wn + (r * h) Rn + b)                linear_before_reset = 0
          n = tanh(x Wn + bx + r * (h Rn + bh))          linear_before_reset = 1

Multiply and Add match in either operand order. Every op a match reads is `taken`; the caller
checks that nothing else is left in the body. Gates come out in OpenVINO's order (LSTMCell-4:
f, i, c, o; GRUCell-3: z, r, h), weights as [gates * H, I] and [gates * H, H].
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import openvino as ov

SIGMOID, TANH = ("Sigmoid",), ("Tanh",)
RNN_ACTIVATIONS = {"Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "relu"}
VIEWS = ("Squeeze", "Reshape")


class NoMatch(Exception):
    """The body is not the cell being matched (internal to recognition)."""


def key(value: ov.Output) -> tuple[int, int]:
    """A value's identity: its node's instance id and output index."""
    return value.get_node().get_instance_id(), value.get_index()


@dataclass(frozen=True)
class Affine:
    """`sum(source @ matrix for source, matrix in terms.values()) + bias`; terms by source key."""

    terms: dict[tuple[int, int], tuple[ov.Output, np.ndarray]]
    bias: np.ndarray

    def columns(self, start: int, stop: int) -> Affine:
        terms = {k: (source, matrix[:, start:stop]) for k, (source, matrix) in self.terms.items()}
        return Affine(terms, self.bias[start:stop])

    def plus(self, other: Affine) -> Affine:
        if self.bias.shape != other.bias.shape:
            raise NoMatch
        terms = dict(self.terms)
        for k, (source, matrix) in other.terms.items():
            terms[k] = (source, terms[k][1] + matrix) if k in terms else (source, matrix)
        return Affine(terms, self.bias + other.bias)

    def with_bias(self, bias: np.ndarray) -> Affine:
        bias = np.asarray(bias, np.float64)
        if (
            bias.ndim > 2
            or bias.size not in (1, self.bias.size)
            or bias.shape[:-1] not in ((), (1,))
        ):
            raise NoMatch
        return Affine(self.terms, self.bias + bias.reshape(-1))


@dataclass(frozen=True)
class Gate:
    """One gate's weights: W [H, I], R [H, H], bias [H] (and the state's own bias for a GRU's
    linear_before_reset candidate)."""

    W: np.ndarray
    R: np.ndarray
    bias: np.ndarray


@dataclass
class Matcher:
    """What matching reads: the step input `x` (the sliced Parameter, or all of X read at a
    counter), the states' Parameters by
    role ("h", "c"), constants behind Parameters (invariant inputs fed a constant) and the ops
    taken so far."""

    x: ov.Output
    states: dict[tuple[int, int], str]
    constants: dict[tuple[int, int], np.ndarray]
    hidden: int
    inputs: int
    counter: tuple[int, int] | None = None  # x is all of X, read at this counter's Parameter
    taken: set[int] = field(default_factory=set)

    def take(self, node: ov.Node) -> None:
        self.taken.add(node.get_instance_id())

    def constant(self, value: ov.Output) -> np.ndarray | None:
        """The value of a Constant, or of a Parameter an invariant constant feeds."""
        if value.get_node().get_type_name() == "Constant":
            return np.asarray(value.get_node().get_data())
        return self.constants.get(key(value))

    def op(self, value: ov.Output, kinds: tuple[str, ...]) -> ov.Node:
        """The node of `value`, taken, if it is one of `kinds`."""
        node = value.get_node()
        if node.get_type_name() not in kinds:
            raise NoMatch
        self.take(node)
        return node

    def first(self, *attempts: Callable[[], object]) -> object:
        """The result of the first attempt that matches (ops taken by failed ones released)."""
        for attempt in attempts:
            saved = set(self.taken)
            try:
                return attempt()
            except NoMatch:
                self.taken = saved
        raise NoMatch

    def _reads_step(self, node: ov.Node) -> bool:
        """Whether `node` is Gather(X, counter, axis 0)."""
        if node.get_type_name() != "Gather" or node.get_batch_dims() != 0:
            return False
        axis = self.constant(node.input_value(2))
        reads = key(node.input_value(0)) == key(self.x) and key(node.input_value(1)) == self.counter
        return reads and axis is not None and int(axis) == 0

    def role(self, source: ov.Output) -> str:
        """ "h" or "c" for a state, "x" for a view of the step input as [B, I], else "other"."""
        if key(source) in self.states:
            return self.states[key(source)]
        node = source.get_node()
        if self.counter is not None and self._reads_step(node):
            self.take(node)
            return "x"
        if node.get_type_name() in VIEWS and key(node.input_value(0)) == key(self.x):
            part, shape = self.x.get_partial_shape(), source.get_partial_shape()
            if shape.rank.get_length() == 2 and part[0] == 1 and shape[1] == part[2]:
                self.take(node)
                return "x"
        return "other"


def operand_orders(node: ov.Node) -> Iterator[tuple[ov.Output, ov.Output]]:
    a, b = node.input_value(0), node.input_value(1)
    yield a, b
    yield b, a


def affine(m: Matcher, value: ov.Output) -> Affine:
    """`value` as an affine form of its sources (NoMatch otherwise)."""
    node = m.op(value, ("MatMul", "Add", "Split", "VariadicSplit", "Slice", "Broadcast"))
    kind = node.get_type_name()
    if kind == "MatMul":
        return _matmul(m, node)
    if kind == "Broadcast":
        return affine(m, _unbroadcast(m, node))
    if kind == "Add":
        for a, b in operand_orders(node):
            bias = m.constant(b)
            if bias is not None:
                return affine(m, a).with_bias(bias)
        return affine(m, node.input_value(0)).plus(affine(m, node.input_value(1)))
    whole = affine(m, node.input_value(0))
    start, stop = _column_range(m, node, value.get_index(), whole.bias.size)
    return whole.columns(start, stop)


def _unbroadcast(m: Matcher, node: ov.Node) -> ov.Output:
    """The input of a Broadcast that changes nothing: an affine [B, k] value broadcast to a
    shape provably [B, j], j <= k (jax2onnx's batch arithmetic: Maximum of ShapeOfs, Concat of
    the batch size and a width)."""
    data = node.input_value(0)
    width = data.get_partial_shape()[-1]
    if width.is_dynamic or _batch_rows(m, node.input_value(1)) > width.get_length():
        raise NoMatch
    return data


def _batch_rows(m: Matcher, shape: ov.Output) -> int:
    """j for a shape value provably [B, j] (B the batch of x and the states)."""
    node = m.op(shape, ("ShapeOf", "Maximum", "Concat"))
    kind = node.get_type_name()
    if kind == "Maximum":
        return max(_batch_rows(m, node.input_value(0)), _batch_rows(m, node.input_value(1)))
    if kind == "ShapeOf":
        return _batched_width(m, node.input_value(0))
    width = m.constant(node.input_value(1)) if node.get_input_size() == 2 else None
    gather = m.op(node.input_value(0), ("Gather",))
    index, axis = (m.constant(gather.input_value(i)) for i in (1, 2))
    if width is None or width.size != 1 or index is None or axis is None:
        raise NoMatch
    if index.reshape(-1).tolist() != [0] or int(axis) != 0:
        raise NoMatch
    _batched_width(m, m.op(gather.input_value(0), ("ShapeOf",)).input_value(0))
    return int(width.reshape(-1)[0])


def _batched_width(m: Matcher, value: ov.Output) -> int:
    """k for a value provably [B, k]: a step input view or state, or an affine form of them."""
    if m.role(value) == "other":
        affine(m, value)
    width = value.get_partial_shape()[-1]
    if width.is_dynamic:
        raise NoMatch
    return width.get_length()


def _matmul(m: Matcher, node: ov.Node) -> Affine:
    attributes = node.get_attributes()
    weight = m.constant(node.input_value(1))
    source = node.input_value(0)
    if attributes["transpose_a"] or weight is None or weight.ndim != 2:
        raise NoMatch
    if source.get_partial_shape().rank.get_length() != 2:
        raise NoMatch
    matrix = np.asarray(weight.T if attributes["transpose_b"] else weight, np.float64)
    return Affine({key(source): (source, matrix)}, np.zeros(matrix.shape[1]))


def _column_range(m: Matcher, node: ov.Node, index: int, width: int) -> tuple[int, int]:
    """The columns output `index` of a Split, VariadicSplit or Slice on the last of 2 axes takes."""
    kind = node.get_type_name()
    if kind == "Slice":
        return _slice_columns(m, node, width)
    axis = m.constant(node.input_value(1))
    if axis is None or int(axis.reshape(-1)[0]) not in (1, -1):
        raise NoMatch
    if kind == "Split":
        parts = node.get_attributes()["num_splits"]
        return index * width // parts, (index + 1) * width // parts
    lengths = m.constant(node.input_value(2))
    if lengths is None:
        raise NoMatch
    lengths = [int(n) for n in lengths.reshape(-1)]
    if -1 in lengths:
        lengths[lengths.index(-1)] = width - (sum(lengths) + 1)
    start = sum(lengths[:index])
    return start, start + lengths[index]


def _slice_columns(m: Matcher, node: ov.Node, width: int) -> tuple[int, int]:
    values = [m.constant(node.input_value(i)) for i in range(1, node.get_input_size())]
    if any(v is None for v in values) or len(values) != 4:
        raise NoMatch
    start, stop, step, axes = (int(v.reshape(-1)[0]) for v in values)
    if step != 1 or axes not in (1, -1) or any(v.size != 1 for v in values):
        raise NoMatch
    return slice(start, stop).indices(width)[:2]


def gate(m: Matcher, form: Affine, sources: tuple[str, ...] = ("x", "h")) -> Gate:
    """A gate's weights from its affine form; its sources must be among `sources`."""
    if form.bias.size != m.hidden:
        raise NoMatch
    W = np.zeros((m.hidden, m.inputs))
    R = np.zeros((m.hidden, m.hidden))
    for source, matrix in form.terms.values():
        role = m.role(source)
        if role not in sources:
            raise NoMatch
        if role == "x":
            W = W + matrix.T
        else:
            R = R + matrix.T
    return Gate(W, R, form.bias)


def activation_input(m: Matcher, value: ov.Output, kinds: tuple[str, ...]) -> ov.Output:
    """The input of `value`'s activation op, one of `kinds`."""
    return m.op(value, kinds).input_value(0)


def product(
    m: Matcher, value: ov.Output, first: tuple[str, ...], second: tuple[str, ...] | None
) -> tuple[ov.Output, ov.Output]:
    """For value = Multiply(F(a), G(b)) (either order): a and b, or the second operand itself
    when `second` is None."""
    node = m.op(value, ("Multiply",))

    def attempt(a: ov.Output, b: ov.Output) -> Callable[[], tuple[ov.Output, ov.Output]]:
        return lambda: (
            activation_input(m, a, first),
            b if second is None else activation_input(m, b, second),
        )

    return m.first(*(attempt(a, b) for a, b in operand_orders(node)))
