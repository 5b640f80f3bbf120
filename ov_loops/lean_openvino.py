"""The process's first `import openvino` without OpenVINO's model-conversion API until it is used.

openvino/__init__.py imports `openvino.tools.ovc` for `openvino.convert_model`, and with it ovc's
command-line modules, OpenVINO's telemetry (a thread that imports multiprocessing and
subprocess) and its TensorFlow frontend. ov-loops never calls `convert_model` while converting,
and those modules were a third of what a conversion's process holds beyond OpenVINO's core
(`import openvino`: +28.1 MiB of RSS and 0.16-0.22 s of CPU with them, +13.3 MiB and 0.07 s
without; nest8 translated and saved in a fresh process: peak 77.3 -> 68.9 MiB by its own
ru_maxrss, 79.0 -> 72.9 by /usr/bin/time; measured 2026-11-28, docs/benchmarks.md).

When `ov_loops` is imported before openvino (`install`, from ov_loops/__init__.py), the first
`import openvino` (ov-loops' or the caller's) runs openvino/__init__.py with
`openvino.tools.ovc` refused, which the package takes as ovc not being installed:

    import openvino           ->  openvino/__init__.py, `import openvino.tools.ovc` raising
                                  ImportError (caught there: no convert_model)
    openvino.convert_model    ->  the package's module __getattr__ imports openvino.tools.ovc
                                  and returns its convert_model (the same function object),
                                  as does `from openvino import convert_model`

If openvino's import fails with ovc refused (a version that needs it), the package is executed
again as usual. Where openvino is imported before ov_loops, nothing changes.
"""

from __future__ import annotations

import sys
from types import ModuleType

PACKAGE = "openvino"
DEFERRED = "openvino.tools.ovc"  # the module openvino/__init__.py imports for convert_model
DEFERRED_NAMES = ("convert_model",)  # what openvino/__init__.py takes from it


def install() -> None:
    """Make the process's first `import openvino` lean (the module docstring); nothing when
    openvino is imported already or the finder is installed."""
    if PACKAGE in sys.modules or any(isinstance(each, _FirstImport) for each in sys.meta_path):
        return
    sys.meta_path.insert(0, _FirstImport())


class _FirstImport:
    """A meta-path finder for `openvino` alone: finds the package with the finders after it,
    runs it with `openvino.tools.ovc` refused, then removes itself."""

    def __init__(self) -> None:
        self.refusing = False

    def find_spec(self, name: str, path=None, target=None):
        if name == DEFERRED and self.refusing:
            raise ImportError(f"{DEFERRED} is imported when convert_model is first used")
        if name != PACKAGE or self.refusing:
            return None
        self._uninstall()  # the first import only, whatever becomes of it
        spec = _found(name, path, target)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _LeanLoader(spec.loader, self)
        return spec

    def _uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _found(name: str, path, target):
    """The spec the other finders give for `name`."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(name, path, target) if find_spec is not None else None
        if spec is not None:
            return spec
    return None


class _LeanLoader:
    """The package's loader, executing it with `openvino.tools.ovc` refused."""

    def __init__(self, loader, finder: _FirstImport) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        sys.meta_path.insert(0, self._finder)
        self._finder.refusing = True
        try:
            self._loader.exec_module(module)
            refused = False
        except ImportError:
            refused = True
        finally:
            self._finder.refusing = False
            self._finder._uninstall()
        if refused:  # this openvino needs ovc to import: as usual then
            self._loader.exec_module(module)
        elif not any(hasattr(module, name) for name in DEFERRED_NAMES):
            module.__getattr__ = _deferred_attribute


def _deferred_attribute(name: str):
    """openvino's module __getattr__: `convert_model` imported from openvino.tools.ovc on first
    use (then an attribute of the package); AttributeError for any other missing name, or when
    ovc is not installed."""
    package = sys.modules[PACKAGE]
    if name in DEFERRED_NAMES:
        try:
            deferred = __import__(DEFERRED, fromlist=list(DEFERRED_NAMES))
        except ImportError:
            deferred = None
        if deferred is not None and hasattr(deferred, name):
            value = getattr(deferred, name)
            setattr(package, name, value)
            return value
    raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")
