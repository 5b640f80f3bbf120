"""`ov-loops convert`: output lines, exit codes, one-line errors, nothing written on failure."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest

import ov_loops
from tests.harness import assert_one_line_error, run_cli, write
from tests.loop_scenarios import (
    loop_captures_main_graph_and_initializer,
    loop_nested_three_deep_with_captures,
)
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed


def test_convert_prints_one_line_per_loop_and_writes_ir(tmp_path):
    """The translation itself (no optimisation): its ports, per loop."""
    made, _ = loop_nested_three_deep_with_captures()
    source = write(tmp_path, made)
    out = str(tmp_path / "out.xml")
    result = run_cli("convert", str(source), "-o", out, "--optimize", "none")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "-> Loop-5" in line]
    assert [line.split(":")[0] for line in lines] == [
        "main/Loop_0",
        "main/Loop_0/body/Loop_0",
        "main/Loop_0/body/Loop_0/body/Loop_1",
    ]
    # One carried value each (the condition input is a body constant: it is true whenever an
    # iteration runs). Captures: the outer body reads middle_trips, inner_trips, scale; the
    # middle body inner_trips, scale and the outer body's outer_acc; the innermost scale, fj
    # and outer_acc.
    counts = "inputs: 0 sliced, 1 merged, 3 invariant; outputs: 1 concatenated, 1 last-value"
    assert all(f"trip count input; {counts}; special ports:" in line for line in lines), lines
    assert lines[0].endswith("special ports: execution_condition")
    assert lines[2].endswith("special ports: current_iteration, execution_condition")
    assert (tmp_path / "out.xml").stat().st_size > 0 and (tmp_path / "out.bin").exists()


def test_convert_reports_counts_of_each_port_kind(tmp_path):
    """W (an input) is invariant; the initializer bias becomes a body constant."""
    made, _ = loop_captures_main_graph_and_initializer()
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(tmp_path / "o.xml"))
    assert result.returncode == 0, result.stderr
    assert (
        "main/Loop_0: Loop -> Loop-5; trip count input; inputs: 0 sliced, 1 merged, 1 invariant; "
        "outputs: 1 concatenated, 1 last-value; special ports: execution_condition"
    ) in result.stdout


@pytest.mark.parametrize("level", ["none", "default", "max"])
def test_convert_takes_each_optimize_level(tmp_path, level):
    made, _ = loop_captures_main_graph_and_initializer()
    out = tmp_path / "o.xml"
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(out), "--optimize", level)
    assert result.returncode == 0, result.stderr
    assert "main/Loop_0: Loop -> Loop-5" in result.stdout and out.exists()


def test_convert_summary_names_the_optimisations_that_changed_a_loop(tmp_path):
    made, _ = loop_nested_three_deep_with_captures()
    source, out = str(write(tmp_path, made)), str(tmp_path / "out.xml")
    plain = run_cli("convert", source, "-o", out, "--optimize", "none")
    optimized = run_cli("convert", source, "-o", out)
    assert "optimized:" not in plain.stdout
    assert "; optimized: simplified body (" in optimized.stdout, optimized.stdout


def test_unknown_optimize_level_is_one_line_exit_2(tmp_path):
    made, _ = loop_captures_main_graph_and_initializer()
    out = tmp_path / "o.xml"
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(out), "--optimize", "fast")
    assert_one_line_error(result, 2, "--optimize")
    assert not out.exists()
    with pytest.raises(ov_loops.InputError, match="optimize: unknown level 'fast'"):
        ov_loops.convert(made, optimize="fast")


@pytest.mark.parametrize(
    "f16_flags",
    [(), ("--compress-to-fp16",), ("--compress_to_fp16",), ("--compress_to_fp16=True",)],
    ids=["default", "hyphens", "ovc_spelling", "ovc_spelling_true"],
)
def test_compress_to_fp16_halves_the_weights(tmp_path, f16_flags):
    """On by default, as in ovc; `--compress_to_fp16=False` (ovc's spelling) keeps f32."""
    body = loop_body(
        [node("MatMul", ["h_in", "W"], ["h_out"]), node("Identity", ["cond_in"], ["keep"])],
        [typed("h_in", T.FLOAT, [1, 64])],
        [typed("keep", T.BOOL, []), typed("h_out", T.FLOAT, [1, 64])],
    )
    made = model(
        graph(
            [node("Loop", ["M", "", "h0"], ["h"], body=body)],
            [typed("M", T.INT64, []), typed("h0", T.FLOAT, [1, 64])],
            [typed("h", T.FLOAT, [1, 64])],
            initializers=[const("W", np.random.default_rng(1).standard_normal((64, 64)))],
        )
    )
    source = write(tmp_path, made)
    f32_flags = ("--compress_to_fp16=False",)
    assert (
        run_cli("convert", str(source), "-o", str(tmp_path / "f32.xml"), *f32_flags).returncode == 0
    )
    result = run_cli("convert", str(source), "-o", str(tmp_path / "f16.xml"), *f16_flags)
    assert result.returncode == 0, result.stderr
    f32, f16 = (tmp_path / "f32.bin").stat().st_size, (tmp_path / "f16.bin").stat().st_size
    assert f32 >= 64 * 64 * 4 and f16 < 0.6 * f32, (f32, f16)


def _unsupported_everywhere():
    """Unknown ops in the main graph, in a Loop body and in an If branch inside that body."""
    then_branch = graph(
        [node("Frobnicate", ["y_in"], ["t"], domain="acme")],
        [],
        [typed("t", T.FLOAT, [2])],
        name="then",
    )
    else_branch = graph(
        [node("Identity", ["y_in"], ["e"])], [], [typed("e", T.FLOAT, [2])], name="else"
    )
    body = loop_body(
        [
            node("Twiddle", ["y_in"], ["tw"], domain="acme", name="twiddler"),
            node("If", ["cond_in"], ["y_out"], then_branch=then_branch, else_branch=else_branch),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("y_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("y_out", T.FLOAT, [2]), typed("tw", T.FLOAT, [2])],
    )
    main = graph(
        [
            node("Gizmo", ["x"], ["g"], domain="acme"),
            node("Loop", ["M", "", "g"], ["y", "tws"], body=body),
        ],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2]), typed("tws", T.FLOAT, [None, 2])],
    )
    made = onnx.helper.make_model(
        main, opset_imports=[onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("acme", 3)]
    )
    made.ir_version = 10
    return made


def test_unsupported_ops_are_listed_together_with_their_paths(tmp_path):
    result = run_cli(
        "convert", str(write(tmp_path, _unsupported_everywhere())), "-o", str(tmp_path / "out.xml")
    )
    assert_one_line_error(
        result,
        1,
        "3 unsupported",
        "acme.Gizmo-3 at main/Gizmo_0",
        "acme.Twiddle-3 at main/Loop_1/body/twiddler",
        "acme.Frobnicate-3 at main/Loop_1/body/If_1/then_branch/Frobnicate_0",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_a_loop_carrying_a_sequence_converts(tmp_path):
    body = graph(
        [node("Identity", ["cond_in"], ["keep"]), node("Identity", ["s_in"], ["s_out"])],
        [
            typed("i", T.INT64, []),
            typed("cond_in", T.BOOL, []),
            onnx.helper.make_tensor_sequence_value_info("s_in", T.FLOAT, None),
        ],
        [
            typed("keep", T.BOOL, []),
            onnx.helper.make_tensor_sequence_value_info("s_out", T.FLOAT, None),
        ],
    )
    main = graph(
        [
            node("SequenceEmpty", [], ["s0"], dtype=T.FLOAT),
            node("Loop", ["M", "", "s0"], ["s"], body=body, name="seq_loop"),
            node("SequenceLength", ["s"], ["n"]),
        ],
        [typed("M", T.INT64, [])],
        [typed("n", T.INT64, [])],
    )
    result = run_cli("convert", str(write(tmp_path, model(main))), "-o", str(tmp_path / "o.xml"))
    assert result.returncode == 0, result.stderr
    assert "1 loop(s) translated" in result.stdout and (tmp_path / "o.xml").exists()


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "empty file"),
        (b"this is plainly not a protobuf\n" * 3, "not an ONNX model"),
        (bytes(range(256)) * 4, "not an ONNX model"),
    ],
    ids=["empty", "text", "binary_noise"],
)
def test_non_onnx_files_exit_2(tmp_path, content, fragment):
    source = tmp_path / "bad.onnx"
    source.write_bytes(content)
    assert_one_line_error(
        run_cli("convert", str(source), "-o", str(tmp_path / "o.xml")), 2, str(source), fragment
    )
    assert not (tmp_path / "o.xml").exists() and not (tmp_path / "o.bin").exists()


def test_truncated_protobuf_exits_2(tmp_path):
    made, _ = loop_captures_main_graph_and_initializer()
    data = made.SerializeToString()
    source = tmp_path / "cut.onnx"
    source.write_bytes(data[: len(data) // 2])
    assert_one_line_error(
        run_cli("convert", str(source), "-o", str(tmp_path / "o.xml")),
        2,
        "cut.onnx: not an ONNX model: a truncated or corrupt protobuf",
    )
    assert not (tmp_path / "o.xml").exists()


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("ir.xml", "ir.xml: already an OpenVINO IR, not an ONNX model (ov-loops validate checks"),
        ("ir.bin", "ir.bin: the weights of the OpenVINO IR"),
        ("notes.txt", "notes.txt: not an ONNX model: a text file"),
        ("other.xml", "other.xml: not an ONNX model: an XML file"),
        ("arrays.npz", "arrays.npz: not an ONNX model: a zip archive"),
    ],
)
def test_a_file_that_is_not_onnx_says_what_it_is(tmp_path, name, fragment):
    """Not the protobuf parser's words ("Error parsing message ... Wire format was corrupt")."""
    made, _ = loop_captures_main_graph_and_initializer()
    ov_loops.save(ov_loops.convert(made), tmp_path / "ir.xml")
    (tmp_path / "notes.txt").write_text("a model, I promise\n")
    (tmp_path / "other.xml").write_text('<?xml version="1.0"?>\n<graph/>\n')
    np.savez(tmp_path / "arrays.npz", x=np.zeros(3))
    result = run_cli("convert", str(tmp_path / name), "-o", str(tmp_path / "out" / "o.xml"))
    assert_one_line_error(result, 2, fragment)
    assert "protobuf" not in result.stderr and not (tmp_path / "out").exists()


def test_missing_file_exits_2(tmp_path):
    missing = tmp_path / "nope.onnx"
    assert_one_line_error(
        run_cli("convert", str(missing), "-o", str(tmp_path / "o.xml")), 2, "no such file"
    )


def test_invalid_graph_exits_2(tmp_path):
    main = graph(
        [node("Relu", ["undefined_value"], ["y"])],
        [typed("x", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2])],
    )
    result = run_cli("convert", str(write(tmp_path, model(main))), "-o", str(tmp_path / "o.xml"))
    assert_one_line_error(result, 2, "invalid ONNX model", "undefined_value")
    assert not (tmp_path / "o.xml").exists()


def test_loop_arity_mismatch_names_the_node(tmp_path):
    """The ONNX checker lets this through; the translator names the node and the counts."""
    body = loop_body([node("Identity", ["cond_in"], ["keep"])], [], [typed("keep", T.BOOL, [])])
    main = graph(
        [node("Loop", ["M", "", "x"], ["y"], body=body, name="broken")],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2])],
    )
    result = run_cli("convert", str(write(tmp_path, model(main))), "-o", str(tmp_path / "o.xml"))
    assert_one_line_error(result, 1, "main/broken: body has 2 inputs, expected 3")
    assert not (tmp_path / "o.xml").exists()


@pytest.mark.parametrize(
    "args, fragment",
    [
        ([], "the following arguments are required"),
        (["convert"], "the following arguments are required"),
        (["explode"], "invalid choice"),
    ],
    ids=["nothing", "no_model", "unknown_command"],
)
def test_bad_usage_exits_2_in_one_line(args, fragment):
    assert_one_line_error(run_cli(*args), 2, fragment)


@pytest.mark.parametrize(
    "given, written",
    [("o.txt", "o.txt.xml"), ("out", "out.xml"), ("M.XML", "M.XML.xml"), ("o.xml", "o.xml")],
)
def test_an_output_path_not_ending_in_xml_gets_xml_appended_as_ovc_does(tmp_path, given, written):
    """ovc's rule (tools/ovc/cli_parser.py, get_model_name_from_args; measured with ovc
    2026.4.1): a path that is not a directory and does not end in ".xml" (case-sensitive) has
    ".xml" appended; the .bin is beside it, named the same."""
    made, _ = loop_captures_main_graph_and_initializer()
    source = write(tmp_path, made)
    result = run_cli("convert", str(source), "-o", str(tmp_path / given))
    assert result.returncode == 0, result.stderr
    assert f"wrote {tmp_path / written} " in result.stdout
    bin_name = written[: -len(".xml")] + ".bin"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.onnx", written, bin_name])


def test_stdout_closed_early_stops_quietly(tmp_path):
    """`ov-loops convert ... | head -0`: the reader is gone before the report is printed; the
    command stops without a BrokenPipeError traceback."""
    made, _ = loop_captures_main_graph_and_initializer()
    command = [sys.executable, "-m", "ov_loops", "convert", str(write(tmp_path, made))]
    process = subprocess.Popen(
        [*command, "-o", str(tmp_path / "o.xml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # long before the command prints: starting it takes seconds
    stderr = process.stderr.read()
    assert process.wait(timeout=300) == 1
    assert stderr == "", stderr


def test_main_in_process_leaves_the_ov_loops_loggers_as_it_found_them(capsys, caplog):
    """`main` configures logging for its run only: afterwards the `ov_loops` logger propagates
    again (caplog and the host program see its records) and holds no handler on the stream
    main wrote to (CI failed on a later test's log capture before this)."""
    import logging

    from ov_loops.cli.main import main

    logger = logging.getLogger("ov_loops")
    before = (list(logger.handlers), logger.level, logger.propagate)
    assert main(["validate", "ir_samples/valid/nested_loops.xml"]) == 0
    capsys.readouterr()
    assert (list(logger.handlers), logger.level, logger.propagate) == before
    with caplog.at_level(logging.WARNING, logger="ov_loops"):
        logging.getLogger("ov_loops.api").warning("seen after main")
    assert "seen after main" in caplog.text
