"""The convolution grid: ``np.convolve`` through this library against the fastest of the peers
a user would reach for, at every signal length N and mask length m of a grid (m < N), wall
clock per call, NumPy arrays in and out, all in one run.

Peers: NumPy's ``np.convolve``, ``scipy.signal.oaconvolve`` and ``scipy.signal.fftconvolve``
(when scipy is installed) and, on machines with CuPy, ``cupy.convolve`` with its transfers
(``cp.asarray`` in, ``cp.asnumpy`` out). NumPy's direct loops are skipped above ``numpy_limit``
multiply-adds (seconds per call, never the fastest there). Each contender is timed
``repeats`` times, interleaved, and its fastest median counts: other jobs on a shared machine
only ever make a call slower.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..device import Device
from ..ops.convolve import convolve, explain_convolve
from .timing import host_seconds

__all__ = ["GRID_SIGNALS", "GRID_MASKS", "GridRow", "peers", "run", "format_grid"]

GRID_SIGNALS = (2**12, 2**16, 2**20, 2**24)
GRID_MASKS = (3, 31, 63, 255, 1023, 4095, 8191)
NUMPY_LIMIT = 2**30


@dataclass
class GridRow:
    """One (N, m): our wall-clock seconds, what ran, and each peer's seconds."""

    n: int
    m: int
    ours_s: float
    ran: str
    peers: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def best_peer(self) -> tuple[str, float]:
        if not self.peers:
            return "", math.nan
        name = min(self.peers, key=self.peers.__getitem__)
        return name, self.peers[name]

    @property
    def ratio(self) -> float:
        """Fastest peer's time / ours (> 1: ours is faster)."""
        return self.best_peer[1] / self.ours_s


def peers(n: int, m: int, numpy_limit: float = NUMPY_LIMIT
          ) -> tuple[dict[str, Callable[[np.ndarray, np.ndarray], Any]], dict[str, str]]:
    """The peer functions for one (N, m), and the peers skipped with why."""
    out: dict[str, Callable] = {}
    skipped: dict[str, str] = {}
    if float(n) * m <= numpy_limit:
        out["np.convolve"] = np.convolve
    else:
        skipped["np.convolve"] = f"N*m > {numpy_limit:.3g}: seconds per call"
    try:
        import scipy.signal as ss
    except ImportError:
        skipped["scipy"] = "not installed"
    else:
        out["oaconvolve"] = ss.oaconvolve
        out["fftconvolve"] = ss.fftconvolve
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy or no CUDA device: not a peer here
        pass
    else:
        def cupy_convolve(a: np.ndarray, v: np.ndarray) -> np.ndarray:
            return cp.asnumpy(cp.convolve(cp.asarray(a), cp.asarray(v)))
        out["cupy.convolve"] = cupy_convolve
    return out, skipped


def _ran(a: np.ndarray, v: np.ndarray, device: Device) -> str:
    line = explain_convolve(a, v, "full").splitlines()[1]
    return line.split(" (")[0].split(":")[0] if not line.startswith("kernel:") else \
        line.split(" (")[0].replace("kernel: ", "")


def run(device: Device, signals: Iterable[int] = GRID_SIGNALS,
        masks: Iterable[int] = GRID_MASKS, dtype: Any = np.float32, budget_s: float = 0.3,
        repeats: int = 3, numpy_limit: float = NUMPY_LIMIT, progress: Any = None
        ) -> list[GridRow]:
    """Time ``np.asarray(convolve(a, v))`` (full mode, NumPy in and out) and the peers at every
    (N, m) with m < N; the fastest of ``repeats`` interleaved medians counts."""
    from ..device import use_device
    rows = []
    rng = np.random.default_rng(0)
    for n in signals:
        a = rng.standard_normal(n).astype(dtype)
        for m in masks:
            if m >= n:
                continue
            v = rng.standard_normal(m).astype(dtype)
            funcs, skipped = peers(n, m, numpy_limit)
            with use_device(device):
                def ours() -> np.ndarray:
                    return np.asarray(convolve(a, v))
                ran = _ran(a, v, device)
                best: dict[str, float] = {}
                for _ in range(repeats):
                    for name, call in [("ours", ours)] + [
                            (p, (lambda f=f: f(a, v))) for p, f in funcs.items()]:
                        if progress is not None:
                            progress.note(f"N={n} m={m} {name}")
                        t = host_seconds(call, budget_s=budget_s).seconds
                        best[name] = min(best.get(name, math.inf), t)
            ours_s = best.pop("ours")
            rows.append(GridRow(n, m, ours_s, ran, best, skipped))
            if progress is not None:
                progress.update()
    return rows


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g}"


def format_grid(rows: Sequence[GridRow]) -> str:
    """A Markdown table: N, m, what ran, our ms, each peer's ms, the fastest peer, the ratio;
    then the ratio grid (N down, m across)."""
    names = sorted({p for r in rows for p in r.peers}, key=lambda p: (
        ["np.convolve", "oaconvolve", "fftconvolve", "cupy.convolve"] + [p]).index(p))
    head = ["N", "m", "ran", "ours ms"] + [f"{p} ms" for p in names] + ["fastest peer",
                                                                       "ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r.n), str(r.m), r.ran, _ms(r.ours_s)]
        cells += [_ms(r.peers[p]) if p in r.peers else "-" for p in names]
        best, _ = r.best_peer
        cells += [best, f"{r.ratio:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    signals = sorted({r.n for r in rows})
    masks = sorted({r.m for r in rows})
    by = {(r.n, r.m): r for r in rows}
    lines += ["", "ratio = fastest peer / ours (> 1: ours is faster)", "",
              "| N \\ m | " + " | ".join(map(str, masks)) + " |", "|---|" + "---|" * len(masks)]
    for n in signals:
        lines.append(f"| {n} | " + " | ".join(
            f"{by[n, m].ratio:.2f}" if (n, m) in by else "" for m in masks) + " |")
    return "\n".join(lines)
