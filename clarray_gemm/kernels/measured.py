"""Kernel choice by measurement: per device, the wall-clock time of every kernel that fits, at
the points of a shape grid, and the lookup that turns them into a ranking for any problem.

A table holds, per operation family and dtype (``"matmul/float32"``), a list of points
``[batch, M, N, K, {kernel: seconds}]``: each fitting kernel forced on that product, timed per
call with the queue drained (``python -m clarray_gemm tune --choices`` measures them). A problem
ranks the kernels by their times at the point nearest to it (distance in log2 of each size, so
4000 x 16 x 16 is nearest to 4097 x 10 x 10 rather than to 2048 x 33 x 33) and at the points
almost as near (a K of 1024 between measured 512 and 2048 takes both); the catalogue then runs
the fastest of those that fit the problem (``Catalogue.choose``). Kernels not measured there
come after, in rank order: a hand-set rank never beats a measurement.

Tables come from two places, the first that has the family and dtype wins:

1. the device's tuning store (``kernels/tuned.py``: ``measured`` section, written by ``tune``);
2. the tables shipped in ``kernels/choice_tables/*.json`` for devices measured before release,
   each naming the device names it applies to (``"devices": ["H100", "H200"]``: substrings of
   the OpenCL device name) and where and when it was measured.
"""
from __future__ import annotations

import json
import math
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..device import Device, DeviceInfo
from ..memo import Memo
from .constants import constant

__all__ = ["Point", "PointSet", "Ranking", "TABLE_DIR", "valid_points", "nearest", "ranked",
           "ranking",
           "shipped_tables", "table_key", "set_store_lookup"]

TABLE_DIR = Path(__file__).with_name("choice_tables")
"""Where the tables shipped with the package live (package data)."""

BATCH_WEIGHT = 0.5
"""How much a factor of 2 in the batch counts against a factor of 2 in M, N or K when finding
the nearest point (a batch of small products behaves more like one product than M does)."""


@dataclass(frozen=True)
class Point:
    """One measured product and the wall-clock seconds per call of each kernel that ran it."""

    batch: int
    M: int
    N: int
    K: int
    seconds: tuple[tuple[str, float], ...]  # fastest first

    def describe(self) -> str:
        return f"{self.batch} x {self.M} x {self.N} x {self.K}" if self.batch > 1 else (
            f"{self.M} x {self.N} x {self.K}")


@dataclass(frozen=True)
class Ranking:
    """The kernels in the order the measurements put them, and where they come from."""

    names: tuple[str, ...]
    point: Point
    source: str
    points: int = 1  # how many measured points ranked the kernels

    def reason(self, chosen: str) -> str:
        times = ", ".join(f"{name} {_us(s)}" for name, s in self.point.seconds[:4])
        others = (f" and {self.points - 1} more within a factor of 2"
                  if self.points > 1 else "")
        return (f"measured fastest that fits: {chosen}, at the nearest measured product "
                f"(batch x M x N x K = {self.point.describe()}: {times}){others}; "
                f"{self.source}")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} us" if seconds < 1e-2 else f"{seconds * 1e3:.1f} ms"


def table_key(family: str, dtype: Any) -> str:
    return f"{family}/{np.dtype(dtype).name}"


def valid_points(value: Any) -> bool:
    """True for a list of ``[batch, M, N, K, {kernel: seconds}]`` with positive sizes."""
    if not isinstance(value, list):
        return False
    for p in value:
        if not (isinstance(p, list) and len(p) == 5
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in p[:4])
                and isinstance(p[4], dict) and p[4]
                and all(isinstance(k, str) and isinstance(v, (int, float))
                        and not isinstance(v, bool) and math.isfinite(v) and v > 0
                        for k, v in p[4].items())):
            return False
    return True


class PointSet:
    """Measured points with their sizes' log2 kept as an array (a lookup is one vector
    operation, not a Python loop over hundreds of points)."""

    def __init__(self, points: Sequence[Point]):
        self.points = tuple(points)
        sizes = np.array([(p.batch, p.M, p.N, p.K) for p in self.points], dtype=np.float64)
        self.logs = np.log2(np.maximum(sizes.reshape(-1, 4), 1.0))
        self.batched = self.logs[:, 0] > 0

    def __len__(self) -> int:
        return len(self.points)


def _points(raw: list) -> PointSet:
    return PointSet(Point(b, m, n, k, tuple(sorted(t.items(), key=lambda kv: kv[1])))
                    for b, m, n, k, t in raw)


NEIGHBOURHOOD = 1.0
"""Points up to this much farther than the nearest one (in the distance of :func:`nearest`: one
factor of 2 in one size) rank the kernels together: a product between two grid points (K =
1024 between 512 and 2048) is ranked by both, not by whichever the tie gives."""


LARGE_BATCHED: float = constant("measured.large_batched")
"""log2 of how far past the largest measured batched matrices (in M, N or K) a batched product
must reach to be ranked as the one product of batch * M rows it resembles (single points),
not by the batches of small squares the table measures (tuning data, with its evidence)."""


def _distances(points: PointSet, batch: int, M: int, N: int, K: int):
    want = np.log2(np.maximum(np.array([batch, M, N, K], dtype=np.float64), 1.0))
    weights = np.array([BATCH_WEIGHT, 1.0, 1.0, 1.0])
    batched = points.batched
    if batch > 1 and batched.any() and not batched.all():
        largest = points.logs[batched, 1:].max(axis=0)
        if (want[1:] - largest >= LARGE_BATCHED).any():
            # (8, 4096, 1024) @ (8, 1024, 1024): a point of (16, 64, 64, 64) says nothing of it
            folded = np.log2(np.array([1.0, float(batch) * max(M, 1), max(N, 1), max(K, 1)]))
            return np.where(batched, np.inf, np.abs(points.logs - folded) @ weights)
    dist = np.abs(points.logs - want) @ weights
    same_kind = batched == (batch > 1)
    if same_kind.any():
        dist = np.where(same_kind, dist, np.inf)
    return dist


def nearest(points: PointSet, batch: int, M: int, N: int, K: int) -> Point | None:
    """The measured point nearest to the product (sum of |log2| distances per size; the
    batch weighted by :data:`BATCH_WEIGHT`), among the batched points for a batched product
    and the single ones for a single product where the table has such points; ties go to the
    earlier point."""
    if not len(points):
        return None
    return points.points[int(np.argmin(_distances(points, batch, M, N, K)))]


def ranked(points: PointSet, batch: int, M: int, N: int, K: int
           ) -> tuple[tuple[str, ...], Point, int] | None:
    """The kernels ranked over the neighbourhood of the product: the points within
    :data:`NEIGHBOURHOOD` of the nearest, each weighted by 1 / (distance + 0.5); a kernel's score
    is the weighted mean of log(its time / the point's best), a kernel a point did not time
    counted at twice that point's slowest. Returns the names best first, the nearest point and
    how many points ranked."""
    if not len(points):
        return None
    dist = _distances(points, batch, M, N, K)
    near = np.flatnonzero(dist <= dist.min() + NEIGHBOURHOOD)
    weights = {int(i): 1.0 / (float(dist[i]) + 0.5) for i in near}
    names = dict.fromkeys(n for i in near for n, _ in points.points[i].seconds)
    score = dict.fromkeys(names, 0.0)
    for i, w in weights.items():
        times = dict(points.points[i].seconds)
        best, worst = min(times.values()), max(times.values())
        for name in names:
            score[name] += w * math.log(times.get(name, 2.0 * worst) / best)
    nearest_point = points.points[int(np.argmin(dist))]
    order = sorted(names, key=lambda n: score[n])
    return tuple(order), nearest_point, len(near)


@dataclass(frozen=True)
class _Table:
    devices: tuple[str, ...]
    source: str
    points: dict[str, PointSet]


_shipped: list[_Table] | None = None
_shipped_lock = threading.Lock()


def shipped_tables() -> list[_Table]:
    """The tables in :data:`TABLE_DIR` (read once; a malformed file is skipped with a warning)."""
    global _shipped
    if _shipped is not None:
        return _shipped
    with _shipped_lock:
        tables = []
        for path in sorted(TABLE_DIR.glob("*.json")):
            try:
                data = json.loads(path.read_text())
                devices = tuple(str(d) for d in data["devices"])
                points = {k: _points(v) for k, v in data["points"].items() if valid_points(v)}
                source = f"measured on {data['measured_on']}, {data['date']}"
            except (OSError, ValueError, KeyError, TypeError) as exc:
                warnings.warn(f"the kernel-choice table {path.name} is unusable ({exc}); "
                              "skipped", RuntimeWarning, stacklevel=2)
                continue
            tables.append(_Table(devices, source, points))
        _shipped = tables
    return _shipped


def _shipped_for(info: DeviceInfo) -> list[_Table]:
    name = info.name.upper()
    return [t for t in shipped_tables() if any(d.upper() in name for d in t.devices)]


# The tuning store's measured points for (device, key) -> (Point tuple, source) or None. Set by
# kernels/tuned.py (which reads the store); None until then.
_store_lookup = None


def set_store_lookup(lookup) -> None:
    """Install ``lookup(device, key) -> (raw points, source) | None`` (the tuning store's)."""
    global _store_lookup
    _store_lookup = lookup
    _parsed.clear()


# Each list of points the store holds, parsed once: keyed by the list's identity, which the
# entry (holding the list) keeps unique while it lives; a re-read store holds new lists.
_parsed: Memo[tuple[list, PointSet]] = Memo("measured points parsed", capacity=256)


def _table(device: Device, key: str) -> tuple[PointSet, str] | None:
    if _store_lookup is not None:
        found = _store_lookup(device, key)
        if found is not None:
            raw, source = found
            parsed = _parsed.get((device, key, id(raw)), lambda: (raw, _points(raw)))
            return parsed[1], source
    for table in _shipped_for(device.info):
        if key in table.points:
            return table.points[key], table.source
    return None


def ranking(device: Device, family: str, dtype: Any, batch: int, M: int, N: int, K: int
            ) -> Ranking | None:
    """The kernels ranked by the measurement nearest to this product on ``device``, or None
    where no table covers the device, family and dtype."""
    found = _table(device, table_key(family, dtype))
    if found is None or not found[0]:
        return None
    points, source = found
    names, point, count = ranked(points, batch, M, N, K)
    return Ranking(names, point, source, count)


def measured_names(tables: Iterable[_Table]) -> set[str]:
    """Every kernel name the tables mention (tests check each is in its catalogue)."""
    return {name for t in tables for pts in t.points.values() for p in pts.points
            for name, _ in p.seconds}
