"""The element dims a ConcatFromSequence keeps static (issue 22 item 3).

A list appended in a loop that takes the general sequence rewrite is carried as a flat buffer
and a shape list, which OpenVINO cannot bound: the concatenation's dims were all dynamic
([?,?,?]) where `openvino.convert_model` keeps the element's static ones. The dims proven of
every appended tensor (carried_shapes.py) now ride with the sequence, and the result carries
those that every element has.
"""

from __future__ import annotations

import pytest

import ov_loops
from tests.harness import assert_matches_onnxruntime
from tests.sequence_append_scenarios import NOT_APPENDED

# general-rewrite scenarios stacking elements of shape [2, 3] (B, H) on a new axis 0
STACKED = [
    "append_inside_an_if",
    "list_read_by_position_in_the_body",
    "insert_at_a_position",
    "inner_trip_count_varying_per_outer_iteration",
    "inner_loop_stopping_early",
]


def _stack_shape(made) -> str:
    return str(ov_loops.convert(made).outputs[-1].get_partial_shape())


@pytest.mark.parametrize("name", STACKED)
def test_a_stacked_list_keeps_the_elements_static_dims(name, tmp_path):
    made, runs = NOT_APPENDED[name]()
    assert _stack_shape(made) == "[?,2,3]"
    assert_matches_onnxruntime(made, runs, tmp_path)


def test_elements_of_varying_length_claim_no_dim():
    made, _ = NOT_APPENDED["elements_of_varying_length_concatenated"]()
    assert _stack_shape(made) == "[?]"


def test_dims_join_to_what_both_values_have():
    from ov_loops.frontends.onnx.rewrites.sequences.sequence_ops import EMPTY, join_dims

    assert join_dims(EMPTY, (None, 1, 6)) == (None, 1, 6)
    assert join_dims((2, 1, 6), (3, 1, 6)) == (None, 1, 6)
    assert join_dims((2, 6), (2, 1, 6)) is None
    assert join_dims(None, EMPTY) is None
