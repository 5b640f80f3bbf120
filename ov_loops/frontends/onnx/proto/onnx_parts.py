"""Modules of the installed onnx package, loaded from their files without `onnx/__init__.py`.

`import onnx` runs its package's `__init__`, which imports its helper, checker, compose, parser,
printer, version converter and more (about 10 MiB and tens of ms of CPU). The conversion needs
two of its modules: the generated message classes (`onnx.onnx_ml_pb2`, proto/schema.py) and,
for shape inference, the inliner and op schemas, the C++ extension (`onnx.onnx_cpp2py_export`,
proto/extension.py). Unless onnx is imported already, `onnx_module` loads such a module from
the installed onnx's file under its own name and registers a finder that hands it to a later
`import onnx` (the user's, or one of ov_loops' check): one copy of each module, as if onnx had
imported it. No `onnx` package is put in `sys.modules`. Nothing of onnx is copied here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType


def onnx_module(name: str, file_names: Sequence[str]) -> ModuleType:
    """onnx's module `name` ("onnx.x"): onnx's own when onnx is imported, else loaded from
    the first of `file_names` in the installed onnx's directory (once: a later call or
    `import onnx` gets the same module). Raises ImportError without onnx or the file."""
    if "onnx" in sys.modules or name in sys.modules:
        return importlib.import_module(name)
    handed = next((f for f in sys.meta_path if isinstance(f, HandedOver) and f.name == name), None)
    if handed is not None:
        return handed.module
    package = importlib.util.find_spec("onnx")  # finds the package without running it
    if package is None or package.origin is None:
        raise ImportError("ov_loops needs the onnx package (pip install onnx)")
    directory = Path(package.origin).parent
    path = next((directory / f for f in file_names if (directory / f).is_file()), None)
    spec = None if path is None else importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{directory}: onnx's module {name} is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.meta_path.insert(0, HandedOver(name, module))
    return module


def extension_file_names(stem: str) -> list[str]:
    """The file names an extension module `stem` may have on this Python."""
    return [stem + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]


class HandedOver(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Hands a module loaded by `onnx_module` to a later import of its name (by `import onnx`),
    which then makes it the package's attribute as a plain import would."""

    def __init__(self, name: str, module: ModuleType) -> None:
        self.name = name
        self.module = module

    def find_spec(self, name, path=None, target=None):
        if name != self.name or name in sys.modules:
            return None
        return importlib.util.spec_from_loader(name, self, origin=self.module.__file__)

    def create_module(self, spec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        """Already executed."""
