"""The ONNX loop ops, each registered with the opsets it reads (registry.py), and the LoopIR
they make."""
