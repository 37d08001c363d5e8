"""Which GEMM kernel is fastest where: every kernel that fits, forced on each product of a shape
grid, timed per call as a user sees it (device arrays in, the queue drained after each call),
checked against NumPy first. The result is the table ``kernels/measured.py`` ranks kernels by
(``python -m clarray_gemm tune --choices``); the tables shipped for known devices come from the
same function (``--export``).
"""
from __future__ import annotations

import datetime
import json
import statistics
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..array import asarray
from ..device import Device
from ..kernels import tuned
from ..kernels.measured import table_key
from ..kernels.registry import CATALOGUES
from ..ops.matmul import matmul

__all__ = ["GRID_SIZES", "BATCHED_GRID", "SMOKE_SIZES", "grid", "measure_point", "measure",
           "save", "export", "merge", "merge_into_table", "CANDIDATE_ORDER"]

GRID_SIZES: tuple[int, ...] = (1, 8, 33, 128, 512, 2048, 4097)
"""Sizes per axis of the single products measured (every M x N x K combination)."""

BATCHED_GRID: tuple[tuple[int, int], ...] = tuple(
    (batch, n) for batch in (16, 256, 4096) for n in (4, 16, 64))
"""(batch, n) of the batched products measured: batch x (n x n @ n x n)."""

SMOKE_SIZES: tuple[int, ...] = (1, 8, 33)

CANDIDATE_ORDER = ("tf32x3", "wgmma", "mma", "dmma", "gpu_blocked", "thin", "small", "gemv_split",
                   "gemv", "const_b", "cpu", "vec", "regtile", "tiled", "image", "naive")
"""The order candidates are timed in: the usually fast first, so that a kernel far slower than
the best so far is cut off after one call."""

CUTOFF = 8.0
"""A kernel whose first timed call takes this many times the best median so far is recorded
with that one call and not repeated."""


def grid(sizes: Sequence[int] = GRID_SIZES,
         batched: Sequence[tuple[int, int]] = BATCHED_GRID) -> list[tuple[int, int, int, int]]:
    """The (batch, M, N, K) products to measure."""
    single = [(1, m, n, k) for m in sizes for n in sizes for k in sizes]
    return single + [(b, n, n, n) for b, n in batched]


def _random(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "iu":  # small values: every product is exact in the dtype
        return rng.integers(0, 4, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def _ordered(names: Iterable[str]) -> list[str]:
    rank = {n: i for i, n in enumerate(CANDIDATE_ORDER)}
    return sorted(names, key=lambda n: rank.get(n, len(rank)))


def _close(got: np.ndarray, ref: np.ndarray, dtype: np.dtype) -> bool:
    if dtype.kind in "iu":
        return bool(np.array_equal(got, ref.astype(dtype)))
    tol = {2: 2e-2, 4: 1e-4, 8: 1e-10}[dtype.itemsize] * 10
    scale = np.linalg.norm(ref) or 1.0
    return bool(np.linalg.norm(got.astype(np.float64) - ref) <= tol * scale)


def measure_point(device: Device, a_host: np.ndarray, b_host: np.ndarray,
                  names: Sequence[str], budget_s: float = 0.05,
                  say: Callable[[str], Any] = lambda s: None,
                  needed: Sequence[str] = ()) -> dict[str, float]:
    """Median wall-clock seconds per call of ``matmul(a, b, kernel=name)`` for each kernel in
    ``names`` that fits and computes the right answer (sampled rows against NumPy). With
    ``needed``, those kernels go first and, where none of them runs, nothing is timed (``{}``:
    a table gaining them has nothing to compare there)."""
    names = [n for n in names if n in needed] + [n for n in names if n not in needed]
    dtype = a_host.dtype
    a, b = asarray(a_host, device=device), asarray(b_host, device=device)
    rows = sorted({0, a_host.shape[-2] // 2, a_host.shape[-2] - 1})
    wide = np.int64 if dtype.kind in "iu" else np.float64   # (bfloat16's kind is "V")
    ref = np.matmul(a_host[..., rows, :].astype(wide), b_host.astype(wide))
    times: dict[str, float] = {}
    for name in names:
        if needed and name not in needed and not times.keys() & set(needed):
            return {}
        try:
            got = np.asarray(matmul(a, b, kernel=name))[..., rows, :]
        except ValueError:
            continue  # the kernel does not fit this product (or dtype)
        except Exception as exc:  # a driver or build failure: that kernel is not a candidate
            say(f"    {name}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            continue
        if not _close(got, ref, dtype):
            say(f"    {name}: WRONG RESULT, not a candidate")
            continue

        def call() -> float:
            t0 = time.perf_counter()
            matmul(a, b, kernel=name)
            device.synchronize()
            return time.perf_counter() - t0
        first = call()
        best = min(times.values(), default=float("inf"))
        if first > CUTOFF * best:
            times[name] = first
            continue
        samples = [first]
        spent = first
        while len(samples) < 20 and (len(samples) < 3 or spent < budget_s):
            samples.append(call())
            spent += samples[-1]
        times[name] = statistics.median(samples)
    return times


def measure(device: Device, dtypes: Sequence[Any], points: Sequence[tuple[int, int, int, int]],
            budget_s: float = 0.05, kernels: Sequence[str] | None = None,
            say: Callable[[str], Any] = print,
            checkpoint: Callable[[dict[str, list]], Any] | None = None,
            kernels_for: Callable[[np.dtype, tuple], Sequence[str] | None] | None = None
            ) -> dict[str, list]:
    """``{"matmul/<dtype>": [[batch, M, N, K, {kernel: seconds}], ...]}`` over ``points``;
    ``checkpoint(results)`` after each point (a driver that aborts the process mid-grid then
    loses one point, not the grid); ``kernels_for(dtype, point)``: the kernels to time at that
    point instead of ``kernels`` (None: skip it)."""
    names = _ordered(kernels or CATALOGUES["matmul"].names())
    rng = np.random.default_rng(20261127)
    results: dict[str, list] = {}
    for dt in (np.dtype(d) for d in dtypes):
        hosts: dict[tuple, np.ndarray] = {}

        def host(shape: tuple) -> np.ndarray:
            if shape not in hosts:
                hosts[shape] = _random(rng, shape, dt)
            return hosts[shape]
        table = results.setdefault(table_key("matmul", dt), [])
        start = time.perf_counter()
        for i, (batch, M, N, K) in enumerate(points):
            lead = (batch,) if batch > 1 else ()
            here = names if kernels_for is None else kernels_for(dt, (batch, M, N, K))
            if here is None:
                continue
            times = measure_point(device, host(lead + (M, K)), host(lead + (K, N)),
                                  _ordered(here), budget_s, say,
                                  needed=kernels or () if kernels_for is not None else ())
            if times:
                table.append([batch, M, N, K, {k: float(f"{v:.4g}") for k, v in times.items()}])
                best = min(times, key=times.get)
                say(f"  {dt} {batch}x{M}x{N}x{K}: {best} {times[best] * 1e6:.1f} us "
                    f"({len(times)} kernels; {i + 1}/{len(points)}, "
                    f"{time.perf_counter() - start:.0f} s)")
                if checkpoint is not None:
                    checkpoint(results)
            elif kernels_for is None:   # (merging: none of the added kernels fits here)
                warnings.warn(f"no GEMM kernel ran {dt} {batch}x{M}x{N}x{K}", RuntimeWarning)
        hosts.clear()
    return results


def save(device: Device, results: dict[str, list]) -> Path:
    """Store ``results`` in ``device``'s tuning store (dispatch uses them from the next plan)."""
    from ..kernels import plans
    path = tuned.store_path(device)
    store = tuned.TuningStore.load(path)
    store.device = store.device or tuned.device_identity(device)
    today = datetime.date.today().isoformat()
    for key, points in results.items():
        store.measured[key] = {"points": points, "date": today}
    store.save()
    tuned.forget(path)
    plans.clear_all()
    return path


def export(device: Device, results: dict[str, list], path: Path, devices: Sequence[str],
           command: str) -> None:
    """Write ``results`` as a table to ship (``kernels/choice_tables/``): for the device names
    containing one of ``devices``, with the device, driver, date and command that measured it."""
    data = {"devices": list(devices),
            "measured_on": tuned.device_identity(device),
            "date": datetime.date.today().isoformat(),
            "command": command,
            "points": results}
    path.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")


def merge(base: dict[str, list], new: dict[str, list]) -> dict[str, list]:
    """``base``'s points with ``new``'s kernel times added (a kernel measured again replaces its
    old time; points only ``new`` has are appended): a table gains a kernel without measuring
    the others again."""
    out: dict[str, list] = {}
    for key in set(base) | set(new):
        points = {tuple(p[:4]): dict(p[4]) for p in base.get(key, [])}
        for p in new.get(key, []):
            points.setdefault(tuple(p[:4]), {}).update(p[4])
        out[key] = [[*k, v] for k, v in points.items()]
    return out


CONTESTED = 1.3
"""Where a table gains a kernel (``merge_plan``), the kernels within this factor of a point's
best are timed again beside it: times from another run (another machine, another boot) differ
by a few microseconds, as much as the kernels differ at small sizes."""

HOPELESS = 1.5
"""A point where the added kernel already measured this factor slower than the best is not
timed again."""


def merge_plan(base: dict[str, list], added: Sequence[str], changed: bool = False
               ) -> Callable[[np.dtype, tuple], Sequence[str] | None]:
    """``measure``'s ``kernels_for`` for adding the kernels ``added`` to the table ``base``:
    at each point, ``added`` and the kernels contesting it (within CONTESTED of the best), so
    that every comparison that decides a choice comes from one run; points where ``added``
    measured HOPELESS times slower than the best are skipped, unless ``changed`` (the kernels
    changed since the table timed them: their old times say nothing)."""
    tables = {key: {tuple(p[:4]): p[4] for p in points} for key, points in base.items()}

    def kernels_for(dtype: np.dtype, point: tuple) -> Sequence[str] | None:
        times = tables.get(table_key("matmul", dtype), {}).get(tuple(point))
        if not times:
            return list(added)
        others = {k: v for k, v in times.items() if k not in added}
        if not others:
            return list(added)
        best = min(others.values())
        old = [times[k] for k in added if k in times]
        if not changed and old and len(old) == len(added) and min(old) > HOPELESS * best:
            return None
        return list(added) + [k for k, v in others.items() if v <= CONTESTED * best]
    return kernels_for


def merge_into_table(device: Device, results: dict[str, list], path: Path,
                     command: str) -> dict[str, list]:
    """Add ``results`` to the shipped-form table at ``path`` (its devices and first
    measurement kept, ``command`` appended to its commands); returns the merged points."""
    data = json.loads(path.read_text())
    merged = merge(data["points"], results)
    data["points"] = merged
    data["command"] = f"{data['command']}; then {command} (on " \
                      f"{tuned.device_identity(device)}, {datetime.date.today().isoformat()})"
    path.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    return merged
