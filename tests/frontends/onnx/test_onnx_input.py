"""What happens to an ONNX model before conversion: reading (external data, UTF-8), the ONNX
passes of ov_loops.frontends.onnx.load.prepare (sort, check, placeholder domain, empty
constants) and the Parameters of unused inputs. Regression tests for issue 9, items 4, 6, 9 and
the unsorted graphs."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

import ov_loops
from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from tests.harness import (
    assert_matches_onnxruntime,
    assert_one_line_error,
    compile_f32,
    onnxruntime_oracle,
    run_cli,
    write,
)
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

RNG = np.random.default_rng(9)


def assert_refused(tmp_path, source, code: int, *fragments: str) -> None:
    """`convert` exits `code` with one line holding `fragments` and writes nothing."""
    out = tmp_path / "out" / "o.xml"
    out.parent.mkdir(exist_ok=True)
    assert_one_line_error(run_cli("convert", str(source), "-o", str(out)), code, *fragments)
    assert list(out.parent.iterdir()) == []


def empty_ints_constant(name: str) -> onnx.NodeProto:
    """`Constant(value_ints=[])`, as torch.export writes the shape of a scalar."""
    made = node("Constant", [], [name])
    made.attribute.append(
        onnx.helper.make_attribute("value_ints", [], attr_type=onnx.AttributeProto.INTS)
    )
    return made


# -- item 4: empty constants ----------------------------------------------------------------------
def test_empty_shape_constant_gives_scan_a_scalar_state(tmp_path):
    """Expand(0, Constant(value_ints=[])) is a scalar; a Scan carrying it returns () and
    [4, 5] (OpenVINO's frontend alone gives [1] and [4, 5, 1])."""
    body = graph(
        [
            node("ReduceSum", ["x_t"], ["total"], keepdims=0),
            node("Add", ["s_in", "total"], ["s_out"]),
            node("Mul", ["x_t", "s_out"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, []), typed("x_t", T.FLOAT, [5])],
        [typed("s_out", T.FLOAT, []), typed("y_t", T.FLOAT, [5])],
        name="body",
    )
    main = graph(
        [
            empty_ints_constant("scalar_shape"),
            node("Expand", ["zero", "scalar_shape"], ["s0"]),
            node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1),
        ],
        [typed("x", T.FLOAT, [4, 5])],
        [typed("s", T.FLOAT, None), typed("ys", T.FLOAT, None)],
        initializers=[const("zero", 0.0)],
    )
    feeds = {"x": RNG.standard_normal((4, 5)).astype(np.float32)}
    conversion = assert_matches_onnxruntime(model(main), [feeds], tmp_path)
    shapes = [tuple(output.get_partial_shape().to_shape()) for output in conversion.model.outputs]
    assert shapes == [(), (4, 5)]


def _empty_forms():
    attribute = onnx.helper.make_attribute
    ints = attribute("value_ints", [], attr_type=onnx.AttributeProto.INTS)
    floats = attribute("value_floats", [], attr_type=onnx.AttributeProto.FLOATS)
    return {
        "value_ints": (ints, T.INT64),
        "value_floats": (floats, T.FLOAT),
        "int64_tensor_0": (attribute("value", const("", np.zeros(0), np.int64)), T.INT64),
        "float_tensor_2x0": (attribute("value", const("", np.zeros((2, 0)))), T.FLOAT),
        "int32_tensor_0x3": (attribute("value", const("", np.zeros((0, 3)), np.int32)), T.INT32),
        "bool_tensor_0": (attribute("value", const("", np.zeros(0), np.bool_)), T.BOOL),
    }


@pytest.mark.parametrize("form", sorted(_empty_forms()))
def test_empty_constants_keep_their_shape_in_every_graph(form, tmp_path):
    """An empty Constant in the main graph (also read by a Loop body), in the body and as a
    body initializer keeps its shape, and an empty shape still broadcasts to a scalar."""
    attr, elem_type = _empty_forms()[form]

    def constant(name: str) -> onnx.NodeProto:
        made = node("Constant", [], [name])
        made.attribute.append(attr)
        return made

    initializer = onnx.TensorProto()
    dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    initializer.CopyFrom(attr.t if attr.name == "value" else const("", np.zeros(0), dtype))
    initializer.name = "body_empty"
    body = loop_body(
        [
            constant("c_body"),
            node("Identity", ["c_body"], ["c_part"]),
            node("Identity", ["body_empty"], ["init_part"]),
            node("Identity", ["c_main"], ["captured_part"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [],
        [
            typed("keep", T.BOOL, []),
            typed("c_part", elem_type),
            typed("init_part", elem_type),
            typed("captured_part", elem_type),
        ],
        initializers=[initializer],
    )
    main = graph(
        [
            constant("c_main"),
            node("Identity", ["c_main"], ["c"]),
            empty_ints_constant("scalar_shape"),
            node("Expand", ["x", "scalar_shape"], ["x_again"]),
            node("Loop", ["M", ""], ["c_parts", "init_parts", "captured_parts"], body=body),
        ],
        [typed("x", T.FLOAT, []), typed("M", T.INT64, [])],
        [
            typed("c", elem_type),
            typed("x_again", T.FLOAT),
            typed("c_parts", elem_type),
            typed("init_parts", elem_type),
            typed("captured_parts", elem_type),
        ],
    )
    feeds = {"x": np.array(1.5, np.float32), "M": np.array(3, np.int64)}
    assert_matches_onnxruntime(model(main), [feeds], tmp_path)


# -- unsorted graphs ------------------------------------------------------------------------------
def test_unsorted_graphs_convert_like_onnxruntime(tmp_path):
    """Main graph and Loop body in reverse order; the body reads `scale`, which a node after
    the Loop computes: the sort sees it as an input of the Loop."""
    body = loop_body(
        [
            node("Identity", ["cond_in"], ["keep"]),
            node("Mul", ["h_mid", "scale"], ["h_out"]),
            node("Add", ["h_in", "one"], ["h_mid"]),
        ],
        [typed("h_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("h_out", T.FLOAT, [2])],
        initializers=[const("one", np.ones(2))],
    )
    main = graph(
        [
            node("Neg", ["h"], ["y"]),
            node("Loop", ["M", "", "h0"], ["h"], body=body, name="the_loop"),
            node("Abs", ["x"], ["scale"]),
            node("Relu", ["x"], ["h0"]),
        ],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2])],
    )
    runs = [
        {"M": np.array(m, np.int64), "x": RNG.standard_normal(2).astype(np.float32)} for m in (3, 0)
    ]
    # onnxruntime sorts the main graph itself, but not subgraphs: give it the body in order.
    body_sorted = model(main)
    body_nodes = body_sorted.graph.node[1].attribute[0].g.node
    body_nodes.sort(key=lambda made: ["Add", "Mul", "Identity"].index(made.op_type))
    oracle = onnxruntime_oracle(body_sorted)
    assert_matches_onnxruntime(model(main), runs, tmp_path, oracle=lambda _: oracle)


def test_unsorted_local_function_is_sorted_before_inlining():
    """y = relu(x) * 2 through a model-local function whose nodes are in reverse order."""
    function = onnx.helper.make_function(
        "local",
        "Double",
        ["a"],
        ["b"],
        [
            node("Mul", ["r", "two"], ["b"]),
            node("Constant", [], ["two"], value_float=2.0),
            node("Relu", ["a"], ["r"]),
        ],
        [onnx.helper.make_opsetid("", 17)],
    )
    made = model(
        graph(
            [node("Double", ["x"], ["y"], domain="local")],
            [typed("x", T.FLOAT, [3])],
            [typed("y", T.FLOAT, [3])],
        )
    )
    made.functions.append(function)
    made.opset_import.append(onnx.helper.make_opsetid("local", 1))
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    got = compile_f32(ov_loops.convert(made))({"x": x})[0]
    np.testing.assert_allclose(got, np.maximum(x, 0) * 2)


def summing_function_model(function_opset: int, model_opset: int = 18) -> onnx.ModelProto:
    """y = f(x), f a local function at `function_opset` running a Loop that adds x to a sum
    3 times, then a ReduceSum of it."""
    body = loop_body(
        [node("Add", ["s_in", "a"], ["s_out"]), node("Identity", ["cond_in"], ["go"])],
        [typed("s_in", T.FLOAT, [3])],
        [typed("go", T.BOOL, []), typed("s_out", T.FLOAT, [3])],
    )
    function = onnx.helper.make_function(
        "local",
        "Sum3",
        ["a"],
        ["b"],
        [
            node("Constant", [], ["n"], value=onnx.numpy_helper.from_array(np.array(3))),
            node("Constant", [], ["go0"], value=onnx.numpy_helper.from_array(np.array(True))),
            node("Sub", ["a", "a"], ["zero"]),
            node("Loop", ["n", "go0", "zero"], ["s"], body=body),
            node("ReduceSum", ["s"], ["b"], keepdims=1),
        ],
        [onnx.helper.make_opsetid("", function_opset)],
    )
    main = graph(
        [node("Sum3", ["x"], ["y"], domain="local")],
        [typed("x", T.FLOAT, [3])],
        [typed("y", T.FLOAT, [1])],
    )
    made = model(main, model_opset)
    made.functions.append(function)
    made.opset_import.append(onnx.helper.make_opsetid("local", 1))
    return made


def test_local_function_at_an_older_opset_is_inlined():
    """skl2onnx's KNNImputer: functions at opsets 14 and 16 in a model at 18 (the ONNX checker
    lets them be when every op means the same at both): inlined, and the Loop converted."""
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    got = compile_f32(ov_loops.convert(summing_function_model(16)))({"x": x})[0]
    np.testing.assert_allclose(got, [4.5], rtol=1e-6)


def test_local_function_with_an_op_changed_in_a_branch_is_refused(tmp_path):
    """A function at opset 16 in a model at 18 whose If branch holds a ReduceMax (its axes
    became an input at 18): the ONNX checker lets it be, and given the model's opset the
    branch would mean something else. Not inlined: its call is refused in one line naming it
    and the op."""
    branches = {
        name: graph(
            [node(op, ["a"], [name], axes=[0], keepdims=1)], [], [typed(name, T.FLOAT, [1])]
        )
        for name, op in (("then_branch", "ReduceMax"), ("else_branch", "ReduceMin"))
    }
    function = onnx.helper.make_function(
        "local",
        "Extreme",
        ["a", "c"],
        ["b"],
        [node("If", ["c"], ["b"], **branches)],
        [onnx.helper.make_opsetid("", 16)],
    )
    main = graph(
        [node("Extreme", ["x", "c"], ["y"], domain="local")],
        [typed("x", T.FLOAT, [3]), typed("c", T.BOOL, [])],
        [typed("y", T.FLOAT, [1])],
    )
    made = model(main, 18)
    made.functions.append(function)
    made.opset_import.append(onnx.helper.make_opsetid("local", 1))
    source = write(tmp_path, made)
    fragments = ("local.Extreme at main/Extreme_0", "opset 16", "ReduceMax, ReduceMin changed")
    assert_refused(tmp_path, source, 1, *fragments)


def test_unsorted_graph_given_as_model_proto_is_left_as_it_was():
    main = graph(
        [node("Neg", ["a"], ["y"]), node("Relu", ["x"], ["a"])],
        [typed("x", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2])],
    )
    made = model(main)
    ov_loops.convert(made)
    assert [n.op_type for n in made.graph.node] == ["Neg", "Relu"]


def in_main_or_body(nodes, where: str) -> tuple[onnx.ModelProto, str]:
    """A model running `nodes` (x -> y, floats of shape [2]) in its main graph or in the body
    of a Loop named outer; and the path of that graph."""
    if where == "main":
        main = graph(nodes, [typed("x", T.FLOAT, [2])], [typed("y", T.FLOAT, [2])])
        return model(main), "main"
    body = loop_body(
        [*nodes, node("Identity", ["cond_in"], ["keep"])],
        [],
        [typed("keep", T.BOOL, []), typed("y", T.FLOAT, [2])],
    )
    main = graph(
        [node("Loop", ["M", ""], ["ys"], body=body, name="outer")],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("ys", T.FLOAT, [None, 2])],
    )
    return model(main), "main/outer/body"


@pytest.mark.parametrize("where", ["main", "body"])
def test_graph_with_a_cycle_is_refused_naming_a_node_on_it(where, tmp_path):
    cycle = [
        node("Relu", ["x"], ["before"], name="not_on_cycle"),
        node("Add", ["before", "y"], ["a"], name="first"),
        node("Neg", ["a"], ["y"], name="second"),
    ]
    made, path = in_main_or_body(cycle, where)
    assert_refused(tmp_path, write(tmp_path, made), 2, f"{path}/first", "cycle")


# -- item 6: the placeholder domain ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["main", "body"])
def test_node_in_the_placeholder_domain_is_refused(tmp_path, where):
    """Such a node used to be taken for a placeholder and silently skipped; it is valid ONNX
    ov-loops cannot convert: exit 1, named like every unsupported op."""
    impostor = node("Loop", ["x"], ["y"], domain=PLACEHOLDER_DOMAIN, name="impostor")
    made, path = in_main_or_body([impostor], where)
    made.opset_import.append(onnx.helper.make_opsetid(PLACEHOLDER_DOMAIN, 1))
    assert_refused(tmp_path, write(tmp_path, made), 1, f"{path}/impostor", "reserved")


def test_node_in_the_former_placeholder_domain_is_an_unsupported_op(tmp_path):
    made, _ = in_main_or_body(
        [node("Loop", ["x"], ["y"], domain="ov_loops", name="custom")], "main"
    )
    made.opset_import.append(onnx.helper.make_opsetid("ov_loops", 1))
    assert_refused(tmp_path, write(tmp_path, made), 1, "ov_loops.Loop-1 at main/custom")


# -- item 9: external data ------------------------------------------------------------------------
def _model_with_data_everywhere():
    """A Loop whose body has an initializer W and a Constant node c (h = h @ W + c), fed by a
    main-graph initializer h0; returns (model, expected output for M = 3)."""
    weights = RNG.standard_normal((4, 4)).astype(np.float32) / 4
    offset = RNG.standard_normal(4).astype(np.float32)
    start = RNG.standard_normal(4).astype(np.float32)
    body = loop_body(
        [
            node("Constant", [], ["c"], value=const("", offset)),
            node("MatMul", ["h_in", "W"], ["hw"]),
            node("Add", ["hw", "c"], ["h_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("h_in", T.FLOAT, [4])],
        [typed("keep", T.BOOL, []), typed("h_out", T.FLOAT, [4])],
        initializers=[const("W", weights)],
    )
    main = graph(
        [node("Loop", ["M", "", "h0"], ["h"], body=body)],
        [typed("M", T.INT64, [])],
        [typed("h", T.FLOAT, [4])],
        initializers=[const("h0", start)],
    )
    expected = start
    for _ in range(3):
        expected = expected @ weights + offset
    return model(main), expected


@pytest.mark.parametrize("main_initializer_external", [True, False])
def test_external_data_in_bodies_and_constants_resolves_against_the_model(
    tmp_path, main_initializer_external
):
    """The body initializer W and the body Constant's tensor live in m.data beside the model
    (and the main-graph initializer h0, or not); converted from another directory."""
    made, expected = _model_with_data_everywhere()
    (tmp_path / "models").mkdir()
    source = tmp_path / "models" / "m.onnx"
    onnx.save_model(
        made,
        source,
        save_as_external_data=True,
        location="m.data",
        size_threshold=0,
        convert_attribute=True,
    )
    saved = onnx.load_model(source, load_external_data=False)
    body = saved.graph.node[0].attribute[0].g
    assert all(uses_external_data(t) for t in (body.initializer[0], body.node[0].attribute[0].t))
    if not main_initializer_external:
        load_external_data_for_tensor(saved.graph.initializer[0], str(source.parent))
        onnx.save_model(saved, source)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "o.xml"
    result = run_cli(
        "convert", str(source), "-o", str(out), "--compress_to_fp16=False", cwd=elsewhere
    )
    assert result.returncode == 0, result.stderr
    compiled = compile_f32(out)
    got = compiled({"M": np.array(3, np.int64)})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _write_with_external_weights(tmp_path, location: str, offset=None, length=None):
    """The model of _model_with_data_everywhere, its body initializer W pointing at
    `location` (offset, length); a file w.bin beside the model holds 64 bytes."""
    made, _ = _model_with_data_everywhere()
    weights = made.graph.node[0].attribute[0].g.initializer[0]
    weights.ClearField("raw_data")
    weights.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            weights.external_data.add(key=key, value=str(value))
    (tmp_path / "w.bin").write_bytes(bytes(64))
    return write(tmp_path, made)


READ_FAILS = "cannot read external data"


@pytest.mark.parametrize(
    "location, offset, length, fragments",
    [
        ("missing.bin", None, None, (READ_FAILS, "missing.bin")),
        ("{absolute}", None, None, (READ_FAILS, "absolute path")),
        ("../outside.bin", None, None, (READ_FAILS, "outside")),
        ("w.bin", 100, None, (READ_FAILS, "exceeds file size")),
        ("w.bin", 32, 64, (READ_FAILS, "exceeds available data")),
        ("w.bin", 16, None, ("tensor 'W' has 48 bytes, its type and shape need 64",)),
        ("w.bin", "eight", None, (READ_FAILS, "eight")),
    ],
    ids=["missing", "absolute", "outside", "offset_past_end", "length_past_end", "short", "nan"],
)
def test_bad_external_data_is_refused_in_one_line(tmp_path, location, offset, length, fragments):
    (tmp_path.parent / "outside.bin").write_bytes(bytes(64))
    location = location.format(absolute=tmp_path / "w.bin")
    source = _write_with_external_weights(tmp_path, location, offset, length)
    assert_refused(tmp_path, source, 2, *fragments)


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "model_proto"])
def test_external_data_without_the_model_path_is_refused(tmp_path, as_bytes):
    source = _write_with_external_weights(tmp_path, "w.bin")
    given = source.read_bytes() if as_bytes else onnx.load_model(source, load_external_data=False)
    with pytest.raises(ov_loops.InputError) as caught:
        ov_loops.convert(given)
    assert "tensor 'W' keeps its data in an external file" in str(caught.value)
    assert "\n" not in str(caught.value)


# -- item 9: unused inputs, UTF-8 -----------------------------------------------------------------
@pytest.mark.parametrize(
    "elem_type, element",
    [
        (T.STRING, ov.Type.string),
        (T.BFLOAT16, ov.Type.bf16),
        (T.FLOAT4E2M1, ov.Type.f4e2m1),
        (T.FLOAT8E4M3FN, ov.Type.f8e4m3),
        (T.INT4, ov.Type.i4),
        (T.UINT4, ov.Type.u4),
    ],
    ids=["string", "bfloat16", "float4e2m1", "float8e4m3fn", "int4", "uint4"],
)
def test_unused_input_of_any_element_type_gets_its_parameter(tmp_path, core, elem_type, element):
    main = graph(
        [node("Relu", ["x"], ["y"])],
        [typed("x", T.FLOAT, [2]), typed("unused", elem_type, [3, None])],
        [typed("y", T.FLOAT, [2])],
    )
    out = tmp_path / "o.xml"
    result = run_cli("convert", str(write(tmp_path, model(main, opset=21))), "-o", str(out))
    assert result.returncode == 0, result.stderr
    parameters = core.read_model(str(out)).get_parameters()
    assert [p.get_friendly_name() for p in parameters] == ["x", "unused"]
    assert parameters[1].get_element_type() == element
    assert parameters[1].get_partial_shape() == ov.PartialShape([3, -1])


@pytest.mark.parametrize("field", ["node_name", "value_name", "graph_name"])
def test_invalid_utf8_is_refused_in_one_line(tmp_path, field):
    marker = {"node_name": "NODE_NAME", "value_name": "h0", "graph_name": "body"}[field]
    made, _ = _model_with_data_everywhere()
    made.graph.node[0].name = "NODE_NAME"
    data = made.SerializeToString()
    source = tmp_path / "bad.onnx"
    source.write_bytes(data.replace(marker.encode(), marker[:-1].encode() + b"\xff"))
    assert_refused(tmp_path, source, 2, "is not UTF-8", "\\xff")
