"""Benchmarks: one timing helper (``timing``), the peers we compare with (``peers``), one
runner per operation family (``matmul``, ``convolve``) and per grid (``shapes``, ``patterns``,
``latency``, ``programs``), and the printed table and chart (``report``). The CLI (``python -m clarray_gemm bench``) and the
scripts in ``benches/`` both use these modules.

The library never imports this package (checked by the import contracts in ``pyproject.toml``);
``clarray_gemm.tuning`` and the CLI build on it.
"""
