"""proto/inference/kinds.py: onnx's rules to merge, unite and name types."""

from __future__ import annotations

import onnx
import pytest

from ov_loops.frontends.onnx.proto.inference.kinds import (
    Sequence,
    Symbols,
    Tensor,
    Unsure,
    merge,
    parse_type,
    union_shape,
    write_type,
)
from tests.onnx_builders import graph, model, typed

T = onnx.TensorProto


def test_merge_refines_the_declared_type():
    """An unknown declared dim or element type takes the inferred one; an inferred number
    wins over a declared symbol; a declared symbol stays over an inferred one."""
    declared = Tensor(0, (None, "n", "m", 4))
    inferred = Tensor(T.FLOAT, ("a", 3, "b", 4))
    assert merge(inferred, declared) == Tensor(T.FLOAT, ("a", 3, "m", 4))
    assert merge(Tensor(T.FLOAT), declared) == Tensor(T.FLOAT, declared.shape)
    assert merge(Sequence(Tensor(T.FLOAT, (2,))), Sequence(None)) == Sequence(Tensor(T.FLOAT, (2,)))


@pytest.mark.parametrize(
    "inferred, declared",
    [
        (Tensor(T.FLOAT, (2,)), Tensor(T.DOUBLE, (2,))),
        (Tensor(T.FLOAT, (2,)), Tensor(T.FLOAT, (2, 1))),
        (Tensor(T.FLOAT, (2,)), Tensor(T.FLOAT, (3,))),
        (Sequence(Tensor(T.FLOAT)), Tensor(T.FLOAT)),
    ],
)
def test_merge_of_conflicting_types_is_unsure(inferred, declared):
    with pytest.raises(Unsure):
        merge(inferred, declared)


def test_union_keeps_the_dims_both_have():
    assert union_shape((2, "a", 3), (2, "a", 4)) == (2, "a", None)
    assert union_shape((2,), (2, 1)) is None
    assert union_shape(None, (2,)) is None


def test_fresh_symbols_avoid_the_model_symbols():
    made = model(graph([], [typed("x", T.FLOAT, ["unk__0", "unk__2"])], []))
    symbols = Symbols(made, [made.graph])
    assert [symbols.fresh() for _ in range(3)] == ["unk__1", "unk__3", "unk__4"]
    assert symbols.materialize(Tensor(T.FLOAT, (None, 2))) == Tensor(T.FLOAT, ("unk__5", 2))


@pytest.mark.parametrize(
    "value",
    [Tensor(T.FLOAT), Tensor(T.INT64, ()), Tensor(T.FLOAT, (2, "n")), Sequence(Tensor(T.BOOL))],
)
def test_types_written_read_back(value):
    proto = onnx.TypeProto()
    write_type(value, proto)
    assert parse_type(proto) == value


def test_optional_types_are_unsure():
    proto = onnx.helper.make_optional_type_proto(onnx.helper.make_tensor_type_proto(T.FLOAT, []))
    with pytest.raises(Unsure):
        parse_type(proto)
