"""ONNX's protobuf message classes, without onnx's C++ extension and op-schema registry.

`import onnx` loads its C++ extension and its helper, checker, compose and parser modules
(8.7 MiB, 0.06-0.09 s of CPU); the first checker, shape-inference or schema call fills its
op-schema registry (7 MiB more). Reading and rewriting a model needs only the message classes,
which onnx's generated module `onnx/onnx_ml_pb2.py` defines with Google's protobuf alone. Unless
onnx is imported already, that file of the installed onnx is executed here under its own name,
`onnx.onnx_ml_pb2`, without running `onnx/__init__.py` (proto/onnx_parts.py). A later `import
onnx` (the user's, or ov_loops' checker's) reuses it: one set of classes, and one registration
of `onnx/onnx-ml.proto` in protobuf's descriptor pool (which refuses a second, different one).
Nothing of onnx is copied here: the file is the installed onnx's (1.16 to 1.23 ship it).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto.onnx_parts import onnx_module

_pb2 = onnx_module("onnx.onnx_ml_pb2", ["onnx_ml_pb2.py"])

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
