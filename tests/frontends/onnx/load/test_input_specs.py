"""`input=` read from any text or Python value: entries, or one InputError line, never another
exception; what is read reads back the same from its own text."""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.input_specs import (
    ELEMENT_TYPES,
    MAX_DIMENSION,
    input_shapes,
    parse_input_text,
)
from ov_loops.frontends.onnx.load.io_edits import InputOutputEdits
from ov_loops.frontends.onnx.load.load import load_model
from tests.onnx_builders import T, graph, model, node, typed
from tests.test_convert_options import _loop_over_rows

# Characters the syntax gives a meaning, digits of other scripts, and a few others.
SYNTAX = "[]{},.?- 0123456789"
OTHER_DIGITS = "\u00b2\u00b9\u0661\u0967\uff15\u2460\u09e8\U0001d7d8"
NAMES = ["X", "acc0", "", "Q", "x y", "\u540d"]
HUGE = ["9223372036854775806", "9223372036854775807", "99999999999999999999", "9" * 5000]


def _dims() -> st.SearchStrategy[str]:
    number = st.one_of(st.integers(0, 40).map(str), st.sampled_from(HUGE))
    dim = st.one_of(
        number,
        st.sampled_from(["?", "-1", "-2", "..", "", "a", *OTHER_DIGITS]),
        st.tuples(number | st.just(""), number | st.just("")).map("..".join),
    )
    return st.lists(dim, max_size=4).map(",".join)


def _entries() -> st.SearchStrategy[str]:
    """Mostly well-formed entries NAME[DIMS]{TYPE}, each part optional or broken."""
    types = st.sampled_from([*ELEMENT_TYPES, "", "f33", "F16", " f16 ", "\u2460"])
    return st.tuples(
        st.sampled_from(NAMES),
        st.one_of(st.just(""), _dims().map(lambda d: f"[{d}]")),
        st.one_of(st.just(""), types.map(lambda t: f"{{{t}}}")),
    ).map("".join)


TEXTS = st.one_of(
    st.lists(_entries(), min_size=1, max_size=3).map(",".join),
    st.text(st.sampled_from(SYNTAX + OTHER_DIGITS + "Xaf"), max_size=30),
    st.text(max_size=30),
)


def _read(read, given: object) -> list:
    """The entries `read` makes of `given`, every static dim within OpenVINO's; none when it
    refuses `given` with a one-line InputError."""
    try:
        entries = read(given)
    except InputError as exc:
        assert "\n" not in str(exc)
        return []
    for entry in entries:
        assert entry.shape is None or all(
            dim.is_dynamic or dim.get_length() <= MAX_DIMENSION for dim in entry.shape
        )
    return entries


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_any_input_text_is_entries_that_read_back_or_one_input_error(text):
    for entry in _read(parse_input_text, text):
        (again,) = parse_input_text(entry.text())
        assert again == entry, (text, entry.text())


@settings(max_examples=60, deadline=None)
@given(st.lists(_entries(), min_size=1, max_size=2).map(",".join))
def test_any_input_text_sets_the_model_or_is_one_input_error(text):
    """The edits reach the ONNX model (names, ranks, declared dims and types are checked
    there): InputError or a model, whatever the text."""
    try:
        edits = InputOutputEdits(input_shapes(text), [])
        load_model(_loop_over_rows(), edits.apply)
    except InputError as exc:
        assert "\n" not in str(exc)


def _python_values() -> st.SearchStrategy[object]:
    leaf = st.one_of(
        st.sampled_from(["X", "acc0", "Q", ""]),
        st.integers(-2, 8),
        st.sampled_from([2**70, 2**64, 2**63 - 1, MAX_DIMENSION, -(2**63), -5]),
        st.sampled_from([ov.Dimension(), ov.Dimension(2, 5), ov.PartialShape("[?,3]")]),
        st.sampled_from([ov.Type.f16, ov.Type.i64, ov.Type.dynamic, np.float32, np.dtype("U3")]),
        st.sampled_from([bool, int, float, complex, np.str_, True, 1.5, None, b"X"]),
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(st.sampled_from(["X", "acc0", 1]), inner, max_size=2),
        ),
        max_leaves=8,
    )


@settings(max_examples=400, deadline=None)
@given(_python_values())
def test_any_python_input_value_is_entries_or_one_input_error(value):
    _read(input_shapes, value)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("x[99999999999999999999]", "dim 0 is 99999999999999999999, larger than"),
        ("x[1,2..99999999999999999999]", "input 'x[1,2..99999999999999999999]': dim 1 is"),
        ("x[" + "9" * 5000 + "]", "larger than OpenVINO's largest dimension"),
        ("x[\u00b2]", "bad dimension '\u00b2' at dim 0"),
        ("y[1],x[\uff15]{f16}", "input 'x[\uff15]{f16}': bad dimension"),
        ("x[1]{\u2460}", "input 'x[1]{\u2460}': unknown element type"),
    ],
)
def test_bad_dims_name_the_entry_and_the_dim(text, fragment):
    with pytest.raises(InputError) as raised:
        parse_input_text(text)
    assert fragment in str(raised.value)


def test_largest_dimension_is_kept_and_an_empty_list_gives_no_entry():
    """2**63-2 is a static dim (2**63-1 would read as dynamic); `input=[]` sets nothing, as in
    openvino.convert_model."""
    (entry,) = parse_input_text(f"x[{MAX_DIMENSION},1..{MAX_DIMENSION}]")
    assert entry.shape[0].is_static and entry.shape[0].get_length() == MAX_DIMENSION
    assert entry.shape[1].get_max_length() == MAX_DIMENSION
    assert input_shapes([]) == [] and input_shapes(()) == []


def test_a_number_type_for_a_string_input_is_one_input_error():
    """No Convert makes numbers of strings: refused before conversion, naming the input."""
    main = graph(
        [node("Identity", ["X"], ["Y"])], [typed("X", T.STRING, [2])], [typed("Y", T.STRING, [2])]
    )
    with pytest.raises(InputError, match="input 'X': the model declares strings, not f32"):
        load_model(model(main), InputOutputEdits(input_shapes("X{f32}"), []).apply)
