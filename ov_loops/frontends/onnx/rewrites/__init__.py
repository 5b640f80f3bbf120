"""The ONNX-level rewrites every loaded model goes through, in the order pipeline.rewrites says."""
