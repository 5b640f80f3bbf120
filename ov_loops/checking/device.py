"""Compile and run on a device: in this process, or in the device worker (a child process)."""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import openvino as ov

from ov_loops.checking.settings import DEFAULT_TIMEOUT
from ov_loops.errors import InputError, message_line
from ov_loops.ovcore import core


def available_devices() -> list[str]:
    return list(core().available_devices)


def compile_model(model: ov.Model | str, device: str, precision: str) -> ov.CompiledModel:
    """Compile on `device`; with precision "f32", ask for f32 inference where the device takes
    the hint (a CPU with bf16 units would otherwise compute in bf16). Absent devices are an
    InputError that lists the devices present."""
    present = available_devices()
    base = device.split(":")[0].split(".")[0]
    if base not in ("AUTO", "MULTI", "HETERO") and not any(
        d == device or d.split(".")[0] == base for d in present
    ):
        raise InputError(
            f"device {device} is not present; devices here: {', '.join(present) or 'none'}"
        )
    config = {}
    if precision == "f32" and _takes_precision_hint(base):
        config["INFERENCE_PRECISION_HINT"] = "f32"
    try:
        return core().compile_model(model, device, config)
    except RuntimeError as exc:
        raise InputError(f"cannot compile on {device}: {message_line(exc, last=True)}") from None


def _takes_precision_hint(device: str) -> bool:
    if device in ("AUTO", "MULTI", "HETERO"):
        return True
    try:
        return "INFERENCE_PRECISION_HINT" in core().get_property(device, "SUPPORTED_PROPERTIES")
    except RuntimeError:
        return False


def inference_precision(compiled: ov.CompiledModel) -> str | None:
    """The precision the compiled model infers in ("f32", "bf16", "f16", ...), None when the
    device does not say."""
    try:
        return compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
    except (RuntimeError, AttributeError):
        return None


def to_tensor(array: np.ndarray, element: ov.Type | None = None) -> ov.Tensor:
    """An ov.Tensor of `array`, converted to `element` (the input port's type, when it differs:
    an input `--input` retyped, whose values the check rounded through that type already);
    bfloat16 goes by its bits (OpenVINO's numpy view of bf16 is f16); 0-d arrays stay 0-d."""
    array = np.asarray(array)
    shape = ov.Shape(list(array.shape))
    if _converts(array, element):
        array = array.astype(element.to_dtype())
    if array.dtype.name == "bfloat16":
        tensor = ov.Tensor(ov.Type.bf16, shape)
        tensor.data.view(np.uint16)[...] = array.view(np.uint16)
    else:
        tensor = ov.Tensor(ov.Type(array.dtype), shape)
        tensor.data[...] = array
    return tensor


def _converts(array: np.ndarray, element: ov.Type | None) -> bool:
    """Whether `array` (bool or a number) is to be converted to the number type `element`."""
    if element is None or element == ov.Type.bf16 or array.dtype.kind not in "biuf":
        return False
    numeric = element.is_real() or element.is_integral_number()
    return numeric and np.dtype(element.to_dtype()) != array.dtype


def run(compiled: ov.CompiledModel, inputs: dict | list) -> list[np.ndarray]:
    """Run once; outputs as numpy arrays in output order (bf16 as ml_dtypes.bfloat16)."""
    return infer(compiled.create_infer_request(), inputs)


def infer(request: ov.InferRequest, inputs: dict | list) -> list[np.ndarray]:
    """One inference on `request` (its state, if the model has one, goes on); outputs as in
    `run`."""
    ports = request.model_inputs
    if isinstance(inputs, dict):
        inputs = _in_input_order(ports, inputs)
    types = [port.get_element_type() for port in ports]
    request.infer([to_tensor(value, element) for value, element in zip(inputs, types)])
    outputs = []
    for index in range(len(request.model_outputs)):
        tensor = request.get_output_tensor(index)
        data = np.array(tensor.data, copy=True)
        if tensor.element_type == ov.Type.bf16:
            import ml_dtypes

            data = data.view(np.uint16).view(ml_dtypes.bfloat16)
        outputs.append(data)
    return outputs


def _in_input_order(ports: list, inputs: dict) -> list:
    """The values of `inputs`, keyed by tensor name (or, for an input without one, by its
    Parameter's name: `checking.inputs.port_name`), in the order of the model's inputs."""
    ordered = []
    for port in ports:
        names = port.get_names() or {port.get_node().get_friendly_name()}
        found = [inputs[name] for name in sorted(names) if name in inputs]
        if not found:
            raise InputError(f"no value for input '{min(names)}'")
        ordered.append(found[0])
    return ordered


@dataclass(frozen=True)
class DeviceRun:
    """The outputs of one run, in output order, and the precision the device inferred in
    (OpenVINO's INFERENCE_PRECISION_HINT of the compiled model; None when it does not say)."""

    outputs: list[np.ndarray]
    precision: str | None


@dataclass(frozen=True)
class ChunkedRun:
    """A stateful model fed in chunks on one infer request: each chunk's outputs in order, then
    (after `reset_state()`) the outputs of the whole inputs in one call; the precision as in
    `DeviceRun`."""

    chunks: list[list[np.ndarray]]
    after_reset: list[np.ndarray]
    precision: str | None


class DeviceWorker:
    """Compiles and runs models in a child process (`python -m
    ov_loops.checking._device_worker`), so a native crash in an OpenVINO plugin is a one-line
    InputError naming the signal and the stage (compile or inference) instead of the end of
    this process; it also runs `openvino.convert_model` for `check --against convert-model`.
    A child that says nothing for `timeout` seconds in one stage (a plugin that hangs) is killed
    and that is a one-line InputError too. The child (`command`, by default that module) is
    started once, reused while it lives, and replaced after a crash or a timeout; requests are
    serialised."""

    def __init__(self, command: list[str] | None = None) -> None:
        self._command = command or [sys.executable, "-m", "ov_loops.checking._device_worker"]
        self._process: subprocess.Popen | None = None
        self._stderr: BinaryIO | None = None
        self._lock = threading.Lock()
        atexit.register(self.stop)

    def start(self) -> None:
        """Start the child if it is not running (returns at once: it imports while we work)."""
        if self._process is not None and self._process.poll() is None:
            return
        root = str(Path(__file__).resolve().parents[2])  # this copy of ov_loops
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the child)
        self._process = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.stdin.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def run(
        self, xml: str | os.PathLike, device: str, precision: str, feeds, timeout: float | None
    ) -> DeviceRun:
        """`run(compile_model(xml, device, precision), feeds)`, in the child, with the
        precision the device inferred in."""
        request = ("run", str(Path(xml).resolve()), device, precision, feeds)
        replies = self._call(
            request, timeout, f"on {device}", f"the {device} plugin cannot run this model"
        )
        return DeviceRun(replies["outputs"], replies.get("precision"))

    def run_chunks(
        self,
        xml: str | os.PathLike,
        device: str,
        precision: str,
        chunks: list,
        whole,
        timeout: float | None,
    ) -> ChunkedRun:
        """The feeds `chunks` in order on one infer request of `compile_model(xml, device,
        precision)`, then `reset_state()` and the feeds `whole` once, in the child."""
        request = ("chunks", str(Path(xml).resolve()), device, precision, chunks, whole)
        replies = self._call(
            request, timeout, f"on {device}", f"the {device} plugin cannot run this model"
        )
        chunked, after_reset = replies["outputs"]
        return ChunkedRun(chunked, after_reset, replies.get("precision"))

    def convert_model(
        self, onnx_path: str | os.PathLike, xml: str | os.PathLike, timeout: float | None
    ) -> None:
        """`openvino.convert_model(onnx_path)` saved as the IR `xml`, in the child."""
        request = ("convert_model", str(Path(onnx_path).resolve()), str(Path(xml).resolve()))
        self._call(request, timeout, "", "openvino.convert_model cannot convert this model")

    def _call(self, request: tuple, timeout: float | None, where: str, consequence: str) -> dict:
        """Send `request`; its replies by kind, up to its outputs (each within `timeout`
        seconds of the one before; None: no limit)."""
        with self._lock:
            self.start()
            stage, replies = "startup", {}
            frames = self._replies()
            try:
                pickle.dump(request, self._process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self._process.stdin.flush()
                while "outputs" not in replies:
                    kind, value = frames.get(timeout=timeout)
                    if kind == "ended":
                        raise EOFError
                    if kind == "stage":
                        stage = value
                    elif kind == "error":
                        raise InputError(value)
                    else:
                        replies[kind] = value
                return replies
            except queue.Empty:
                raise self._silent(f"{stage} {where}".strip(), timeout) from None
            except (EOFError, OSError):  # the pipe ended (read by `_replies`) or broke
                raise self._died(f"{stage} {where}".strip(), consequence) from None

    def _replies(self) -> queue.Queue:
        """The child's reply frames, read by a thread until an outputs or error frame, or
        ("ended", None) where the pipe ended or broke (the caller asks the child why)."""
        frames: queue.Queue = queue.Queue()
        stdout = self._process.stdout

        def read() -> None:
            kind = None
            while kind not in ("outputs", "error"):
                try:
                    kind, value = pickle.load(stdout)
                except Exception:  # EOFError, OSError, UnpicklingError, ...
                    frames.put(("ended", None))
                    return
                frames.put((kind, value))

        threading.Thread(target=read, name="ov-loops device replies", daemon=True).start()
        return frames

    def _silent(self, stage: str, timeout: float) -> InputError:
        """The child said nothing for `timeout` seconds: killed, one line."""
        process, self._process = self._process, None
        process.kill()
        process.wait()
        return InputError(
            f"the device worker gave no answer for {timeout:g} s during {stage}: stopped it "
            "(a plugin that hangs; give a longer --timeout if the model needs more)"
        )

    def _died(self, stage: str, consequence: str) -> InputError:
        process, self._process = self._process, None
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return InputError(f"OpenVINO crashed with {name} during {stage}: {consequence}")
        self._stderr.seek(0)
        said = [line.strip() for line in self._stderr.read().decode(errors="replace").splitlines()]
        last = next((line for line in reversed(said) if line), "")
        return InputError(f"the device worker exited with code {code} during {stage}: {last}")


_worker = DeviceWorker()


def start_device_worker() -> None:
    """Start the device worker early, so its start-up overlaps other work."""
    _worker.start()


def run_isolated(
    xml: str | os.PathLike,
    device: str,
    precision: str,
    feeds: dict | list,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> list[np.ndarray]:
    """Compile the IR `xml` on `device` and run it once, in the device worker (see
    `DeviceWorker`); failures, native crashes and `timeout` s of silence are one-line
    InputErrors."""
    return _worker.run(xml, device, precision, feeds, timeout).outputs


def run_on_device(
    xml: str | os.PathLike,
    device: str,
    precision: str,
    feeds: dict | list,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> DeviceRun:
    """`run_isolated`, with the precision the device inferred in."""
    return _worker.run(xml, device, precision, feeds, timeout)


def convert_isolated(
    onnx_path: str | os.PathLike,
    xml: str | os.PathLike,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> None:
    """`openvino.convert_model` of `onnx_path`, saved as `xml`, in the device worker: a crash,
    a failure or `timeout` s of silence is a one-line InputError."""
    _worker.convert_model(onnx_path, xml, timeout)


def run_chunks_on_device(
    xml: str | os.PathLike,
    device: str,
    precision: str,
    chunks: list,
    whole: dict | list,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> ChunkedRun:
    """`chunks` (feeds, in order) on one infer request of the IR `xml`, then `reset_state()`
    and `whole`, in the device worker (see `DeviceWorker`)."""
    return _worker.run_chunks(xml, device, precision, chunks, whole, timeout)
