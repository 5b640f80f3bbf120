"""A process that converts many models keeps flat memory: nothing of a conversion outlives it;
and one conversion of a model with big weights holds few copies of them.

The frontend's ConversionExtension lives in C++; a callback there that held the Converter made a
cycle Python's collector cannot see, so every conversion leaked its Converter, graphs and models.
Time and RSS over hundreds of conversions are measured by benchmarks/conversion_memory.py.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import onnx

import ov_loops
from benchmarks.generated_models import big_model
from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load.load import load_model
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


PEAK = textwrap.dedent(
    """
    import json, sys
    import ov_loops, ov_loops.api

    def peak_mib():
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status)
        return int(fields["VmHWM"].split()[0]) / 1024

    before = peak_mib()
    ov_loops.convert(sys.argv[1])
    print(json.dumps([before, peak_mib()]))
    """
)


def test_converting_a_path_holds_few_copies_of_its_weights(tmp_path):
    """Converting a file of 72 MiB of weights (with Loops and an If) peaks at under 3 copies of
    them above what the imports take (measured 2.4: the frontend's Constants and the file's
    pages it copied them from). Parsing the file whole, copying the message for the checker,
    shape inference, the placeholders and each graph handed to the frontend peaked at 7.8."""
    path = tmp_path / "big.onnx"
    onnx.save_model(big_model(64), path)
    weights_mib = path.stat().st_size / 2**20
    tree = str(Path(ov_loops.__file__).resolve().parents[1])
    child = subprocess.run(
        [sys.executable, "-c", PEAK, str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": tree},
        check=True,
    )
    before, peak = json.loads(child.stdout.splitlines()[-1])
    assert peak - before < 3 * weights_mib, (before, peak, weights_mib)
