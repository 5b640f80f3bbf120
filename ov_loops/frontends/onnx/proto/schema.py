"""ONNX's protobuf message classes, without onnx's C++ extension and op-schema registry.

`import onnx` loads its C++ extension and its helper, checker, compose and parser modules
(8.7 MiB, 0.06-0.09 s of CPU); the first checker, shape-inference or schema call fills its
op-schema registry (7 MiB more). Reading and rewriting a model needs only the message classes,
which onnx's generated module `onnx/onnx_ml_pb2.py` defines with Google's protobuf alone. Unless
onnx is imported already, that file of the installed onnx is executed here under its own name,
`onnx.onnx_ml_pb2`, without running `onnx/__init__.py`. A later `import onnx` (the user's, or
one of ov_loops' where a model needs the checker, shape inference or the inliner) finds the
module in `sys.modules` and reuses it: one set of classes, and one registration of
`onnx/onnx-ml.proto` in protobuf's descriptor pool (which refuses a second, different one).
Nothing of onnx is copied here: the file is the installed onnx's (1.16 to 1.23 ship it).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_NAME = "onnx.onnx_ml_pb2"


def _generated_module() -> ModuleType:
    """onnx's generated message module, executed once (see the module docstring)."""
    if "onnx" in sys.modules or _NAME in sys.modules:
        return importlib.import_module(_NAME)
    package = importlib.util.find_spec("onnx")  # finds the package without running it
    if package is None or package.origin is None:
        raise ImportError("ov_loops needs the onnx package (pip install onnx)")
    path = Path(package.origin).with_name("onnx_ml_pb2.py")
    spec = importlib.util.spec_from_file_location(_NAME, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: onnx's generated message module is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.meta_path.insert(0, _Executed(module))
    return module


class _Executed(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Hands the module executed above to a later `import onnx`, whose import of
    onnx.onnx_ml_pb2 then makes it the package's attribute as a plain import would."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def find_spec(self, name, path=None, target=None):
        if name != _NAME or name in sys.modules:
            return None
        return importlib.util.spec_from_loader(name, self, origin=self.module.__file__)

    def create_module(self, spec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        """Already executed."""


_pb2 = _generated_module()

AttributeProto = _pb2.AttributeProto
FunctionProto = _pb2.FunctionProto
GraphProto = _pb2.GraphProto
ModelProto = _pb2.ModelProto
NodeProto = _pb2.NodeProto
OperatorSetIdProto = _pb2.OperatorSetIdProto
SparseTensorProto = _pb2.SparseTensorProto
StringStringEntryProto = _pb2.StringStringEntryProto
TensorProto = _pb2.TensorProto
TensorShapeProto = _pb2.TensorShapeProto
TypeProto = _pb2.TypeProto
ValueInfoProto = _pb2.ValueInfoProto
IR_VERSION = _pb2.IR_VERSION  # the newest IR version this onnx knows
