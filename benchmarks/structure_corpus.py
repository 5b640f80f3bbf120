"""The models whose conversion the refactor must leave unchanged, by name.

Every ONNX scenario of tests/loop_scenarios.py and tests/scan_scenarios.py, the ONNX backend node
tests holding a Loop or a Scan, the ONNX files of ir_samples/, the plugin-crash models of
tests/test_plugin_crashes.py (among them a 13-deep nest of Loops and two refusals) and a handful
of models made with the builder (ov_loops.scan, map, reduce, foldl, foldr, until).

Only public names of ov_loops are used, and `tests` is imported from the checkout under test, so
the same corpus can be built against an old and a new tree.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops

import ov_loops

Source = onnx.ModelProto | ov.Model
F32, I32, I64 = np.float32, np.int32, np.int64


def translate_unoptimized(model):
    """`ov_loops.translate` without loop optimisations (`optimize="none"`), in trees that have
    them; trees from before them translate the same way unasked."""
    if "optimize" in inspect.signature(ov_loops.translate).parameters:
        return ov_loops.translate(model, optimize="none")
    return ov_loops.translate(model)


def onnx_corpus() -> dict[str, Callable[[], onnx.ModelProto]]:
    """Zero-argument builders of every ONNX model of the corpus, by name."""
    import tests
    from tests import loop_scenarios, scan_scenarios, test_plugin_crashes

    builders: dict[str, Callable[[], onnx.ModelProto]] = {}
    for prefix, module in (("loop", loop_scenarios), ("scan", scan_scenarios)):
        for name, build in module.SCENARIOS.items():
            builders[f"{prefix}_scenarios/{name}"] = _first_of(build)
    for name, case in backend_loop_cases().items():
        builders[f"onnx_backend/{name}"] = lambda case=case: case.model
    samples = Path(tests.__file__).resolve().parents[1] / "ir_samples"
    for path in sorted(samples.glob("*.onnx")):
        builders[f"ir_samples/{path.name}"] = lambda path=path: onnx.load(str(path))
    crashes = test_plugin_crashes
    builders["plugin_crashes/while_loops_nested_sharing_an_initializer_condition"] = (
        crashes.while_loops_nested_sharing_an_initializer_condition
    )
    builders["plugin_crashes/loops_nested_13_deep"] = lambda: (
        crashes.loops_nested_with_stacked_scan_outputs(13)
    )
    builders["plugin_crashes/scan_stacking_rank_12_values_axis5_reversed"] = lambda: (
        crashes.scan_stacking_rank_12_values(5, 1)
    )
    builders["plugin_crashes/scan_whose_body_declares_another_state_rank"] = (
        crashes.scan_whose_body_declares_another_state_rank
    )
    builders["plugin_crashes/loop_carried_value_changing_rank"] = (
        crashes.loop_carried_value_changing_rank
    )
    return builders


def _first_of(build: Callable) -> Callable[[], onnx.ModelProto]:
    """A scenario builder returns (model, runs): keep the model."""

    def model() -> onnx.ModelProto:
        made = build()
        return made[0] if isinstance(made, tuple) else made

    return model


def backend_loop_cases() -> dict:
    """The ONNX backend node test cases (shipped with onnx) whose model holds a Loop or a Scan."""
    with warnings.catch_warnings():  # the onnx test generators warn about overflowing casts
        warnings.simplefilter("ignore")
        from onnx.backend.test.loader import load_model_tests

        cases = load_model_tests(kind="node")
    return {case.name: case for case in cases if _holds_loop(case.model)}


def _holds_loop(model: onnx.ModelProto) -> bool:
    return any(_graph_holds_loop(graph) for graph in _graphs(model))


def _graphs(model: onnx.ModelProto) -> list[onnx.GraphProto]:
    functions = [onnx.helper.make_graph(f.node, f.name, [], []) for f in model.functions]
    return [model.graph, *functions]


def _graph_holds_loop(graph: onnx.GraphProto) -> bool:
    for node in graph.node:
        if node.op_type in ("Loop", "Scan") and node.domain in ("", "ai.onnx"):
            return True
        for attribute in node.attribute:
            subgraphs = [attribute.g] if attribute.HasField("g") else list(attribute.graphs)
            if any(_graph_holds_loop(sub) for sub in subgraphs):
                return True
    return False


def builder_corpus() -> dict[str, Callable[[], ov.Model]]:
    """Zero-argument builders of ov.Models made with ov_loops' builder, by name."""
    return {
        f"builder/{build.__name__}": build
        for build in (
            a_to_the_k,
            triangular_numbers,
            powers_of_two_until,
            taps_rnn,
            map_reduce_foldl_foldr,
            go_backwards_and_negative_n_steps,
            captured_product,
        )
    }


def _model(outputs: list, parameters: list) -> ov.Model:
    """The model of these outputs, named y0, y1, ... (not by a process-wide counter)."""
    made = ov.Model([ops.result(output) for output in outputs], parameters, "built")
    for index, output in enumerate(made.outputs):
        output.get_tensor().set_names({f"y{index}"})
    return made


def a_to_the_k() -> ov.Model:
    a, k = ops.parameter([-1], F32, name="A"), ops.parameter([], I64, name="k")
    ones = ops.broadcast(ops.constant(F32(1)), ops.shape_of(a))
    powers, _ = ov_loops.scan(
        lambda prior, x: ops.multiply(prior, x), outputs_info=ones, non_sequences=a, n_steps=k
    )
    return _model([powers], [a, k])


def triangular_numbers() -> ov.Model:
    up_to = ops.parameter([], I32, name="up_to")
    seq = ops.range(ops.constant(I32(0)), up_to, ops.constant(I32(1)), ov.Type.i32)
    numbers, _ = ov_loops.scan(
        lambda value, total: ops.add(total, value), outputs_info=ops.constant(I32(0)), sequences=seq
    )
    return _model([numbers], [up_to])


def powers_of_two_until() -> ov.Model:
    limit = ops.parameter([], F32, name="max_value")

    def double(previous, bound):
        doubled = ops.multiply(previous, ops.constant(F32(2)))
        return doubled, ov_loops.until(ops.greater(doubled, bound))

    powers, _ = ov_loops.scan(
        double, outputs_info=ops.constant(F32(1)), non_sequences=limit, n_steps=1024
    )
    return _model([powers], [limit])


def taps_rnn() -> ov.Model:
    """Sequence taps [-2, 0] and output taps [-2, -1]."""
    u = ops.parameter([-1, 3], F32, name="u")
    h0 = ops.parameter([2, 3], F32, name="h0")
    w = ops.parameter([3, 3], F32, name="W")

    def step(u_back, u_now, h_back, h_prev, weights):
        mixed = ops.add(ops.matmul(h_prev, weights, False, False), ops.add(u_now, u_back))
        return ops.tanh(ops.add(mixed, h_back))

    hs, _ = ov_loops.scan(
        step,
        sequences=dict(input=u, taps=[-2, 0]),
        outputs_info=dict(initial=h0, taps=[-2, -1]),
        non_sequences=w,
        strict=True,
    )
    return _model([hs], [u, h0, w])


def map_reduce_foldl_foldr() -> ov.Model:
    seq = ops.parameter([-1], F32, name="seq")
    zero = ops.constant(F32(0))
    doubled, _ = ov_loops.map(lambda x: ops.multiply(x, ops.constant(F32(2))), seq)
    total, _ = ov_loops.reduce(lambda x, acc: ops.add(acc, x), seq, zero)
    left, _ = ov_loops.foldl(lambda x, acc: ops.subtract(acc, x), seq, zero)
    right, _ = ov_loops.foldr(lambda x, acc: ops.subtract(acc, x), seq, zero)
    return _model([doubled, total, left, right], [seq])


def go_backwards_and_negative_n_steps() -> ov.Model:
    seq = ops.parameter([-1], F32, name="seq")
    backwards, _ = ov_loops.scan(lambda x: ops.negative(x), sequences=seq, go_backwards=True)
    counted, _ = ov_loops.scan(
        lambda prior: ops.add(prior, ops.constant(F32(1))),
        outputs_info=ops.constant(F32(0)),
        n_steps=-3,
    )
    return _model([backwards, counted], [seq])


def captured_product() -> ov.Model:
    w = ops.parameter([2, 2], F32, name="W")
    seq = ops.parameter([-1, 2], F32, name="seq")
    w_squared = ops.multiply(w, w)
    mapped, _ = ov_loops.scan(lambda x: ops.matmul(x, w_squared, False, False), sequences=seq)
    return _model([mapped], [w, seq])
