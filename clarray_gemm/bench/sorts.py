"""``python -m clarray_gemm bench sort``: ``np.sort``, ``np.argsort``, a batched sort along the
last axis, ``np.unique``, ``np.median``, ``np.bincount`` and ``np.histogram`` on device arrays
against CuPy on CUDA machines (NumPy elsewhere); see ``case_grid.py`` for how a case is timed.
"""
from __future__ import annotations

from .case_grid import Case, Row, as_json, format_report, run

__all__ = ["CASES", "SMOKE_CASES", "Row", "run", "format_report", "as_json"]


def _cases(n: int, rows: tuple[int, int]) -> tuple[Case, ...]:
    return (Case("sort", (n,), "float32", lambda xp, a: xp.sort(a)),
            Case("sort", (n,), "int32", lambda xp, a: xp.sort(a)),
            Case("argsort", (n,), "float32", lambda xp, a: xp.argsort(a, kind="stable")),
            Case("sort rows", rows, "float32", lambda xp, a: xp.sort(a, axis=-1)),
            Case("unique", (n,), "int32", lambda xp, a: xp.unique(a)),
            Case("median rows", rows, "float32", lambda xp, a: xp.median(a, axis=-1)),
            Case("bincount", (n,), "int32", lambda xp, a: xp.bincount(a)),
            Case("histogram 100 bins", (n,), "float32", lambda xp, a: xp.histogram(a, 100)[0]))


CASES: tuple[Case, ...] = _cases(1 << 16, (256, 256)) + _cases(1 << 20, (1024, 1024)) + \
    _cases(1 << 24, (4096, 1024))
SMOKE_CASES: tuple[Case, ...] = _cases(1000, (7, 33))
