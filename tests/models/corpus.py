"""The exporter corpus (tests/models/exporters/, issue 22): its models, input sets and expected
outputs as committed, and each feature a model goes through (`FEATURES`) as one function that
raises AssertionError (or ov-loops' error) when the model fails it.

Every feature compiles on CPU with INFERENCE_PRECISION_HINT=f32 and compares with the
framework's outputs (NAME.expected*.npz) at the tolerance of `ov_loops.checking.tolerance` for
the element type the manifest names per output (f64 computes in f32 on CPU); an IR saved with
f16 weights (`compress_to_fp16`, the default) is compared at the f16-weights tolerance, as
`check` does.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov

import ov_loops
from ov_loops.checking.chunks import Chunking, combine
from ov_loops.checking.device import core, infer
from ov_loops.checking.tolerance import Tolerances, magnitude
from ov_loops.errors import ConversionError

CORPUS = Path(__file__).resolve().parent / "exporters"
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
ELEMENT = {"f32": np.float32, "f64": np.float64, "int": np.int64, "bool": np.bool_}
CHUNKS = 2  # the time axis is fed in this many near-equal chunks


@dataclass(frozen=True)
class Model:
    """One manifest entry and its files."""

    entry: dict

    @property
    def name(self) -> str:
        return self.entry["name"]

    @property
    def onnx(self) -> Path:
        return CORPUS / f"{self.name}.onnx"

    @property
    def exporter(self) -> str:
        """The exporter without its version ("tf2onnx", "torch.onnx dynamo", ...)."""
        words = re.sub(r"\s*\(.*?\)", "", self.entry["exporter"].split(",")[0]).split()
        return " ".join(w for w in words if not w[:1].isdigit())

    def sets(self) -> list[tuple[dict, dict]]:
        """(inputs, expected outputs) of each committed input set: the framework's outputs,
        or onnxruntime's where the manifest says the export itself differs from the framework
        (an exporter bug or its precision: `onnxruntime.matches` false)."""
        pairs = [("inputs", "expected", "matches"), ("inputs2", "expected2", "matches2")]
        found = []
        for given, want, matches in pairs:
            if not (CORPUS / f"{self.name}.{given}.npz").exists():
                continue
            feeds = _npz(CORPUS / f"{self.name}.{given}.npz")
            if self.entry["onnxruntime"].get(matches, True):
                found.append((feeds, _npz(CORPUS / f"{self.name}.{want}.npz")))
            else:
                found.append((feeds, _onnxruntime(self.onnx, feeds)))
        return found

    def static_input(self) -> dict[str, list[int]]:
        """The `input=` shapes of the first input set."""
        return {name: list(value.shape) for name, value in self.sets()[0][0].items()}

    def has_dynamic_inputs(self) -> bool:
        """Whether some input dim is not a number in the export (symbolic, unknown, no shape)."""
        dims = self.entry["input_dims"].values()
        return any(d is None or not all(isinstance(x, int) for x in d) for d in dims)


def _onnxruntime(path: Path, feeds: dict) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # its errors are raised; what it logs is noise here
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def _npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as stored:
        return {key: stored[key] for key in stored.files}


def models() -> list[Model]:
    """Every model of the manifest, in its order."""
    return [Model(m) for m in json.loads((CORPUS / "manifest.json").read_text())["models"]]


# -- running and comparing ------------------------------------------------------------------------
def outputs_by_name(request: ov.InferRequest, feeds: dict) -> dict[str, np.ndarray]:
    """One inference on `request`; each output under each of its tensor names."""
    values = infer(request, feeds)
    return {n: v for port, v in zip(request.model_outputs, values) for n in port.get_names()}


def assert_matches(model: Model, got: dict, want: dict, what: str, f16_weights: bool) -> None:
    """Each expected output is in `got` with its shape and values within its tolerance."""
    for name, expected in want.items():
        assert name in got, f"{what}: no output named {name} (outputs: {sorted(got)})"
        have = np.asarray(got[name])
        assert have.shape == expected.shape, (
            f"{what}: {name} shape {have.shape} != {expected.shape}"
        )
        element = ELEMENT[model.entry["tolerance"][name]]
        scale = magnitude(expected) if f16_weights else None
        tolerance = Tolerances().for_output(name, element, "f32", scale)
        np.testing.assert_allclose(
            have.astype(np.float64),
            expected.astype(np.float64),
            rtol=tolerance.rtol,
            atol=tolerance.atol,
            equal_nan=True,
            err_msg=f"{what}: {name} (tolerance {tolerance.text()})",
        )


def assert_runs(model: Model, ir: ov.Model, sets: list, what: str, f16_weights=False) -> None:
    """Compile `ir` (CPU, f32) and compare each (inputs, expected) of `sets`."""
    compiled = core().compile_model(ir, "CPU", F32)
    for index, (feeds, want) in enumerate(sets, 1):
        got = outputs_by_name(compiled.create_infer_request(), feeds)
        assert_matches(model, got, want, f"{what}, set {index}", f16_weights)


@functools.lru_cache(maxsize=4)
def translated(name: str, level: str) -> ov.Model:
    """`ov_loops.convert` of a corpus model with dynamic inputs (kept for the shapes feature)."""
    return ov_loops.convert(CORPUS / f"{name}.onnx", optimize=level)


# -- the features ---------------------------------------------------------------------------------
def convert_at(level: str):
    """Convert at `level`; run both sets with f32 weights; save with f16 weights (the default:
    the IR is validated), read back and run set 1 at the f16-weights tolerance."""

    def feature(model: Model, directory: Path) -> None:
        ir = translated(model.name, level)
        assert_runs(model, ir, model.sets(), f"--optimize {level}")
        xml = directory / "model.xml"
        ov_loops.save(ir, xml)
        saved = core().read_model(str(xml))
        assert_runs(model, saved, model.sets()[:1], f"--optimize {level}, f16 weights", True)

    return feature


def static_at(level: str):
    """Convert at `level` with every input's shape from set 1 (`--input`), run set 1."""

    def feature(model: Model, directory: Path) -> None:
        ir = ov_loops.convert(model.onnx, optimize=level, input=model.static_input())
        assert_runs(model, ir, model.sets()[:1], f"--input (set 1's shapes) --optimize {level}")

    return feature


def npu(model: Model, directory: Path) -> None:
    """`--target NPU` with set 1's static shapes, compiled and run on CPU."""
    ir = ov_loops.convert(model.onnx, target="NPU", input=model.static_input())
    assert_runs(model, ir, model.sets()[:1], "--target NPU --input (set 1's shapes)")


def stateful_at(level: str):
    """`--stateful --optimize level`, each set's time input fed in `CHUNKS` chunks on one infer
    request (the second set with a chunk of no step between them, which must leave the states
    as they are, where the model takes an empty sequence: `_runs_empty`); the outputs
    combined as `check --chunks` combines them equal the whole sequence's (at max, loops that
    are one cell step become *Sequence-5 ops keeping the loop's states)."""

    def feature(model: Model, directory: Path) -> None:
        ir = ov_loops.convert(model.onnx, optimize=level, stateful=True)
        assert ir.get_sinks(), "--stateful made no Variable (no Assign in the IR)"
        compiled = core().compile_model(ir, "CPU", F32)
        ((name, axis),) = model.entry["time_axis"].items()
        for index, (feeds, want) in enumerate(model.sets(), 1):
            dim = feeds[name].shape[axis]
            lengths = tuple(len(part) for part in np.array_split(np.arange(dim), CHUNKS))
            if index == 2 and _runs_empty(model.name, name, axis):
                lengths = (*lengths[:1], 0, *lengths[1:])
            request = compiled.create_infer_request()
            parts = Chunking(name, axis, lengths).split(feeds)
            chunks = [outputs_by_name(request, part) for part in parts]
            names = list(want)
            joined, _ = combine(
                [want[n] for n in names], [[c[n] for n in names] for c in chunks], axis
            )
            what = f"--stateful --optimize {level}, set {index} in chunks {list(lengths)}"
            what += f" of {name}:{axis}"
            assert_matches(model, dict(zip(names, joined)), want, what, False)

    return feature


@functools.lru_cache(maxsize=8)
def _runs_empty(name: str, time_input: str, axis: int) -> bool:
    """Whether onnxruntime runs model `name` on set 1 with no step of `time_input`: a chunk of
    no step is fed only to a model that takes an empty sequence (a Keras RNN computes its first
    step before its loop, so onnxruntime, as TensorFlow, fails on one; onnxruntime aborts the
    process on torch's GRU op of no step, which torch refuses: hence a child process)."""
    from tests.child_process import run_python

    script = (
        "import sys, numpy as np; from tests.models.corpus import _onnxruntime, models; "
        f"m = next(m for m in models() if m.name == {name!r}); feeds = dict(m.sets()[0][0]); "
        f"feeds[{time_input!r}] = np.take(feeds[{time_input!r}], [], axis={axis}); "
        "_onnxruntime(m.onnx, feeds)"
    )
    return run_python(["-c", script], CORPUS).returncode == 0


# The RNN-like models that cannot stream, and why: `--stateful` must refuse them in one line
# (issue 22 item 2). Not among them: torch_ts_lstmcell_time_major, whose states stream (its mean
# over time is the chunk's), and jax_linen_gru_seq_lengths_b3, whose state streams too (its h,
# the carry at step lengths - 1 gathered from the stacked carries after the loop, is the
# chunk's row at those lengths).
CANNOT_STREAM = {
    "jax_linen_bidirectional_gru": "a bidirectional RNN",
    "tf_keras_bidirectional_gru": "a bidirectional RNN",
    "tf_keras_bidirectional_lstm_sum": "a bidirectional LSTM op",
    "tf_keras_conv1d_gru_classifier": (
        "a causal Conv1D over time before the loop: a chunk's first steps need the previous "
        "chunk's last ones"
    ),
    "tf_keras_gru_go_backwards": "an RNN reading the sequence backwards",
}


def stateful_refused(model: Model, directory: Path) -> None:
    """`--stateful` on a model in `CANNOT_STREAM` is refused: one line, ConversionError."""
    try:
        ov_loops.convert(model.onnx, stateful=True)
    except ConversionError as refusal:
        assert "\n" not in str(refusal), str(refusal)
        return
    raise AssertionError(
        f"--stateful converted it, though it cannot stream: {CANNOT_STREAM[model.name]}"
    )


def shapes(model: Model, directory: Path) -> None:
    """Each output's partial shape at none/default/max is at least as static as
    `openvino.convert_model`'s (a static rank and every static dim of it, equal); where
    convert_model cannot convert the model, as the export declares (`declared_shapes`)."""
    try:
        theirs, whose = _partial_shapes(ov.convert_model(str(model.onnx))), "convert_model's"
    except Exception:  # noqa: BLE001 -- OpenVINO's frontend refuses: the export's own shapes
        theirs, whose = declared_shapes(model), "the export's"
    for level in ("none", "default", "max"):
        ours = _partial_shapes(translated(model.name, level))
        for name, shape in theirs.items():
            assert name in ours, f"--optimize {level}: no output named {name}"
            assert as_static_as(ours[name], shape), (
                f"--optimize {level}: output {name} is {ours[name]}, {whose} {shape}"
            )


def declared_shapes(model: Model) -> dict[str, ov.PartialShape]:
    """The graph outputs' shapes as the export declares them: a number a static dim, a name or
    "?" a dynamic one, no shape a dynamic rank."""
    return {
        name: ov.PartialShape.dynamic()
        if dims is None
        else ov.PartialShape([d if isinstance(d, int) else -1 for d in dims])
        for name, dims in model.entry["output_dims"].items()
    }


def _partial_shapes(ir: ov.Model) -> dict[str, ov.PartialShape]:
    return {n: port.get_partial_shape() for port in ir.outputs for n in port.get_names()}


def as_static_as(ours: ov.PartialShape, theirs: ov.PartialShape) -> bool:
    """Whether `ours` states everything `theirs` states: its rank, and each static dim."""
    if theirs.rank.is_dynamic:
        return True
    if ours.rank.is_dynamic or ours.rank.get_length() != theirs.rank.get_length():
        return False
    return all(
        not b.is_static or (a.is_static and a.get_length() == b.get_length())
        for a, b in zip(ours, theirs)
    )


FEATURES = {
    "none": convert_at("none"),
    "default": convert_at("default"),
    "max": convert_at("max"),
    "static-default": static_at("default"),
    "static-max": static_at("max"),
    "stateful": stateful_at("default"),
    "stateful-max": stateful_at("max"),
    "stateful-refused": stateful_refused,
    "npu": npu,
    "shapes": shapes,
}


def applies(model: Model, feature: str) -> bool:
    """Whether `feature` is meaningful for `model`: static shapes where an input dim is not
    a number, streaming where the manifest names a time axis (a loop's state, or an ONNX
    LSTM/GRU op's: tf2onnx makes a Keras LSTM layer one)."""
    if feature.startswith("static-"):
        return model.has_dynamic_inputs()
    if feature == "stateful-refused":
        return model.name in CANNOT_STREAM
    if feature.startswith("stateful"):
        return bool(model.entry.get("time_axis"))
    return True
