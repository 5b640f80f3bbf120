"""The IR's element types as numpy types: of a <data element_type> (`numpy_type`) and of a
<port precision> (`PRECISIONS`)."""

from __future__ import annotations

import numpy as np

from ov_loops.errors import ConversionError
from ov_loops.ir.types import port_precision

# An IR <data element_type>'s numpy type (bf16 is ml_dtypes.bfloat16: see numpy_type).
DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "boolean": np.bool_,
}
# A <port precision>'s numpy type; "BOOLEAN" is how some producers spell BOOL.
PRECISIONS = {port_precision(name): dtype for name, dtype in DTYPES.items()} | {"BOOLEAN": np.bool_}


def numpy_type(name: str):
    """The numpy type of IR element type `name`; a ConversionError for one the reference does not
    run."""
    if name == "bf16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    if name not in DTYPES:
        raise ConversionError(f"IR reference: element type {name} is not supported")
    return DTYPES[name]
