"""The conversion driver: ONNX loops through LoopIR to Loop-5, and its per-loop report."""
