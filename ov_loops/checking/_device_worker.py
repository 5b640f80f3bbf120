"""The device worker: a child process that compiles and runs models for `ov_loops.check`, so
that a native crash inside an OpenVINO plugin (SIGSEGV, SIGFPE, abort) ends the worker, not the
check (`ov_loops.checking.device.DeviceWorker` starts it and turns its death into a one-line
error).

Protocol, pickled frames: a request on stdin is ("run", IR path, device, precision, feeds),
("chunks", IR path, device, precision, [feeds of each chunk], whole feeds) or ("convert_model",
ONNX path, IR path). The replies, on the worker's original stdout, are stages (("stage",
"compile"), ("stage", "inference"), ("precision", OpenVINO's inference precision or None);
("stage", "convert_model")), then ("outputs", arrays; for "chunks" ([each chunk's arrays], the
arrays of the whole feeds run after reset_state()); None after convert_model) or ("error",
one-line message). The worker's fd 1 is pointed at its stderr,
so whatever a plugin prints cannot corrupt the replies. It serves requests until stdin closes.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import BinaryIO

from ov_loops.checking.device import compile_model, infer, inference_precision, run
from ov_loops.errors import OvLoopsError, message_line


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """Answer requests until `requests` ends; every failure is a reply, never an exit."""

    def reply(*message) -> None:
        pickle.dump(message, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()

    while True:
        try:
            kind, *arguments = pickle.load(requests)
        except EOFError:
            return
        try:
            if kind == "convert_model":
                reply("stage", "convert_model")
                outputs = _convert_model(*arguments)
            elif kind == "chunks":
                outputs = _run_chunks(reply, *arguments)
            else:
                outputs = _run(reply, *arguments)
        except OvLoopsError as exc:
            reply("error", str(exc))
        except Exception as exc:  # OpenVINO raises RuntimeError; bad feeds TypeError and more
            if kind == "convert_model":
                reply("error", f"openvino.convert_model failed: {_conversion_failure(exc)}")
            else:
                reply("error", f"inference failed: {message_line(exc, last=True)}")
        else:
            reply("outputs", outputs)


def _run(reply, xml: str, device: str, precision: str, feeds) -> list:
    reply("stage", "compile")
    compiled = compile_model(xml, device, precision)
    reply("precision", inference_precision(compiled))
    reply("stage", "inference")
    return run(compiled, feeds)


def _run_chunks(reply, xml: str, device: str, precision: str, chunks: list, whole) -> tuple:
    """Each chunk's outputs, in order, on one infer request (a stateful model goes on from the
    previous chunk); then reset_state() and the outputs of `whole`."""
    reply("stage", "compile")
    compiled = compile_model(xml, device, precision)
    reply("precision", inference_precision(compiled))
    reply("stage", "inference")
    request = compiled.create_infer_request()
    chunked = [infer(request, feeds) for feeds in chunks]
    request.reset_state()
    return chunked, infer(request, whole)


def _conversion_failure(exc: Exception) -> str:
    """The frontend's reason, from its report: "-- OP with a message:", OpenVINO's lines,
    "Summary:", "-- Conversion is failed for: OP" (the last reason before the summary, with the
    op the summary names)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if "Summary:" not in lines:
        return message_line(exc, last=True)
    summary = lines.index("Summary:")
    skipped = ("Check ", "Exception from src", "While validating", "[ONNX Frontend]", "-- ")
    reasons = [line for line in lines[:summary] if not line.startswith(skipped)]
    failed = lines[-1].removeprefix("-- Conversion is failed for:").strip()
    return f"{failed}: {reasons[-1]}" if reasons else lines[-1]


def _convert_model(onnx_path: str, xml: str) -> None:
    """OpenVINO's own conversion of the ONNX model, saved uncompressed."""
    import openvino as ov

    ov.save_model(ov.convert_model(onnx_path), xml, compress_to_fp16=False)


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
