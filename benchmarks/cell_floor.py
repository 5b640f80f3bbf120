"""Hand-built lower bounds for one recurrent cell as a Loop-5: the cell math alone, gates' weights
fused, one Loop-5 iteration per step (what `default` may make of an exporter's loop).

    body: z = squeeze(x_t) @ W + h @ U  (one MatMul each, all gates' columns)
          simple: h = tanh(z)
          gru:    z, r from σ(x W_zr + h U_zr); n = tanh(x W_n + r * (h U_n)); h = (1-z) n + z h
          lstm:   i, f, g, o = split(z); c = σ(f) c + σ(i) tanh(g); h = σ(o) tanh(c)
    ports: x [T, B, I] sliced along 0, h (and c) merged, the stack of h concatenated, h last

`batch` -1 makes B dynamic (a dynamic body), T is always dynamic (the trip count is ShapeOf(x)[0]:
the CPU node's dynamic path); `packed` carries h and c of an LSTM in one [B, 2H] back edge (a
Concat after the step, a Split before it). Weights random; the values are not compared.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

GATES = {"simple": 1, "gru": 3, "lstm": 4}


def _weights(rows: int, columns: int, seed: int) -> ov.Output:
    values = np.random.default_rng(seed).standard_normal((rows, columns)) / np.sqrt(rows)
    return ops.constant(values.astype(np.float32)).output(0)


def _step(cell: str, x_w: ov.Output, h_u: ov.Output, h: ov.Output, c: ov.Output | None):
    """The cell's new h (and c) from the fused products x W and h U."""
    hidden = h.get_partial_shape()[-1].get_length()
    last = ops.constant(np.int64(1))
    if cell == "simple":
        return ops.tanh(ops.add(x_w, h_u)).output(0), None
    if cell == "lstm":
        i, f, g, o = ops.split(ops.add(x_w, h_u), last, 4).outputs()
        c_next = ops.add(ops.multiply(ops.sigmoid(f), c), ops.multiply(ops.sigmoid(i), ops.tanh(g)))
        return ops.multiply(ops.sigmoid(o), ops.tanh(c_next)).output(0), c_next.output(0)
    lengths = ops.constant(np.int64([2 * hidden, hidden]))
    x_zr, x_n = ops.variadic_split(x_w, last, lengths).outputs()
    h_zr, h_n = ops.variadic_split(h_u, last, lengths).outputs()
    z, r = ops.split(ops.sigmoid(ops.add(x_zr, h_zr)), last, 2).outputs()
    n = ops.tanh(ops.add(x_n, ops.multiply(r, h_n)))
    one = ops.constant(np.float32(1))
    return ops.add(ops.multiply(ops.subtract(one, z), n), ops.multiply(z, h)).output(0), None


def floor_model(cell: str, inputs: int, hidden: int, batch: int, packed: bool = False):
    """The Loop-5 of the module docstring; model inputs "x" [T, B, inputs] and "h0" [B, hidden]."""
    x = ops.parameter([-1, batch, inputs], ov.Type.f32, "x")
    h0 = ops.parameter([batch, hidden], ov.Type.f32, "h0")
    for parameter, name in ((x, "x"), (h0, "h0")):
        parameter.output(0).set_names({name})
    carries_c = cell == "lstm"
    width = hidden * (2 if packed and carries_c else 1)
    x_t = ops.parameter([1, batch, inputs], ov.Type.f32, "x_t")
    state = ops.parameter([batch, width], ov.Type.f32, "state")
    extra = ops.parameter([batch, hidden], ov.Type.f32, "c")
    if packed and carries_c:
        h, c = ops.split(state, ops.constant(np.int64(1)), 2).outputs()
    else:
        h, c = state.output(0), extra.output(0) if carries_c else None
    gates = GATES[cell] * hidden
    x_w = ops.matmul(
        ops.squeeze(x_t, ops.constant(np.int64(0))), _weights(inputs, gates, 1), False, False
    )
    h_u = ops.matmul(h, _weights(hidden, gates, 2), False, False)
    h_next, c_next = _step(cell, x_w.output(0), h_u.output(0), h, c)
    carried = [h_next] if c_next is None else [h_next, c_next]
    if packed and carries_c:
        carried = [ops.concat(carried, 1).output(0)]
    back = [ops.result(value) for value in carried]
    stacked = ops.result(ops.unsqueeze(h_next, ops.constant(np.int64(0))))
    last_h = ops.result(h_next)
    parameters = [x_t, state] + ([extra] if carries_c and not packed else [])
    body = ov.Model([ops.result(ops.constant(True)), stacked, last_h, *back], parameters, "body")
    trip = ops.gather(ops.shape_of(x), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    loop = ops.loop(trip, ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(x_t, x.output(0), 0, 1, 1, -1, 0)
    initial = ops.concat([h0, h0], 1).output(0) if packed and carries_c else h0.output(0)
    for parameter, start, result in zip(parameters[1:], [initial, h0.output(0)], back):
        loop.set_merged_input(parameter, start, result.output(0))
    outputs = [
        loop.get_concatenated_slices(stacked.output(0), 0, 1, 1, -1, 0),
        loop.get_iter_value(last_h.output(0), -1),
    ]
    return ov.Model([ops.result(value) for value in outputs], [x, h0], f"{cell} floor")
