"""The device worker: a child process that compiles and runs models for `ov_loops.check`, so
that a native crash inside an OpenVINO plugin (SIGSEGV, SIGFPE, abort) ends the worker, not the
check (`ov_loops.checking.device.DeviceWorker` starts it and turns its death into a one-line
error).

Protocol, pickled frames: a request on stdin is (IR path, device, precision, feeds); the replies,
on the worker's original stdout, are ("stage", "compile"), ("stage", "inference"), then
("outputs", arrays) or ("error", one-line message). The worker's fd 1 is pointed at its stderr,
so whatever a plugin prints cannot corrupt the replies. It serves requests until stdin closes.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import BinaryIO

from ov_loops.checking.device import compile_model, run
from ov_loops.errors import OvLoopsError, message_line


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """Answer requests until `requests` ends; every failure is a reply, never an exit."""

    def reply(*message) -> None:
        pickle.dump(message, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()

    while True:
        try:
            xml, device, precision, feeds = pickle.load(requests)
        except EOFError:
            return
        try:
            reply("stage", "compile")
            compiled = compile_model(xml, device, precision)
            reply("stage", "inference")
            outputs = run(compiled, feeds)
        except OvLoopsError as exc:
            reply("error", str(exc))
        except Exception as exc:  # OpenVINO raises RuntimeError; bad feeds TypeError and more
            reply("error", f"inference failed: {message_line(exc, last=True)}")
        else:
            reply("outputs", outputs)


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
