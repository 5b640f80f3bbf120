"""The inputs of a check: read from an .npz, or generated from the model's declared inputs."""

from __future__ import annotations

import dataclasses
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
    """A model input as declared: its name, numpy element type and dims (None: dynamic);
    `fed_as`: the type the deployed IR takes it in, where `--input` gave another (its values
    are made in that type, then converted to `dtype`, as the IR converts them)."""

    name: str
    dtype: np.dtype
    dims: tuple[int | None, ...] | None  # None: unknown rank
    fed_as: np.dtype | None = None

    def fed(self) -> InputSpec:
        """The input as the deployed IR takes it."""
        return self if self.fed_as is None else dataclasses.replace(self, dtype=self.fed_as)


def parse_shapes(items: list[str] | None) -> dict[str, tuple[int, ...]]:
    """--shape NAME=D0,D1,... or OpenVINO's NAME[D0,D1,...] (several in one value, separated by
    commas: x[3,4],y[2]); an empty list of dims is a scalar; dims are non-negative."""
    shapes = {}
    for item in items or []:
        for name, dims in _shape_entries(item):
            if not name:
                raise InputError(f"--shape {item}: expected NAME=D0,D1,... or NAME[D0,D1,...]")
            try:
                shape = tuple(int(d) for d in dims.split(",") if d.strip())
            except ValueError:
                raise InputError(f"--shape {item}: dims must be integers") from None
            if any(d < 0 for d in shape):
                raise InputError(f"--shape {item}: dims must not be negative")
            if name in shapes:
                raise InputError(f"--shape {item}: input '{name}' given twice")
            shapes[name] = shape
    return shapes


def _shape_entries(item: str) -> list[tuple[str, str]]:
    """(name, dims text) pairs of one --shape value."""
    if "[" not in item:
        name, equals, dims = item.partition("=")
        return [(name if equals else "", dims)]
    entries = []
    rest = item
    while rest:
        name, bracket, tail = rest.partition("[")
        dims, closing, rest = tail.partition("]")
        if not bracket or not closing or "[" in dims or (rest and not rest.startswith(",")):
            raise InputError(f"--shape {item}: expected NAME[D0,D1,...][,NAME[...]]")
        entries.append((name, dims))
        rest = rest[1:]
    return entries


def parse_val_ranges(items: list[str] | None) -> dict[str | None, tuple[float, float]]:
    """--val-range NAME=LO,HI (that input) or LO,HI (every generated number input); the key
    None holds the global range. LO <= HI, both finite."""
    ranges: dict[str | None, tuple[float, float]] = {}
    for item in items or []:
        name, equals, bounds = item.rpartition("=")
        key = name if equals else None
        if equals and not name:
            raise InputError(f"--val-range {item}: expected NAME=LO,HI or LO,HI")
        try:
            low, high = (float(b) for b in bounds.split(","))
        except ValueError:
            raise InputError(f"--val-range {item}: expected NAME=LO,HI or LO,HI") from None
        if not (np.isfinite(low) and np.isfinite(high)) or low > high:
            raise InputError(f"--val-range {item}: bounds must be finite with LO <= HI")
        if key in ranges:
            raise InputError(f"--val-range {item}: {key or 'the global range'} given twice")
        ranges[key] = (low, high)
    return ranges


def generate_inputs(
    specs: list[InputSpec],
    given: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    seed: int,
    ranges: dict[str | None, tuple[float, float]] | None = None,
) -> dict[str, np.ndarray]:
    """Inputs not `given`: shapes from the model and `shapes` (dynamic dims 2), values that keep
    loops short: integers in [0, 4) (trip counts, indices), booleans true, floats N(0, 0.5),
    unless `ranges` bounds them (by name, or None: every number input; see `_generated_value`).
    Given values are converted to the input's type (within its kind, bf16 from raw 2-byte
    values) and must fit its declared shape; generated ones are bounded in elements."""
    ranges = ranges or {}
    _require_known([spec.name for spec in specs], given, shapes, ranges)
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
        fed = spec.fed()
        if spec.name in given:
            value = _given_value(fed, given[spec.name])
        else:
            bounds = ranges.get(spec.name, None if fed.dtype == np.bool_ else ranges.get(None))
            value = _generated_value(fed, plan[spec.name], rng, bounds)
        with np.errstate(all="ignore"):
            inputs[spec.name] = value.astype(spec.dtype, copy=False)
    return inputs


def _require_known(names: list[str], given: dict, shapes: dict, ranges: dict) -> None:
    """Every name in the .npz, --shape and --val-range is an input; none is given and also
    shaped or ranged for generation."""
    named = {name for name in ranges if name is not None}
    for source, keys in (("inputs", given), ("--shape", shapes), ("--val-range", named)):
        unknown = sorted(set(keys) - set(names))
        if unknown:
            raise InputError(
                f"{source} not in the model: {', '.join(unknown)}; the model's inputs: "
                f"{', '.join(names) or 'none'}"
            )
    for option, keys in (("--shape", shapes), ("--val-range", named)):
        both = sorted(set(given) & set(keys))
        if both:
            raise InputError(f"given both in --inputs and {option}: {', '.join(both)}")


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


def shapes_to_generate(shapes: dict[str, ov.PartialShape]) -> dict[str, tuple[int, ...]]:
    """The shapes to generate for inputs given these (`--input`: bounded dims `A..B`, which an
    ONNX model cannot declare): static dims as they are, a dynamic one 2 within its bounds;
    inputs of dynamic rank are left out."""
    return {
        name: tuple(_generated_dim(dim) for dim in shape)
        for name, shape in shapes.items()
        if shape.rank.is_static
    }


def _generated_dim(dim: ov.Dimension) -> int:
    low, high = dim.get_min_length(), dim.get_max_length()  # high -1: unbounded
    wanted = max(low, DEFAULT_DYNAMIC_DIM)
    return wanted if high < 0 else min(wanted, high)


def _generated_value(
    spec: InputSpec, dims: tuple[int, ...], rng, bounds: tuple[float, float] | None
) -> np.ndarray:
    """Without `bounds`: integers in [0, 4), booleans true, floats N(0, 0.5). With (LO, HI):
    integers uniform in [ceil(LO), floor(HI)] within the type's range (LO = HI fixes a trip
    count), floats uniform in [LO, HI), booleans LO = HI = 0 false, 1 true, 0,1 either (a
    global range leaves booleans true)."""
    kind = _element_kind(spec.dtype)
    if kind is None:
        raise InputError(
            f"input '{spec.name}' has element type {spec.dtype}: check generates only numbers "
            "and booleans"
        )
    if bounds is None:
        if kind == "bool":
            return np.ones(dims, np.bool_)
        if kind == "int":
            return np.asarray(rng.integers(0, 4, dims)).astype(spec.dtype)
        return np.asarray(rng.standard_normal(dims) * 0.5).astype(spec.dtype)
    low, high = bounds
    if kind == "float":
        return np.asarray(rng.uniform(low, high, dims)).astype(spec.dtype)
    if kind == "bool" and not {low, high} <= {0.0, 1.0}:
        raise InputError(f"--val-range: input '{spec.name}' is boolean: its bounds are 0 or 1")
    info = np.iinfo(spec.dtype) if kind == "int" else np.iinfo(np.uint8)
    first, last = max(int(np.ceil(low)), int(info.min)), min(int(np.floor(high)), int(info.max))
    if first > last:
        raise InputError(
            f"--val-range: no {spec.dtype} value of input '{spec.name}' lies in [{low:g}, {high:g}]"
        )
    return np.asarray(rng.integers(first, last, dims, endpoint=True)).astype(spec.dtype)


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


def fed_as(specs: list[InputSpec], types: dict[str, ov.Type]) -> list[InputSpec]:
    """`specs`, those `types` names (inputs `--input` retyped) taken in that type."""
    return [
        dataclasses.replace(spec, fed_as=_ir_dtype(types[spec.name]))
        if spec.name in types
        else spec
        for spec in specs
    ]


def ir_input_specs(model: ov.Model) -> list[InputSpec]:
    """The inputs of an IR, each named by `port_name`; two by one name are an InputError."""
    specs = []
    for value in model.inputs:
        shape = value.get_partial_shape()
        dims = (
            None
            if shape.rank.is_dynamic
            else tuple(d.get_length() if d.is_static else None for d in shape)
        )
        specs.append(InputSpec(port_name(value), _ir_dtype(value.get_element_type()), dims))
    names = [spec.name for spec in specs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"the IR has several inputs named {', '.join(twice)}")
    return specs


def port_name(port: ov.Output) -> str:
    """A model input's or output's tensor name; for one without (an IR whose port has no
    `names`), its Parameter's or Result's layer name, which the IR reference knows it by."""
    return port.get_any_name() if port.get_names() else port.get_node().get_friendly_name()


def _ir_dtype(element_type: ov.Type) -> np.dtype:
    """numpy's type for an element type; bf16 is ml_dtypes.bfloat16 (OpenVINO's view is f16)."""
    if element_type == ov.Type.bf16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(element_type.to_dtype())


def load_inputs(path: str | os.PathLike | None) -> dict[str, np.ndarray]:
    """The arrays of an .npz archive or a polygraphy .json file, by name (`read_arrays`)."""
    return {} if path is None else read_arrays(path, "inputs")


def read_arrays(path: str | os.PathLike, what: str) -> dict[str, np.ndarray]:
    """The arrays of a file by name: polygraphy's JSON (a name ending in .json:
    checking/polygraphy_json.py), else an .npz; anything else is a one-line InputError."""
    if str(path).lower().endswith(".json"):
        from ov_loops.checking.polygraphy_json import read_polygraphy

        return read_polygraphy(path, what)
    return read_npz(path, what)


def by_position(arrays: dict[str, np.ndarray], names: list[str], what: str) -> dict:
    """`arrays` by the model's names: np.savez(path, a, b) names its arrays arr_0, arr_1, ...;
    such arrays (all of them so named, none a name of the model's) are the model's `what`
    (inputs or outputs) in the graph's order."""
    keys = set(arrays)
    if not keys or keys & set(names) or keys != {f"arr_{i}" for i in range(len(keys))}:
        return arrays
    if len(keys) > len(names):
        raise InputError(
            f"{what}: {len(keys)} unnamed arrays (arr_0 ... arr_{len(keys) - 1}, by position) "
            f"for the model's {len(names)} {what}: {', '.join(names) or 'none'}"
        )
    return {names[int(key[len("arr_") :])]: value for key, value in arrays.items()}


def read_npz(path: str | os.PathLike, what: str) -> dict[str, np.ndarray]:
    """The arrays of the .npz archive at `path`, by name; anything else is a one-line
    InputError saying it cannot read `what`."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(6)
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if not magic:
        raise InputError(f"{path}: cannot read {what}: the file is empty")
    if magic == b"\x93NUMPY":
        raise InputError(
            f"{path}: cannot read {what}: a .npy file holds one unnamed array; give an .npz "
            "(numpy.savez(path, NAME=array, ...))"
        )
    if not magic.startswith(b"PK"):
        raise InputError(f"{path}: cannot read {what}: not an .npz archive")
    try:
        loaded = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises OSError, ValueError, BadZipFile, ... on bad files
        raise InputError(f"{path}: cannot read {what}: {exc}") from None
    try:
        with loaded:
            return {name: loaded[name] for name in loaded.files}
    except Exception as exc:  # a damaged member: zlib, zipfile and format errors
        raise InputError(f"{path}: cannot read {what}: {exc}") from None
