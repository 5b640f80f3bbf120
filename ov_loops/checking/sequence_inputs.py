"""Sequence- and Optional-typed inputs of an ONNX model for `check`: a converted model takes each
as four tensors (`x`, `x.sizes`, `x.ranks`, `x.shapes`, and `x.present` for an Optional of a
sequence; see `ov_loops.frontends.onnx.sequence_io`), which check takes or makes here.

For each such input `x`, in order of preference:

    given its tensors (x, x.sizes, ...)           used as they are
    given its elements "x[0]", "x[1]", ...         packed (an .npz holds arrays by these names)
    given a list of arrays under "x" (Python API)  packed; None: an absent Optional
    nothing                                       generated: 3 elements (an Optional of a tensor:
        1) of the declared element type and shape, `--shape x=D0,D1` the elements' shape,
        dynamic dims 2, values as check generates tensors (`--val-range x=LO,HI` bounds them)
"""

from __future__ import annotations

import os
import re

import numpy as np
import onnx

from ov_loops.checking.inputs import InputSpec, generate_inputs
from ov_loops.checking.settings import Settings
from ov_loops.contract.kinds import SequenceKind
from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.prepare import PreparedModel
from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import element_type

GENERATED_ELEMENTS = 3


def with_sequence_inputs(
    original: str | os.PathLike,
    lowered: PreparedModel,
    given: dict,
    ranges: dict[str | None, tuple[float, float]],
    settings: Settings,
) -> tuple[dict, dict[str, tuple[int, ...]]]:
    """`given` with the tensors of every sequence or optional input of `lowered` (the model file
    `original` prepared for conversion; its sequence rewrite's record names them) filled in, and the
    settings' shapes without the element shapes it used (see the module's docstring); `ranges`
    (--val-range, by input name, None for all) bound the generated elements' values."""
    declared = {value.name: value for value in _inputs_of(original)}
    given, shapes = dict(given), dict(settings.shapes)
    for kind, parts in lowered.sequences.inputs:
        name = parts[0]
        if set(parts) <= set(given):
            continue
        found, elements = _elements_given(name, given)
        if not found and set(parts) & set(given):
            raise InputError(
                f"input '{name}' is a {kind.described()}: give a list of arrays, its "
                f"elements as {name}[0], {name}[1], ..., or all its tensors {', '.join(parts)}"
            )
        tensor = element_type(declared[name].type).tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if not found:
            bound = ranges.get(name, ranges.get(None))
            limits = {} if bound is None else {None: bound}
            elements = _generated(name, kind, tensor, shapes.pop(name, None), settings.seed, limits)
        if kind.most is not None and elements is not None and len(elements) > kind.most:
            raise InputError(f"input '{name}' is an optional: it holds one element at most")
        given.update(zip(parts, kind.pack_elements(elements, dtype)))
    return given, shapes


def _inputs_of(path: str | os.PathLike) -> list[onnx.ValueInfoProto]:
    """The declared inputs of the model file (its weights are not read)."""
    return list(onnx.load(os.fspath(path), load_external_data=False).graph.input)


def _elements_given(name: str, given: dict) -> tuple[bool, list | None]:
    """Whether elements are given for input `name` (taken out of `given`), and which: a list
    under the name (None: an absent Optional) or arrays named name[0], name[1], ..."""
    if name in given and (isinstance(given[name], (list, tuple)) or given[name] is None):
        value = given.pop(name)
        return True, None if value is None else [np.asarray(element) for element in value]
    pattern = re.compile(re.escape(name) + r"\[(\d+)\]")
    indexed = {int(m.group(1)): key for key in given if (m := pattern.fullmatch(key))}
    if not indexed:
        return False, None
    if sorted(indexed) != list(range(len(indexed))):
        raise InputError(f"input '{name}': elements {sorted(indexed)} given, not 0, 1, ...")
    return True, [np.asarray(given.pop(indexed[k])) for k in range(len(indexed))]


def _generated(
    name: str, kind: SequenceKind, tensor, dims, seed: int, ranges: dict
) -> list[np.ndarray]:
    if dims is None:
        if not tensor.HasField("shape"):
            raise InputError(
                f"input '{name}' is a {kind.described()} of elements of unknown rank: "
                f"give --shape {name}=D0,D1,... (the elements' shape) or its elements"
            )
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
    count = GENERATED_ELEMENTS if kind.most is None else kind.most
    specs = [InputSpec(f"{name}[{k}]", np.dtype(dtype), tuple(dims)) for k in range(count)]
    generated = generate_inputs(specs, {}, {}, seed, ranges)
    return [generated[spec.name] for spec in specs]
