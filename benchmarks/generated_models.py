"""Generated ONNX models for the conversion cost benchmarks (conversion_time.py,
conversion_memory.py): many sequential loops, deep nesting, and big weights.

    sequential_loops(n)   n Loops one after another, each a counter and a scan output
    nested_loops(depth)   Loops nested `depth` deep, each level a counter and a scan output
    big_model(megabytes)  a chain of MatMul layers holding about `megabytes` of f32 weights
                          (many initializers), with a few Loops (an RNN-like one reading big
                          weights), an If with weights in each branch

`write(name, directory)` writes one by name (`seq100`, `nest8`, `big300`, `big3000x`: an `x`
keeps the weights in one external-data file beside the model, needed past 2 GB).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

OPSET = 17


def _value(name: str, shape=None, elem_type: int = T.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    made.ir_version = 8
    return made


def _scalar(name: str, value, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _counter_body(prefix: str, inner: list[onnx.NodeProto] = ()) -> onnx.GraphProto:
    """A Loop body: carried counter `c` (f32 [4]) plus one; a scan output of it times two;
    `inner` nodes (a nested Loop) run first and may replace the counter's input."""
    p = prefix
    nodes = [
        *inner,
        helper.make_node("Add", [f"{p}c_in" if not inner else f"{p}inner", "one"], [f"{p}c"]),
        helper.make_node("Mul", [f"{p}c", "two"], [f"{p}scan"]),
        helper.make_node("Identity", [f"{p}cond"], [f"{p}go"]),
    ]
    return helper.make_graph(
        nodes,
        f"{p}body",
        [_value(f"{p}i", [], T.INT64), _value(f"{p}cond", [], T.BOOL), _value(f"{p}c_in", [4])],
        [_value(f"{p}go", [], T.BOOL), _value(f"{p}c", [4]), _value(f"{p}scan", [None, 4])],
    )


def _constants() -> list[onnx.TensorProto]:
    return [_scalar("one", 1.0), _scalar("two", 2.0)]


def sequential_loops(count: int) -> onnx.ModelProto:
    """`count` Loops in a chain: loop k's final counter is loop k+1's initial one; every scan
    output is a model output."""
    nodes, outputs, previous = [], [], "x"
    for index in range(count):
        body = _counter_body(f"l{index}_")
        final, scan = f"final{index}", f"scan{index}"
        nodes.append(helper.make_node("Loop", ["M", "", previous], [final, scan], body=body))
        outputs.append(_value(scan, [None, 4]))
        previous = final
    outputs.insert(0, _value(previous, [4]))
    inputs = [_value("M", [], T.INT64), _value("x", [4])]
    return _model(helper.make_graph(nodes, "sequential", inputs, outputs, _constants()))


def nested_loops(depth: int) -> onnx.ModelProto:
    """Loops nested `depth` deep; each level's body runs the next level's Loop on its counter
    (the innermost adds one), then counts and scans."""
    inner: list[onnx.NodeProto] = []
    for level in reversed(range(1, depth)):
        body = _counter_body(f"d{level}_", inner)
        inner = [
            helper.make_node(
                "Loop",
                ["M", "", f"d{level - 1}_c_in"],
                [f"d{level - 1}_inner", f"d{level}_all"],
                body=body,
            )
        ]
    body = _counter_body("d0_", inner)
    loop = helper.make_node("Loop", ["M", "", "x"], ["final", "scan"], body=body)
    inputs = [_value("M", [], T.INT64), _value("x", [4])]
    outputs = [_value("final", [4]), _value("scan", [None, 4])]
    return _model(helper.make_graph([loop], "nested", inputs, outputs, _constants()))


def big_model(megabytes: int) -> onnx.ModelProto:
    """_big_layers with the values it reads computed: the If's flag (rows > 1), the RNN's
    trip count (rows) and initial state (zeros)."""
    return _with_if_flag_and_rnn_inputs(_big_layers(megabytes))


def _big_layers(megabytes: int, width: int = 1024, seed: int = 0) -> onnx.ModelProto:
    """MatMul+Add+Relu layers of `width` until about `megabytes` of f32 weights, with an
    RNN-like Loop over the input's rows after the first third (reading two of the big weights
    captured from the main graph, one kept in its body), a Loop counting over the result, and
    an If whose branches each hold a weight of their own."""
    rng = np.random.default_rng(seed)
    layer_bytes = 4 * width * (width + 1)
    layers = max(3, megabytes * 2**20 // layer_bytes)
    inits = _constants()
    nodes, value = [], "x"

    def weight(name: str, shape) -> str:
        inits.append(numpy_helper.from_array(rng.standard_normal(shape, np.float32) * 0.01, name))
        return name

    for index in range(layers):
        w, b = weight(f"w{index}", (width, width)), weight(f"b{index}", (width,))
        nodes += [
            helper.make_node("MatMul", [value, w], [f"m{index}"]),
            helper.make_node("Add", [f"m{index}", b], [f"a{index}"]),
            helper.make_node("Relu", [f"a{index}"], [f"layer{index}"]),
        ]
        value = f"layer{index}"
        if index == layers // 3:
            nodes.append(_rnn_loop(value, "w0", "w1", rng))
            value = "rnn_seq"
    nodes.append(_if_node(value, width, rng))
    counter = _counter_body("tail_")
    nodes.append(helper.make_node("Loop", ["M", "", "x4"], ["tail", "tail_scan"], body=counter))
    inputs = [_value("x", ["rows", width]), _value("M", [], T.INT64), _value("x4", [4])]
    outputs = [_value("y", ["rows", width]), _value("tail", [4]), _value("tail_scan", [None, 4])]
    return _model(helper.make_graph(nodes, "big", inputs, outputs, inits))


def _rnn_loop(sequence: str, w_in: str, w_rec: str, rng) -> onnx.NodeProto:
    """h_t = tanh(x_t @ w_in + h_{t-1} @ w_rec) @ own over the rows of `sequence`: output
    `rnn_seq` (the h_t stacked); `own` is a body initializer."""
    width = 1024
    own = numpy_helper.from_array(rng.standard_normal((width, width), np.float32) * 0.01, "own")
    body = helper.make_graph(
        [
            helper.make_node("Gather", [sequence, "r_i"], ["r_x"], axis=0),
            helper.make_node("MatMul", ["r_x", w_in], ["r_a"]),
            helper.make_node("MatMul", ["r_h", w_rec], ["r_b"]),
            helper.make_node("Add", ["r_a", "r_b"], ["r_s"]),
            helper.make_node("Tanh", ["r_s"], ["r_t"]),
            helper.make_node("MatMul", ["r_t", "own"], ["r_h_out"]),
            helper.make_node("Identity", ["r_h_out"], ["r_scan"]),
            helper.make_node("Identity", ["r_cond"], ["r_go"]),
        ],
        "rnn_body",
        [_value("r_i", [], T.INT64), _value("r_cond", [], T.BOOL), _value("r_h", [width])],
        [_value("r_go", [], T.BOOL), _value("r_h_out", [width]), _value("r_scan", [width])],
        [own],
    )
    return helper.make_node(
        "Loop", ["rows_count", "", "state0"], ["rnn_last", "rnn_seq"], body=body
    )


def _if_node(value: str, width: int, rng) -> onnx.NodeProto:
    def branch(name: str) -> onnx.GraphProto:
        w = numpy_helper.from_array(rng.standard_normal((width, width), np.float32), f"{name}_w")
        return helper.make_graph(
            [helper.make_node("MatMul", [value, f"{name}_w"], [f"{name}_y"])],
            name,
            [],
            [_value(f"{name}_y", ["rows", width])],
            [w],
        )

    return helper.make_node(
        "If", ["flag"], ["y"], then_branch=branch("then"), else_branch=branch("else")
    )


def _with_if_flag_and_rnn_inputs(model: onnx.ModelProto) -> onnx.ModelProto:
    graph = model.graph
    width = graph.input[0].type.tensor_type.shape.dim[1].dim_value
    graph.initializer.extend(
        [_scalar("zero_state", np.zeros(width), np.float32), _scalar("one_i", 1, np.int64)]
    )
    helpers = [
        helper.make_node("Shape", ["x"], ["x_shape"], start=0, end=1),
        helper.make_node("Squeeze", ["x_shape"], ["rows_count"]),
        helper.make_node("Greater", ["rows_count", "one_i"], ["flag"]),
        helper.make_node("Identity", ["zero_state"], ["state0"]),
    ]
    for index, made in enumerate(helpers):
        graph.node.insert(index, made)
    return model


BUILDERS = {
    "seq": sequential_loops,
    "nest": nested_loops,
    "big": big_model,
}


def write(name: str, directory: Path) -> Path:
    """Write the model `name` (`seq100`, `nest8`, `big300`, `big3000x`) into `directory`, once
    (an existing file is reused); return its path."""
    path = directory / f"{name}.onnx"
    if path.exists():
        return path
    external = name.endswith("x")
    kind = name.rstrip("0123456789x")
    model = BUILDERS[kind](int(name[len(kind) :].rstrip("x")))
    directory.mkdir(parents=True, exist_ok=True)
    if external:
        onnx.save_model(
            model,
            path,
            save_as_external_data=True,
            location=f"{name}.data",
            size_threshold=1024,
        )
    else:
        onnx.save_model(model, path)
    return path
