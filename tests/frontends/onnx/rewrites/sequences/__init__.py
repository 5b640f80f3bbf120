"""Tests of ov_loops/frontends/onnx/rewrites/sequences."""
