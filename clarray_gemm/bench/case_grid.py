"""A grid of NumPy calls on device arrays against CuPy on CUDA machines (NumPy elsewhere): wall
clock per call with the device drained, every answer checked against NumPy's. ``bench sort``,
``bench fft`` and ``bench linalg`` are such grids (their cases in ``sorts.py``, ``ffts.py`` and
``linalgs.py``).
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

__all__ = ["Case", "Row", "run", "format_report", "as_json", "exact"]


def exact(got: np.ndarray, want: np.ndarray) -> bool:
    """The check of calls whose answers are exact: NumPy's values."""
    return bool(np.array_equal(got, want))


@dataclass(frozen=True)
class Case:
    """One call ``call(xp, a)`` (``xp``: ``np`` for ours and NumPy, ``cupy`` for CuPy) on data of
    ``shape`` and ``dtype`` (random, then ``prepare(data)`` where given: e.g. a positive
    definite matrix made from it), its answer accepted by ``check(ours, NumPy's)``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    call: Callable[[Any, Any], Any]
    check: Callable[[np.ndarray, np.ndarray], bool] = exact
    prepare: Callable[[np.ndarray], np.ndarray] | None = None


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
    if case.dtype.startswith("complex"):
        return (rng.standard_normal(case.shape)
                + 1j * rng.standard_normal(case.shape)).astype(case.dtype)
    return rng.standard_normal(case.shape).astype(case.dtype)


def run(device: Device, cases: Sequence[Case], budget_s: float = 0.03,
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
            if case.prepare is not None:
                host = case.prepare(host)
            a = asarray(host, device=device)
            if not case.check(np.asarray(case.call(np, a)), case.call(np, host)):
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
