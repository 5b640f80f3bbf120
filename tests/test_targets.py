"""Device targets and full unrolling: every Loop and Scan scenario, its inputs pinned so that
trip counts become constants, converted with `unroll=` and for each target, run on the CPU (f32)
against onnxruntime (or the scenario's expected outputs)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import ov_loops
from ov_loops.checking.device import available_devices, core, run
from ov_loops.errors import UnsupportedError
from tests.harness import (
    assert_close,
    assert_one_line_error,
    compile_f32,
    onnxruntime_oracle,
    reference_oracle,
    run_cli,
    write,
)
from tests.loop_scenarios import SCENARIOS as LOOPS
from tests.scan_scenarios import SCENARIOS as SCANS

ALL = {**{f"loop:{n}": b for n, b in LOOPS.items()}, **{f"scan:{n}": b for n, b in SCANS.items()}}


def pinned(model: onnx.ModelProto, feeds: dict) -> tuple[onnx.ModelProto, dict]:
    """`model` with the inputs a main-graph Loop reads as trip count or condition made
    initializers of their value in `feeds`, every other input of the static shape it is fed;
    and the feeds that remain."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    controls = {name for n in model.graph.node if n.op_type == "Loop" for name in n.input[:2]}
    remaining = {}
    for graph_input in list(model.graph.input):
        value = np.asarray(feeds[graph_input.name])
        if graph_input.name in controls:
            model.graph.input.remove(graph_input)
            model.graph.initializer.append(numpy_helper.from_array(value, graph_input.name))
            continue
        remaining[graph_input.name] = value
        dims = graph_input.type.tensor_type.shape.dim
        del dims[:]
        for size in value.shape:
            dims.add().dim_value = size
    return model, remaining


def _runs(name: str):
    """The first runs of scenario `name`, but those feeding a zero-size input: pinned to a
    static zero-length shape they fail without unrolling too (see the report of this branch)."""
    model, runs = ALL[name]()
    for entry in runs[:4]:
        feeds, expected = entry if isinstance(entry, tuple) else (entry, None)
        if any(np.asarray(value).size == 0 for value in feeds.values()):
            continue
        if expected is None:
            expected = onnxruntime_oracle(model)(feeds)
        yield model, feeds, expected


def _check(model, feeds, expected, what, **options) -> ov_loops.Conversion:
    fixed, remaining = pinned(model, feeds)
    conversion = ov_loops.translate(fixed, **options)
    got = run(compile_f32(conversion.model), remaining)
    for index, output in enumerate(model.graph.output):
        assert_close(expected[index], got[index], f"{what}: {output.name}", 1e-5, 1e-6)
    return conversion


def _unrolled(conversion: ov_loops.Conversion) -> int:
    return sum(1 for loop in conversion.loops if loop.becomes == "straight-line graph")


# Unrolled outer loop, inner Loops of constants with an If in their bodies: compile_model fails
# "Evaluation failed on opset5::Loop" (OpenVINO evaluates the inner Loop), with or without
# keep-constant-loops-at-run-time.
# An inner Loop whose trip count, pinned to 0, becomes a Constant once the outer loop is
# unrolled: OpenVINO's constant folding evaluates it and refuses ("Zero count of iteration not
# supported"; a one-line ConversionError; issue 20).
UNROLLED_FAILURES = {
    "loop:loop_of_constants_nested_in_a_runtime_loop": "Evaluation failed on opset5::Loop",
    "loop:loop_in_a_body_with_an_unread_grown_carried_value": "Zero count of iteration",
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=[pytest.mark.xfail(strict=True, reason=UNROLLED_FAILURES[name])]
            if name in UNROLLED_FAILURES
            else [],
        )
        for name in sorted(ALL)
    ],
)
def test_unrolled_scenario_matches_its_reference(name):
    for model, feeds, expected in _runs(name):
        _check(model, feeds, expected, name, unroll=64)


def test_unrolling_applies_to_most_pinned_scenarios():
    """The test above is not vacuous: most scenarios, pinned, have loops that were unrolled."""
    unrolled = 0
    for name in sorted(ALL):
        model, feeds, _ = next(_runs(name))
        unrolled += _unrolled(ov_loops.translate(pinned(model, feeds)[0], unroll=64)) > 0
    assert unrolled >= len(ALL) // 3, f"{unrolled} of {len(ALL)} scenarios unrolled"


@pytest.mark.parametrize("target", ["GPU", "NPU"])
@pytest.mark.parametrize("name", ["scan:scan_inside_scan", "loop:loop_no_scan_outputs"])
def test_target_lowerings_run_on_the_cpu_and_match(name, target):
    """The GPU and NPU lowerings (unrolled below 16 iterations / wherever possible) on the CPU."""
    for model, feeds, expected in _runs(name):
        conversion = _check(model, feeds, expected, f"{name} for {target}", target=target)
        ways = [
            loop.folded is not None or loop.becomes == "straight-line graph"
            for loop in conversion.loops
        ]
        assert ways and all(ways), [loop.summary() for loop in conversion.loops]


def test_gpu_keeps_loops_of_16_iterations_and_more_as_loop5():
    model, feeds, _ = next(_runs("loop:loop_no_scan_outputs"))  # M = 10
    few = ov_loops.translate(pinned(model, feeds)[0], target="GPU")
    many = ov_loops.translate(
        pinned(model, {**feeds, "M": np.array(16, np.int64)})[0], target="GPU"
    )
    assert [loop.becomes for loop in few.loops] == ["straight-line graph"]
    assert [loop.becomes for loop in many.loops] == ["Loop-5"]


@pytest.mark.parametrize(
    "name, pin, reason",
    [
        (
            "loop:loop_no_scan_outputs",
            False,
            "NPU needs static loops: its trip count depends on the run-time value of input 'M', "
            "not on shapes: make 'M' an initializer of the ONNX model",
        ),
        ("loop:loop_no_trip_count_while", False, "it has no trip count: M is absent or at least"),
        ("loop:loop_inside_if_branches", False, "depends on run-time values of the enclosing"),
        (
            "scan:scan_forward_running_sum",
            False,
            "computed from a dynamic shape: give static input",
        ),
        ("loop:loop_carried_shape_grows", True, "dynamic shape"),
        ("loop:loop_trip_count_and_condition_of_shape_1", True, "may stop early"),
    ],
)
def test_npu_refuses_loops_that_cannot_be_static_naming_them(name, pin, reason):
    """The first three have static input shapes: "give static input shapes" (what every
    trip count not a constant used to get) would send the user the wrong way."""
    model, feeds, _ = next(_runs(name))
    if pin:
        model = pinned(model, feeds)[0]
    with pytest.raises(UnsupportedError, match="Loop|Scan") as caught:
        ov_loops.translate(model, target="NPU")
    message = str(caught.value)
    assert "\n" not in message and reason in message and "main/" in message, message


def test_unknown_target_and_negative_unroll_are_input_errors():
    model, _, _ = next(_runs("loop:loop_no_scan_outputs"))
    with pytest.raises(ov_loops.InputError, match="unknown target 'TPU'"):
        ov_loops.translate(model, target="TPU")
    with pytest.raises(ov_loops.InputError, match="non-negative"):
        ov_loops.translate(model, unroll=-1)


def test_cli_target_and_unroll_write_an_unrolled_ir(tmp_path):
    model, feeds, _ = next(_runs("loop:loop_stops_early_reading_iteration_number"))
    source = write(tmp_path, pinned(model, feeds)[0])
    out = tmp_path / "out.xml"
    result = run_cli("convert", str(source), "-o", str(out), "--unroll", "8")
    assert result.returncode == 0, result.stderr
    assert "-> straight-line graph" in result.stdout and "unrolled x6" in result.stdout
    assert 'type="Loop"' not in out.read_text()
    gpu = run_cli("convert", str(source), "-o", str(out), "--target", "GPU")
    assert gpu.returncode == 0 and "unrolled x6" in gpu.stdout, gpu.stderr


def test_cli_npu_refusal_is_one_line_exit_1_and_writes_nothing(tmp_path):
    model, _, _ = next(_runs("loop:loop_no_scan_outputs"))
    out = tmp_path / "out.xml"
    result = run_cli("convert", str(write(tmp_path, model)), "-o", str(out), "--target", "NPU")
    assert_one_line_error(result, 1, "main/Loop_0", "NPU needs static loops", "trip count")
    assert list(tmp_path.iterdir()) == [tmp_path / "model.onnx"]


def test_cli_unroll_says_why_a_loop_is_not_unrolled_in_text_and_json(tmp_path):
    """--unroll 4 on a loop whose trip count is an input's value, and on one of 6 iterations:
    the summary line (and the JSON's not_unrolled) says why each stays a Loop-5."""
    model, _, _ = next(_runs("loop:loop_no_scan_outputs"))
    source, out = write(tmp_path, model), tmp_path / "out.xml"
    text = run_cli("convert", str(source), "-o", str(out), "--unroll", "4")
    assert text.returncode == 0, text.stderr
    why = "its trip count depends on the run-time value of input 'M', not on shapes"
    assert f"; not unrolled: {why}" in text.stdout.splitlines()[0], text.stdout
    pinned_six, _ = pinned(model, {"M": np.int64(6), "p0": np.int32(3)})
    six = run_cli(
        "convert",
        str(write(tmp_path, pinned_six, "six.onnx")),
        "-o",
        str(out),
        "--unroll",
        "4",
        "--format",
        "json",
    )
    assert six.returncode == 0, six.stderr
    [loop] = json.loads(six.stdout)["loops"]
    assert loop["not_unrolled"] == "6 iterations, more than 4"
    assert loop["summary"].endswith("; not unrolled: 6 iterations, more than 4")


def test_not_unrolled_is_said_only_where_the_target_unrolls():
    model, _, _ = next(_runs("loop:loop_no_scan_outputs"))
    assert [loop.not_unrolled for loop in ov_loops.translate(model).loops] == [None]
    assert "not unrolled" not in ov_loops.translate(model).loops[0].summary()
    [gpu] = ov_loops.translate(model, target="GPU").loops
    assert gpu.not_unrolled.startswith("its trip count depends on the run-time value of input")


def test_cli_bad_target_is_a_usage_error(tmp_path):
    model, _, _ = next(_runs("loop:loop_no_scan_outputs"))
    result = run_cli("convert", str(write(tmp_path, model)), "-o", "x.xml", "--target", "TPU")
    assert_one_line_error(result, 2, "--target", "TPU")


@pytest.mark.parametrize("device", ["GPU", "NPU"])
def test_cli_check_on_an_absent_device_is_one_line(device):
    if any(name.split(".")[0] == device for name in available_devices()):
        pytest.skip(f"{device} is present here: the absent-device error cannot be shown")
    result = run_cli("check", "ir_samples/rnn_loop.onnx", "--device", device)
    assert_one_line_error(result, 2, f"device {device} is not present")


@pytest.mark.parametrize("device", ["GPU", "NPU"])
def test_target_ir_compiles_and_matches_on_its_device(device, tmp_path):
    if not any(name.split(".")[0] == device for name in available_devices()):
        pytest.skip(f"no {device} here (OpenVINO lists {', '.join(available_devices())})")
    model, feeds, expected = next(_runs("scan:scan_inside_scan"))
    fixed, remaining = pinned(model, feeds)
    compiled = core().compile_model(
        ov_loops.convert(fixed, target=device), device, {"INFERENCE_PRECISION_HINT": "f32"}
    )
    got = run(compiled, remaining)
    assert_close(expected[0], got[0], device, 1e-3, 1e-3)


@pytest.mark.parametrize("code, target, code_exit", [("NP002", "NPU", 1), ("GP001", "GPU", 0)])
def test_cli_validate_target_runs_the_device_rules(code, target, code_exit):
    sample = f"ir_samples/invalid/{code}.xml"
    plain = run_cli("validate", sample)
    for_device = run_cli("validate", sample, "--target", target)
    assert plain.returncode == 0 and f" {code} layer" not in plain.stdout
    assert for_device.returncode == code_exit and f" {code} layer" in for_device.stdout


def test_npu_converted_ir_passes_validate_target_npu(tmp_path):
    model, feeds, _ = next(_runs("scan:scan_inside_scan"))
    ov_loops.save(ov_loops.convert(pinned(model, feeds)[0], target="NPU"), tmp_path / "m.xml")
    cpu = ov_loops.translate(pinned(model, feeds)[0])
    ov_loops.save(cpu.model, tmp_path / "cpu.xml")
    assert ov_loops.validate(tmp_path / "m.xml", "NPU").exit_code == 0
    assert ov_loops.validate(tmp_path / "cpu.xml", "NPU").exit_code == 0  # static Loop-5 too


def test_unrolled_vs_loop5_benchmark_runs_and_prints_ratios(capsys):
    """benchmarks/unrolled_vs_loop5.py, tiny: both forms agree (it asserts), a ratio per T."""
    from benchmarks import unrolled_vs_loop5

    unrolled_vs_loop5.main(["--hidden", "4", "--steps", "1", "3", "--rounds", "3"])
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["T=1", "T=3"]
    assert all(float(row.split()[-1]) > 0 for row in rows)


def test_early_exit_loop_with_scan_output_stays_a_loop_and_says_why():
    model, feeds, expected = next(_runs("loop:loop_trip_count_and_condition_of_shape_1"))
    conversion = _check(model, feeds, expected, "early exit", unroll=64)
    [loop] = conversion.loops
    assert loop.becomes == "Loop-5" and "not unrolled: it may stop early" in loop.summary()
    assert loop.not_unrolled.startswith("it may stop early") and not any(
        "unrolled" in done for done in loop.optimizations
    )


@pytest.mark.parametrize(
    "name", ["loop:loop_stops_early_reading_iteration_number", "scan:scan_inside_scan"]
)
def test_unrolled_matches_the_onnx_reference_too(name):
    """Against ov-loops' own numpy reference of ONNX (ov_loops.reference), not onnxruntime."""
    for model, feeds, _ in _runs(name):
        expected = reference_oracle(model)(feeds)
        conversion = _check(model, feeds, expected, name, unroll=64)
        assert all(loop.spec is None for loop in conversion.loops)
