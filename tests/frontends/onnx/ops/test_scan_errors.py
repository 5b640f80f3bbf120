"""Bad Scan input: one line naming the node, the documented exit code, no traceback."""

from __future__ import annotations

import numpy as np
import pytest

import ov_loops
from tests.harness import assert_one_line_error, compile_f32, run, run_cli, write
from tests.onnx_builders import T, graph, model, node, typed


def _two_input_scan(a_shape, b_shape, **attrs):
    body = graph(
        [
            node("Add", ["s_in", "a_t"], ["s1"]),
            node("Add", ["s1", "b_t"], ["s_out"]),
            node("Identity", ["s_out"], ["y"]),
        ],
        [typed("s_in", T.FLOAT, [2]), typed("a_t", T.FLOAT, [2]), typed("b_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("y", T.FLOAT, [2])],
        name="body",
    )
    return model(
        graph(
            [
                node(
                    "Scan",
                    ["s0", "a", "b"],
                    ["s", "ys"],
                    body=body,
                    num_scan_inputs=2,
                    name="pair",
                    **attrs,
                )
            ],
            [typed("s0", T.FLOAT, [2]), typed("a", T.FLOAT, a_shape), typed("b", T.FLOAT, b_shape)],
            [typed("s", T.FLOAT, [2]), typed("ys", T.FLOAT, [None, 2])],
        )
    )


def _convert_error(tmp_path, made, code, *fragments):
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(tmp_path / "o.xml"))
    assert_one_line_error(result, code, *fragments)
    assert not (tmp_path / "o.xml").exists()


def test_static_unequal_lengths_fail_at_conversion(tmp_path):
    _convert_error(
        tmp_path,
        _two_input_scan([3, 2], [4, 2]),
        1,
        "main/pair",
        "scan inputs differ in length along their axes: [3, 4]",
    )


def test_dynamic_unequal_lengths_fail_at_run_time():
    """The trip count is the longest input, so a shorter one makes the Loop fail (it does not
    silently drop iterations as a trip count of the shortest would)."""
    compiled = compile_f32(ov_loops.convert(_two_input_scan(["A", 2], ["B", 2])))
    equal = {
        "s0": np.zeros(2, np.float32),
        "a": np.ones((3, 2), np.float32),
        "b": np.ones((3, 2), np.float32),
    }
    np.testing.assert_allclose(run(compiled, equal)[0], [6, 6])
    for a_length, b_length in [(3, 5), (5, 3)]:
        feeds = dict(
            equal, a=np.ones((a_length, 2), np.float32), b=np.ones((b_length, 2), np.float32)
        )
        with pytest.raises(RuntimeError, match="Loop"):
            run(compiled, feeds)


def test_axis_out_of_range_names_the_node(tmp_path):
    _convert_error(
        tmp_path,
        _two_input_scan([3, 2], [3, 2], scan_input_axes=[0, 2]),
        1,
        "main/pair: input 'b': axis 2 is out of range for rank 2",
    )


def test_negative_axis_out_of_range_names_the_node(tmp_path):
    _convert_error(
        tmp_path,
        _two_input_scan([3, 2], [3, 2], scan_output_axes=[-3]),
        1,
        "main/pair: output 1: axis -3 is out of range for rank 2",
    )


@pytest.mark.parametrize(
    "attribute, values",
    [
        ("scan_input_axes", [0]),
        ("scan_input_directions", [0, 1, 0]),
        ("scan_output_axes", [0, 0]),
        ("scan_output_directions", [0, 1]),
    ],
)
def test_attribute_lists_of_the_wrong_length(tmp_path, attribute, values):
    expected = {"scan_input_axes": 2, "scan_input_directions": 2}.get(attribute, 1)
    made = _two_input_scan([3, 2], [3, 2], **{attribute: values})
    _convert_error(
        tmp_path,
        made,
        1,
        "main/pair",
        f"attribute {attribute} has {len(values)} entries, expected {expected}",
    )


def test_direction_flags_must_be_0_or_1(tmp_path):
    _convert_error(
        tmp_path,
        _two_input_scan([3, 2], [3, 2], scan_input_directions=[0, 2]),
        1,
        "main/pair: attribute scan_input_directions must hold only 0 or 1",
    )


def test_body_arity_must_match_num_scan_inputs(tmp_path):
    made = _two_input_scan([3, 2], [3, 2])
    body = next(attr.g for attr in made.graph.node[0].attribute if attr.name == "body")
    del body.input[2]  # the node feeds 1 state and 2 scan inputs; the body takes 2 inputs
    body.node[1].input[1] = "a_t"
    _convert_error(
        tmp_path,
        made,
        1,
        "main/pair: body has 2 inputs, expected 3 (1 states and num_scan_inputs=2 scan inputs)",
    )
