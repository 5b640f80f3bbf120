"""f64 in OpenVINO: what a converted model computing in f64 gets, said at conversion.

OpenVINO's CPU plugin (and GPU and NPU) computes f64 in f32: an f64 input is rounded to f32,
every op runs in f32 and an f64 output is the f32 result widened. A well-conditioned model
then agrees with onnxruntime's f64 to about f32's precision (1e-4/1e-5, `check`'s tolerance
for it); one that cancels loses far more: skl2onnx's GaussianProcessRegressor in f64, whose
std is sqrt(k(x,x) - v.v), is 8e-3 off onnxruntime's (its f32 export is 2.4e-2 off sklearn in
onnxruntime too). And `compress_to_fp16` (`ov.save_model`, ovc) stores f64 constants as f16
as it does f32 ones: 2**-11 of each weight, which moved that std by 1.17; `ov_loops.save`
keeps them (a model with f64 Constants stores no weight as f16: OpenVINO's compression
takes f32 and f64 Constants together, and a Constant cannot be exempted from Python;
owned_save.census finds them).
"""

from __future__ import annotations

import openvino as ov


def f64_ports(model: ov.Model) -> tuple[list[str], list[str]]:
    """The names of `model`'s f64 inputs and of its f64 outputs."""
    inputs = [
        port.get_any_name() for port in model.inputs if port.get_element_type() == ov.Type.f64
    ]
    outputs = [
        port.get_any_name() for port in model.outputs if port.get_element_type() == ov.Type.f64
    ]
    return inputs, outputs


def f64_warning(model: ov.Model) -> str | None:
    """One line naming `model`'s f64 inputs and outputs and saying they are computed in f32;
    None when it has none."""
    inputs, outputs = f64_ports(model)
    if not inputs and not outputs:
        return None
    named = " and ".join(
        f"{what} {', '.join(names)}"
        for what, names in (("inputs", inputs), ("outputs", outputs))
        if names
    )
    return (
        f"f64 {named}: OpenVINO's CPU plugin computes f64 in f32 (about 7 significant digits; "
        "an output that cancels, such as a variance, loses more): `check` compares at f32's "
        "tolerance"
    )
