"""Heap that the C library keeps after frees, given back to the system between phases.

glibc keeps the memory a process frees in its heap for later allocations: only a free region
at the heap's top (over `M_TRIM_THRESHOLD`, which grows up to 64 MiB once large blocks were
freed) goes back to the system by itself. A conversion frees much of what it allocates (each of
OpenVINO's ONNX frontend conversions builds its operator tables, ~0.8 MiB, and frees them when
it returns; MOC's scratch graphs), and what it frees stays in the process's RSS: its peak then
counts freed heap under what later phases add (the code pages of OpenVINO's transformations, of
lxml and the validator when saving). `malloc_trim(0)` gives back every free page of the heap,
in the middle too: nest8's peak RSS 85.2 -> 78.7 MiB with it after each frontend conversion and
before saving (benchmarks/fresh_conversion.py). A call that finds nothing to give back costs
about 0.03 ms of CPU; what it gave back costs page faults when the heap grows again.

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
