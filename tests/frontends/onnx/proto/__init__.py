"""Tests of ov_loops/frontends/onnx/proto."""
