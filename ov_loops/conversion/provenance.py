"""How an IR was made, in its rt_info, so a deployed IR says so (read by any OpenVINO tool:
`model.get_rt_info()`, or the XML's <rt_info>).

    rt_info/Runtime_version                 openvino.get_version(), as ovc writes it
    rt_info/conversion_parameters/KEY       ovc's non-default parameters, as ovc writes them:
        input_model   "DIR/<file name>" (ovc's depersonalised path); a model given in memory
                      has none and is_python_object "True"
        is_python_object, input, output     (input, output: when given as text)
        output_model, compress_to_fp16      (the command line's; compress_to_fp16 when False)
    rt_info/ov_loops/KEY                    ov-loops' own: version, optimize, target, stateful,
                                            unroll, max_trip_count (when given)

Values are strings, as ovc stores them ("True"/"False" for booleans).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import openvino as ov

from ov_loops.version import VERSION

if TYPE_CHECKING:
    from ov_loops.convert_options import ConvertOptions


def record_conversion(
    model: ov.Model, source: object, options: ConvertOptions, output: object
) -> None:
    """Write the rt_info of the module into `model`: `source` is what was converted (a path,
    or a model in memory), `options` and `output` translate's."""
    model.set_rt_info(ov.get_version(), "Runtime_version")
    if isinstance(source, (str, os.PathLike)):
        record_parameter(model, "input_model", os.path.join("DIR", os.path.basename(source)))
    record_parameter(model, "is_python_object", not isinstance(source, (str, os.PathLike)))
    for key, value in (("input", options.input), ("output", output)):
        if isinstance(value, str):
            record_parameter(model, key, value)
    model.set_rt_info(VERSION, ["ov_loops", "version"])
    for key in ("optimize", "target", "stateful", "unroll", "max_trip_count"):
        if getattr(options, key) is not None:
            model.set_rt_info(str(getattr(options, key)), ["ov_loops", key])


def record_parameter(model: ov.Model, key: str, value: object) -> None:
    """One rt_info/conversion_parameters entry, as ovc writes it (str of the value)."""
    model.set_rt_info(str(value), ["conversion_parameters", key])
