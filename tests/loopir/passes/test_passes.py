"""The LoopIR passes, pipeline and lowerings without a device.

Every pass must not change what a loop computes: each scenario of tests/loopir_scenarios.py is
lowered to Loop-5 as it is and after the pass, saved as IR, and both IRs are run by the numpy IR
reference on the same inputs. Structural tests say what each pass does to the LoopIR.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

from ov_loops.contract.spec import InvariantInput, LastValueOutput, SpecError
from ov_loops.errors import ConversionError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.back_edges import CopyBackEdges
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.passes.concat_copies import CopyCapturesIntoConcats
from ov_loops.loopir.passes.constant_loops import KeepConstantLoopsAtRunTime
from ov_loops.loopir.passes.constants import InlineConstantCaptures
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.loopir.passes.pipeline import (
    CPU,
    DEFERRED,
    GPU,
    NPU,
    PIPELINE,
    PLAIN,
    UNROLLING,
    LoweringOptions,
)
from ov_loops.loopir.passes.port_rank import FlattenHighRankStacks, Unflatten
from ov_loops.loopir.passes.zero_run_carry import BranchZeroRunsOfReshapedCarries
from ov_loops.loopir.passes.zero_run_guards import (
    EmptyWhenZeroRuns,
    GuardZeroIterationRuns,
    InitialWhenZeroRuns,
)
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK
from ov_loops.loopir.trip_count import initial_condition
from ov_loops.lower import loop5
from ov_loops.lower.fold import fold
from ov_loops.lower.loop5 import lower_to_loop5
from ov_loops.lower.select import lower
from ov_loops.reference.ir.executor import run_ir
from tests.loopir_scenarios import (
    SCENARIOS,
    accumulating_loop,
    captures_constant_and_parameter,
    condition_stops_early,
    constant_controls_if_drops_a_capture,
    rank13_stack_dynamic,
    rank13_stack_static,
    reversed_slice_and_reverse_step,
    runtime_counter_two_carried,
)


def _saved(values: list[ov.Output], parameters: list[ov.Node], path: Path) -> Path:
    """Save the outer graph `parameters` -> `values` (Results out0, out1, ...) as IR."""
    results = [ops.result(value) for value in values]
    for index, result in enumerate(results):
        result.set_friendly_name(f"out{index}")
    ov.save_model(ov.Model(results, parameters, path.stem), path, compress_to_fp16=False)
    return path


def _reference_outputs(values, parameters, feeds: dict, path: Path) -> list[np.ndarray]:
    """The outer graph's outputs, in order, from the numpy IR reference."""
    named = run_ir(_saved(values, parameters, path), feeds)
    return [named[f"out{index}"] for index in range(len(values))]


def _assert_same(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    """Same count, shapes and element types; floats to float32 precision, the rest exactly."""
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert got.shape == want.shape and got.dtype == want.dtype, f"output {index}"
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"output {index}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"output {index}")


@pytest.fixture
def any_port_rank(monkeypatch):
    """Lower loops with ports of rank above MAX_PORT_RANK: the lowering refuses them for the CPU
    plugin's sake, the IR reference runs any rank (the rank-13 scenarios before flattening)."""
    monkeypatch.setattr(loop5, "_refuse_high_rank_ports", lambda node, name: None)


def _assert_keeps_results(transform, scenario: str, tmp_path: Path) -> None:
    """`transform` (LoopIR -> LoopIR) leaves what `scenario` computes unchanged."""
    before, parameters, feeds = SCENARIOS[scenario]()
    expected = _reference_outputs(lower_to_loop5(before), parameters, feeds, tmp_path / "a.xml")
    after, parameters, feeds = SCENARIOS[scenario]()
    after = transform(after)
    actual = _reference_outputs(lower_to_loop5(after), parameters, feeds, tmp_path / "b.xml")
    _assert_same(actual, expected)


def _cases(transforms: dict) -> list:
    """(transform, scenario) for every transform and scenario, known failures marked."""
    return [
        pytest.param(
            transform,
            scenario,
            id=f"{name}-{scenario}",
        )
        for name, transform in transforms.items()
        for scenario in SCENARIOS
    ]


@pytest.mark.usefixtures("any_port_rank")
@pytest.mark.parametrize(
    "transform, scenario",
    _cases(
        {kind.name: kind() for kind in PIPELINE}
        | {f"{CPU.name}-{level}": partial(CPU.run, optimize=level) for level in OPTIMIZE_LEVELS}
    ),
)
def test_pass_keeps_what_the_loop_computes(transform, scenario: str, tmp_path):
    """Each pass of PIPELINE, and the CPU profile (all of them in order) at each optimisation
    level: passes that are right alone may be wrong together (issue 20: a stacked accumulator,
    unrolled, got its initial value twice after zero iterations)."""
    _assert_keeps_results(transform, scenario, tmp_path)


def _fingerprint(loop: LoopIR) -> tuple:
    ops_ = [(op.get_type_name(), op.get_output_size()) for op in loop.body.get_ordered_ops()]
    controls = [value.get_node().get_type_name() for value in (loop.trip.value, loop.start.value)]
    outer = [loop.outer[port].get_node().get_type_name() for port in sorted(loop.outer)]
    return loop.spec, loop.results, ops_, controls, outer, loop.zero_run_branch


REWRITING = list(PIPELINE)


@pytest.mark.parametrize("kind", REWRITING, ids=[kind.name for kind in REWRITING])
def test_every_rewriting_pass_changes_some_scenario(kind: type[LoopPass]):
    """The comparison above is not vacuous: each pass that rewrites loops rewrites at least one
    scenario."""
    changed = []
    for name, build in SCENARIOS.items():
        loop, _, _ = build()
        before = _fingerprint(loop)
        try:
            after = kind()(loop)
        except ConversionError:
            continue
        if _fingerprint(after) != before:
            changed.append(name)
    assert changed


class DoubleTheFirstResult(LoopPass):
    """A wrong pass that keeps every invariant: the body's Result 0 reads twice its value."""

    name = "double-the-first-result"

    def run(self, loop: LoopIR) -> LoopIR:
        results = list(loop.body.get_results())
        value = results[0].input_value(0)
        results[0] = ops.result(ops.add(value, value))
        return loop.with_body(results, list(loop.body.get_parameters()))


def test_the_reference_comparison_catches_a_pass_that_changes_results(tmp_path):
    with pytest.raises(AssertionError, match="output 0"):
        _assert_keeps_results(DoubleTheFirstResult(), "runtime_counter_two_carried", tmp_path)


def test_the_scenarios_compute_what_they_say(tmp_path):
    """Spot checks of the oracle's inputs against numpy (the reference runs the scenarios)."""
    loop, parameters, feeds = reversed_slice_and_reverse_step()
    last, stack = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "r.xml")
    acc, parts = feeds["acc0"], []
    for row in feeds["xs"][::-1]:
        acc = acc / 2 + row
        parts.append(acc)
    np.testing.assert_allclose(last, acc)
    np.testing.assert_allclose(stack, np.stack(parts[::-1]))
    loop, parameters, feeds = condition_stops_early()
    last, stack = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "c.xml")
    np.testing.assert_allclose(stack, [[3.0], [6.0], [12.0]])
    loop, parameters, feeds = accumulating_loop(0)
    last, stack = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "z.xml")
    np.testing.assert_array_equal(last, feeds["y0"])
    assert stack.shape == (0, 2)


# -- what each pass does --------------------------------------------------------------------------
def _op_types(loop: LoopIR) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


def _readers(node: ov.Node) -> list[str]:
    """The types of the nodes reading `node`, each once."""
    readers = {
        t.get_node().get_instance_id(): t.get_node() for t in node.output(0).get_target_inputs()
    }
    return sorted(reader.get_type_name() for reader in readers.values())


def test_inline_constant_captures_inlines_the_constant_and_keeps_the_parameter():
    loop, parameters, _ = captures_constant_and_parameter()
    assert loop.spec.invariant_inputs == (InvariantInput(3, 1), InvariantInput(4, 2))
    after = InlineConstantCaptures()(loop)
    assert after.spec.invariant_inputs == (InvariantInput(3, 1),)
    assert [entry.external_port for entry in after.spec.inputs()] == [2, 3]
    assert len(after.body.get_parameters()) == 2
    x = parameters[0].output(0)
    assert after.outer[3] == x and set(after.outer) == {2, 3}
    matmul = next(op for op in after.body.get_ordered_ops() if op.get_type_name() == "MatMul")
    weight = matmul.input_value(1).get_node()
    assert weight.get_type_name() == "Constant"
    np.testing.assert_array_equal(weight.get_data(), loop.outer[3].get_node().get_data())


def test_inline_constant_captures_leaves_a_loop_without_constant_captures():
    loop, _, _ = accumulating_loop(3)
    assert InlineConstantCaptures()(loop) is loop


def test_copy_captures_into_concats_copies_only_a_capture_that_reaches_a_concat():
    loop, _, _ = captures_constant_and_parameter()
    _, weight, x = loop.body.get_parameters()
    after = CopyCapturesIntoConcats()(loop)
    assert _readers(x) == ["Maximum"]  # the copy; the Concat and the Add read it
    copy = next(iter(x.output(0).get_target_inputs())).get_node()
    assert _readers(copy) == ["Add", "Concat"]
    assert _readers(weight) == ["MatMul"]
    assert after.spec == loop.spec


def test_copy_captures_into_concats_adds_nothing_without_a_concat():
    loop, _, _ = accumulating_loop(3)
    before = _op_types(loop)
    CopyCapturesIntoConcats()(loop)
    assert _op_types(loop) == before


def test_copy_back_edges_copies_a_value_computed_from_the_slice():
    loop, _, _ = reversed_slice_and_reverse_step()  # acc / 2 + x_t
    after = CopyBackEdges()(loop)
    copied = after.body_value(0)
    assert copied.get_node().get_type_name() == "Maximum"
    assert copied.get_node().input_value(0) == loop.body_value(0)
    assert after.spec == loop.spec


def test_copy_back_edges_leaves_values_that_cannot_share_a_slice():
    loop, _, _ = runtime_counter_two_carried()  # a + i, and b passed through; nothing sliced
    assert CopyBackEdges()(loop) is loop


def test_copy_back_edges_leaves_a_loop_whose_values_pass_through():
    loop, _, _ = runtime_counter_two_carried()
    results = list(loop.body.get_results())
    _, a, _ = loop.body.get_parameters()
    results[0] = ops.result(a)
    unchanged = loop.with_body(results, list(loop.body.get_parameters()))
    assert CopyBackEdges()(unchanged) is unchanged


def test_keep_constant_loops_at_run_time_reads_a_run_time_zero_in_the_condition():
    loop, _, _ = constant_controls_if_drops_a_capture()
    inputs = len(loop.spec.inputs())
    after = KeepConstantLoopsAtRunTime()(loop)
    added = after.spec.invariant_inputs[-1]
    assert len(after.spec.inputs()) == inputs + 1 and added.external_port == 2 + inputs
    masked = after.outer[added.external_port].get_node().input_value(0).get_node()
    assert masked.get_type_name() == "BitwiseAnd"  # which OpenVINO's core cannot evaluate
    assert masked.input_value(0).get_node().get_type_name() == "RandomUniform"
    condition = after.body_value(after.spec.execution_condition).get_node()
    assert condition.get_type_name() == "LogicalAnd"
    parameter = after.body.get_parameters()[added.body_parameter]
    is_zero = condition.input_value(1).get_node()
    assert is_zero.input_value(0).get_node().get_instance_id() == parameter.get_instance_id()
    assert not after.may_run_zero  # no zero-iteration guard is due


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param(condition_stops_early, id="runtime initial condition"),
        pytest.param(lambda: accumulating_loop(3), id="runtime trip count"),
        pytest.param(lambda: accumulating_loop(3, runtime=False), id="static stack"),
    ],
)
def test_keep_constant_loops_at_run_time_leaves_other_loops(builder):
    loop, _, _ = builder()
    assert KeepConstantLoopsAtRunTime()(loop) is loop


def test_branch_zero_runs_marks_a_loop_whose_carried_value_may_enter_reshaped():
    """y declared [?], returned [2], entering [?] (it may be [3]): its zero runs go to an If."""
    loop, _, _ = accumulating_loop(3, carried_shape=(-1,), entering=(-1,))
    assert BranchZeroRunsOfReshapedCarries()(loop).zero_run_branch


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param(
            lambda: accumulating_loop(3, runtime=False, carried_shape=(-1,)),
            id="constant trip count",
        ),
        pytest.param(lambda: accumulating_loop(3), id="shape kept"),
        pytest.param(
            lambda: accumulating_loop(3, carried_shape=(-1,)), id="entering [2], returned [2]"
        ),
    ],
)
def test_branch_zero_runs_leaves_loops_the_cpu_runs_zero_times(builder):
    loop, _, _ = builder()
    assert BranchZeroRunsOfReshapedCarries()(loop) is loop


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param(lambda: accumulating_loop(3), id="runtime trip count"),
        pytest.param(condition_stops_early, id="runtime initial condition"),
    ],
)
def test_guard_zero_iteration_runs_guards_a_loop_that_may_run_zero_times(builder):
    loop, _, _ = builder()
    assert loop.may_run_zero
    after = GuardZeroIterationRuns()(loop)
    last, stacked = after.results
    assert [type(step) for step in last.after] == [InitialWhenZeroRuns]
    assert last.after[0].initial == loop.results[0].initial
    assert [type(step) for step in stacked.after] == [EmptyWhenZeroRuns]
    assert stacked.after[0].axis == 0


def test_guard_zero_iteration_runs_leaves_a_loop_that_runs():
    loop, _, _ = captures_constant_and_parameter()
    assert not loop.may_run_zero
    assert GuardZeroIterationRuns()(loop) is loop


def test_a_rank_13_stack_is_refused_by_the_lowering_until_flattened():
    loop, _, _ = rank13_stack_static()
    with pytest.raises(ConversionError, match="output 1 has rank 13"):
        lower_to_loop5(loop)
    loop, _, _ = rank13_stack_static()
    lower_to_loop5(FlattenHighRankStacks()(loop))


def test_flatten_high_rank_stacks_flattens_a_static_part():
    loop, _, _ = rank13_stack_static()
    after = FlattenHighRankStacks()(loop)
    (stacked,) = after.spec.concatenated_outputs
    assert stacked.axis == 0 and stacked.body_result == 1
    part = after.body_value(1).get_partial_shape()
    assert part.rank.get_length() <= MAX_PORT_RANK and list(part.to_shape()) == [1, 2]
    (unflatten,) = after.results[1].after
    assert isinstance(unflatten, Unflatten) and unflatten.shape_port is None
    assert unflatten.part.axis == 1
    assert len(after.spec.outputs()) == 2 and after.spec.execution_condition == 2


def test_flatten_high_rank_stacks_returns_a_dynamic_part_shape_before_the_condition():
    loop, _, _ = rank13_stack_dynamic()
    after = FlattenHighRankStacks()(loop)
    assert len(after.spec.outputs()) == 3
    assert after.spec.last_value_outputs[-1] == LastValueOutput(2, 2)
    assert after.spec.execution_condition == 3
    assert after.body_value(2).get_node().get_type_name() == "ShapeOf"
    assert after.body_value(3).get_element_type() == ov.Type.boolean
    (unflatten,) = after.results[1].after
    assert unflatten.shape_port == 2


def test_flatten_high_rank_stacks_leaves_low_rank_stacks():
    loop, _, _ = runtime_counter_two_carried()
    assert FlattenHighRankStacks()(loop) is loop


# -- the pipeline ---------------------------------------------------------------------------------
def test_profiles_switch_the_passes_on():
    """The CPU runs every workaround; the targets that unroll also prove trip counts."""
    assert CPU.passes == {kind.name for kind in PIPELINE if kind.level is None} - UNROLLING
    assert GPU.passes == NPU.passes == CPU.passes | UNROLLING
    assert PLAIN.passes == frozenset()
    assert len({kind.name for kind in PIPELINE}) == len(PIPELINE)


@pytest.mark.parametrize("deferred", DEFERRED, ids=lambda deferred: deferred.name)
def test_a_deferred_pass_is_its_class_once_imported(deferred):
    """The pipeline names the passes a default conversion does not run by module and class
    (base.DeferredPass): its name and level are the class's, and calling it makes the pass."""
    kind = deferred.kind()
    assert issubclass(kind, LoopPass) and deferred in PIPELINE
    assert (deferred.name, deferred.level) == (kind.name, kind.level)
    assert type(deferred()) is kind


@pytest.mark.parametrize("profile", [CPU, PLAIN], ids=lambda profile: profile.name)
def test_a_profile_runs_its_passes_in_pipeline_order(profile, monkeypatch):
    ran = []
    call = LoopPass.__call__

    def recorded(self, loop, **options):
        ran.append(self.name)
        return call(self, loop, **options)

    monkeypatch.setattr(LoopPass, "__call__", recorded)
    loop, _, _ = accumulating_loop(3)
    profile.run(loop)
    assert ran == [kind.name for kind in PIPELINE if kind.name in profile.passes]


def test_plain_profile_returns_the_loop_itself():
    loop, _, _ = runtime_counter_two_carried()
    assert PLAIN.run(loop) is loop


class DropTheFirstOutput(LoopPass):
    """A broken pass: its spec's output ports no longer start at 0."""

    name = "drop-the-first-output"

    def run(self, loop: LoopIR) -> LoopIR:
        spec = loop.spec
        kept = tuple(entry for entry in spec.last_value_outputs if entry.external_port != 0)
        return loop.replace(spec=dataclasses.replace(spec, last_value_outputs=kept))


def test_ensures_catches_a_pass_that_breaks_the_spec():
    loop, _, _ = runtime_counter_two_carried()
    broken = DropTheFirstOutput().run(loop)  # run alone does not check
    with pytest.raises(SpecError, match="output ports \\[1, 2\\] are not 0..1"):
        DropTheFirstOutput()(loop)
    with pytest.raises(SpecError):
        DropTheFirstOutput().ensures(loop, broken)


def test_requires_refuses_a_broken_loop():
    loop, _, _ = runtime_counter_two_carried()
    broken = DropTheFirstOutput().run(loop)
    with pytest.raises(SpecError, match="output ports"):
        CopyBackEdges()(broken)


# -- lowerings ------------------------------------------------------------------------------------
def _never_runs(start_false: bool) -> tuple[LoopIR, list, dict]:
    """The accumulating loop with a constant trip count 0, or 3 and a false start."""
    if not start_false:
        return accumulating_loop(0, runtime=False)
    loop, parameters, feeds = accumulating_loop(3, runtime=False)
    return loop.replace(start=initial_condition(ops.constant(False).output(0))), parameters, feeds


@pytest.mark.parametrize("start_false", [False, True], ids=["trip count 0", "start false"])
def test_fold_gives_initial_values_and_empty_stacks(start_false: bool, tmp_path):
    loop, parameters, feeds = _never_runs(start_false)
    assert loop.runs_zero_times
    last, stack = _reference_outputs(fold(loop), parameters, feeds, tmp_path / "fold.xml")
    np.testing.assert_array_equal(last, feeds["y0"])
    assert stack.shape == (0, 2) and stack.dtype == np.float32


def test_fold_agrees_with_the_loop5_of_a_zero_trip_count(tmp_path):
    """(With a constant false start, OpenVINO infers shape [0] for every Loop output, so only
    the trip count 0 Loop-5 has the shapes to compare with.)"""
    loop, parameters, feeds = _never_runs(start_false=False)
    folded = _reference_outputs(fold(loop), parameters, feeds, tmp_path / "fold.xml")
    loop, parameters, feeds = _never_runs(start_false=False)
    by_loop = _reference_outputs(lower_to_loop5(loop), parameters, feeds, tmp_path / "loop.xml")
    _assert_same(folded, by_loop)


@pytest.mark.parametrize("start_false", [False, True], ids=["trip count 0", "start false"])
def test_select_folds_a_loop_that_never_runs(start_false: bool):
    loop, parameters, _ = _never_runs(start_false)
    lowered = lower(loop, LoweringOptions(CPU, "none"))
    reason = "initial condition false" if start_false else "trip count 0"
    assert lowered.folded == f"runs zero times: {reason}" and lowered.spec is None
    model = ov.Model([ops.result(value) for value in lowered.values], parameters)
    assert "Loop" not in [op.get_type_name() for op in model.get_ordered_ops()]


def test_select_lowers_a_loop_that_may_run_to_loop5_after_the_profile():
    loop, parameters, _ = accumulating_loop(0)
    lowered = lower(loop, LoweringOptions(CPU, "none"))
    assert lowered.folded is None
    model = ov.Model([ops.result(value) for value in lowered.values], parameters)
    outer_ops = [op.get_type_name() for op in model.get_ordered_ops()]
    assert outer_ops.count("Loop") == 1
    assert "VariadicSplit" in outer_ops  # the zero-iteration guard of the CPU profile ran
    assert lowered.spec == loop.spec  # no pass changes this loop's ports
    lowered.spec.check(2, 3, require_condition=True)


class AddsAParameterInPlace(LoopPass):
    """A broken pass: it adds a body Parameter in place and returns its loop unchanged."""

    name = "adds-a-parameter-in-place"

    def run(self, loop: LoopIR) -> LoopIR:
        loop.body.add_parameters([ops.parameter([], ov.Type.f32, name="stray")])
        return loop


def test_a_pipeline_checks_its_loop_at_the_end():
    """A pass returning its loop unchanged is not checked again after it (it promises what it
    required); a body changed in place under it is still caught when the pipeline ends."""
    loop, _, _ = runtime_counter_two_carried()
    profile = PLAIN.replace(passes=frozenset({AddsAParameterInPlace.name}))
    with pytest.raises(SpecError, match="body Parameters not fed"):
        profile.run(loop, passes=(AddsAParameterInPlace,))


def test_replace_refuses_what_is_not_a_field():
    loop, _, _ = runtime_counter_two_carried()
    with pytest.raises(TypeError, match="no fields"):
        loop.replace(bodies=())
    assert loop.replace(applied=("x",)).applied == ("x",)
