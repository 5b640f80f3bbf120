"""Reading an ONNX model: the file, its external data, the checker, the user's input and output
edits."""
