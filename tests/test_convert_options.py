"""The conversion options ovc users know: --input, --output, -o DIR, --compress_to_fp16,
--verbose, --version; a model from a stream; and their Python forms."""

from __future__ import annotations

import importlib.metadata
import io
import subprocess
import sys

import numpy as np
import onnx
import openvino as ov
import pytest

import ov_loops
from benchmarks.rnn_loop import rnn_loop_model
from ov_loops.ir.reader import loop_spec, loops, read_ir
from tests.cli.test_cli import _unsupported_everywhere
from tests.harness import assert_one_line_error, compile_f32, run_cli, write
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

H = 3  # the width the model declares statically


def _loop_over_rows() -> onnx.ModelProto:
    """M = Shape(X)[0]; the body adds row X[i] to a carried sum and stacks the sums: outputs
    the sum of X's rows and their running sums. X is [N, 3], N only known from a shape."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["row"], axis=0),
            node("Add", ["acc_in", "row"], ["acc_out"]),
            node("Identity", ["cond_in"], ["go"]),
            node("Identity", ["acc_out"], ["running"]),
        ],
        [typed("acc_in", T.FLOAT, [H])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, [H]), typed("running", T.FLOAT, [H])],
    )
    main = graph(
        [
            node("Shape", ["X"], ["shape"]),
            node("Gather", ["shape", "zero"], ["M"], axis=0),
            node("Loop", ["M", "", "acc0"], ["acc", "rows"], body=body),
            node("Neg", ["acc"], ["negated"]),
        ],
        [typed("X", T.FLOAT, ["N", H]), typed("acc0", T.FLOAT, [H])],
        [typed("negated", T.FLOAT, [H]), typed("rows", T.FLOAT, ["N", H])],
        [const("zero", 0, np.int64)],
    )
    return model(main)


def _expected(x: np.ndarray, acc0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    running = acc0 + np.cumsum(x, axis=0)
    return -running[-1], running


def _run(xml, x: np.ndarray, acc0: np.ndarray) -> list[np.ndarray]:
    outputs = compile_f32(xml)({"X": x, "acc0": acc0})
    return list(outputs.values())


def _trip_counts(xml) -> list[tuple[str, int | None]]:
    document = read_ir(xml)
    return [
        (spec.trip_count_source, spec.trip_count)
        for spec in (loop_spec(document, g, layer) for _, g, layer in loops(document))
    ]


# -- --input: shapes reach the loops ---------------------------------------------------------
def test_static_input_shape_makes_the_trip_count_constant(tmp_path):
    """Shape(X)[0] with X[5,3]: the Loop-5 gets the constant 5 (in the report and in the IR),
    and its results are the numpy ones."""
    source, out = write(tmp_path, _loop_over_rows()), tmp_path / "o.xml"
    plain = run_cli("convert", str(source), "-o", str(tmp_path / "plain.xml"))
    assert "trip count input" in plain.stdout, plain.stdout
    result = run_cli("convert", str(source), "-o", str(out), "--input", "X[5,3],acc0[3]")
    assert result.returncode == 0, result.stderr
    assert "main/Loop_2: Loop -> Loop-5; trip count constant 5;" in result.stdout, result.stdout
    assert _trip_counts(out) == [("constant", 5)]
    assert _trip_counts(tmp_path / "plain.xml") == [("input", None)]
    rng = np.random.default_rng(0)
    x, acc0 = rng.standard_normal((5, H), np.float32), rng.standard_normal(H, np.float32)
    for got, expected in zip(_run(out, x, acc0), _expected(x, acc0)):
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)  # f16 weights: none here


def test_a_trip_count_computed_from_a_static_shape_through_casts_and_arithmetic_folds():
    """M = int64(float(Shape(X)[0]) - 1): 4 for X[5,3], a constant below X's length 5."""
    made = _loop_over_rows()
    loop = next(n for n in made.graph.node if n.op_type == "Loop")
    loop.input[0] = "M_minus_1"
    at = list(made.graph.node).index(loop)
    chain = [
        node("Cast", ["M"], ["M_float"], to=T.FLOAT),
        node("Sub", ["M_float", "one"], ["M_less"]),
        node("Cast", ["M_less"], ["M_minus_1"], to=T.INT64),
    ]
    for offset, each in enumerate(chain):
        made.graph.node.insert(at + offset, each)
    made.graph.initializer.append(const("one", 1.0))
    assert [loop.spec.trip_count_source for loop in ov_loops.translate(made).loops] == ["input"]
    folded = ov_loops.translate(made, input="X[5,3]")
    assert [(loop.spec.trip_count_source, loop.spec.trip_count) for loop in folded.loops] == [
        ("constant", 4)
    ]
    x = np.arange(15, dtype=np.float32).reshape(5, H)
    negated, rows = compile_f32(folded.model)({"X": x, "acc0": np.zeros(H, np.float32)}).values()
    np.testing.assert_allclose(rows, np.cumsum(x, axis=0)[:4])


@pytest.mark.parametrize(
    "given",
    [
        "X[5,3],acc0[3]",
        "[5 3],[3]",
        {"X": [5, 3], "acc0": [3]},
        {"X": ov.PartialShape("[5,3]"), "acc0": ([3], np.float32)},
        [("X", [5, 3]), ("acc0", ov.Type.f32, [3])],
        [[5, 3], [3]],
        [ov.PartialShape([5, 3]), ov.Shape([3])],
    ],
    ids=["text", "text_unnamed", "dict", "dict_shape_type", "tuples", "lists", "shapes"],
)
def test_every_python_form_of_input_gives_the_same_model(given):
    """...and leaves the ModelProto given as it was."""
    made = _loop_over_rows()
    before = made.SerializeToString()
    conversion = ov_loops.translate(made, input=given)
    assert made.SerializeToString() == before
    shapes = [str(p.get_partial_shape()) for p in conversion.model.get_parameters()]
    assert shapes == ["[5,3]", "[3]"]
    assert [loop.spec.trip_count for loop in conversion.loops] == [5]


def test_check_takes_an_input_holding_openvino_types(tmp_path):
    """check hands convert's options on; an `input` holding an ov.Type (a form translate
    takes) reached it through a deep copy, which OpenVINO's types refuse (a TypeError)."""
    path = tmp_path / "rows.onnx"
    onnx.save(_loop_over_rows(), path)
    report = ov_loops.check(path, input=[("X", ov.Type.f32, [5, 3]), ("acc0", [3])])
    assert report.ok


def test_a_range_reaches_the_model_and_runs_any_length_in_it(tmp_path):
    out = tmp_path / "o.xml"
    result = run_cli(
        "convert", str(write(tmp_path, _loop_over_rows())), "-o", str(out), "--input", "X[1..8,3]"
    )
    assert result.returncode == 0, result.stderr
    assert "trip count input" in result.stdout
    parameters = ov.Core().read_model(str(out)).get_parameters()
    assert [str(p.get_partial_shape()) for p in parameters] == ["[1..8,3]", "[3]"]
    rng = np.random.default_rng(1)
    for length in (1, 4, 8):
        x, acc0 = rng.standard_normal((length, H), np.float32), np.zeros(H, np.float32)
        for got, expected in zip(_run(out, x, acc0), _expected(x, acc0)):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_input_types_and_a_scalar_shape_are_set():
    """An input the model leaves untyped gets the given type; `[]` makes a scalar; an input
    nothing reads keeps the given shape (a range) too."""
    body = loop_body(
        [node("Add", ["s_in", "step"], ["s_out"]), node("Identity", ["cond_in"], ["go"])],
        [typed("s_in", T.FLOAT, [])],
        [typed("go", T.BOOL, []), typed("s_out", T.FLOAT, [])],
    )
    main = graph(
        [node("Loop", ["M", "", "s0"], ["s"], body=body)],
        [onnx.ValueInfoProto(name="M"), typed("s0"), typed("step"), typed("unused")],
        [typed("s", T.FLOAT, [])],
    )
    given = "M[]{i64},s0[],step[]{f32},unused[2..4]{f16}"
    conversion = ov_loops.translate(model(main), input=given)
    parameters = {p.get_friendly_name(): p for p in conversion.model.get_parameters()}
    assert {name: str(p.get_partial_shape()) for name, p in parameters.items()} == {
        "M": "[]",
        "s0": "[]",
        "step": "[]",
        "unused": "[2..4]",
    }
    assert parameters["M"].get_element_type() == ov.Type.i64
    assert parameters["unused"].get_element_type() == ov.Type.f16
    feeds = {"M": np.int64(4), "s0": np.float32(1), "step": np.float32(0.5)}
    feeds["unused"] = np.zeros(3, np.float16)
    assert compile_f32(conversion.model)(feeds)[0] == pytest.approx(3.0)


def _steps_through_a_matmul() -> onnx.ModelProto:
    """X f32 [20,1,16]: the loop multiplies row X[i] by f32 weights W [16,4] and sums the
    products over the 20 rows; Y f32 [1,4]."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["row"], axis=0),
            node("MatMul", ["row", "W"], ["product"]),
            node("Add", ["acc_in", "product"], ["acc_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("acc_in", T.FLOAT, [1, 4])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, [1, 4])],
    )
    main = graph(
        [node("Loop", ["M", "", "zeros"], ["Y"], body=body)],
        [typed("X", T.FLOAT, [20, 1, 16])],
        [typed("Y", T.FLOAT, [1, 4])],
        [
            const("M", 20, np.int64),
            const("zeros", np.zeros((1, 4))),
            const("W", np.linspace(-1, 1, 64).reshape(16, 4)),
        ],
    )
    return model(main)


def test_an_input_given_another_type_is_converted_at_the_input(tmp_path):
    """X{f16} on a model computing in f32 (f32 weights): the IR takes X as f16 and converts it
    to f32 where it enters, so the loop still computes in f32 (before: "MatMul ... no
    OpenVINO conversion rule", the frontend mixing f16 with f32)."""
    made, out = _steps_through_a_matmul(), tmp_path / "o.xml"
    result = run_cli(
        "convert", str(write(tmp_path, made)), "-o", str(out), "--input", "X[20,1,16]{f16}"
    )
    assert result.returncode == 0, result.stderr
    read = ov.Core().read_model(str(out))
    (parameter,) = read.get_parameters()
    assert parameter.get_element_type() == ov.Type.f16
    assert sorted(parameter.output(0).get_names()) == ["X"]
    readers = [target.get_node() for target in parameter.output(0).get_target_inputs()]
    assert [(r.get_type_name(), r.get_element_type()) for r in readers] == [
        ("Convert", ov.Type.f32)
    ]
    assert read.output(0).get_element_type() == ov.Type.f32
    x = np.random.default_rng(2).standard_normal((20, 1, 16)).astype(np.float16)
    weights = np.linspace(-1, 1, 64, dtype=np.float32).reshape(16, 4)
    (got,) = compile_f32(out)({"X": x}).values()
    np.testing.assert_allclose(got, (x.astype(np.float32) @ weights).sum(0), rtol=1e-3, atol=2e-3)


def test_an_input_given_its_own_type_has_no_conversion():
    """The type the model declares is set as is: no Convert."""
    conversion = ov_loops.translate(_steps_through_a_matmul(), input="X{f32}")
    (parameter,) = conversion.model.get_parameters()
    readers = [t.get_node().get_type_name() for t in parameter.output(0).get_target_inputs()]
    assert "Convert" not in readers and parameter.get_element_type() == ov.Type.f32


@pytest.mark.parametrize(
    "given, fragment",
    [
        ("Q[1]", "input 'Q' is not an input of the model: X, acc0"),
        ("X[5,3,1]", "input 'X': shape [5,3,1] has rank 3, the model declares [N,3] (rank 2)"),
        ("X[5,4]", "input 'X': dim 1 is 4 in [5,4], the model declares 3 ([N,3])"),
        ("X[5,4..8]", "dim 1 is 4..8"),
        ("X[5,a]", "bad dimension 'a'"),
        ("X[8..2,3]", "bad dimension '8..2'"),
        ("X[5,3]{f33}", "unknown element type 'f33'"),
        ("X[5,3", "cannot read 'X[5,3'"),
        ("X[5,3],[3]", "name every input or none"),
        ("[5,3],[3],[1]", "3 shapes for 2 inputs (X, acc0)"),
        ("X,X", "input 'X' is given twice"),
        ("acc0[99999999999999999999]", "input 'acc0[99999999999999999999]': dim 0 is 9999"),
        ("X[1..99999999999999999999,3]", "dim 0 is 99999999999999999999, larger than"),
        ("acc0[9223372036854775807]", "dim 0 is 9223372036854775807, larger than OpenVINO's"),
        ("acc0[\u00b2]", "input 'acc0[\u00b2]': bad dimension '\u00b2' at dim 0"),
        ("X[\u0661,3]", "bad dimension '\u0661' at dim 0"),
        ("X[5,\uff13]", "bad dimension '\uff13' at dim 1"),
    ],
    ids=[
        "unknown",
        "rank",
        "static_dim",
        "range_excludes",
        "syntax_dim",
        "empty_range",
        "type",
        "bracket",
        "mixed",
        "too_many",
        "twice",
        "huge_dim",
        "huge_range",
        "int64_max",
        "superscript",
        "arabic_indic",
        "fullwidth",
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, given, fragment):
    out = tmp_path / "out" / "o.xml"
    source = write(tmp_path, _loop_over_rows())
    assert_one_line_error(
        run_cli("convert", str(source), "-o", str(out), "--input", given), 2, fragment
    )
    assert not (tmp_path / "out").exists()


def test_one_symbolic_dim_given_two_lengths_is_named_exit_2(tmp_path):
    """X [T, B, 8] and h0 [B, 8] given B = 3 and 2: the RNN's Add cannot combine them. The
    message was "ai.onnx.Add ... (no OpenVINO conversion rule)", exit 1."""
    out = tmp_path / "out" / "o.xml"
    source = write(tmp_path, rnn_loop_model(8, batch="B"))
    result = run_cli("convert", str(source), "-o", str(out), "--input", "X[5,3,8],h0[2,8]")
    why = "dim B is 3 in input 'X' and 2 in input 'h0': the model declares them one length"
    assert_one_line_error(result, 2, why)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ov_loops.InputError, match=why):
        ov_loops.translate(rnn_loop_model(8, batch="B"), input="X[5,3,8],h0[2,8]")
    ov_loops.translate(rnn_loop_model(8, batch="B"), input="X[5,2,8],h0[2,8]")


# -- --output: cut at main-graph tensors -----------------------------------------------------
def test_output_cuts_the_model_at_the_tensors_given(tmp_path):
    source, out = write(tmp_path, _loop_over_rows()), tmp_path / "o.xml"
    result = run_cli("convert", str(source), "-o", str(out), "--output", "rows,acc")
    assert result.returncode == 0, result.stderr
    read = ov.Core().read_model(str(out))
    assert [sorted(r.get_names())[0] for r in read.outputs] == ["rows", "acc"]
    assert [p.get_friendly_name() for p in read.get_parameters()] == ["X", "acc0"]
    x, acc0 = np.ones((4, H), np.float32), np.arange(H, dtype=np.float32)
    negated, running = _expected(x, acc0)
    rows, acc = _run(out, x, acc0)
    np.testing.assert_allclose(rows, running)
    np.testing.assert_allclose(acc, -negated)
    # A cut before the loop leaves no loop to convert; the inputs stay.
    cut = ov_loops.translate(_loop_over_rows(), output=["M"])
    assert cut.loops == [] and len(cut.model.get_parameters()) == 2


@pytest.mark.parametrize(
    "names, fragment",
    [
        ("nope", "output 'nope': no such tensor in the main graph"),
        ("rows,acc_out", "output 'acc_out' is inside main/Loop_2/body: only main-graph tensors"),
        ("rows,rows", "output 'rows' is given twice"),
        ("o.xml", "--output names tensors to cut the model at (as in ovc); the IR's path is -o"),
    ],
    ids=["unknown", "in_body", "twice", "ir_path"],
)
def test_bad_output_is_one_line_exit_2(tmp_path, names, fragment):
    out = tmp_path / "o.xml"
    source = write(tmp_path, _loop_over_rows())
    assert_one_line_error(
        run_cli("convert", str(source), "-o", str(out), "--output", names), 2, fragment
    )
    assert not out.exists()


# -- -o: a file or a directory, created when missing -----------------------------------------
def test_output_model_may_be_a_directory_created_when_missing(tmp_path):
    source = write(tmp_path, _loop_over_rows(), "rows.onnx")
    existing = tmp_path / "existing"
    existing.mkdir()
    for given, written in [
        (existing, existing / "rows.xml"),
        (f"{tmp_path / 'new' / 'dir'}/", tmp_path / "new" / "dir" / "rows.xml"),
        (tmp_path / "deep" / "er" / "named.xml", tmp_path / "deep" / "er" / "named.xml"),
    ]:
        result = run_cli("convert", str(source), "--output_model", str(given))
        assert result.returncode == 0, result.stderr
        assert written.exists() and written.with_suffix(".bin").exists(), result.stdout
        assert f"wrote {written}" in result.stdout
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    assert run_cli("convert", str(source), cwd=elsewhere).returncode == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["rows.bin", "rows.xml"]


def test_a_failed_conversion_creates_no_directory(tmp_path):
    source = write(tmp_path, _unsupported_everywhere())
    result = run_cli("convert", str(source), "-o", str(tmp_path / "new" / "o.xml"))
    assert result.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_save_refuses_a_file_in_the_way_of_its_directory(tmp_path):
    (tmp_path / "file").write_text("")
    made = ov_loops.convert(_loop_over_rows())
    with pytest.raises(ov_loops.InputError, match="file"):
        ov_loops.save(made, tmp_path / "file" / "sub" / "o.xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(
    "given, written",
    [("out", "out.xml"), ("M.XML", "M.XML.xml"), ("o.txt", "o.txt.xml"), ("o.xml", "o.xml")],
)
def test_save_appends_xml_to_a_path_not_ending_in_it_as_ovc_does(tmp_path, given, written):
    """The CLI's rule (ovc's, tests/cli/test_cli.py) in Python: `.xml` appended unless the path
    ends in `.xml` (case-sensitive); the .bin beside it, named the same."""
    made = ov_loops.convert(_loop_over_rows())
    ov_loops.save(made, tmp_path / given)
    bin_name = written[: -len(".xml")] + ".bin"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([written, bin_name])
    assert ov.Core().read_model(tmp_path / written).get_parameters()


def test_save_refuses_a_path_naming_a_directory(tmp_path):
    made = ov_loops.convert(_loop_over_rows())
    with pytest.raises(ov_loops.InputError, match="names a directory"):
        ov_loops.save(made, f"{tmp_path}/out/")
    assert list(tmp_path.iterdir()) == []


# -- --compress_to_fp16 ----------------------------------------------------------------------
def _rnn_with_body_weights() -> onnx.ModelProto:
    """h = tanh(h W + b) for M steps, W and b initializers the body captures (body Consts)."""
    body = loop_body(
        [
            node("MatMul", ["h_in", "W"], ["hw"]),
            node("Add", ["hw", "b"], ["pre"]),
            node("Tanh", ["pre"], ["h_out"]),
            node("Identity", ["cond_in"], ["keep"]),
            node("Identity", ["h_out"], ["h_scan"]),
        ],
        [typed("h_in", T.FLOAT, [1, 32])],
        [typed("keep", T.BOOL, []), typed("h_out", T.FLOAT, [1, 32]), typed("h_scan")],
    )
    rng = np.random.default_rng(2)
    return model(
        graph(
            [node("Loop", ["M", "", "h0"], ["h", "hs"], body=body)],
            [typed("M", T.INT64, []), typed("h0", T.FLOAT, [1, 32])],
            [typed("h", T.FLOAT, [1, 32]), typed("hs")],
            [const("W", rng.standard_normal((32, 32)) * 0.3), const("b", rng.standard_normal(32))],
        )
    )


def _body_const_types(xml) -> list[str]:
    """The element types of the float Consts of more than one element in loop bodies."""
    document = read_ir(xml)
    return sorted(
        layer.data.get("element_type", "")
        for _, _, loop in loops(document)
        for layer in loop.body.layers.values()
        if layer.type == "Const"
        and layer.data.get("element_type") in ("f16", "f32")
        and layer.data.get("shape", "") not in ("", "1")
    )


def test_compressed_ir_stores_body_weights_as_f16_and_still_matches(tmp_path):
    """Loop bodies' constants are compressed too (W [32,32] and b [32] as f16); the IR
    validates clean, reads back as the same LoopSpecs and runs within fp16 tolerance."""
    conversion = ov_loops.translate(_rnn_with_body_weights())
    f16, f32 = tmp_path / "f16.xml", tmp_path / "f32.xml"
    ov_loops.save(conversion.model, f16)  # the default, as ovc's
    ov_loops.save(conversion.model, f32, compress_to_fp16=False)
    assert _body_const_types(f16) == ["f16", "f16"]
    assert _body_const_types(f32) == ["f32", "f32"]
    assert f16.with_suffix(".bin").stat().st_size < 0.6 * f32.with_suffix(".bin").stat().st_size
    assert ov_loops.validate(f16).findings == []
    document = read_ir(f16)
    read_back = [loop_spec(document, g, layer) for _, g, layer in loops(document)]
    assert read_back == [loop.spec for loop in conversion.loops]
    feeds = {"M": np.int64(6), "h0": np.random.default_rng(3).standard_normal((1, 32), np.float32)}
    exact = [compile_f32(f32)(feeds)[i] for i in range(2)]
    for index, got in enumerate(compile_f32(f16)(feeds).values()):
        np.testing.assert_allclose(got, exact[index], rtol=0, atol=5e-3)  # measured 1.2e-3


# -- models from streams ---------------------------------------------------------------------
def test_a_model_reads_from_a_stream(tmp_path):
    made = _loop_over_rows()
    expected = [loop.summary() for loop in ov_loops.translate(made).loops]
    from_bytes = ov_loops.translate(io.BytesIO(made.SerializeToString()))
    assert [loop.summary() for loop in from_bytes.loops] == expected
    with open(write(tmp_path, made), "rb") as handle:
        assert [loop.summary() for loop in ov_loops.translate(handle).loops] == expected
    with pytest.raises(ov_loops.InputError, match="not a binary stream"):
        ov_loops.translate(io.StringIO("text"))
    with pytest.raises(ov_loops.InputError, match="the given stream: not an ONNX model"):
        ov_loops.translate(io.BytesIO(b"\x08\x01garbage"))


# -- --verbose, --version --------------------------------------------------------------------
def test_verbose_prints_timings_ports_and_loop_structure(tmp_path):
    source, out = write(tmp_path, _loop_over_rows()), tmp_path / "o.xml"
    quiet = run_cli("convert", str(source), "-o", str(out))
    result = run_cli("convert", str(source), "-o", str(out), "--input", "X[5,3]", "--verbose")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > len(quiet.stdout.splitlines())
    for expected in ("input X: [5,3] f32", "output rows: [5,3] f32", "output negated: [3] f32"):
        assert expected in lines, lines
    assert "ov-loops: INFO: converted 1 loop(s) in " in result.stderr, result.stderr
    assert any(line.startswith("Loop ") and "trip count constant 5" in line for line in lines)
    assert any(line.strip().startswith("sliced ") for line in lines), lines


def test_version_names_ov_loops_openvino_and_onnx():
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    installed = importlib.metadata.version("ov-loops")
    assert ov_loops.__version__ == installed
    assert result.stdout.strip() == (
        f"ov-loops {installed} (OpenVINO {importlib.metadata.version('openvino')}, "
        f"onnx {importlib.metadata.version('onnx')})"
    )


def test_version_attribute_loads_nothing_heavy():
    code = (
        "import sys, ov_loops; print(ov_loops.__version__, 'openvino' in sys.modules, "
        "'onnx' in sys.modules, 'numpy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == [
        importlib.metadata.version("ov-loops"),
        "False",
        "False",
        "False",
    ]
