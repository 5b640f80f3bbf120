"""Each ONNX Scan scenario converts to clean IR (Loop-5 only) and matches onnxruntime (CPU, f32)."""

from __future__ import annotations

import numpy as np
import pytest

import ov_loops
from tests.harness import assert_matches_onnxruntime, save_and_reload
from tests.onnx_builders import ELEMENT_TYPES, T, graph, model, node, typed
from tests.scan_scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scan_scenario_matches_onnxruntime(name, tmp_path):
    model, runs = SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(model, runs, tmp_path)
    assert any(loop.op.startswith("Scan") for loop in conversion.loops), conversion.loops


def _element_type_scan(elem):
    """state <- x_t; scan out the previous state, prepended: pure data movement of one type."""
    body = graph(
        [node("Identity", ["x_t"], ["s_out"]), node("Identity", ["s_in"], ["y"])],
        [typed("s_in", elem, [2]), typed("x_t", elem, [2])],
        [typed("s_out", elem, [2]), typed("y", elem, [2])],
        name="body",
    )
    return model(
        graph(
            [
                node(
                    "Scan",
                    ["s0", "x"],
                    ["s", "ys"],
                    body=body,
                    num_scan_inputs=1,
                    scan_output_directions=[1],
                )
            ],
            [typed("s0", elem, [2]), typed("x", elem, ["T", 2])],
            [typed("s", elem, [2]), typed("ys", elem, ["T", 2])],
        )
    )


@pytest.mark.parametrize("name", sorted(ELEMENT_TYPES))
def test_scan_element_types(name, tmp_path):
    elem, dtype = ELEMENT_TYPES[name]
    runs = []
    for steps in (4, 1, 3):
        x = np.arange(2 * steps).reshape(steps, 2)
        x = (x % 2 == 1) if dtype == np.bool_ else x.astype(dtype)
        s0 = np.array([1, 0]).astype(dtype)
        expected = [x[-1], np.stack([s0, *x[:-1]])[::-1]]
        # onnxruntime's Python API takes no bfloat16: those runs bring their own expectation.
        runs.append(({"s0": s0, "x": x}, expected) if name == "bfloat16" else {"s0": s0, "x": x})
    assert_matches_onnxruntime(_element_type_scan(elem), runs, tmp_path, rtol=0, atol=0)


def test_string_tensors_are_refused_in_one_line():
    with pytest.raises(ov_loops.UnsupportedError) as failure:
        ov_loops.convert(_element_type_scan(T.STRING))
    message = str(failure.value)
    assert "main/Scan_0" in message and "string" in message and "\n" not in message, message


def test_reversed_scans_keep_concatenation_forward_in_the_ir(tmp_path):
    """Reverse inputs slice with stride -1; prepended outputs concatenate forward (start 0,
    stride 1: a reversed concatenation is outside Loop-5) and are reversed after the Loop."""
    made, _ = SCENARIOS["scan_reverse_axis1_prepend"]()
    _, tree = save_and_reload(ov_loops.convert(made), tmp_path)
    (layer,) = [layer for layer in tree.iter("layer") if layer.get("type") == "Loop"]
    port_map = layer.find("port_map")
    (sliced,) = [e for e in port_map.findall("input") if e.get("axis") is not None]
    assert (sliced.get("axis"), sliced.get("stride"), sliced.get("start")) == ("1", "-1", "-1")
    (stacked,) = [e for e in port_map.findall("output") if e.get("axis") is not None]
    assert stacked.get("axis") == "1"
    assert stacked.get("stride", "1") == "1" and stacked.get("start", "0") == "0"
