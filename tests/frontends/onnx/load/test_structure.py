"""load/structure.py stands in for the ONNX checker on models that convert; the checker words
every refusal (load.checked_on_failure)."""

from __future__ import annotations

import io

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import InputError, UnsupportedError
from ov_loops.frontends.onnx.load.structure import check_structure
from tests.onnx_builders import T, const, graph, model, node, side_by_side_loops, typed


def _loop_model() -> onnx.ModelProto:
    return side_by_side_loops(1)


def _unknown_loop_attribute() -> onnx.ModelProto:
    made = _loop_model()
    loop = next(n for n in made.graph.node if n.op_type == "Loop")
    loop.attribute.append(onnx.helper.make_attribute("num_scan_inputs", 1))
    return made


def _no_ir_version() -> onnx.ModelProto:
    made = _loop_model()
    made.ir_version = 0
    return made


def _initializer_not_an_input_at_ir3() -> onnx.ModelProto:
    main = graph([node("Add", ["x", "w"], ["y"])], [typed("x", T.FLOAT, [2])],
                 [typed("y", T.FLOAT, [2])], [const("w", [1, 2])])  # fmt: skip
    made = model(main)
    made.ir_version = 3
    return made


def _short_raw_data() -> onnx.ModelProto:
    made = _initializer_not_an_input_at_ir3()
    made.ir_version = 10
    made.graph.initializer[0].raw_data = np.float32([1]).tobytes()  # 4 of 8 bytes
    return made


def _output_defined_twice() -> onnx.ModelProto:
    nodes = [node("Relu", ["x"], ["y"]), node("Neg", ["x"], ["y"])]
    return model(graph(nodes, [typed("x", T.FLOAT, [2])], [typed("y", T.FLOAT, [2])]))


def _input_declared_twice() -> onnx.ModelProto:
    inputs = [typed("x", T.FLOAT, [2]), typed("x", T.FLOAT, [2])]
    return model(graph([node("Relu", ["x"], ["y"])], inputs, [typed("y", T.FLOAT, [2])]))


# (model, what check_structure says, what the checker says: the refusal convert raises)
FAULTS = {
    "unknown Loop attribute": (
        _unknown_loop_attribute,
        "main/Loop_1: Loop has no attribute 'num_scan_inputs'",
        "Unrecognized attribute: num_scan_inputs for operator Loop",
    ),
    "no ir_version": (_no_ir_version, "ir_version 0 is not one of 3", "ir_version"),
    "initializer not an input at IR 3": (
        _initializer_not_an_input_at_ir3,
        "initializer 'w' is not a graph input (ir_version 3)",
        "w in initializer but not in graph input",
    ),
    "short raw_data": (
        _short_raw_data,
        "tensor 'w' has 4 bytes of raw_data, its type and dims need 8",
        "raw_data size (4 bytes) is too small",
    ),
    "output defined twice": (_output_defined_twice, "'y' is defined twice", "SSA"),
    "input declared twice": (_input_declared_twice, "input 'x' is declared twice", "SSA"),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_structural_faults_are_refused_in_the_checker_words(fault):
    build, ours, checkers = FAULTS[fault]
    with pytest.raises(InputError, match="invalid ONNX model") as found:
        check_structure(build())
    assert ours in str(found.value)
    with pytest.raises(InputError, match="invalid ONNX model") as refused:
        ov_loops.convert(build())
    assert checkers in str(refused.value)


def test_valid_models_pass_the_structural_checks():
    for made in (_loop_model(), side_by_side_loops(3)):
        assert check_structure(made) is made


def test_a_failure_of_a_stream_the_checker_refuses_is_worded_by_the_checker():
    """The model's output is produced by no node: the conversion fails, the checker (reading
    the stream again from where the conversion began) words it."""
    main = graph([node("Relu", ["x"], ["y"])], [typed("x", T.FLOAT, [2])],
                 [typed("z", T.FLOAT, [2])])  # fmt: skip
    stream = io.BytesIO(b"head" + model(main).SerializeToString())
    stream.seek(4)
    with pytest.raises(InputError, match="Graph output 'z' is not an output of any node"):
        ov_loops.convert(stream)


def test_a_failure_the_checker_accepts_keeps_its_own_error():
    main = graph([node("Frobnicate", ["x"], ["y"], domain="my.ops")],
                 [typed("x", T.FLOAT, [2])], [typed("y", T.FLOAT, [2])])  # fmt: skip
    made = model(main)
    made.opset_import.add(domain="my.ops", version=1)
    with pytest.raises(UnsupportedError, match="Frobnicate"):
        ov_loops.convert(made)
