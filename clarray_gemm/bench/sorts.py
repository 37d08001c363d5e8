"""``python -m clarray_gemm bench sort``: ``np.sort``, ``np.argsort``, a batched sort along the
last axis, ``np.unique``, ``np.median``, ``np.bincount`` and ``np.histogram`` on device arrays against CuPy on CUDA machines
(NumPy elsewhere), wall clock per call with the device drained; every answer checked against
NumPy's.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..array import asarray
from ..device import Device
from .peers import CudaPeers
from .report import cell_failure, peer_distribution
from .timing import microseconds as us, per_call_seconds

__all__ = ["CASES", "SMOKE_CASES", "Row", "run", "format_report", "as_json"]


@dataclass(frozen=True)
class Case:
    """One call ``call(xp, a)`` (``xp``: ``np`` for ours and NumPy, ``cupy`` for CuPy) on data of
    ``shape`` and ``dtype``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    call: Callable[[Any, Any], Any]


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


@dataclass
class Row:
    case: str
    shape: tuple
    dtype: str
    ours_s: float | None = None
    cupy_s: float | None = None
    numpy_s: float | None = None
    note: str = ""

    def ratio(self, peer: str) -> float | None:
        other = getattr(self, f"{peer}_s")
        return other / self.ours_s if other and self.ours_s else None


def _data(case: Case, rng: np.random.Generator) -> np.ndarray:
    if case.dtype.startswith("int"):
        return rng.integers(0, 1 << 20, case.shape).astype(case.dtype)
    return rng.standard_normal(case.shape).astype(case.dtype)


def run(device: Device, cases: Sequence[Case] = CASES, budget_s: float = 0.03,
        progress: Any = None, cuda_peers: bool = True) -> list[Row]:
    """Time every case: ours, CuPy (or NumPy on devices without CUDA peers)."""
    peers = CudaPeers.on(device) if cuda_peers else None
    cupy = peers.cupy if peers is not None else None
    rng = np.random.default_rng(20261128)
    rows = []
    for case in cases:
        row = Row(case.name, case.shape, case.dtype)
        rows.append(row)
        if progress is not None:
            progress.note(f"{case.name} {case.shape}")
        try:
            host = _data(case, rng)
            a = asarray(host, device=device)
            if not np.array_equal(np.asarray(case.call(np, a)), case.call(np, host)):
                row.note = "WRONG result"
            sync = device.synchronize
            row.ours_s = per_call_seconds(lambda: (case.call(np, a), sync()), budget_s)
            if cupy is not None:
                c = cupy.asarray(host)
                cs = cupy.cuda.runtime.deviceSynchronize
                row.cupy_s = per_call_seconds(lambda: (case.call(cupy, c), cs()), budget_s)
            else:
                row.numpy_s = per_call_seconds(lambda: case.call(np, host), budget_s)
        except Exception as exc:  # noqa: BLE001 - one failing cell is reported, not fatal
            row.note = cell_failure(exc)
        finally:
            if progress is not None:
                progress.update()
    return rows


def format_report(rows: Sequence[Row]) -> str:
    """The distribution against the peer, then every case."""
    peer, lines = peer_distribution(rows)
    lines += ["", "| case | shape | dtype | ours us | CuPy us | NumPy us | ratio |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r.ratio(peer)
        lines.append(f"| {r.case} | {' x '.join(map(str, r.shape))} | {r.dtype} | "
                     f"{us(r.ours_s)} | {us(r.cupy_s)} | {us(r.numpy_s)} | "
                     f"{f'{ratio:.2f}x' if ratio else '-'} |")
    noted = [r for r in rows if r.note]
    if noted:
        lines += ["", "notes:"] + [f"- {r.case} {r.shape}: {r.note}" for r in noted]
    return "\n".join(lines)


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"rows": [asdict(r) for r in rows]}
