"""numpy's advanced indexing on the OPENVINO mode (AdvancedSubtensor, AdvancedIncSubtensor):
one or several integer arrays, broadcast against each other, negative entries, mixed with
slices and scalars, adjacent or not (numpy moves the arrays' axes first when they are not),
boolean masks, new axes; and their set and inc increments, repeated positions included,
compared with PyTensor's default mode. Skipped without pytensor."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor.tensor as pt  # noqa: E402

from tests.frontends.pytensor.compare import compare  # noqa: E402

RNG = np.random.default_rng(5)
X = RNG.random((4, 5, 6))
ROWS = np.array([3, 0, -1, 3])
COLUMNS = np.array([[1, -2], [4, 0]])


def _graph():
    x, rows, columns = pt.dtensor3("x"), pt.lvector("rows"), pt.lmatrix("columns")
    return x, rows, columns, [x, rows, columns], [X, ROWS, COLUMNS]


@pytest.mark.parametrize(
    "index",
    [
        lambda x, r, c: x[r, c[:, :1]],  # two arrays broadcast, on the first axes
        lambda x, r, c: x[:, c],  # one matrix on a middle axis
        lambda x, r, c: x[1:, r[:2, None], c[0]],  # adjacent arrays after a slice
        lambda x, r, c: x[r, 1:4, r],  # arrays apart: their axes go first
        lambda x, r, c: x[r[:2], ::-2, 2],  # an array and a scalar apart
        lambda x, r, c: x[-1, c],  # a scalar next to an array
        lambda x, r, c: x[None, r, :, c[:1, :1]],  # a new axis, arrays apart
        lambda x, r, c: x[x > 0.5],  # a boolean mask of every axis
        lambda x, r, c: x[:, (x[0] > 0.3), None],  # a mask of two axes, after a slice
    ],
    ids=[
        "broadcast",
        "matrix",
        "after-slice",
        "apart",
        "scalar-apart",
        "scalar",
        "newaxis",
        "mask",
        "mask-2d",
    ],
)
def test_advanced_subtensor_is_numpy_indexing(index):
    x, rows, columns, inputs, values = _graph()
    out = index(x, rows, columns)
    assert "AdvancedSubtensor" in str(out.owner.op)
    compare(inputs, out, values, on_unused_input="ignore")


@pytest.mark.parametrize("inc", [True, False], ids=["inc", "set"])
def test_advanced_increments_set_or_add_each_picked_element(inc):
    x, rows, columns, inputs, values = _graph()
    change = pt.inc_subtensor if inc else pt.set_subtensor
    y = pt.dvector("y")
    outputs = [
        change(x[rows[:3], :, columns[0, 0]], y),  # arrays apart, y broadcast over rows
        change(x[1:3, rows[1:3], columns[1]], 2.5),  # adjacent arrays after a slice
        change(x[x > 0.7], -1.0),  # a boolean mask
    ]
    if inc:  # repeated positions add once each, as numpy.add.at
        outputs.append(pt.inc_subtensor(x[rows, columns[:1, :1]], y[0]))
    compare([*inputs, y], outputs, [*values, np.arange(5.0)])
