"""Python's cyclic garbage collector spared the objects that exist before a conversion.

The collector's oldest generation holds every object of the imported modules (openvino, onnx,
numpy, ov_loops: a few hundred thousand), and a conversion allocates enough containers to
trigger a full collection or two, each walking them all: about 35 ms of seq100's 0.8 s of CPU
(benchmarks/conversion_profile.py). While converting they are frozen (`gc.freeze`: kept out of
collections), so a full collection walks what the conversion made; cycles it makes are
collected as before. Left alone when something froze objects already (`gc.get_freeze_count`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def existing_objects_frozen() -> Iterator[None]:
    """Run the block with the objects that exist now kept out of garbage collections."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
