"""Static zero-length inputs: every Loop and Scan scenario converted with `input=` fixing each
input to the static shape of a run that has a zero-length dim (and of its first run with every
scan input's scan axis 0), at every optimisation level, compiles on the CPU and matches the
ONNX reference.

Found by this sweep (OpenVINO 2026.4.1): at max, an unrolled stack's Reshape to a
ShapeOf-derived shape of an empty tensor failed to compile ("ov::Shape size 4 is not equal to
0", scan_inside_scan) or gave a [2,2,2] of stale data for [2,0,2] (Scan-8, x[2,0,2]); at every
level a Scan-8 batch of 0 gave ys [0,0,2] for [0,T,2].
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
import pytest

import ov_loops
import tests.scan_scenarios
from ov_loops.checking.device import run
from ov_loops.reference.onnx_reference import run_onnx
from tests.harness import assert_close, compile_f32, run_cli, write
from tests.loop_scenarios import SCENARIOS as LOOP_SCENARIOS
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS

LEVELS = ("none", "default", "max")
ZERO_SCAN = "scan_axes_0"  # the first run with every scan input's scan axis 0


def _scenario(name: str) -> tuple[onnx.ModelProto, list]:
    registry = SCAN_SCENARIOS if name in SCAN_SCENARIOS else LOOP_SCENARIOS
    return registry[name]()


def _feeds(entry) -> dict[str, np.ndarray]:
    """A run's feeds (a run is feeds, or feeds with the outputs onnxruntime cannot compute)."""
    return entry[0] if isinstance(entry, tuple) else entry


def _has_zero_dim(feeds: dict[str, np.ndarray]) -> bool:
    return any(0 in np.shape(value) for value in feeds.values())


def _scan_axes(made: onnx.ModelProto) -> dict[str, int]:
    """Main-graph inputs that a Scan (in any graph) scans, with their scan axis (Scan-8: 1,
    after the batch axis)."""
    inputs = {value.name for value in made.graph.input}
    opset = next(entry.version for entry in made.opset_import if entry.domain in ("", "ai.onnx"))
    axes: dict[str, int] = {}
    graphs = [made.graph]
    while graphs:
        for each in graphs.pop().node:
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in each.attribute}
            graphs += [value for value in attributes.values() if isinstance(value, onnx.GraphProto)]
            if each.op_type != "Scan":
                continue
            count = attributes["num_scan_inputs"]
            given = attributes.get("scan_input_axes", [0] * count) if opset >= 9 else [1] * count
            axes.update(
                (name, axis) for name, axis in zip(each.input[-count:], given) if name in inputs
            )
    return axes


def _scan_axes_zero(made: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict | None:
    """`feeds` with every scan input's scan axis 0 (and Scan-8's lengths 0); None without one,
    or when the model declares a scan axis' length."""
    axes = _scan_axes(made)
    declared = {value.name: value.type.tensor_type.shape.dim for value in made.graph.input}
    if not axes or any(declared[n][a].HasField("dim_value") for n, a in axes.items()):
        return None
    zeroed = dict(feeds)
    for name, axis in axes.items():
        shape = list(np.shape(feeds[name]))
        shape[axis % len(shape)] = 0
        zeroed[name] = np.zeros(shape, feeds[name].dtype)
    if "lens" in zeroed:
        zeroed["lens"] = np.zeros_like(zeroed["lens"])
    return zeroed


def _case_feeds(name: str, which: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    made, runs = _scenario(name)
    if which == ZERO_SCAN:
        return made, _scan_axes_zero(made, _feeds(runs[0]))
    return made, _feeds(runs[int(which.removeprefix("run"))])


def _cases() -> Iterator[tuple[str, str]]:
    """(scenario, run) for each run with a zero-length dim and for each ZERO_SCAN variant of
    shapes no run has. The scenarios' shared random stream is restored: other tests draw the
    same values as without this module."""
    state = tests.scan_scenarios.RNG.bit_generator.state
    try:
        for name in [*LOOP_SCENARIOS, *SCAN_SCENARIOS]:
            made, runs = _scenario(name)
            shapes = []
            for index, entry in enumerate(runs):
                feeds = _feeds(entry)
                if _has_zero_dim(feeds):
                    shapes.append(_shapes_text(feeds))
                    yield name, f"run{index}"
            zeroed = _scan_axes_zero(made, _feeds(runs[0]))
            if zeroed is not None and _shapes_text(zeroed) not in shapes:
                yield name, ZERO_SCAN
    finally:
        tests.scan_scenarios.RNG.bit_generator.state = state


def _shapes_text(feeds: dict[str, np.ndarray]) -> str:
    """The `--input` text fixing every input to its feed's shape: `x[0,3],s0[3]`."""
    return ",".join(
        f"{name}[{','.join(str(d) for d in np.shape(value))}]" for name, value in feeds.items()
    )


def _declared_shapes(made: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[tuple | None]:
    """Each output's declared shape with its symbols bound by the inputs' dims (None where a
    dim stays unknown)."""
    bound = {}
    for value in made.graph.input:
        for dim, length in zip(value.type.tensor_type.shape.dim, np.shape(feeds[value.name])):
            if dim.dim_param:
                bound[dim.dim_param] = length
    shapes = []
    for value in made.graph.output:
        dims = value.type.tensor_type.shape.dim
        resolved = [
            d.dim_value if d.HasField("dim_value") else bound.get(d.dim_param) for d in dims
        ]
        shapes.append(None if None in resolved or not dims else tuple(resolved))
    return shapes


def _assert_matches(expected: np.ndarray, got: np.ndarray, declared: tuple | None, what: str):
    """As the reference, except an empty output of the declared shape: the reference stacks no
    iteration and makes unknown per-iteration dims 0 (scan_inside_scan's m[0,4]: prefixes
    [0,0]), where the converted model keeps the body's static dims ([0,4], as declared)."""
    expected = np.asarray(expected)
    if expected.size == 0 and np.size(got) == 0 and np.shape(got) == declared:
        return
    assert_close(expected, got, what, rtol=1e-5, atol=1e-5)


CASES = list(_cases())


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name, which", CASES, ids=[f"{n}-{w}" for n, w in CASES])
def test_static_zero_length_inputs_match_the_reference(name, which, level):
    made, feeds = _case_feeds(name, which)
    given = _shapes_text(feeds)
    conversion = ov_loops.translate(made, optimize=level, input=given)
    parameters = {p.get_friendly_name(): p for p in conversion.model.get_parameters()}
    for input_name, value in feeds.items():  # the shapes reached the model
        assert parameters[input_name].get_partial_shape().to_shape() == list(np.shape(value))
    got = run(compile_f32(conversion.model), feeds)
    expected = run_onnx(made, feeds)
    declared = _declared_shapes(made, feeds)
    for index, output in enumerate(made.graph.output):
        what = f"{name} {given} optimize={level}: {output.name}"
        _assert_matches(expected[index], got[index], declared[index], what)


def test_sweep_covers_the_cases_that_failed():
    cases = set(CASES)
    for failed in [
        ("scan_inside_scan", "run2"),  # m[2,0]: compile failure at max
        ("scan8_without_sequence_lens", "run3"),  # x[2,0,2]: stale [2,2,2] at max
        ("scan8_sequence_lens_variable_lengths", "run2"),  # batch 0: ys [0,0,2]
        ("scan8_sequence_lens_reverse", ZERO_SCAN),
    ]:
        assert failed in cases, failed


@pytest.mark.parametrize("level", LEVELS)
def test_an_empty_scan8_batch_of_dynamic_length_keeps_the_length(level):
    """Batch 0 static, T dynamic: the folded batch loop's ys is [0, T, 2] for each T."""
    made, _ = SCAN_SCENARIOS["scan8_sequence_lens_variable_lengths"]()
    conversion = ov_loops.translate(made, optimize=level, input="lens[0],s0[0,2],x[0,?,2]")
    compiled = compile_f32(conversion.model)
    for steps in (3, 0, 5):
        feeds = {"lens": np.zeros(0, np.int64), "s0": np.zeros((0, 2), np.float32)}
        feeds["x"] = np.zeros((0, steps, 2), np.float32)
        states, outputs = run(compiled, feeds)
        assert (states.shape, outputs.shape) == ((0, 2), (0, steps, 2))


def test_cli_converts_an_empty_scan8_batch_with_static_shapes(tmp_path):
    made, _ = SCAN_SCENARIOS["scan8_sequence_lens_variable_lengths"]()
    source, out = write(tmp_path, made), tmp_path / "out.xml"
    given = "lens[0],s0[0,2],x[0,3,2]"
    result = run_cli("convert", str(source), "--input", given, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "main/Scan_0: Scan-8 batch folded (runs zero times: trip count 0)" in result.stdout
    feeds = {
        "lens": np.zeros(0, np.int64),
        "s0": np.zeros((0, 2), np.float32),
        "x": np.zeros((0, 3, 2), np.float32),
    }
    states, outputs = run(compile_f32(out), feeds)
    assert (states.shape, outputs.shape) == ((0, 2), (0, 3, 2))
