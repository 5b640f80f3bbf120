"""frontends/onnx"""
