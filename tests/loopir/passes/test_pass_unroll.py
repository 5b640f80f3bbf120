"""UnrollIterations: k copies of the body per Loop-5 iteration, masked past the end.

Device-free: every LoopIR scenario through the IR reference before and after the pass, with the
factor the pass chooses and with forced ones (the unroll scenarios at the end of
tests/loopir_scenarios.py cover trip counts around multiples of 4). On the CPU: every ONNX Loop
and Scan scenario converted with optimize="max" matches onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx.parser
import openvino.opset15 as ops
import pytest
from hypothesis import given, settings

import ov_loops
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.pipeline import CPU, LoweringOptions
from ov_loops.loopir.passes.unroll_iterations import (
    UnrollIterations,
    body_size,
    chosen_factor,
    masked_limit,
)
from ov_loops.loopir.steps import Unchunk
from ov_loops.lower.loop5 import lower_to_loop5
from ov_loops.lower.select import lower
from ov_loops.reference.onnx_reference import run_onnx
from tests.harness import (
    assert_close,
    assert_matches_onnxruntime,
    compile_f32,
    reference_oracle,
    run,
)
from tests.loop_scenarios import SCENARIOS as LOOP_SCENARIOS
from tests.loopir.passes.test_passes import (  # noqa: F401 (any_port_rank is a fixture)
    _assert_keeps_results,
    _reference_outputs,
    _saved,
    any_port_rank,
)
from tests.loopir_scenarios import (
    SCENARIOS,
    accumulating_loop,
    batch_loop,
    captures_constant_and_parameter,
    rank13_stack_static,
    rnn_of_many_rows,
    unrolling_loop,
)
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS
from tests.test_conformance import PASSING, assert_backend_case_passes
from tests.test_random_bodies import _feeds, _loop_model, _scan_model, bodies

FACTORS = [None, 2, 3, 4]


@pytest.mark.usefixtures("any_port_rank")
@pytest.mark.parametrize("factor", FACTORS, ids=lambda factor: f"x{factor or 'auto'}")
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_unrolling_keeps_what_the_loop_computes(scenario: str, factor, tmp_path):
    _assert_keeps_results(UnrollIterations(factor), scenario, tmp_path)


ONNX_SCENARIOS = {f"loop-{name}": LOOP_SCENARIOS[name] for name in sorted(LOOP_SCENARIOS)} | {
    f"scan-{name}": SCAN_SCENARIOS[name] for name in sorted(SCAN_SCENARIOS)
}


@pytest.mark.parametrize("name", list(ONNX_SCENARIOS))
def test_scenario_at_optimize_max_matches_onnxruntime(name: str, tmp_path):
    model, runs = ONNX_SCENARIOS[name]()
    assert_matches_onnxruntime(model, runs, tmp_path, optimize="max")


@pytest.mark.parametrize("name", PASSING)
def test_backend_case_at_optimize_max_passes(name: str, tmp_path):
    assert_backend_case_passes(name, tmp_path, optimize="max")


@settings(max_examples=20, deadline=None)
@given(body=bodies())
def test_random_loop_bodies_at_optimize_max(body, tmp_path_factory):
    """Runs of 3, 0, 17 and 5 iterations: 17 = 16 + 1 with the factor 16 of these bodies."""
    rng = np.random.default_rng(0)
    runs = [_feeds(body[0], n, rng, loop=True) for n in (3, 0, 17, 5)]
    made, directory = _loop_model(*body), tmp_path_factory.mktemp("loop")
    assert_matches_onnxruntime(made, runs, directory, oracle=reference_oracle, optimize="max")


@settings(max_examples=20, deadline=None)
@given(body=bodies())
def test_random_scan_bodies_at_optimize_max(body, tmp_path_factory):
    rng = np.random.default_rng(1)
    runs = [_feeds(body[0], n, rng, loop=False) for n in (3, 17, 1)]
    made, directory = _scan_model(*body), tmp_path_factory.mktemp("scan")
    assert_matches_onnxruntime(made, runs, directory, oracle=reference_oracle, optimize="max")


def test_the_corpus_loops_are_unrolled_at_optimize_max():
    """The comparison above is not vacuous: these loops (every kind of trip count, a reversed
    scan, a while loop) are unrolled."""
    names = [
        "loop-loop_trip_count_and_condition",
        "loop-loop_no_trip_count_while",
        "loop-loop_scan_outputs_scalar_and_matrix",
        "scan-scan_reverse_axis1_prepend",
        "scan-scan_several_inputs_on_different_axes",
    ]
    for name in names:
        model, _ = ONNX_SCENARIOS[name]()
        (loop,) = ov_loops.translate(model, optimize="max").loops
        assert "unrolled x16" in loop.optimizations, name
        (plain,) = ov_loops.translate(model, optimize="default").loops
        assert not any(done.startswith("unrolled") for done in plain.optimizations), name


# -- what the pass does ---------------------------------------------------------------------------
def _op_types(loop: LoopIR) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


@pytest.mark.parametrize(
    "count, factor", [(None, 16), (3, 3), (12, 12), (14, 14), (100, 10), (17, 16), (1, None)]
)
def test_the_factor_follows_the_body_size_and_a_constant_trip_count(count, factor):
    """A body of 1 operation: 16, at most the trip count, a divisor between k/2 and k."""
    loop, _, _ = accumulating_loop(3 if count is None else count, runtime=count is None)
    assert chosen_factor(loop) == factor


def _with_tanhs(loop: LoopIR, count: int) -> LoopIR:
    """`loop` whose body's first Result goes through `count` more Tanh."""
    results = list(loop.body.get_results())
    value = results[0].input_value(0)
    for _ in range(count):
        value = ops.tanh(value)
    results[0] = ops.result(value)
    return loop.with_body(results, list(loop.body.get_parameters()))


def test_a_large_body_is_unrolled_less():
    loop, _, _ = captures_constant_and_parameter()  # 6 operations, 3 iterations
    assert chosen_factor(_with_tanhs(loop, 100)) == 2  # 256 // 106
    loop, _, _ = captures_constant_and_parameter()
    large = _with_tanhs(loop, 200)
    assert chosen_factor(large) is None
    assert UnrollIterations()(large) is large


@pytest.mark.parametrize(("loops", "factor"), [(1, 16), (16, 16), (50, 7), (100, None)])
def test_a_loop_gets_its_share_of_the_op_budget(loops, factor):
    """A body of 2 operations and 3 Results, 7 ops a copy: (4096 // loops - 30) // 7 copies
    (at most 16), none below 2, and then the loop says why."""
    loop, _, _ = accumulating_loop(3, runtime=True)
    assert chosen_factor(loop, loops) == factor
    after = UnrollIterations(loops=loops)(loop)
    assert after.iterations_per_step == (factor or 1)
    assert after.not_unrolled == (None if factor else "op budget")


@pytest.mark.parametrize("loops", [1, 50, 100])
def test_a_body_size_given_chooses_as_the_one_counted(loops):
    """The pass counts the body once for both of its factors: a size given is the size used."""
    loop, _, _ = captures_constant_and_parameter()
    large = _with_tanhs(loop, 100)
    size = body_size(large.body)
    assert chosen_factor(large, loops, size) == chosen_factor(large, loops)
    assert chosen_factor(large, 1, size) == 2  # 256 // 106
    assert chosen_factor(large, 1, 200) is None  # the size given is the one used


@pytest.mark.parametrize(
    ("count", "runtime", "factor"), [(5, True, 4), (14, False, 14), (17, False, 4)]
)
def test_masked_copies_of_a_heavy_body_are_fewer(count, runtime, factor):
    """Two [16, 256] x [256, 256] MatMuls (2M multiply-adds): masked, at most
    sqrt(2**25 / 2**21) = 4 copies; a constant trip count with a divisor needs no mask and
    keeps the factor the body's size gives."""
    loop, _, _ = rnn_of_many_rows(count, runtime)
    assert masked_limit(loop.body) == 4
    assert chosen_factor(loop) == factor


def test_a_divisible_constant_trip_count_and_a_true_condition_need_no_mask():
    loop, _, _ = accumulating_loop(12, runtime=False)
    after = UnrollIterations(4)(loop)
    assert after.trip.constant == 3 and after.spec.trip_count == 3
    assert after.applied == ("unrolled x4",)
    types = _op_types(after)
    assert types.count("Add") == 4 and "Select" not in types
    assert after.spec.current_iteration is None
    assert len(after.spec.outputs()) == len(loop.spec.outputs())
    (unchunk,) = after.results[1].after
    assert unchunk == Unchunk(0, None, None)


def test_a_runtime_trip_count_masks_and_counts_the_copies_that_ran():
    loop, _, _ = unrolling_loop(5, runtime=True)
    after = UnrollIterations(4)(loop)
    assert after.trip.runtime and after.spec.current_iteration is not None
    assert _op_types(after).count("Select") >= 3
    count_port = len(loop.spec.outputs())
    assert len(after.spec.outputs()) == count_port + 1
    assert len(after.spec.inputs()) == len(loop.spec.inputs()) + 1  # the trip count, invariant
    for result in after.results[1:]:
        (unchunk,) = result.after
        assert unchunk.count_port == count_port


def test_a_masked_stack_is_cut_once_also_for_zero_runs():
    """Unchunk keeps no part after a run of no iteration, so the zero-run guard adds no second
    cut (a copy of the whole output) to the stacked results (CPU values: the test below)."""
    loop, _, _ = unrolling_loop(5, runtime=True)
    after = CPU.run(loop, "max")
    assert after.may_run_zero
    for result in after.results[1:]:
        assert [type(step) for step in result.after] == [Unchunk]


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(rank13_stack_static, id="a stacked part of rank 13"),
        pytest.param(lambda: accumulating_loop(1, runtime=False), id="constant trip count 1"),
        pytest.param(lambda: accumulating_loop(3, carried_shape=(-1,)), id="carried shape open"),
        pytest.param(lambda: batch_loop(grows=True), id="carried shape grows"),
    ],
)
def test_loops_it_leaves_alone(build):
    loop, _, _ = build()
    assert UnrollIterations()(loop) is loop


def test_dynamic_dims_are_unrolled_only_without_a_mask():
    """acc [N, 2]: masked copies might change its shape, unmasked ones run real iterations."""
    loop, _, _ = batch_loop()
    assert UnrollIterations(4)(loop) is loop
    loop, _, _ = batch_loop(runtime=False)
    after = UnrollIterations(3)(loop)
    assert after.applied == ("unrolled x3",) and "Select" not in _op_types(after)


# -- on the CPU -----------------------------------------------------------------------------------
CPU_BUILDERS = {
    "forward": lambda: unrolling_loop(14, runtime=True),
    "backward": lambda: unrolling_loop(14, runtime=True, backward=True),
}


@pytest.mark.parametrize("builder", list(CPU_BUILDERS))
def test_runtime_trip_counts_on_the_cpu_match_the_reference(builder: str, tmp_path):
    """One compiled model at optimize max, runs of 14, 0, 5, 1, 4, 3, 0 iterations in turn (a
    zero run after others: the stale-output pitfall; at most the sliced input's length), against
    the IR reference of the loop as it is."""
    build = CPU_BUILDERS[builder]
    loop, parameters, feeds = build()
    lowered = lower(loop, LoweringOptions(CPU, "max"))
    assert "unrolled x16" in lowered.applied
    compiled = compile_f32(_saved(lowered.values, parameters, tmp_path / "max.xml"))
    names = [parameter.get_friendly_name() for parameter in parameters]
    for count in (14, 0, 5, 1, 4, 3, 0):
        feeds["M"] = np.array(count, np.int64)
        plain, parameters, _ = build()
        expected = _reference_outputs(lower_to_loop5(plain), parameters, feeds, tmp_path / "a.xml")
        got = run(compiled, {name: feeds[name] for name in names})
        for index, (want, have) in enumerate(zip(expected, got)):
            assert_close(want, have, f"M={count} output {index}", 1e-5, 1e-5)


def test_a_loop_of_constants_that_stops_early_is_not_unrolled_and_converts_at_max():
    """A Loop computed from Constants alone (no trip count, `i < 2` stops it) is folded by
    OpenVINO; unrolled, its evaluation failed at max ("get_partial_shape().same_scheme")."""
    made = onnx.parser.parse_model(
        """<ir_version: 8, opset_import: ["" : 17]>
        g (float[1] x) => (float[1] last, float[?,1] stack, float[1] y) {
           s0 = Constant <value: tensor = float[1] k {1.5}> ()
           last, stack = Loop ("", "", s0) <body: graph = b (int64 i, bool c, float[1] s)
               => (bool go, float[1] doubled, float[1] part) {
              two = Constant <value: tensor = float k2 {2}> ()
              doubled = Mul (s, two)
              part = Identity (doubled)
              limit = Constant <value: tensor = int64 kl {2}> ()
              go = Less (i, limit)
           }>
           y = Add (x, x)
        }"""
    )
    compiled = compile_f32(ov_loops.convert(made, optimize="max"))
    feeds = {"x": np.array([0.25], np.float32)}
    expected = run_onnx(made, feeds)
    for want, have in zip(expected, compiled(feeds).values()):
        assert_close(want, have, "loop of constants at max", 1e-6, 1e-7)
