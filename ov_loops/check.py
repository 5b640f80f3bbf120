"""`ov_loops.check`: run a model on a device and compare it with a numpy reference.

ONNX models are converted, validated, compiled and compared with the ONNX reference (and with
onnxruntime, when it is installed); IR is compiled and compared with the IR reference. When
outputs mismatch, an instrumented copy of the IR whose top-level loops also emit their carried
values per iteration locates the first iteration and carried value that diverged.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops

from ov_loops.errors import InputError, OvLoopsError
from ov_loops.runtime import OutputDiff, compile_model, diff, run

DEFAULT_DYNAMIC_DIM = 2
DEFAULT_MAX_ITERATIONS = 10_000


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: np.dtype
    dims: tuple[int | None, ...] | None  # None: unknown rank


@dataclass(frozen=True)
class Divergence:
    """Where a loop first computed something else than the reference."""

    loop_path: str
    iteration: int
    carried_index: int
    carried_name: str
    detail: str

    def text(self) -> str:
        return (
            f"first divergence: {self.loop_path}, iteration {self.iteration}, loop-carried "
            f"value {self.carried_index} '{self.carried_name}' ({self.detail})"
        )


@dataclass
class CheckReport:
    """Per output: shape, dtype, max abs / rel error, mismatching elements; and where it went
    wrong."""

    model: Path
    device: str
    precision: str
    rows: list[OutputDiff]
    reference: str
    second_opinion: list[OutputDiff] | None = None
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def lines(self) -> list[str]:
        lines = [
            f"{self.model} on {self.device}, inference precision {self.precision}, "
            f"against the {self.reference}"
        ]
        lines.append(
            f"  {'output':24} {'shape':16} {'dtype':9} {'max abs err':>12} {'max rel err':>12} "
            f"{'mismatches':>10}"
        )
        for row in self.rows:
            lines.append(
                f"  {row.name[:24]:24} {str(list(row.shape))[:16]:16} {row.dtype:9} "
                f"{row.max_abs_error:12.3g} {row.max_rel_error:12.3g} {row.mismatches:10d}"
                + (f"  {row.note}" if row.note else "")
            )
        if self.second_opinion is not None:
            worst = max((r.max_abs_error for r in self.second_opinion), default=0.0)
            agree = all(r.ok for r in self.second_opinion)
            lines.append(
                f"  onnxruntime {'agrees' if agree else 'DISAGREES'} with the device "
                f"(max abs err {worst:.3g})"
            )
        lines.extend(f"  note: {note}" for note in self.notes)
        if self.divergence is not None:
            lines.append(f"  {self.divergence.text()}")
        lines.append("MATCH" if self.ok else "MISMATCH")
        return lines


# -- inputs --------------------------------------------------------------------------------------
def parse_shapes(items: list[str] | None) -> dict[str, tuple[int, ...]]:
    """--shape NAME=D0,D1,... (an empty list of dims is a scalar)."""
    shapes = {}
    for item in items or []:
        name, _, dims = item.partition("=")
        try:
            shapes[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise InputError(f"--shape {item}: dims must be integers") from None
        if not name or not _:
            raise InputError(f"--shape {item}: expected NAME=D0,D1,...")
    return shapes


def generate_inputs(
    specs: list[InputSpec],
    given: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    seed: int,
) -> dict[str, np.ndarray]:
    """Inputs not `given`: shapes from the model and `shapes` (dynamic dims 2), values that keep
    loops short: integers in [0, 4) (trip counts, indices), booleans true, floats N(0, 0.5)."""
    rng = np.random.default_rng(seed)
    unknown = set(given) - {spec.name for spec in specs}
    if unknown:
        raise InputError(f"inputs not in the model: {', '.join(sorted(unknown))}")
    inputs = {}
    for spec in specs:
        if spec.name in given:
            inputs[spec.name] = np.asarray(given[spec.name]).astype(spec.dtype, copy=False)
            continue
        if spec.name in shapes:
            dims = shapes[spec.name]
        elif spec.dims is None:
            raise InputError(f"input '{spec.name}' has an unknown rank: give --shape")
        else:
            dims = tuple(DEFAULT_DYNAMIC_DIM if d is None else d for d in spec.dims)
        if spec.dtype == np.bool_:
            value = np.ones(dims, np.bool_)
        elif np.issubdtype(spec.dtype, np.integer):
            value = rng.integers(0, 4, dims)
        else:
            value = rng.standard_normal(dims) * 0.5
        inputs[spec.name] = np.asarray(value, dtype=spec.dtype)  # 0-d arrays, not scalars
    return inputs


def _onnx_input_specs(model: onnx.ModelProto) -> list[InputSpec]:
    initializers = {init.name for init in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        if not tensor.elem_type:
            raise InputError(f"input '{value.name}' is not a typed tensor")
        dims = None
        if tensor.HasField("shape"):
            dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
        specs.append(
            InputSpec(value.name, onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type), dims)
        )
    return specs


def _ir_input_specs(model: ov.Model) -> list[InputSpec]:
    specs = []
    for value in model.inputs:
        shape = value.get_partial_shape()
        dims = (
            None
            if shape.rank.is_dynamic
            else tuple(d.get_length() if d.is_static else None for d in shape)
        )
        specs.append(
            InputSpec(value.get_any_name(), np.dtype(value.get_element_type().to_dtype()), dims)
        )
    return specs


def _load_inputs(path: str | os.PathLike | None) -> dict[str, np.ndarray]:
    if path is None:
        return {}
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read inputs: {exc}") from None


# -- the check -----------------------------------------------------------------------------------
def check(
    model: str | os.PathLike,
    device: str = "CPU",
    inputs: str | os.PathLike | dict[str, np.ndarray] | None = None,
    shapes: dict[str, tuple[int, ...]] | None = None,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    precision: str = "f32",
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> CheckReport:
    """Run `model` (.onnx or .xml) on `device` and compare it with the numpy reference."""
    path = Path(model)
    given = inputs if isinstance(inputs, dict) else _load_inputs(inputs)
    if path.suffix == ".xml":
        return _check_ir(
            path, device, given, shapes or {}, seed, rtol, atol, precision, max_iterations
        )
    return _check_onnx(
        path, device, given, shapes or {}, seed, rtol, atol, precision, max_iterations
    )


def _check_onnx(path, device, given, shapes, seed, rtol, atol, precision, max_iterations):
    import ov_loops
    from ov_loops.onnx_io.load import load_model
    from ov_loops.reference.onnx_reference import Trace, run_onnx

    source = load_model(path)
    conversion = ov_loops.translate(source)
    feeds = generate_inputs(_onnx_input_specs(source), given, shapes, seed)
    trace = Trace()
    try:
        expected = run_onnx(source, feeds, max_iterations=max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="ov-loops-check-") as scratch:
        xml = Path(scratch) / "model.xml"
        ov_loops.save(conversion.model, xml)
        validation = ov_loops.validate(xml)
        compiled = compile_model(str(xml), device, precision)
        got = _run_on(compiled, feeds)
    names = [value.name for value in source.graph.output]
    report = CheckReport(
        path,
        device,
        precision,
        [diff(name, want, have, rtol, atol) for name, want, have in zip(names, expected, got)],
        "ONNX reference (numpy)",
    )
    if validation.errors:
        report.notes.append(f"the converted IR has {len(validation.errors)} validation error(s)")
    report.second_opinion = _onnxruntime_opinion(source, feeds, got, names, rtol, atol)
    if not report.ok:
        report.divergence = _locate(
            conversion.model, source, trace, feeds, device, precision, rtol, atol
        )
    return report


def _run_on(compiled: ov.CompiledModel, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run on the device; its failures (wrong input shapes, a Loop running past a sliced input)
    are one-line InputErrors."""
    try:
        return run(compiled, feeds)
    except RuntimeError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise InputError(f"inference failed: {lines[-1] if lines else exc}") from None


def _onnxruntime_opinion(source, feeds, got, names, rtol, atol):
    try:
        import onnxruntime
    except ImportError:
        return None
    try:
        session = onnxruntime.InferenceSession(
            source.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        theirs = session.run(None, feeds)
    except Exception:  # onnxruntime rejects some valid models (e.g. untyped bodies)
        return None
    return [diff(name, want, have, rtol, atol) for name, want, have in zip(names, theirs, got)]


def _check_ir(path, device, given, shapes, seed, rtol, atol, precision, max_iterations):
    import ov_loops
    from ov_loops.reference.ir_reference import run_ir

    validation = ov_loops.validate(path)
    model = _core_read(path)
    compiled = compile_model(str(path), device, precision)
    feeds = generate_inputs(_ir_input_specs(model), given, shapes, seed)
    try:
        expected = run_ir(path, feeds, max_iterations=max_iterations)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    got = _run_on(compiled, feeds)
    rows = []
    for output, have in zip(model.outputs, got):
        want = next((expected[n] for n in output.get_names() if n in expected), None)
        if want is None:
            raise InputError(f"IR reference: no value for output '{output.get_any_name()}'")
        rows.append(diff(output.get_any_name(), want, have, rtol, atol))
    report = CheckReport(path, device, precision, rows, "IR reference (numpy)")
    if validation.errors:
        report.notes.append(
            f"the IR has {len(validation.errors)} validation error(s): run ov-loops validate"
        )
    return report


def _core_read(path: Path) -> ov.Model:
    from ov_loops.runtime import core

    try:
        return core().read_model(str(path))
    except RuntimeError as exc:
        raise InputError(f"{path}: OpenVINO cannot read it: {str(exc).splitlines()[-1]}") from None


# -- locating the first divergence ---------------------------------------------------------------
def _locate(model, source, trace, feeds, device, precision, rtol, atol) -> Divergence | None:
    """Instrument each top-level loop to emit its carried values per iteration and compare them,
    iteration by iteration, with the reference's trace."""
    from ov_loops.onnx_io.scopes import node_label

    loops = {  # first output -> (path, carried value names), for top-level loops
        node.output[0]: (f"main/{node_label(node, index)}", _carried_names(node))
        for index, node in enumerate(source.graph.node)
        if node.op_type in ("Loop", "Scan")
    }
    paths = {key: path for key, (path, _) in loops.items()}
    instrumented, emitted = _instrument(model.clone(), set(paths.values()))
    if not emitted:
        return None
    compiled = compile_model(instrumented, device, precision)
    outputs = _run_on(compiled, feeds)
    per_loop: dict[str, list[np.ndarray]] = {}
    for (loop_path, _), value in zip(emitted, outputs[len(model.outputs) :]):
        per_loop.setdefault(loop_path, []).append(value)
    for key, loop_path in paths.items():
        runs = trace.runs.get(key)
        if not runs or loop_path not in per_loop:
            continue
        reference_iterations, device_values = runs[0], per_loop[loop_path]
        count = min(len(reference_iterations), *(len(v) for v in device_values))
        for iteration in range(count):
            for index, (want, series) in enumerate(
                zip(reference_iterations[iteration], device_values)
            ):
                row = diff("", want, series[iteration], rtol, atol)
                if not row.ok:
                    name = loops[key][1][index]
                    return Divergence(
                        loop_path,
                        iteration,
                        index,
                        name,
                        f"max abs err {row.max_abs_error:.3g}"
                        + (f", {row.note}" if row.note else ""),
                    )
        if any(len(v) != len(reference_iterations) for v in device_values):
            return Divergence(
                loop_path,
                count,
                -1,
                "",
                "the iteration counts differ: "
                f"reference {len(reference_iterations)}, device "
                f"{min(len(v) for v in device_values)}",
            )
    return None


def _carried_names(node: onnx.NodeProto) -> list[str]:
    if node.op_type == "Loop":
        return list(node.input[2:])
    scans = next(a.i for a in node.attribute if a.name == "num_scan_inputs")
    return list(node.input[: len(node.input) - scans])


def _instrument(model: ov.Model, paths: set[str]) -> tuple[ov.Model, list[tuple[str, int]]]:
    """Add, for each Loop whose rt_info path is in `paths`, one output per merged input: its
    value after each iteration. Returns the model and (path, merged index) per added output."""
    emitted = []
    for op in model.get_ordered_ops():
        if op.get_type_name() != "Loop" or "ov_loops_path" not in op.get_rt_info():
            continue
        path = op.get_rt_info()["ov_loops_path"].astype(str)
        if path not in paths:
            continue
        body = op.get_function()
        merged = [
            d for d in op.get_input_descriptions() if type(d).__name__ == "MergedInputDescription"
        ]
        for index, description in enumerate(merged):
            value = body.get_results()[description.body_value_index].input_value(0)
            part = ops.result(ops.unsqueeze(value, ops.constant(np.array([0], np.int64))))
            body.add_results([part])
            output = op.get_concatenated_slices(part.output(0), 0, 1, 1, -1, 0)
            op.validate_and_infer_types()
            model.add_outputs([output])
            emitted.append((path, index))
    return model, emitted
