"""Reading ONNX: loading, opsets, scope analysis and the normalisation passes."""
