"""The package face: `import ov_loops` is light, and its public names stay what they are
whatever submodules are imported."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import subprocess
import sys

import pytest

import ov_loops
import ov_loops.api
import ov_loops.checking.run

HEAVY = ("onnx", "openvino", "numpy", "onnxruntime")
IMPORT_FACE = """
import sys
import ov_loops
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] in sys.argv[1:])))
"""


def test_importing_the_package_loads_no_onnx_openvino_or_numpy():
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_FACE, *HEAVY], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []


def test_public_names_survive_importing_every_submodule():
    """A submodule named like a face function (`ov_loops/check.py`) would replace the function
    with itself as the package attribute once imported."""
    for module in pkgutil.walk_packages(ov_loops.__path__, "ov_loops."):
        if not module.name.endswith("__main__") and _dependencies_installed(module.name):
            importlib.import_module(module.name)
    for name in ov_loops.__all__:
        value = getattr(ov_loops, name)
        assert not inspect.ismodule(value), name
        assert value.__module__.startswith("ov_loops."), (name, value.__module__)
    assert ov_loops.check is ov_loops.checking.run.check
    assert ov_loops.convert is ov_loops.api.convert
    assert ov_loops.translate is ov_loops.api.translate


def _dependencies_installed(name: str) -> bool:
    """Whether the optional dependency of a module (PyTensor's backend's: pytensor) imports."""
    if name == "ov_loops.pytensor" or name.startswith("ov_loops.frontends.pytensor."):
        return importlib.util.find_spec("pytensor") is not None
    return True


def test_face_lists_its_names_and_refuses_others():
    assert set(ov_loops.__all__) <= set(dir(ov_loops))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        _ = ov_loops.nonexistent
