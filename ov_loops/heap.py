"""Heap that the C library keeps after frees, given back to the system between phases.

glibc keeps the memory a process frees in its heap for later allocations: only a free region
at the heap's top (over `M_TRIM_THRESHOLD`, which grows up to 64 MiB once large blocks were
freed) goes back to the system by itself. A conversion frees much of what it allocates (each of
OpenVINO's ONNX frontend conversions allocates ~0.8 MiB however small the model, presumably its
operator tables, and frees it when it returns: in a nest of loops one a level), and what it frees stays in the process's RSS:
its peak then counts freed heap under what later phases add (the code pages of OpenVINO's
transformations at the first MOC run, lxml and the validator when saving). `malloc_trim(0)`
gives back every free page of the heap, in the middle too. It runs before each MOC run of a
body (loopir/passes/simplify.py: most bodies skip MOC) and before an IR is written
(staging.py): peak RSS of `translate` then `save` in a fresh process, nest8 86.4 -> 79.8 MiB,
torch_rnn_stack 95.9 -> 92.3, seq1 76.7 -> 75.5 (docs/benchmarks.md). A call costs about
0.03 ms of CPU when there is nothing to give back; what it gave back costs page faults when
the heap grows again (about 1 ms a call after a frontend conversion).

Where the C library has no `malloc_trim` (musl, macOS, Windows) `release_freed_heap` does
nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


def release_freed_heap() -> None:
    """Give the free pages of the C library's heap back to the system (glibc's
    `malloc_trim(0)`); nothing where the C library has no such call."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None (another C library, or no C library to load)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, TypeError, AttributeError):  # Windows: no CDLL(None); no such symbol
        return None
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim
