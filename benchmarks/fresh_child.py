"""The process fresh_conversion.py starts for one conversion through Python: it imports nothing
before the conversion's own modules but what Python's startup does. (fresh_conversion.py ran
itself as the child, so argparse, json, subprocess, tempfile and pathlib were loaded before
the timed imports: `import openvino` imports them too and took 50-60 ms less CPU,
`import ov_loops.api` 30-40 ms less.)

    python benchmarks/fresh_child.py METHOD MODEL OUT

converts MODEL by METHOD (`convert_model`: openvino.convert_model then openvino.save_model;
an optimize level: ov_loops.api.translate then ov_loops.api.save, the caller holding the model
while it saves), writes the IR to OUT and prints the conversion call's CPU seconds and those
of the imports before it.
"""

from __future__ import annotations

import sys
import time


def main(method: str, model: str, out: str) -> None:
    started = time.process_time()
    if method == "convert_model":
        import openvino as ov

        imported = time.process_time()
        converted = ov.convert_model(model)
        seconds = time.process_time() - imported
        ov.save_model(converted, out)
    else:
        import ov_loops.api

        imported = time.process_time()
        converted = ov_loops.api.translate(model, optimize=method).model
        seconds = time.process_time() - imported
        ov_loops.api.save(converted, out)
    print(seconds, imported - started, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
