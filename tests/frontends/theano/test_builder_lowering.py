"""The builder lowers with the options `translate` takes: a scan-guide program built with
`ov_loops.scan` and its kin has the loop structure `translate` gives the same program written
in ONNX, at every optimisation level (port kinds, trip count, body ops by type; the order of
body Parameters differs: Theano's fn takes sequences first, an ONNX Scan body states first)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest
from onnx import TensorProto
from onnx import helper as h

import ov_loops
from ov_loops.convert_options import ConvertOptions
from ov_loops.frontends.theano.arguments import BuilderError
from ov_loops.loopir.read_back import loop_nodes, spec_of

F32 = np.float32
PORT_KINDS = (
    "sliced_inputs",
    "merged_inputs",
    "invariant_inputs",
    "concatenated_outputs",
    "last_value_outputs",
)


def _structure(model: ov.Model) -> list[tuple]:
    """Per Loop: its trip count, whether it reads the iteration, its port kinds' counts and
    its body's ops by type."""
    made = []
    for loop in loop_nodes(model):
        spec = spec_of(loop)
        kinds = tuple(len(getattr(spec, kind)) for kind in PORT_KINDS)
        body = Counter(op.get_type_name() for op in loop.get_function().get_ordered_ops())
        iteration = spec.current_iteration is not None
        made.append((spec.trip_count_source, spec.trip_count, iteration, kinds, body))
    return made


def _info(name: str, shape, element=TensorProto.FLOAT):
    return h.make_tensor_value_info(name, element, shape)


def _scan_model(body_nodes, body_inputs, body_outputs, scan_inputs, outputs, inputs, **graph):
    body = h.make_graph(body_nodes, "body", body_inputs, body_outputs)
    scan = h.make_node(
        "Scan", scan_inputs, [o.name for o in outputs], body=body, num_scan_inputs=graph.pop("n")
    )
    nodes = [*graph.pop("before", []), scan]
    main = h.make_graph(nodes, "main", inputs, outputs, initializer=graph.pop("initializer", []))
    made = h.make_model(main, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(made, full_check=True)
    return made


def _sum_by_foldl(options=None):
    """Rows summed by foldl; with the builder's default options when `options` is None."""
    x = ops.parameter([-1, 3], F32, name="X")
    zeros = ops.constant(np.zeros(3, F32))
    given = {} if options is None else {"options": options}
    total, _ = ov_loops.foldl(
        lambda row, acc: ops.add(acc, row), sequences=x, outputs_info=zeros, **given
    )
    return ov.Model([ops.result(total)], [x])


def _sum_by_foldl_onnx():
    return _scan_model(
        [h.make_node("Add", ["acc_in", "x"], ["acc_out"])],
        [_info("acc_in", [3]), _info("x", [3])],
        [_info("acc_out", [3])],
        ["zeros", "X"],
        [_info("total", [3])],
        [_info("X", [None, 3])],
        n=1,
        initializer=[h.make_tensor("zeros", TensorProto.FLOAT, [3], [0, 0, 0])],
    )


def _affine_by_map(options):
    x = ops.parameter([-1, 3], F32, name="X")
    two, one = ops.constant(F32(2)), ops.constant(F32(1))
    rows, _ = ov_loops.map(
        lambda row: ops.add(ops.multiply(row, two), one), sequences=x, options=options
    )
    return ov.Model([ops.result(rows)], [x])


def _affine_by_map_onnx():
    body = h.make_graph(
        [h.make_node("Mul", ["x", "two"], ["d"]), h.make_node("Add", ["d", "one"], ["y"])],
        "body",
        [_info("x", [3])],
        [_info("y", [3])],
        initializer=[
            h.make_tensor("two", TensorProto.FLOAT, [], [2]),
            h.make_tensor("one", TensorProto.FLOAT, [], [1]),
        ],
    )
    scan = h.make_node("Scan", ["X"], ["rows"], body=body, num_scan_inputs=1)
    main = h.make_graph([scan], "main", [_info("X", [None, 3])], [_info("rows", [None, 3])])
    return h.make_model(main, opset_imports=[h.make_opsetid("", 17)])


def _polynomial(options):
    """The scan guide's polynomial evaluation: coefficient * x ** power per step."""
    coefficients, x = ops.parameter([-1], F32, name="c"), ops.parameter([], F32, name="x")
    count = [ops.constant(np.int64(v)) for v in (0, 10000, 1)]
    powers = ops.convert(ops.range(*count, ov.Type.i64), ov.Type.f32)
    components, _ = ov_loops.scan(
        lambda coefficient, power, free: ops.multiply(coefficient, ops.power(free, power)),
        sequences=[coefficients, powers],
        non_sequences=x,
        options=options,
    )
    return ov.Model([ops.result(components)], [coefficients, x])


def _polynomial_onnx():
    bounds = [h.make_tensor(n, TensorProto.INT64, [], [v]) for n, v in (("a", 0), ("b", 10000))]
    return _scan_model(
        [h.make_node("Pow", ["x", "p"], ["xp"]), h.make_node("Mul", ["cf", "xp"], ["y"])],
        [_info("cf", []), _info("p", [])],
        [_info("y", [])],
        ["c", "powers"],
        [_info("components", [None])],
        [_info("c", [None]), _info("x", [])],
        n=2,
        before=[
            h.make_node("Range", ["a", "b", "one"], ["counted"]),
            h.make_node("Cast", ["counted"], ["powers"], to=TensorProto.FLOAT),
        ],
        initializer=[*bounds, h.make_tensor("one", TensorProto.INT64, [], [1])],
    )


PROGRAMS = {
    "foldl_sum": (_sum_by_foldl, _sum_by_foldl_onnx),
    "map_affine": (_affine_by_map, _affine_by_map_onnx),
    "polynomial": (_polynomial, _polynomial_onnx),
}


@pytest.mark.parametrize("level", ["none", "default", "max"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_the_builder_gives_translates_loop_structure_at_every_level(program, level):
    build, written = PROGRAMS[program]
    built = _structure(build(ConvertOptions(optimize=level)))
    translated = _structure(ov_loops.translate(written(), optimize=level).model)
    assert built == translated


def test_the_builder_optimises_when_asked():
    """Not the same structure at every level: max unrolls the fold, none leaves it one step."""
    none = _structure(_sum_by_foldl(ConvertOptions(optimize="none")))
    most = _structure(_sum_by_foldl(ConvertOptions(optimize="max")))
    assert none[0][4]["Add"] == 1 and most[0][4]["Add"] > 1


def test_the_face_offers_the_options():
    assert ov_loops.ConvertOptions is ConvertOptions


def test_the_builder_keeps_its_default_the_loop_as_fn_wrote_it():
    default = _structure(_sum_by_foldl())
    assert default == _structure(_sum_by_foldl(ConvertOptions(optimize="none")))
    assert default != _structure(_sum_by_foldl(ConvertOptions(optimize="max")))


@pytest.mark.parametrize(
    "options, fragment",
    [
        (ConvertOptions(input="X[2,3]"), "options.input"),
        (ConvertOptions(stateful=True), "options.stateful"),
        ("max", "options: a ConvertOptions"),
    ],
)
def test_the_builder_refuses_options_it_does_not_take(options, fragment):
    with pytest.raises(BuilderError, match=fragment):
        _sum_by_foldl(options)
