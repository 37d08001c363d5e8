#!/usr/bin/env python
"""The convolve benchmark: the same as `python -m clarray_gemm bench convolve [options]`.

Run from a checkout (`python benches/bench_convolve.py --help`) or after installing the package.
The measurement code lives in `clarray_gemm/bench/` (one timing helper, `timing.py`).
"""
import sys
from pathlib import Path

try:
    from clarray_gemm.cli import main
except ImportError:  # a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from clarray_gemm.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "convolve", *sys.argv[1:]]))
