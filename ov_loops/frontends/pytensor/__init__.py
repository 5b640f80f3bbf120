"""The PyTensor frontend: a PyTensor FunctionGraph -> one OpenVINO model, Op by Op.

dispatch.py holds the translation registry (`ov_translate`, one singledispatch function keyed by
Op type, as PyTensor's own backends register theirs) and the walk over a FunctionGraph; the Op
families register themselves in scalar.py / elemwise.py (Elemwise, Composite, CAReduce,
Softmax), tensor.py (shapes, Alloc, Join/Split, Reshape, DimShuffle), subtensor.py (basic
indexing, numpy's advanced indexing and their increments), random.py (random variables),
blas.py (Dot, Gemm, matmul; blockwise.py, a Blockwise of any
other Op as a Loop over its batch) and scan.py (PyTensor's Scan through
the Theano frontend's `scan`, so both doors share one LoopIR builder). linker.py is the
PyTensor Linker compiling the model once per input-shape signature; `ov_loops.pytensor`
registers it with the mode "OPENVINO".
"""
