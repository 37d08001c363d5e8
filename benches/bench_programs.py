#!/usr/bin/env python
"""The programs benchmark: the same as `python -m clarray_gemm bench programs [options]`.

Run from a checkout (`python benches/bench_programs.py --help`) or after installing the package.
The measurement code lives in `clarray_gemm/bench/programs.py`; on a GPU machine CuPy and PyTorch
join the table by themselves when they import and see a CUDA device.
"""
import sys
from pathlib import Path

try:
    from clarray_gemm.cli import main
except ImportError:  # a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from clarray_gemm.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "programs", *sys.argv[1:]]))
