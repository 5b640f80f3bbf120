"""proto/schema.py: onnx's message classes without onnx's C++ extension, shared with onnx."""

from __future__ import annotations

import json

from tests.child_process import run_python_surviving
from tests.onnx_builders import side_by_side_loops

# A fresh process: convert (and save) a model of one Loop, then print the onnx modules loaded.
CONVERT_AND_LIST = """
import json, sys
import ov_loops.api
ov_loops.api.save(ov_loops.api.convert(sys.argv[1]), sys.argv[2])
print(json.dumps(sorted(name for name in sys.modules if name.split('.')[0] == 'onnx')))
"""

# A fresh process: the classes of ov_loops and onnx, imported in the order given, are the same
# ones, onnx's modules work on ov_loops' messages, and onnx's package has its pb2 attribute.
INTEROP = """
import sys
if sys.argv[1] == 'onnx first':
    import onnx
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.helpers import make_node, make_tensor_value_info
import onnx, onnx.checker, onnx.helper
assert onnx.ModelProto is schema.ModelProto and onnx.TensorProto is schema.TensorProto
assert onnx.onnx_ml_pb2.ModelProto is schema.ModelProto
x = make_tensor_value_info('x', schema.TensorProto.FLOAT, [2])
y = make_tensor_value_info('y', schema.TensorProto.FLOAT, [2])
relu = make_node('Relu', ['x'], ['y'])
built = onnx.helper.make_model(onnx.helper.make_graph([relu], 'g', [x], [y]))
onnx.checker.check_model(built)
assert isinstance(built, schema.ModelProto)
print('ok')
"""


def test_converting_a_model_of_tensors_does_not_import_onnx(tmp_path):
    """Reading, checking (load/structure.py) and converting a valid model of tensors needs no
    module of the onnx package: its C++ extension and op-schema registry cost 16 MiB."""
    path = tmp_path / "loop.onnx"
    path.write_bytes(side_by_side_loops(1).SerializeToString())
    result = run_python_surviving(
        ["-c", CONVERT_AND_LIST, str(path), str(tmp_path / "o.xml")], tmp_path
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []
    assert (tmp_path / "o.xml").exists()


def test_classes_are_onnx_own_whichever_is_imported_first(tmp_path):
    for order in ("onnx first", "ov_loops first"):
        result = run_python_surviving(["-c", INTEROP, order], tmp_path)
        assert result.returncode == 0 and result.stdout.strip() == "ok", (order, result.stderr)
