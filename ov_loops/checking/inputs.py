"""The inputs of a check: read from an .npz, or generated from the model's declared inputs."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
import openvino as ov

from ov_loops.errors import InputError
from ov_loops.reference.limits import MAX_LIVE_ELEMENTS, MAX_VALUE_ELEMENTS

DEFAULT_DYNAMIC_DIM = 2


@dataclass(frozen=True)
class InputSpec:
    """A model input as declared: its name, numpy element type and dims (None: dynamic)."""

    name: str
    dtype: np.dtype
    dims: tuple[int | None, ...] | None  # None: unknown rank


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


def onnx_input_specs(model: onnx.ModelProto) -> list[InputSpec]:
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


def ir_input_specs(model: ov.Model) -> list[InputSpec]:
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


def load_inputs(path: str | os.PathLike | None) -> dict[str, np.ndarray]:
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
