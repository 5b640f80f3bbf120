"""A pytest plugin running PyTensor's own test suite with the OPENVINO mode as the default mode:
loaded before the tests import (their module-level `get_default_mode()` sees it), it sets
`pytensor.config.mode` to `ov_loops.pytensor.OPENVINO`. From a checkout of PyTensor at the
installed version's tag (outside this repository: both have a `tests` package):

    PYTHONPATH=<ov-loops> python -m pytest -p benchmarks.pytensor_upstream_mode tests/scan
"""

from __future__ import annotations

import pytensor

import ov_loops.pytensor

pytensor.config.mode = ov_loops.pytensor.OPENVINO
