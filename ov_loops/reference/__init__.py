"""numpy reference executors: for ONNX models and for OpenVINO IR."""
