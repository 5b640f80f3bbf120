"""Loop-carried values as the divergence locator compares them: one logical value (a tensor, or
a sequence or optional carried as its four or five tensors) per entry, and how one iteration's
value on the device differs from the reference's (a sequence element by element).

A trace records an iteration's carried tensors in some order: the ONNX reference in the ONNX
node's order, the IR reference and the instrumented model in the Loop's external port order.
A `Carried` says which of them make one logical value, on each side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov

from ov_loops.contract.kinds import (
    CARRIED_MARK,
    CarriedKind,
    Part,
    kinds_by_suffix,
    kinds_of_parts,
    read_mark,
)
from ov_loops.conversion.report import ConvertedLoop
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout


@dataclass(frozen=True)
class Carried:
    """A logical carried value: its index among the loop's carried values on the device, its
    name and kind, and the positions of its tensors in a reference and a device iteration."""

    index: int
    name: str
    kind: CarriedKind
    reference: tuple[int, ...]
    device: tuple[int, ...]


def onnx_layout(layout: OnnxLoopLayout, loop: ConvertedLoop, merged: int) -> list[Carried]:
    """The carried values of the ONNX loop `layout` describes (read from its node of the
    prepared model, whose order of carried tensors the reference records) that the Loop-5 it
    became still carries, matched by outer name (`loop.carried`, in merged input order); []
    when the device's `merged` inputs do not add up to them (nothing to compare honestly)."""
    values = list(layout.carried_values())
    carried, port = [], 0
    for index, name in enumerate(loop.carried):
        found = next((value for value in values if value.name == name), None)
        if found is None:
            return []
        values.remove(found)
        span = tuple(range(port, port + found.kind.ports))
        carried.append(Carried(index, name, found.kind, found.merged, span))
        port += found.kind.ports
    return carried if port == merged else []


def ir_layout(loop: ov.Node) -> list[Carried]:
    """The merged values of an IR loop, in external port order, each value's parts one: as the
    body's rt_info marks them (contract/kinds.py: CARRIED_MARK); in an IR written before the
    marks, by the names ov-loops gives the parts (`x`, `x.sizes`, ...). Both sides record them
    in the same order."""
    merged = sorted(
        (d for d in loop.get_input_descriptions() if type(d).__name__ == "MergedInputDescription"),
        key=lambda d: d.input_index,
    )
    body = loop.get_function()
    parameters = body.get_parameters()
    names = [parameters[d.body_parameter_index].get_friendly_name() for d in merged]
    parts = [_marked_part(body, name) for name in names]
    layout, position = [], 0
    for kind in kinds_of_parts(parts) if any(parts) else kinds_by_suffix(names):
        span = tuple(range(position, position + kind.ports))
        layout.append(Carried(len(layout), names[position], kind, span, span))
        position += kind.ports
    return layout


def _marked_part(body: ov.Model, name: str) -> Part | None:
    """The part the body's rt_info marks its Parameter `name` as (None: not marked)."""
    key = [CARRIED_MARK, name]
    return read_mark(body.get_rt_info(key).astype(str)) if body.has_rt_info(key) else None


def difference(
    value: Carried, reference: list[np.ndarray], device: list[np.ndarray], rtol: float, atol: float
) -> tuple[int | None, str] | None:
    """None when `value` agrees in one iteration; else (the first differing element of a
    sequence, or None) and what differs."""
    want = [reference[p] for p in value.reference]
    have = [device[p] for p in value.device]
    kind = value.kind
    if not kind.elementwise:  # a tensor; a kind of several tensors compares each
        found = _parts_difference(want, have, rtol, atol)
        return None if found is None else (None, found)
    if kind.present(want) != kind.present(have):
        state = {True: "present", False: "absent"}
        return (
            None,
            f"it is {state[kind.present(have)]}, the reference's {state[kind.present(want)]}",
        )
    try:
        want_elements, have_elements = kind.elements(want), kind.elements(have)
    except ValueError:  # sizes and shapes that do not describe the buffer: compare the parts
        found = _parts_difference(want, have, rtol, atol)
        return None if found is None else (None, f"its parts do not unpack: {found}")
    for element, (expected, got) in enumerate(zip(want_elements, have_elements)):
        found = tensor_difference(expected, got, rtol, atol)
        if found is not None:
            shown = "" if got.shape != expected.shape else f"(shape {list(got.shape)}) "
            return element, shown + found
    if len(want_elements) != len(have_elements):
        return min(len(want_elements), len(have_elements)), (
            f"the device has {len(have_elements)} elements, the reference {len(want_elements)}"
        )
    return None


def _parts_difference(
    want: list[np.ndarray], have: list[np.ndarray], rtol: float, atol: float
) -> str | None:
    """How the first differing part differs (`part k: ...` when there are several); None when
    every part agrees."""
    for index, (expected, got) in enumerate(zip(want, have)):
        found = tensor_difference(expected, got, rtol, atol)
        if found is not None:
            return found if len(want) == 1 else f"part {index}: {found}"
    return None


def tensor_difference(want: np.ndarray, have: np.ndarray, rtol: float, atol: float) -> str | None:
    """None when `have` is within |have - want| <= atol + rtol * |want| of `want` everywhere
    (NaN equal to NaN; a 64-bit integer also when it is the reference's value wrapped to 32
    bits, as OpenVINO's CPU plugin computes them, e.g. a trip count INT64_MAX as -1); else the
    first element that is not, and the largest error."""
    want, have = np.asarray(want), np.asarray(have)
    if want.shape != have.shape:
        return f"has shape {list(have.shape)}, the reference {list(want.shape)}"
    if want.size == 0:
        return None
    close = _close(want, have, rtol, atol)
    if close.all():
        return None
    at = tuple(int(i) for i in np.argwhere(~close)[0])
    with np.errstate(all="ignore"):
        error = np.where(close, 0.0, np.abs(have.astype(np.float64) - want.astype(np.float64)))
    worst = "nan" if np.isnan(error).all() else f"{np.nanmax(error):.3g}"
    place = f" at {list(at)}" if at else ""
    return (
        f"diverges{place}: {_shown(have[at])} vs reference {_shown(want[at])} "
        f"(max abs err {worst}, {int((~close).sum())} of {close.size} elements)"
    )


def _close(want: np.ndarray, have: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Element-wise agreement of two arrays of one shape (see `tensor_difference`)."""
    if want.dtype == np.bool_ or have.dtype == np.bool_:
        return want == have
    if want.dtype in (np.int64, np.uint64) and have.dtype == want.dtype:
        narrow = np.int32 if want.dtype == np.int64 else np.uint32
        return (want == have) | (want.astype(narrow).astype(want.dtype) == have)
    with np.errstate(all="ignore"):
        wanted, had = want.astype(np.float64), have.astype(np.float64)
        return np.isclose(had, wanted, rtol=rtol, atol=atol, equal_nan=True)


def first_differing_iteration(
    value: Carried, reference: list, device: list, rtol: float, atol: float
) -> int:
    """The first of the iterations both runs recorded where `value` differs (their count when
    none): a tensor of one shape throughout compared in one step, anything else iteration by
    iteration."""
    count = min(len(reference), len(device))
    if not value.kind.elementwise and count:
        want = [np.asarray(r[value.reference[0]]) for r in reference[:count]]
        have = [np.asarray(d[value.device[0]]) for d in device[:count]]
        if len({a.shape for a in want + have}) == 1 and len({a.dtype for a in have}) == 1:
            close = _close(np.stack(want), np.stack(have), rtol, atol).reshape(count, -1)
            differing = np.flatnonzero(~close.all(axis=1))
            return int(differing[0]) if differing.size else count
    for iteration in range(count):
        if difference(value, reference[iteration], device[iteration], rtol, atol) is not None:
            return iteration
    return count


def _shown(value) -> str:
    value = np.asarray(value).item()
    return f"{value:.6g}" if isinstance(value, float) else str(value)
