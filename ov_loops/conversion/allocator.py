"""glibc's fast bins off while a model converts.

A conversion allocates and frees many small blocks (OpenVINO's nodes, protobuf messages of every
body): glibc keeps freed small blocks in "fast bins" and merges them all (`malloc_consolidate`)
at the next large request, walking a heap that grows with the model, so the cost per loop grew
with the number of loops already converted (seq1000: 11 -> 17 ms per loop from the first to the
last fifth; benchmarks/conversion_profile.py). With fast bins off (`mallopt(M_MXFAST, 0)`, what
`GLIBC_TUNABLES=glibc.malloc.mxfast=0` sets) it stays flat. A process-wide setting: it is
restored to glibc's default when the conversion ends, and left alone where the C library is not
glibc or the user tuned it (GLIBC_TUNABLES names mxfast).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator

M_MXFAST = 1  # mallopt's parameter: the largest block kept in a fast bin
DEFAULT_MXFAST = 64 * ctypes.sizeof(ctypes.c_size_t) // 4  # glibc's default (128 on 64-bit)


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
