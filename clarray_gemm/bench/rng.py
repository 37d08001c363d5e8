"""``python -m clarray_gemm bench random``: drawing random numbers into device arrays
(``clarray_gemm.random.default_rng``) against CuPy's generator on CUDA machines and NumPy's on
the host, wall clock per call with the device drained, at sizes where the draw is bandwidth
bound. Each draw's values are checked for their range (and the normal ones for their moments).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from ..device import Device
from ..ops.random import default_rng
from .peers import CudaPeers
from .report import cell_failure, peer_distribution
from .timing import microseconds as us, per_call_seconds

__all__ = ["SIZES", "SMOKE_SIZES", "DRAWS", "Row", "run", "format_report", "as_json"]

SIZES: tuple[int, ...] = (1 << 16, 1 << 20, 1 << 24, 1 << 26)
SMOKE_SIZES: tuple[int, ...] = (1000, 1 << 16)

# (name, method, keyword arguments), the same spelling on every generator
DRAWS: tuple[tuple[str, str, dict], ...] = (
    ("random float32", "random", {"dtype": np.float32}),
    ("random float64", "random", {"dtype": np.float64}),
    ("standard_normal float32", "standard_normal", {"dtype": np.float32}),
    ("standard_normal float64", "standard_normal", {"dtype": np.float64}),
    ("normal(3, 2)", "normal", {"loc": 3.0, "scale": 2.0}),
    ("integers(0, 1000)", "integers", {"low": 0, "high": 1000}),
)


@dataclass
class Row:
    draw: str
    n: int
    ours_s: float | None = None
    cupy_s: float | None = None
    numpy_s: float | None = None
    note: str = ""

    def ratio(self, peer: str) -> float | None:
        other = getattr(self, f"{peer}_s")
        return other / self.ours_s if other and self.ours_s else None


def _plausible(name: str, values: np.ndarray) -> bool:
    if name.startswith("random"):
        return bool(values.min() >= 0 and values.max() < 1)
    if name.startswith("integers"):
        return bool(values.min() >= 0 and values.max() < 1000)
    if values.size < 1000:
        return bool(np.isfinite(values).all())
    mean, std = (3.0, 2.0) if name.startswith("normal(") else (0.0, 1.0)
    return bool(abs(values.mean() - mean) < 0.05 * std + 5 * std / np.sqrt(values.size)
                and abs(values.std() / std - 1) < 0.05)


def run(device: Device, sizes: Sequence[int] = SIZES, budget_s: float = 0.03,
        progress: Any = None, cuda_peers: bool = True) -> list[Row]:
    """Time every draw at every size: ours, CuPy (or NumPy on non-CUDA devices)."""
    peers = CudaPeers.on(device) if cuda_peers else None
    cupy = peers.cupy if peers is not None else None
    ours, host = default_rng(20261128, device=device), np.random.default_rng(20261128)
    theirs = cupy.random.default_rng(20261128) if cupy is not None else None
    rows = []
    for n in sizes:
        for name, method, kwargs in DRAWS:
            row = Row(name, n)
            rows.append(row)
            if progress is not None:
                progress.note(f"{name} {n}")
            try:
                if kwargs.get("dtype") == np.float64 and not device.info.fp64:
                    row.note = "no fp64"
                    continue
                draw = getattr(ours, method)
                if not _plausible(name, np.asarray(draw(size=n, **kwargs))):
                    row.note = "WRONG values"
                sync = device.synchronize
                row.ours_s = per_call_seconds(lambda: (draw(size=n, **kwargs), sync()), budget_s)
                if theirs is not None:
                    # CuPy's Generator lacks some draws (normal); its legacy module has them
                    cdraw = getattr(theirs, method, None) or getattr(cupy.random, method)
                    cs = cupy.cuda.runtime.deviceSynchronize
                    row.cupy_s = per_call_seconds(lambda: (cdraw(size=n, **kwargs), cs()),
                                                  budget_s)
                else:
                    hdraw = getattr(host, method)
                    row.numpy_s = per_call_seconds(lambda: hdraw(size=n, **kwargs), budget_s)
            except Exception as exc:  # noqa: BLE001 - one failing cell is reported, not fatal
                row.note = cell_failure(exc)
            finally:
                if progress is not None:
                    progress.update()
    return rows


def format_report(rows: Sequence[Row]) -> str:
    """The distribution against the peer, then every cell."""
    peer, lines = peer_distribution(rows)
    lines += ["", "| draw | n | ours us | CuPy us | NumPy us | ratio | GB/s (ours) |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r.ratio(peer)
        itemsize = 8 if ("float64" in r.draw or r.draw.startswith(("normal(", "integers"))) else 4
        gbps = f"{r.n * itemsize / r.ours_s / 1e9:.0f}" if r.ours_s else "-"
        lines.append(f"| {r.draw} | {r.n} | {us(r.ours_s)} | {us(r.cupy_s)} | {us(r.numpy_s)} | "
                     f"{f'{ratio:.2f}x' if ratio else '-'} | {gbps} |")
    noted = [r for r in rows if r.note]
    if noted:
        lines += ["", "notes:"] + [f"- {r.draw} {r.n}: {r.note}" for r in noted]
    return "\n".join(lines)


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"rows": [asdict(r) for r in rows]}
