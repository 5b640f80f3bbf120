"""Tests of ov_loops/frontends/onnx/ops."""
