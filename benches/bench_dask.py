#!/usr/bin/env python
"""Scale-out on dask.distributed, 1 worker against N: ``python -m clarray_gemm bench dask``
(``clarray_gemm/bench/scaleout.py``), to which this script hands its arguments unchanged.

    python benches/bench_dask.py                          # 2 CPU workers of one core each
    python benches/bench_dask.py --devices 0 1 --gemm 32768 --conv-log2 28   # two GPUs of one host
"""
from __future__ import annotations

import sys
from pathlib import Path

try:
    from clarray_gemm.cli import main
except ImportError:  # a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from clarray_gemm.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "dask", *sys.argv[1:]]))
