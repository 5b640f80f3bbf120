"""ONNX proto helpers every stage of the ONNX frontend shares (names and scopes, opsets, tensor
types, body port types, the record of rewritten sequences); they import nothing else of it."""
