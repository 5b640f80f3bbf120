"""glibc's heap during a conversion: freed heap given back between phases, fast bins off.

glibc keeps the memory a process frees in its heap for later allocations: only a free region
at the heap's top (over `M_TRIM_THRESHOLD`, which grows up to 64 MiB once large blocks were
freed) goes back to the system by itself. A conversion frees much of what it allocates (each of
OpenVINO's ONNX frontend conversions allocates ~0.8 MiB however small the model, state it holds
while the call runs, and frees it when it returns: in a nest of loops one a level), and what it
frees stays in the process's RSS: its peak then counts freed heap under what later phases add
(the code pages of OpenVINO's transformations at the first MOC run, lxml and the validator when
saving). `malloc_trim(0)`
gives back every free page of the heap, in the middle too. It runs before each MOC run of a
body (loopir/passes/simplify.py: most bodies skip MOC) and before an IR is written
(staging.py): peak RSS of `translate` then `save` in a fresh process, nest8 86.4 -> 79.8 MiB,
torch_rnn_stack 95.9 -> 92.3, seq1 76.7 -> 75.5 (docs/benchmarks.md). A call costs about
0.03 ms of CPU when there is nothing to give back; what it gave back costs page faults when
the heap grows again (about 1 ms a call after a frontend conversion).

Where the C library has no `malloc_trim` (musl, macOS, Windows) `release_freed_heap` does
nothing.

glibc's fast bins are off while a model converts (`without_fast_bins`, the driver): a conversion
allocates and frees many small blocks (OpenVINO's nodes, protobuf messages of every body), glibc
keeps freed small blocks in "fast bins" and merges them all (`malloc_consolidate`) at the next
large request, walking a heap that grows with the model, so the cost per loop grew with the
number of loops already converted (seq1000: 11 -> 17 ms per loop from the first to the last
fifth; benchmarks/conversion_profile.py). With fast bins off (`mallopt(M_MXFAST, 0)`, what
`GLIBC_TUNABLES=glibc.malloc.mxfast=0` sets) it stays flat. A process-wide setting: it is
restored to glibc's default when the conversion ends, and left alone where the C library is not
glibc or the user tuned it (GLIBC_TUNABLES names mxfast).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from collections.abc import Callable, Iterator

M_MXFAST = 1  # mallopt's parameter: the largest block kept in a fast bin
DEFAULT_MXFAST = 64 * ctypes.sizeof(ctypes.c_size_t) // 4  # glibc's default (128 on 64-bit)


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


@contextlib.contextmanager
def without_fast_bins() -> Iterator[None]:
    """Run the block with glibc's fast bins off (nothing changes on other C libraries)."""
    mallopt = _mallopt()
    if mallopt is None or mallopt(M_MXFAST, 0) != 1:
        yield
        return
    try:
        yield
    finally:
        mallopt(M_MXFAST, DEFAULT_MXFAST)


def _mallopt():
    """glibc's mallopt, or None (another C library, or fast bins tuned by the user)."""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # no such name on this system
        return None
    if not libc.startswith("glibc") or "mxfast" in os.environ.get("GLIBC_TUNABLES", ""):
        return None
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
