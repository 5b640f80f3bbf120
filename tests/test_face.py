"""The package face: `import ov_loops` is light, and its public names stay what they are
whatever submodules are imported."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import pydoc
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
    for name in ov_loops._HOMES:
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
    assert set(ov_loops._HOMES) <= set(dir(ov_loops))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        _ = ov_loops.nonexistent


def test_help_of_the_package_is_an_overview_naming_every_type_it_leaves_out():
    """help(ov_loops) lists what a user calls; the types of results, options and errors (whose
    inherited methods made it 1,242 lines) are importable from the face, named in its docstring,
    and documented where they are defined."""
    text = pydoc.render_doc(ov_loops, renderer=pydoc.plaintext)
    assert len(text.splitlines()) < 300
    for name in ov_loops.__all__:
        assert f"{name}(" in text, name
    for name in set(ov_loops._HOMES) - set(ov_loops.__all__):
        assert name in " ".join(ov_loops.__doc__.split()), name
        assert f"class {name}(" not in text, name
    from ov_loops import InputError, UnsupportedError

    assert issubclass(UnsupportedError, ov_loops.ConversionError)
    assert InputError.exit_code == 2
