"""Shape specialisation: `ov_loops.compile` compiles a model anew for each input-shape
signature it is called with (compiled.py), keyed by the signature of the call's inputs
(signature.py); `ov-loops check --specialise` runs the model specialised to the check's inputs."""
