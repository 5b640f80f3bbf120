"""A process that converts many models keeps flat memory: nothing of a conversion outlives it.

The frontend's ConversionExtension lives in C++; a callback there that held the Converter made a
cycle Python's collector cannot see, so every conversion leaked its Converter, graphs and models.
Time and RSS over hundreds of conversions are measured by benchmarks/conversion_memory.py.
"""

from __future__ import annotations

import gc
import weakref

from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load import load_model
from tests.onnx_builders import side_by_side_loops


def test_a_converter_is_freed_once_its_conversion_is_done():
    source = load_model(side_by_side_loops(3))
    converter = Converter(source)
    conversion = converter.convert()
    assert len(conversion.loops) == 6
    alive = weakref.ref(converter)
    del converter, conversion
    gc.collect()
    assert alive() is None, "the Converter outlived its conversion (a reference cycle via C++)"


def test_many_conversions_leave_no_objects_behind():
    source = load_model(side_by_side_loops(10))
    Converter(source).convert()  # warm up the frontend's and OpenVINO's own caches
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(20):
        Converter(source).convert()
    gc.collect()
    grown = len(gc.get_objects()) - before
    # The leak kept ~25 objects per loop per conversion (about 5,000 here); allow a few strays.
    assert grown < 100, f"{grown} objects left behind by 20 conversions of a 20-loop model"
