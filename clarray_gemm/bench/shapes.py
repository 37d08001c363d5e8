"""``python -m clarray_gemm bench shapes``: ``a @ b`` over a grid of shapes, dtypes, batches and
layouts against the fastest peer in the same run, reported as a distribution.

Ours: device arrays in, ``a @ b`` (the automatic choice), the queue drained after each call.
Peers: on CUDA machines the faster of torch (cuBLAS; TF32 off) and CuPy, on their own device
arrays, synchronized after each call; elsewhere NumPy on host arrays. Ratio = peer / ours
(> 1: ours is faster). Each cell's answer is checked on sampled rows against NumPy.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from ..array import asarray
from ..device import Device
from ..dtypes import bfloat16_dtype, compute_dtype
from ..ops.matmul import plan_for
from .peers import CudaPeers
from .timing import microseconds as _us, per_call_seconds

__all__ = ["SIZES", "SMOKE_SIZES", "DTYPES", "Cell", "Row", "cells", "run", "summary",
           "worst", "format_report"]

SIZES: tuple[int, ...] = (1, 7, 10, 33, 127, 256, 1024, 4097)
"""Sizes per axis: 1, a small odd size, two-digit sizes that are not powers of two, a prime
below a power of two, powers of two, one size above 4096."""

SMOKE_SIZES: tuple[int, ...] = (1, 7, 33)

DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16", "int32", "int8")

BATCHES: tuple[int, ...] = (10, 100, 1000, 10000)
BATCH_SIDES: tuple[int, ...] = (3, 8, 16, 33, 64)
TRANSPOSED_SIDES: tuple[int, ...] = (33, 127, 1024)


@dataclass(frozen=True)
class Cell:
    """One product: ``batch`` x (M x K) @ (K x N); ``layout`` says which operands are
    transposed views ("NN", "TN", "NT", "TT"); ``shared_b``: one B broadcast over the batch."""

    dtype: str
    batch: int
    M: int
    N: int
    K: int
    layout: str = "NN"
    shared_b: bool = False

    def describe(self) -> str:
        lead = f"{self.batch} x " if self.batch > 1 else ""
        extra = (f" {self.layout}" if self.layout != "NN" else "") + (
            " (B shared)" if self.shared_b else "")
        return f"{self.dtype} {lead}{self.M}x{self.N}x{self.K}{extra}"


@dataclass
class Row:
    cell: Cell
    ours_s: float | None = None
    peer_s: float | None = None
    peer: str = ""
    kernel: str = ""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.ours_s and self.peer_s:
            return self.peer_s / self.ours_s
        return None


def cells(sizes: Sequence[int] = SIZES, dtypes: Sequence[str] = DTYPES, batched: bool = True,
          transposed: bool = True) -> list[Cell]:
    """The grid: every (M, N, K) of ``sizes`` per dtype; batches of small squares (own and
    shared B); transposed operands at a few squares."""
    out = []
    for dt in dtypes:
        out += [Cell(dt, 1, m, n, k) for m in sizes for n in sizes for k in sizes]
        if batched:
            out += [Cell(dt, b, s, s, s, "NN", shared) for b in BATCHES for s in BATCH_SIDES
                    for shared in (False, True)]
        if transposed:
            out += [Cell(dt, 1, s, s, s, lay) for s in TRANSPOSED_SIDES
                    for lay in ("TN", "NT", "TT")]
    return out


def _dtype(name: str) -> np.dtype | None:
    return bfloat16_dtype() if name == "bfloat16" else np.dtype(name)


def _random(rng: np.random.Generator, shape: tuple, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu":
        return rng.integers(-3, 4, shape).astype(dt)
    return rng.uniform(-1, 1, shape).astype(dt)


def _operands(cell: Cell, dt: np.dtype, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Host A and B as NumPy arrays with the cell's layout (transposed views where asked)."""
    lead = (cell.batch,) if cell.batch > 1 else ()
    a = _random(rng, lead + ((cell.K, cell.M) if cell.layout[0] == "T" else (cell.M, cell.K)), dt)
    b_lead = () if cell.shared_b else lead
    b = _random(rng, b_lead + ((cell.N, cell.K) if cell.layout[1] == "T" else (cell.K, cell.N)),
                dt)
    if cell.layout[0] == "T":
        a = np.swapaxes(a, -1, -2)
    if cell.layout[1] == "T":
        b = np.swapaxes(b, -1, -2)
    return a, b


def _device_view(device: Device, x: np.ndarray):
    """``x`` on the device with the same layout: a transposed view stays a transposed view."""
    if x.flags.c_contiguous or x.ndim < 2:
        return asarray(x, device=device)
    return asarray(np.ascontiguousarray(np.swapaxes(x, -1, -2)), device=device).swapaxes(-1, -2)


def _check(got: np.ndarray, a: np.ndarray, b: np.ndarray, dt: np.dtype) -> str:
    rows = sorted({0, a.shape[-2] // 2, a.shape[-2] - 1})
    wide = np.int64 if dt.kind in "iu" else np.float64
    ref = np.matmul(a[..., rows, :].astype(wide), b.astype(wide))
    got = got[..., rows, :]
    if dt.kind in "iu":
        return "" if np.array_equal(got, ref.astype(dt)) else "WRONG (integers differ)"
    err = np.linalg.norm(got.astype(np.float64) - ref) / (np.linalg.norm(ref) or 1.0)
    tol = 2e-2 if dt.itemsize == 2 else 1e-4 if dt.itemsize == 4 else 1e-10
    return "" if err <= tol else f"WRONG (relative error {err:.1e})"


def _kernel_of(a, b) -> str:
    plan = plan_for(a, b)
    if plan.kind != "kernel":
        return plan.kind
    name = plan.choice.variant.name if plan.choice is not None else "?"
    return name + (" (edges split)" if plan.edge_note else "")


NUMPY_ROUNDS = 3
"""Rounds of ours and NumPy's timings taken in turn where NumPy is the peer (CPU devices)."""


def run(device: Device, grid: Iterable[Cell], budget_s: float = 0.03,
        progress: Any = None, cuda_peers: bool = True) -> list[Row]:
    """Time every cell of ``grid``: ours and the fastest peer, in the same run."""
    peers = CudaPeers.on(device) if cuda_peers else None
    rng = np.random.default_rng(20261127)
    rows = []
    for cell in grid:
        row = Row(cell)
        rows.append(row)
        if progress is not None:
            progress.note(cell.describe())
        dt = _dtype(cell.dtype)
        if dt is None:
            row.note = "skipped: no bfloat16 in NumPy (pip install ml_dtypes)"
        elif dt.kind in "iu" and compute_dtype(dt, device.info) is None:
            row.note = f"skipped: no {dt} on {device.name}"
        else:
            try:
                _time_cell(device, cell, dt, rng, row, peers, budget_s)
            except Exception as exc:  # noqa: BLE001 - one failing cell is reported, not fatal
                row.note = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
        if progress is not None:
            progress.update()
    return rows


def _time_cell(device: Device, cell: Cell, dt: np.dtype, rng: np.random.Generator, row: Row,
               peers: CudaPeers | None, budget_s: float) -> None:
    a, b = _operands(cell, dt, rng)
    da, db = _device_view(device, a), _device_view(device, b)
    row.note = _check(np.asarray(da @ db), a, b, dt)
    row.kernel = _kernel_of(da, db)
    sync = device.synchronize
    if peers is None and dt.name != "bfloat16":
        # NumPy shares the host's cores and caches with us: rounds taken in turn, each side's
        # best round, so that a burst of other work on the machine does not land on one side
        ours, numpy = [], []
        for _ in range(NUMPY_ROUNDS):
            ours.append(per_call_seconds(lambda: (da @ db, sync()), budget_s / NUMPY_ROUNDS))
            numpy.append(per_call_seconds(lambda: a @ b, budget_s / NUMPY_ROUNDS))
        row.ours_s, found = min(ours), [("NumPy", min(numpy))]
    else:
        row.ours_s = per_call_seconds(lambda: (da @ db, sync()), budget_s)
        found = peers.matmul_times(a, b, budget_s) if peers is not None else []
    if found:
        row.peer, row.peer_s = min(found, key=lambda nt: nt[1])


def summary(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per dtype: cells timed, median ratio, cells below 0.5x and 0.8x, cells at 1.0x or more."""
    out = []
    for dt in dict.fromkeys(r.cell.dtype for r in rows):
        ratios = sorted(r.ratio for r in rows if r.cell.dtype == dt and r.ratio is not None)
        if not ratios:
            continue
        out.append({"dtype": dt, "cells": len(ratios), "median": statistics.median(ratios),
                    "below_0.5": sum(x < 0.5 for x in ratios),
                    "below_0.8": sum(x < 0.8 for x in ratios),
                    "at_least_1.0": sum(x >= 1.0 for x in ratios), "worst": ratios[0]})
    return out


def cpu_rule(rows: Sequence[Row]) -> dict[str, int]:
    """The CPU devices' target counted per dtype-less grid: cells whose peer takes 50 us or more
    and run below 0.9x it, and smaller cells that take more than the peer's time + 5 us."""
    timed = [r for r in rows if r.ratio is not None]
    big = [r for r in timed if r.peer_s >= 50e-6]
    return {"big": len(big), "big_below_0.9": sum(r.ratio < 0.9 for r in big),
            "small": len(timed) - len(big),
            "small_over_5us": sum(r.ours_s > r.peer_s + 5e-6 for r in timed
                                  if r.peer_s < 50e-6)}


def worst(rows: Sequence[Row], count: int = 20) -> list[Row]:
    return sorted((r for r in rows if r.ratio is not None), key=lambda r: r.ratio)[:count]


def format_report(rows: Sequence[Row], count: int = 20) -> str:
    """The distribution per dtype, then the ``count`` worst cells with the kernel each ran."""
    lines = ["| dtype | cells | median | < 0.5x | < 0.8x | >= 1.0x | worst |",
             "|---|---|---|---|---|---|---|"]
    for s in summary(rows):
        lines.append(f"| {s['dtype']} | {s['cells']} | {s['median']:.2f}x | {s['below_0.5']} | "
                     f"{s['below_0.8']} | {s['at_least_1.0']} | {s['worst']:.2f}x |")
    if any(r.peer == "NumPy" for r in rows):
        c = cpu_rule(rows)
        lines += ["", f"against NumPy: {c['big_below_0.9']} of {c['big']} cells whose NumPy call "
                      f"takes 50 us or more run below 0.9x; {c['small_over_5us']} of {c['small']} "
                      f"smaller cells take more than NumPy's time + 5 us"]
    lines += ["", f"{count} worst cells:", "",
              "| cell | ours us | peer us | peer | ratio | kernel |", "|---|---|---|---|---|---|"]
    for r in worst(rows, count):
        lines.append(f"| {r.cell.describe()} | {_us(r.ours_s)} | {_us(r.peer_s)} | {r.peer} | "
                     f"{r.ratio:.2f}x | {r.kernel} |")
    problems = [r for r in rows if r.note]
    if problems:
        lines += ["", "notes:"] + [f"- {r.cell.describe()}: {r.note}" for r in problems[:40]]
    return "\n".join(lines)


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"summary": summary(rows),
            "rows": [{**asdict(r.cell), "ours_s": r.ours_s, "peer_s": r.peer_s, "peer": r.peer,
                      "kernel": r.kernel, "note": r.note} for r in rows]}
