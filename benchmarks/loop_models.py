"""Recurrent ONNX loops for benchmarks/loops.py: cells (RNN, GRU, LSTM) in loop forms.

A cell is written as elementwise ops and MatMul on x_t [B, H] and its state(s) [B, H], weights
stored transposed for MatMul ([H, gates * H]) with gates in ONNX order (GRU: z, r, h; LSTM: i, o,
f, c). A form wraps a cell into a model with inputs X [T, B, H] and the initial states, outputs
the last states and every step's h stacked [T, B, H]:

- loop: a Loop with M = T, reading x_t = Gather(X, iteration number) of the captured sequence;
- scan: a Scan over axis 0 of X;
- jax: a Scan carrying an iteration counter, with the batch size taken apart and put back
  inside the body (Shape, Gather, Unsqueeze, Concat, Reshape, Expand), as jax2onnx / flax do;
- tf / tf_concat: a while-Loop (M = INT64 max) whose condition is counter < T, reading
  Gather(X, counter); outputs a scan output (tf) or a TensorList-like Concat of a carried
  [t, B, H] accumulator (tf_concat), as tf2onnx emits for Keras;
- torch: a Loop with M = Gather(Shape(X), 0) and a constant true condition, carrying the states,
  with a scan output, as torch's legacy exporter emits.

The exporter forms take a symbolic batch dimension "B"; loop and scan a fixed one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from benchmarks.rnn_cell import rnn_cell_nodes

INT64_MAX = np.iinfo(np.int64).max
OPSET = 17


@dataclass(frozen=True)
class Cell:
    """A recurrent cell: its states, its weight initializers and the body nodes of one step.

    `matrices` and `biases` name the initializers with their widths in units of H: a matrix
    is [H, width * H], a bias [1, width * H].
    """

    name: str
    states: tuple[str, ...]  # "h" first: the state stacked as the output
    matrices: tuple[tuple[str, int], ...]
    biases: tuple[tuple[str, int], ...]
    nodes: Callable[[str, Sequence[str], Sequence[str]], list[onnx.NodeProto]]

    def weights(self, hidden: int, seed: int) -> list[onnx.TensorProto]:
        """Random initializers: matrices N(0, 1/H), biases N(0, 0.01)."""
        rng = np.random.default_rng(seed)
        shaped = [(name, (hidden, width * hidden), hidden**-0.5) for name, width in self.matrices]
        shaped += [(name, (1, width * hidden), 0.1) for name, width in self.biases]
        return [
            numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
            for name, shape, scale in shaped
        ]


def rnn_step(x: str, states: Sequence[str], outs: Sequence[str]) -> list[onnx.NodeProto]:
    """h' = tanh(x W + h R + b) (benchmarks/rnn_cell.py)."""
    return rnn_cell_nodes(x, states[0], outs[0])


def gru_update_reset() -> list[onnx.NodeProto]:
    """z = sigmoid(xz + hz), r = sigmoid(xr + hr) from xz, xr, hz, hr in the body."""
    node = helper.make_node
    return [
        node("Add", ["xz", "hz"], ["z_pre"]),
        node("Sigmoid", ["z_pre"], ["z"]),
        node("Add", ["xr", "hr"], ["r_pre"]),
        node("Sigmoid", ["r_pre"], ["r"]),
    ]


def gru_candidate(h: str, recurrent: str, h_out: str) -> list[onnx.NodeProto]:
    """n = tanh(xn + recurrent); h_out = n + z (h - n) = (1 - z) n + z h."""
    node = helper.make_node
    return [
        node("Add", ["xn", recurrent], ["n_pre"]),
        node("Tanh", ["n_pre"], ["n"]),
        node("Sub", [h, "n"], ["h_minus_n"]),
        node("Mul", ["z", "h_minus_n"], ["z_h_minus_n"]),
        node("Add", ["n", "z_h_minus_n"], [h_out]),
    ]


def gru_x_projection(x: str) -> list[onnx.NodeProto]:
    """xz, xr, xn = split(x W + Wb)."""
    node = helper.make_node
    return [
        node("MatMul", [x, "W"], ["xw"]),
        node("Add", ["xw", "Wb"], ["xwb"]),
        node("Split", ["xwb"], ["xz", "xr", "xn"], axis=1),
    ]


def gru_step(x: str, states: Sequence[str], outs: Sequence[str]) -> list[onnx.NodeProto]:
    """GRU, linear_before_reset = 0: n = tanh(xn + (r * h) Rh + Rbh); h' = n + z (h - n)."""
    node = helper.make_node
    h = states[0]
    return [
        *gru_x_projection(x),
        node("MatMul", [h, "R_zr"], ["h_zr"]),
        node("Add", ["h_zr", "Rb_zr"], ["h_zrb"]),
        node("Split", ["h_zrb"], ["hz", "hr"], axis=1),
        *gru_update_reset(),
        node("Mul", ["r", h], ["r_h"]),
        node("MatMul", ["r_h", "R_n"], ["r_h_R"]),
        node("Add", ["r_h_R", "Rb_n"], ["r_h_Rb"]),
        *gru_candidate(h, "r_h_Rb", outs[0]),
    ]


def gru_lbr_step(x: str, states: Sequence[str], outs: Sequence[str]) -> list[onnx.NodeProto]:
    """GRU, linear_before_reset = 1: n = tanh(xn + r * (h Rh + Rbh)); h' = n + z (h - n)."""
    node = helper.make_node
    h = states[0]
    return [
        *gru_x_projection(x),
        node("MatMul", [h, "R"], ["h_r"]),
        node("Add", ["h_r", "Rb"], ["h_rb"]),
        node("Split", ["h_rb"], ["hz", "hr", "hn"], axis=1),
        *gru_update_reset(),
        node("Mul", ["r", "hn"], ["r_hn"]),
        *gru_candidate(h, "r_hn", outs[0]),
    ]


def lstm_step(x: str, states: Sequence[str], outs: Sequence[str]) -> list[onnx.NodeProto]:
    """LSTM: i, o, f, c~ = split(x W + h R + b); c' = f c + i c~; h' = o tanh(c')."""
    node = helper.make_node
    (h, c), (h_out, c_out) = states, outs
    return [
        node("MatMul", [x, "W"], ["xw"]),
        node("MatMul", [h, "R"], ["hr"]),
        node("Add", ["xw", "hr"], ["gates_no_bias"]),
        node("Add", ["gates_no_bias", "b"], ["gates"]),
        node("Split", ["gates"], ["i_pre", "o_pre", "f_pre", "c_pre"], axis=1),
        node("Sigmoid", ["i_pre"], ["gate_i"]),
        node("Sigmoid", ["o_pre"], ["gate_o"]),
        node("Sigmoid", ["f_pre"], ["gate_f"]),
        node("Tanh", ["c_pre"], ["c_new"]),
        node("Mul", ["gate_f", c], ["f_c"]),
        node("Mul", ["gate_i", "c_new"], ["i_c_new"]),
        node("Add", ["f_c", "i_c_new"], [c_out]),
        node("Tanh", [c_out], ["c_tanh"]),
        node("Mul", ["gate_o", "c_tanh"], [h_out]),
    ]


CELLS = {
    cell.name: cell
    for cell in (
        Cell("rnn", ("h",), (("W", 1), ("R", 1)), (("b", 1),), rnn_step),
        Cell(
            "gru",
            ("h",),
            (("W", 3), ("R_zr", 2), ("R_n", 1)),
            (("Wb", 3), ("Rb_zr", 2), ("Rb_n", 1)),
            gru_step,
        ),
        Cell("gru_lbr", ("h",), (("W", 3), ("R", 3)), (("Wb", 3), ("Rb", 3)), gru_lbr_step),
        Cell("lstm", ("h", "c"), (("W", 4), ("R", 4)), (("b", 4),), lstm_step),
    )
}


Dim = int | str


def floats(name: str, *shape: Dim | None) -> onnx.ValueInfoProto:
    """A float tensor's value info."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def scalar(name: str, element: int = TensorProto.INT64) -> onnx.ValueInfoProto:
    """A scalar's value info (int64 unless told)."""
    return helper.make_tensor_value_info(name, element, [])


def constant(name: str, value: object, element: int = TensorProto.INT64) -> onnx.NodeProto:
    """A Constant node: a scalar for a number or bool, a 1-D tensor for a list."""
    values = value if isinstance(value, list) else [value]
    dims = [len(values)] if isinstance(value, list) else []
    tensor = helper.make_tensor(f"{name}_value", element, dims, values)
    return helper.make_node("Constant", [], [name], value=tensor)


def renamed(nodes: list[onnx.NodeProto], mapping: dict[str, str]) -> list[onnx.NodeProto]:
    """The nodes with their inputs renamed by `mapping` (in place)."""
    for made in nodes:
        made.input[:] = [mapping.get(name, name) for name in made.input]
    return nodes


def states(cell: Cell, suffix: str, batch: Dim, hidden: int) -> list[onnx.ValueInfoProto]:
    """Value infos of the cell's states, named state + suffix."""
    return [floats(state + suffix, batch, hidden) for state in cell.states]


def names(cell: Cell, suffix: str) -> list[str]:
    """The cell's state names + suffix."""
    return [state + suffix for state in cell.states]


def step(cell: Cell, x: str, state_ins: Sequence[str] | None = None) -> list[onnx.NodeProto]:
    """One step of the cell from x and (by default) the body's state_in, and y = h_out."""
    ins = names(cell, "_in") if state_ins is None else state_ins
    return [
        *cell.nodes(x, ins, names(cell, "_out")),
        helper.make_node("Identity", ["h_out"], ["y"]),
    ]


def sequence_length(prefix: str = "") -> list[onnx.NodeProto]:
    """t = the length of X as a scalar (Shape with end=1, Squeeze)."""
    return [
        helper.make_node("Shape", ["X"], [prefix + "t_1d"], start=0, end=1),
        helper.make_node("Squeeze", [prefix + "t_1d"], ["t"]),
    ]


def loop_form(cell: Cell, hidden: int, batch: Dim) -> list[onnx.NodeProto]:
    """Loop with M = T, x_t = Gather(X, iteration number)."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
            *step(cell, "x_t"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        f"{cell.name}_loop_body",
        [scalar("i"), scalar("cond_in", TensorProto.BOOL), *states(cell, "_in", batch, hidden)],
        [
            scalar("cond_out", TensorProto.BOOL),
            *states(cell, "_out", batch, hidden),
            floats("y", batch, hidden),
        ],
    )
    outs = [*names(cell, "_last"), "hs"]
    return [
        *sequence_length(),
        helper.make_node("Loop", ["t", "", *names(cell, "0")], outs, body=body),
    ]


def scan_form(cell: Cell, hidden: int, batch: Dim) -> list[onnx.NodeProto]:
    """Scan over axis 0 of X."""
    body = helper.make_graph(
        step(cell, "x_t"),
        f"{cell.name}_scan_body",
        [*states(cell, "_in", batch, hidden), floats("x_t", batch, hidden)],
        [*states(cell, "_out", batch, hidden), floats("y", batch, hidden)],
    )
    ins, outs = [*names(cell, "0"), "X"], [*names(cell, "_last"), "hs"]
    return [helper.make_node("Scan", ins, outs, body=body, num_scan_inputs=1)]


def batch_shape_nodes(cell: Cell, hidden: int) -> tuple[list[onnx.NodeProto], dict[str, str]]:
    """jax2onnx-style batch arithmetic: states reshaped and biases expanded to [B, width].

    Returns the nodes and the renaming of state inputs and biases to their reshaped forms.
    """
    node = helper.make_node
    made = [
        node("Shape", ["x_t"], ["x_shape"]),
        constant("zero", 0),
        node("Gather", ["x_shape", "zero"], ["batch_size"], axis=0),
        constant("axis_0", [0]),
        node("Unsqueeze", ["batch_size", "axis_0"], ["batch_1d"]),
    ]
    mapping = {}
    widths = [(state + "_in", 1) for state in cell.states] + list(cell.biases)
    for name, width in widths:
        made += [
            constant(f"{name}_width", [width * hidden]),
            node("Concat", ["batch_1d", f"{name}_width"], [f"{name}_shape"], axis=0),
        ]
        how = "Reshape" if name.endswith("_in") else "Expand"
        made.append(node(how, [name, f"{name}_shape"], [f"{name}_batched"]))
        mapping[name] = f"{name}_batched"
    return made, mapping


def jax_form(cell: Cell, hidden: int, batch: Dim) -> list[onnx.NodeProto]:
    """Scan with an iteration counter and batch-size arithmetic in the body (jax2onnx / flax)."""
    shaping, mapping = batch_shape_nodes(cell, hidden)
    body = helper.make_graph(
        [
            *shaping,
            *renamed(step(cell, "x_t"), mapping),
            constant("one", 1),
            helper.make_node("Add", ["count_in", "one"], ["count_out"]),
        ],
        f"{cell.name}_jax_body",
        [scalar("count_in"), *states(cell, "_in", batch, hidden), floats("x_t", batch, hidden)],
        [scalar("count_out"), *states(cell, "_out", batch, hidden), floats("y", batch, hidden)],
    )
    ins = ["count0", *names(cell, "0"), "X"]
    outs = ["count_last", *names(cell, "_last"), "hs"]
    return [
        constant("count0", 0),
        helper.make_node("Scan", ins, outs, body=body, num_scan_inputs=1),
    ]


def tf_form(cell: Cell, hidden: int, batch: Dim, concat: bool = False) -> list[onnx.NodeProto]:
    """while-Loop (M = INT64 max) on counter < T; a scan output, or a Concat accumulator."""
    node = helper.make_node
    if concat:
        collect = [
            constant("axis_0", [0]),
            node("Unsqueeze", ["h_out", "axis_0"], ["h_row"]),
            node("Concat", ["acc_in", "h_row"], ["acc_out"], axis=0),
        ]
        collected_in = [floats("acc_in", None, batch, hidden)]
        collected_out = floats("acc_out", None, batch, hidden)
    else:
        collect, collected_in, collected_out = [], [], floats("y", batch, hidden)
    body = helper.make_graph(
        [
            node("Gather", ["X", "count_in"], ["x_t"], axis=0),
            *step(cell, "x_t"),
            *collect,
            constant("one", 1),
            node("Add", ["count_in", "one"], ["count_out"]),
            node("Less", ["count_out", "t"], ["cond_out"]),
        ],
        f"{cell.name}_tf_body",
        [scalar("iter"), scalar("cond_in", TensorProto.BOOL), scalar("count_in")]
        + [*states(cell, "_in", batch, hidden), *collected_in],
        [scalar("cond_out", TensorProto.BOOL), scalar("count_out")]
        + [*states(cell, "_out", batch, hidden), collected_out],
    )
    ins = ["trip_count", "cond0", "count0", *names(cell, "0"), *(["acc0"] if concat else [])]
    return [
        *sequence_length(),
        *(empty_accumulator() if concat else []),
        constant("trip_count", int(INT64_MAX)),
        constant("count0", 0),
        node("Less", ["count0", "t"], ["cond0"]),
        node("Loop", ins, ["count_last", *names(cell, "_last"), "hs"], body=body),
    ]


def empty_accumulator() -> list[onnx.NodeProto]:
    """acc0: zeros of shape [0, *shape(h0)]."""
    zero = helper.make_tensor("acc_zero", TensorProto.FLOAT, [1], [0.0])
    return [
        helper.make_node("Shape", ["h0"], ["h0_shape"]),
        constant("no_rows", [0]),
        helper.make_node("Concat", ["no_rows", "h0_shape"], ["acc0_shape"], axis=0),
        helper.make_node("ConstantOfShape", ["acc0_shape"], ["acc0"], value=zero),
    ]


def torch_form(cell: Cell, hidden: int, batch: Dim) -> list[onnx.NodeProto]:
    """Loop with M = Gather(Shape(X), 0) and constant true conditions (torch legacy export)."""
    node = helper.make_node
    body = helper.make_graph(
        [
            node("Gather", ["X", "i"], ["x_t"], axis=0),
            *step(cell, "x_t"),
            constant("cond_out", True, TensorProto.BOOL),
        ],
        f"{cell.name}_torch_body",
        [scalar("i"), scalar("cond_in", TensorProto.BOOL), *states(cell, "_in", batch, hidden)],
        [
            scalar("cond_out", TensorProto.BOOL),
            *states(cell, "_out", batch, hidden),
            floats("y", batch, hidden),
        ],
    )
    return [
        node("Shape", ["X"], ["x_shape"]),
        constant("zero", 0),
        node("Gather", ["x_shape", "zero"], ["t"], axis=0),
        constant("cond0", True, TensorProto.BOOL),
        node("Loop", ["t", "cond0", *names(cell, "0")], [*names(cell, "_last"), "hs"], body=body),
    ]


FORMS: dict[str, Callable[[Cell, int, Dim], list[onnx.NodeProto]]] = {
    "loop": loop_form,
    "scan": scan_form,
    "jax": jax_form,
    "tf": tf_form,
    "tf_concat": lambda cell, hidden, batch: tf_form(cell, hidden, batch, concat=True),
    "torch": torch_form,
}
EXPORTER_FORMS = ("jax", "tf", "tf_concat", "torch")


def loop_model(cell_name: str | Cell, form: str, hidden: int, batch: int, seed: int = 0):
    """The ONNX model of `cell_name` (or a Cell) in `form`; exporter forms get a symbolic batch
    "B"."""
    cell = CELLS[cell_name] if isinstance(cell_name, str) else cell_name
    dim: Dim = "B" if form in EXPORTER_FORMS else batch
    graph = helper.make_graph(
        FORMS[form](cell, hidden, dim),
        f"{cell.name}_{form}",
        [floats("X", "T", dim, hidden), *states(cell, "0", dim, hidden)],
        [*states(cell, "_last", dim, hidden), floats("hs", "T", dim, hidden)],
        cell.weights(hidden, seed),
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    made.ir_version = 10
    return made


def loop_feeds(cell_name: str | Cell, hidden: int, batch: int, steps: int, seed: int = 1) -> dict:
    """Random X [steps, batch, hidden] ~ N(0, 1) and initial states ~ N(0, 0.25)."""
    cell = CELLS[cell_name] if isinstance(cell_name, str) else cell_name
    rng = np.random.default_rng(seed)
    made = {"X": rng.standard_normal((steps, batch, hidden)).astype(np.float32)}
    for state in cell.states:
        made[state + "0"] = (rng.standard_normal((batch, hidden)) * 0.5).astype(np.float32)
    return made
