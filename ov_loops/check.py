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

from ov_loops.errors import ConversionError, InputError, OvLoopsError, message_line
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS, MAX_LIVE_ELEMENTS, MAX_VALUE_ELEMENTS
from ov_loops.runtime import OutputDiff, diff, run_isolated, start_device_worker

DEFAULT_DYNAMIC_DIM = 2


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
    """--shape NAME=D0,D1,... (an empty list of dims is a scalar; dims are non-negative)."""
    shapes = {}
    for item in items or []:
        name, equals, dims = item.partition("=")
        if not name or not equals:
            raise InputError(f"--shape {item}: expected NAME=D0,D1,...")
        try:
            shapes[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise InputError(f"--shape {item}: dims must be integers") from None
        if any(d < 0 for d in shapes[name]):
            raise InputError(f"--shape {item}: dims must not be negative")
    return shapes


def generate_inputs(
    specs: list[InputSpec],
    given: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    seed: int,
) -> dict[str, np.ndarray]:
    """Inputs not `given`: shapes from the model and `shapes` (dynamic dims 2), values that keep
    loops short: integers in [0, 4) (trip counts, indices), booleans true, floats N(0, 0.5).
    Given values are converted to the input's type (within its kind, bf16 from raw 2-byte
    values) and must fit its declared shape; generated ones are bounded in elements."""
    names = [spec.name for spec in specs]
    for source, named in (("inputs", given), ("--shape", shapes)):
        unknown = sorted(set(named) - set(names))
        if unknown:
            raise InputError(
                f"{source} not in the model: {', '.join(unknown)}; the model's inputs: "
                f"{', '.join(names) or 'none'}"
            )
    both = sorted(set(given) & set(shapes))
    if both:
        raise InputError(f"given both in --inputs and --shape: {', '.join(both)}")
    plan = {spec.name: _generated_shape(spec, shapes) for spec in specs if spec.name not in given}
    total = sum(_elements(dims) for dims in plan.values())
    if total > MAX_LIVE_ELEMENTS:
        raise InputError(
            f"the generated inputs would hold {total} elements, over the limit of "
            f"{MAX_LIVE_ELEMENTS}; give smaller --shape values"
        )
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in specs:
        if spec.name in given:
            inputs[spec.name] = _given_value(spec, given[spec.name])
        else:
            inputs[spec.name] = _generated_value(spec, plan[spec.name], rng)
    return inputs


def _elements(dims: tuple[int, ...]) -> int:
    return int(np.prod(dims, dtype=object)) if dims else 1


def _generated_shape(spec: InputSpec, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    if spec.name in shapes:
        dims = shapes[spec.name]
        _require_fit(spec, dims, "--shape")
    elif spec.dims is None:
        raise InputError(f"input '{spec.name}' has an unknown rank: give --shape")
    else:
        dims = tuple(DEFAULT_DYNAMIC_DIM if d is None else d for d in spec.dims)
    if _elements(dims) > MAX_VALUE_ELEMENTS:
        raise InputError(
            f"input '{spec.name}': shape {list(dims)} has {_elements(dims)} elements, over the "
            f"limit of {MAX_VALUE_ELEMENTS} per value; give a smaller --shape"
        )
    return dims


def _generated_value(spec: InputSpec, dims: tuple[int, ...], rng) -> np.ndarray:
    kind = _element_kind(spec.dtype)
    if kind == "bool":
        value = np.ones(dims, np.bool_)
    elif kind == "int":
        value = rng.integers(0, 4, dims)
    elif kind == "float":
        value = rng.standard_normal(dims) * 0.5
    else:
        raise InputError(
            f"input '{spec.name}' has element type {spec.dtype}: check generates only numbers "
            "and booleans"
        )
    return np.asarray(value).astype(spec.dtype)  # 0-d arrays, not scalars


def _element_kind(dtype: np.dtype) -> str | None:
    """ "bool", "int" or "float" (ml_dtypes' bfloat16 and float8 too), else None."""
    if dtype == np.bool_:
        return "bool"
    if np.issubdtype(dtype, np.integer):
        return "int"
    if np.issubdtype(dtype, np.floating) or dtype.name in _ML_FLOATS:
        return "float"
    return None


_ML_FLOATS = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float8_e8m0fnu")
_CONVERTIBLE = {("bool", "bool"), ("int", "int"), ("float", "float")} | {
    ("bool", "int"),
    ("bool", "float"),
    ("int", "float"),
}


def _given_value(spec: InputSpec, value) -> np.ndarray:
    """`value` as the input's type: kinds convert upwards (bool -> int -> float), integers
    within the target's range; numpy stores ml_dtypes arrays (bfloat16) in .npz as raw void
    values of their size, which are read back as the input's type."""
    array = np.asarray(value)
    raw = array.dtype.kind == "V" and array.dtype.names is None and array.dtype.subdtype is None
    if raw and spec.dtype.name in _ML_FLOATS and array.dtype.itemsize == spec.dtype.itemsize:
        array = array.view(spec.dtype)
    have, want = _element_kind(array.dtype), _element_kind(spec.dtype)
    if (have, want) not in _CONVERTIBLE:
        raise InputError(
            f"input '{spec.name}': {array.dtype} values cannot feed an input of type {spec.dtype}"
        )
    if have == want == "int" and array.size and not np.can_cast(array.dtype, spec.dtype):
        info = np.iinfo(spec.dtype)
        if array.min() < info.min or array.max() > info.max:
            raise InputError(
                f"input '{spec.name}': values in [{array.min()}, {array.max()}] do not fit "
                f"{spec.dtype}"
            )
    _require_fit(spec, array.shape, "inputs")
    with np.errstate(all="ignore"):
        return array.astype(spec.dtype, copy=False)


def _require_fit(spec: InputSpec, dims: tuple[int, ...], source: str) -> None:
    if spec.dims is None:
        return
    if len(dims) != len(spec.dims) or any(
        want is not None and want != have for want, have in zip(spec.dims, dims)
    ):
        declared = ["?" if d is None else d for d in spec.dims]
        raise InputError(
            f"{source}: input '{spec.name}' has shape {list(dims)}, the model declares {declared}"
        )


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
        specs.append(InputSpec(value.get_any_name(), _ir_dtype(value.get_element_type()), dims))
    return specs


def _ir_dtype(element_type: ov.Type) -> np.dtype:
    """numpy's type for an element type; bf16 is ml_dtypes.bfloat16 (OpenVINO's view is f16)."""
    if element_type == ov.Type.bf16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(element_type.to_dtype())


def _load_inputs(path: str | os.PathLike | None) -> dict[str, np.ndarray]:
    """The arrays of an .npz archive, by name; anything else is a one-line InputError."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            magic = handle.read(6)
    except OSError as exc:
        raise InputError(f"{path}: cannot read inputs: {exc.strerror or exc}") from None
    if not magic:
        raise InputError(f"{path}: cannot read inputs: the file is empty")
    if magic == b"\x93NUMPY":
        raise InputError(
            f"{path}: cannot read inputs: a .npy file holds one unnamed array; give an .npz "
            "(numpy.savez(path, NAME=array, ...))"
        )
    if not magic.startswith(b"PK"):
        raise InputError(f"{path}: cannot read inputs: not an .npz archive")
    try:
        loaded = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises OSError, ValueError, BadZipFile, ... on bad files
        raise InputError(f"{path}: cannot read inputs: {exc}") from None
    try:
        with loaded:
            return {name: loaded[name] for name in loaded.files}
    except Exception as exc:  # a damaged member: zlib, zipfile and format errors
        raise InputError(f"{path}: cannot read inputs: {exc}") from None


# -- the check -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Settings:
    device: str
    shapes: dict[str, tuple[int, ...]]
    seed: int
    rtol: float
    atol: float
    precision: str
    max_iterations: int


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
    """Run `model` (.onnx or .xml) on `device` and compare it with the numpy reference.

    The references stop after `max_iterations` loop iterations in total. Compilation and
    inference run in a child process: a native crash there is an InputError naming the signal.
    """
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, not {seed}")
    if max_iterations < 1:
        raise InputError(f"--max-iterations must be positive, not {max_iterations}")
    start_device_worker()  # it imports OpenVINO while we convert and run the reference
    path = Path(model)
    given = inputs if isinstance(inputs, dict) else _load_inputs(inputs)
    settings = _Settings(device, shapes or {}, seed, rtol, atol, precision, max_iterations)
    if path.suffix == ".xml":
        return _check_ir(path, given, settings)
    return _check_onnx(path, given, settings)


def _translate(source: onnx.ModelProto):
    """`ov_loops.translate`, whose unexpected failures are one-line ConversionErrors."""
    import ov_loops

    try:
        return ov_loops.translate(source)
    except OvLoopsError:
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ConversionError(f"cannot convert: {type(exc).__name__}: {detail}") from None


def _check_onnx(path: Path, given: dict, settings: _Settings) -> CheckReport:
    import ov_loops
    from ov_loops.frontends.onnx.load import load_model
    from ov_loops.reference.onnx_reference import Trace, run_onnx

    source = load_model(path)
    conversion = _translate(source)
    feeds = generate_inputs(_onnx_input_specs(source), given, settings.shapes, settings.seed)
    trace = Trace()
    try:
        expected = run_onnx(source, feeds, max_iterations=settings.max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="ov-loops-check-") as scratch:
        xml = Path(scratch) / "model.xml"
        ov_loops.save(conversion.model, xml)
        validation = ov_loops.validate(xml)
        got = run_isolated(xml, settings.device, settings.precision, feeds)
        names = [value.name for value in source.graph.output]
        report = CheckReport(
            path,
            settings.device,
            settings.precision,
            [
                diff(name, want, have, settings.rtol, settings.atol)
                for name, want, have in zip(names, expected, got)
            ],
            "ONNX reference (numpy)",
        )
        if validation.errors:
            report.notes.append(
                f"the converted IR has {len(validation.errors)} validation error(s)"
            )
        report.second_opinion = _onnxruntime_opinion(source, feeds, got, names, settings)
        if not report.ok:
            report.divergence = _locate(conversion.model, source, trace, feeds, settings, scratch)
    return report


def _onnxruntime_opinion(source, feeds, got, names, settings: _Settings):
    try:
        import onnxruntime
    except ImportError:
        return None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings would be stray lines on our stderr
    try:
        session = onnxruntime.InferenceSession(
            source.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        theirs = session.run(None, feeds)
    except Exception:  # onnxruntime rejects some valid models (e.g. untyped bodies)
        return None
    return [
        diff(name, want, have, settings.rtol, settings.atol)
        for name, want, have in zip(names, theirs, got)
    ]


def _check_ir(path: Path, given: dict, settings: _Settings) -> CheckReport:
    import ov_loops
    from ov_loops.reference.ir_reference import run_ir

    validation = ov_loops.validate(path)
    model = _core_read(path)
    feeds = generate_inputs(_ir_input_specs(model), given, settings.shapes, settings.seed)
    try:
        expected = run_ir(path, feeds, max_iterations=settings.max_iterations)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    got = run_isolated(path, settings.device, settings.precision, feeds)
    rows = []
    for output, have in zip(model.outputs, got):
        want = next((expected[n] for n in output.get_names() if n in expected), None)
        if want is None:
            raise InputError(f"IR reference: no value for output '{output.get_any_name()}'")
        rows.append(diff(output.get_any_name(), want, have, settings.rtol, settings.atol))
    report = CheckReport(path, settings.device, settings.precision, rows, "IR reference (numpy)")
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
        detail = message_line(exc, last=True)
        raise InputError(f"{path}: OpenVINO cannot read it: {detail}") from None


# -- locating the first divergence ---------------------------------------------------------------
def _locate(model, source, trace, feeds, settings: _Settings, scratch: str) -> Divergence | None:
    """Instrument each top-level loop to emit its carried values per iteration and compare them,
    iteration by iteration, with the reference's trace (as far as the trace was recorded)."""
    import ov_loops
    from ov_loops.frontends.onnx.scopes import node_label

    loops = {  # first output -> (path, carried value names), for top-level loops
        node.output[0]: (f"main/{node_label(node, index)}", _carried_names(node))
        for index, node in enumerate(source.graph.node)
        if node.op_type in ("Loop", "Scan")
    }
    paths = {key: path for key, (path, _) in loops.items()}
    instrumented, emitted = _instrument(model.clone(), set(paths.values()))
    if not emitted:
        return None
    xml = Path(scratch) / "instrumented.xml"
    ov_loops.save(instrumented, xml)
    outputs = run_isolated(xml, settings.device, settings.precision, feeds)
    per_loop: dict[str, list[np.ndarray]] = {}
    for (loop_path, _), value in zip(emitted, outputs[len(model.outputs) :]):
        per_loop.setdefault(loop_path, []).append(value)
    for key, loop_path in paths.items():
        runs = trace.runs.get(key)
        if not runs or loop_path not in per_loop:
            continue
        found = _first_difference(
            loop_path, runs[0], per_loop[loop_path], loops[key][1], settings, trace.truncated
        )
        if found is not None:
            return found
    return None


def _first_difference(loop_path, reference_iterations, device_values, names, settings, partial):
    """The first iteration and carried value where the device's series leaves the reference's;
    or differing iteration counts (unless the reference's trace is `partial`)."""
    count = min(len(reference_iterations), *(len(v) for v in device_values))
    for iteration in range(count):
        for index, (want, series) in enumerate(zip(reference_iterations[iteration], device_values)):
            row = diff("", want, series[iteration], settings.rtol, settings.atol)
            if not row.ok:
                return Divergence(
                    loop_path,
                    iteration,
                    index,
                    names[index],
                    f"max abs err {row.max_abs_error:.3g}" + (f", {row.note}" if row.note else ""),
                )
    if not partial and any(len(v) != len(reference_iterations) for v in device_values):
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
