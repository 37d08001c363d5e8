"""``python -m clarray_gemm bench dask``: scale-out on dask.distributed, the same task graphs on
one worker and on N (one per OpenCL device, or N CPU workers of one core each), in one run.

Workloads, float32, inputs created on the workers (``array.backend = "clarray_gemm"``,
``da.random``): a row-blocked GEMM (B replicated to every worker), a long convolution
(``map_overlap`` with a halo of (taps - 1) / 2 per side), an elementwise chain, a column
reduction, dask's blocked ``da.linalg.solve`` and a sample sort (each block sorted on its worker,
splitters from samples, buckets exchanged all to all and merged on their workers).

Per workload and cluster: setup (inputs created, persisted and placed: blocks in contiguous runs,
run j on worker j, since a task on device arrays ends once its kernels are queued and dask would
otherwise stack ready tasks on one worker), compute (the fastest of ``repeats``: persist + wait
+ every worker's queue drained with ``clarray_gemm.synchronize``), speedup against one worker,
and the bytes the workers fetched from each other during compute with the rate of those
transfers (dask's ``transfer_incoming_log``). Every result is checked against NumPy in float64:
the GEMM on a slab of rows by a slab of columns, the convolution and the elementwise chain on
windows around every chunk boundary, the reduction, the solve (relative residual) and the sort
(bit for bit) whole.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["Sizes", "SIZES", "SMOKE_SIZES", "Row", "WORKLOADS", "run", "format_table",
           "as_json", "machine_ceiling"]

TOLERANCE = 1e-4  # float32 against float64: relative norm error (solve: relative residual)


@dataclass(frozen=True)
class Sizes:
    """Problem sizes: GEMM n (n x n @ n x n), signal length and taps of the convolution (also the
    elementwise chain's length and the reduction's element count, as (length / 1024) x 1024),
    signal chunks, the solve's n (n x n, 16 right-hand sides), the sort's length, and the GEMM
    size of the machine-ceiling probe."""

    gemm: int = 8192
    signal: int = 1 << 24
    taps: int = 1023
    chunks: int = 4
    solve: int = 4096
    sort: int = 1 << 24
    ceiling: int = 2048


SIZES = Sizes()
SMOKE_SIZES = Sizes(gemm=96, signal=1 << 12, taps=31, chunks=4, solve=64, sort=1 << 12,
                    ceiling=64)


@dataclass
class Row:
    """One workload on one cluster."""

    workload: str
    workers: int
    name: str = ""
    setup_s: float = math.nan
    compute_s: float = math.nan
    moved_bytes: int = 0
    transfer_s: float = 0.0
    error: float = math.nan
    result_type: str = ""
    note: str = ""
    speedup: float = math.nan

    @property
    def ok(self) -> bool:
        return not self.note and self.error <= TOLERANCE

    @property
    def transfer_gbs(self) -> float | None:
        return self.moved_bytes / self.transfer_s / 1e9 if self.transfer_s > 0 else None


# -- placement and clocks ---------------------------------------------------------------------
def _spread(client: Any, x: Any, workers: Sequence[str]) -> Any:
    """``x`` persisted with its blocks (first axis) in W contiguous runs, run j on worker j:
    neighbouring chunks stay on one worker (map_overlap's halo exchanges cross W - 1 chunk
    boundaries), and each worker holds an equal share."""
    import dask.array as da
    count = x.numblocks[0]
    blocks = [client.persist(x.blocks[i], workers=[workers[i * len(workers) // count]])
              for i in range(count)]
    return da.concatenate(blocks, axis=0)


def _same(block: Any, tag: int) -> Any:
    return block


def _renamed(x: Any, tag: int) -> Any:
    """The same blocks under new keys: a repetition computes afresh, not from a held result."""
    return x.map_blocks(_same, tag=tag, dtype=x.dtype, meta=x._meta)


def _transfer_mark(dask_worker: Any) -> float:
    return time.time()


def _transfers_since(dask_worker: Any, marks: dict) -> tuple[int, float]:
    """Bytes this worker fetched from others since its mark, and the seconds those fetches took."""
    since = marks[dask_worker.address]
    moved = [t for t in list(dask_worker.transfer_incoming_log)
             if t["start"] - dask_worker.scheduler_delay >= since]
    return sum(t["total"] for t in moved), sum(t["duration"] for t in moved)


def _timed(client: Any, launch: Callable[[], Any]) -> tuple[Any, float, int, float]:
    """``launch()`` (it submits work and returns collections or futures) until every result is
    in memory and every worker's queue drained: (results, seconds, bytes fetched between
    workers, seconds of those fetches)."""
    import clarray_gemm as cg
    from distributed import wait
    marks = client.run(_transfer_mark)
    start = time.perf_counter()
    result = launch()
    wait(result)
    client.run(cg.synchronize)  # a task ends when its kernels are queued: wait for them too
    seconds = time.perf_counter() - start
    moved = client.run(_transfers_since, marks=marks)
    return (result, seconds, sum(b for b, _ in moved.values()),
            sum(d for _, d in moved.values()))


def _rel(got: Any, want: np.ndarray) -> float:
    got = np.asarray(got, np.float64)
    if got.shape != want.shape:
        return math.inf
    scale = np.linalg.norm(want)
    return float(np.linalg.norm(got - want) / (scale if scale else 1.0))


def _host(x: Any) -> np.ndarray:
    """A dask collection's (or a future's) value on the client as float64 NumPy."""
    value = x.compute() if hasattr(x, "compute") else x
    return np.asarray(value.get() if hasattr(value, "get") else value, np.float64)


# -- workloads --------------------------------------------------------------------------------
def _random(shape: tuple[int, ...], chunks: Any, seed: int, normal: bool = False) -> Any:
    import dask
    import dask.array as da
    with dask.config.set({"array.backend": "clarray_gemm"}):
        state = da.random.RandomState(seed)
        x = (state.standard_normal(shape, chunks=chunks) if normal
             else state.random_sample(shape, chunks=chunks))
        return x.astype(np.float32)


def _block_convolve(block: Any, taps: Any) -> Any:
    return np.convolve(block, taps, mode="same")


def _boundaries(n: int, chunks: int) -> list[int]:
    step = -(-n // chunks)
    return list(range(step, n, step))


class Workload:
    """Inputs (``make``: lazy collections, placed by :func:`_spread` or replicated), the timed
    part (``launch``) and the check against NumPy (``check``: relative error, result type)."""

    name = ""

    def __init__(self, sizes: Sizes, parts: int, workers: Sequence[str]):
        self.sizes, self.parts, self.workers = sizes, parts, list(workers)

    def make(self) -> dict[str, Any]:
        raise NotImplementedError

    replicated: tuple[str, ...] = ()

    def launch(self, client: Any, inputs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def check(self, client: Any, inputs: dict[str, Any], result: Any) -> tuple[float, str]:
        raise NotImplementedError


class Gemm(Workload):
    name = "GEMM"

    def label(self) -> str:
        return f"GEMM {self.sizes.gemm}^2"

    def make(self):
        n = self.sizes.gemm
        return {"a": _random((n, n), (-(-n // self.parts), n), 0),
                "b": _random((n, n), (n, n), 1)}

    replicated = ("b",)

    def launch(self, client, inputs):
        return client.persist(inputs["a"] @ inputs["b"])

    def check(self, client, inputs, result):
        n = self.sizes.gemm
        k = max(1, min(n, 256))
        rows = sorted({0, *_boundaries(n, self.parts)})  # a slab of rows from every block
        got = np.concatenate([_host(result[r:r + k, n - k:]) for r in rows])
        want = np.concatenate([_host(inputs["a"][r:r + k]) for r in rows]) @ _host(
            inputs["b"][:, n - k:])
        return _rel(got, want), type(result[:1, :1].compute()).__name__


class Convolution(Workload):
    name = "convolution"

    def label(self) -> str:
        return f"convolution 2^{self.sizes.signal.bit_length() - 1} x {self.sizes.taps}"

    def make(self):
        s = self.sizes
        self.mask = np.random.default_rng(1).standard_normal(s.taps).astype(np.float32)
        return {"x": _random((s.signal,), -(-s.signal // s.chunks), 2, normal=True)}

    def launch(self, client, inputs):
        return client.persist(inputs["x"].map_overlap(
            _block_convolve, depth=(self.sizes.taps - 1) // 2, boundary=0, taps=self.mask,
            dtype=np.float32))

    def check(self, client, inputs, result):
        s = self.sizes
        pad = s.taps
        errors = []
        for edge in [0, *_boundaries(s.signal, s.chunks), s.signal]:
            lo, hi = max(0, edge - 2 * pad), min(s.signal, edge + 2 * pad)
            wlo, whi = max(0, lo - pad), min(s.signal, hi + pad)
            window = _host(inputs["x"][wlo:whi])
            want = np.convolve(window, self.mask.astype(np.float64), "same")[lo - wlo:
                                                                             hi - wlo]
            errors.append(_rel(_host(result[lo:hi]), want))
        return max(errors), type(result[:1].compute()).__name__


def _chain(x: Any) -> Any:
    return np.sqrt(np.abs(x)) * 2.0 + np.sin(x) * x - np.exp(-x * x)


class Elementwise(Workload):
    name = "elementwise"

    def label(self) -> str:
        return f"elementwise chain 2^{self.sizes.signal.bit_length() - 1}"

    def make(self):
        s = self.sizes
        return {"x": _random((s.signal,), -(-s.signal // s.chunks), 3, normal=True)}

    def launch(self, client, inputs):
        import dask.array as da
        x = inputs["x"]
        return client.persist(da.sqrt(abs(x)) * 2.0 + da.sin(x) * x - da.exp(-x * x))

    def check(self, client, inputs, result):
        s = self.sizes
        errors = []
        for edge in [0, *_boundaries(s.signal, s.chunks), s.signal]:
            lo, hi = max(0, edge - 512), min(s.signal, edge + 512)
            errors.append(_rel(_host(result[lo:hi]), _chain(_host(inputs["x"][lo:hi]))))
        return max(errors), type(result[:1].compute()).__name__


class Reduction(Workload):
    name = "reduction"

    def label(self) -> str:
        return f"sum(axis=0) of {self.sizes.signal // 1024} x 1024"

    def make(self):
        rows = self.sizes.signal // 1024
        return {"m": _random((rows, 1024), (-(-rows // self.sizes.chunks), 1024), 4)}

    def launch(self, client, inputs):
        return client.persist(inputs["m"].sum(axis=0))

    def check(self, client, inputs, result):
        m = inputs["m"]
        want = sum(_host(m.blocks[i]).sum(axis=0) for i in range(m.numblocks[0]))
        return _rel(_host(result), want), type(result.compute()).__name__


class Solve(Workload):
    """dask's blocked ``da.linalg.solve`` (block LU): dask runs ``scipy.linalg.lu`` and
    ``solve_triangular`` on each block, which take host copies of device blocks, so its result
    chunks are NumPy's; the table's result type says so."""

    name = "solve"

    def label(self) -> str:
        return f"da.linalg.solve {self.sizes.solve}^2, 16 rhs"

    def make(self):
        n = self.sizes.solve
        block = -(-n // self.parts)
        return {"a": _random((n, n), (block, block), 5), "b": _random((n, 16), (block, 16), 6)}

    def launch(self, client, inputs):
        import dask.array as da
        n = self.sizes.solve
        a = inputs["a"] + (da.eye(n, chunks=inputs["a"].chunks[0][0], dtype=np.float32)
                           * np.float32(n))  # diagonally dominant: well conditioned
        return client.persist(da.linalg.solve(a, inputs["b"]))

    def check(self, client, inputs, result):
        n = self.sizes.solve
        a = _host(inputs["a"]) + n * np.eye(n)
        b = _host(inputs["b"])
        x = _host(result)
        return (float(np.linalg.norm(a @ x - b) / np.linalg.norm(b)),
                type(result[:1].compute()).__name__)


def _samples(block: Any, count: int) -> np.ndarray:
    """``count`` evenly spaced elements of a sorted block, on the host (they are few)."""
    if not len(block):
        return np.zeros(0, np.float32)
    picked = block[np.linspace(0, len(block) - 1, count).astype(np.int64)]
    return picked.get() if hasattr(picked, "get") else np.asarray(picked)


def _splitters(buckets: int, *samples: np.ndarray) -> np.ndarray:
    pooled = np.sort(np.concatenate(samples))
    return pooled[np.linspace(0, len(pooled), buckets + 1).astype(np.int64)[1:-1]]


def _piece(block: Any, splitters: np.ndarray, j: int) -> Any:
    """The elements of sorted ``block`` that fall in bucket ``j`` (a copy, so the slice travels
    alone rather than its whole block)."""
    edges = np.searchsorted(block, splitters)
    edges = edges.get() if hasattr(edges, "get") else edges
    lo = 0 if j == 0 else int(edges[j - 1])
    hi = len(block) if j == len(splitters) else int(edges[j])
    return block[lo:hi].copy()


def _merge(*pieces: Any) -> Any:
    return np.sort(np.concatenate(pieces))


class Sort(Workload):
    """A sample sort on futures: dask.array has no distributed sort."""

    name = "sort"

    def label(self) -> str:
        return f"sample sort 2^{self.sizes.sort.bit_length() - 1}"

    def make(self):
        s = self.sizes
        return {"x": _random((s.sort,), -(-s.sort // s.chunks), 7, normal=True)}

    def launch(self, client, inputs):
        x = inputs["x"]
        workers = self.workers
        count = x.numblocks[0]
        home = [workers[i * len(workers) // count] for i in range(count)]
        buckets = self.parts
        ordered = [client.compute(x.blocks[i].map_blocks(np.sort), workers=[w])
                   for i, w in enumerate(home)]
        samples = [client.submit(_samples, s, 8 * buckets, workers=[w], pure=False)
                   for s, w in zip(ordered, home)]
        splitters = client.submit(_splitters, buckets, *samples, pure=False)
        out = []
        for j in range(buckets):
            pieces = [client.submit(_piece, s, splitters, j, workers=[w], pure=False)
                      for s, w in zip(ordered, home)]
            out.append(client.submit(_merge, *pieces, pure=False,
                                     workers=[workers[j * len(workers) // buckets]]))
        return out

    def check(self, client, inputs, result):
        parts = client.gather(result)
        got = np.concatenate([np.asarray(p.get()) for p in parts])
        want = np.sort(np.concatenate([np.asarray(b.compute().get())
                                       for b in inputs["x"].blocks]))
        exact = got.shape == want.shape and np.array_equal(got.view(np.uint32),
                                                           want.view(np.uint32))
        return (0.0 if exact else math.inf), type(parts[0]).__name__


WORKLOADS: tuple[type[Workload], ...] = (Gemm, Convolution, Elementwise, Reduction, Solve, Sort)


def measure(client: Any, workload: Workload, repeats: int) -> Row:
    """Set up, time and check one workload on the client's cluster."""
    row = Row(workload.label(), len(workload.workers), workload.name)
    start = time.perf_counter()
    lazy = workload.make()
    inputs = {name: client.persist(x) if name in workload.replicated else _spread(client, x, workload.workers)
              for name, x in lazy.items()}
    from distributed import wait
    wait(list(inputs.values()))
    for name in workload.replicated:
        client.replicate(inputs[name])
    row.setup_s = time.perf_counter() - start
    best = None
    for tag in range(repeats):
        # The same blocks under new keys, each where its source is (no transfer, not timed).
        fresh = {name: (client.persist(_renamed(x, tag)) if name in workload.replicated
                        else _spread(client, _renamed(x, tag), workload.workers))
                 for name, x in inputs.items()}
        wait(list(fresh.values()))
        for name in workload.replicated:
            client.replicate(fresh[name])
        result, seconds, moved, moving = _timed(client, lambda: workload.launch(client, fresh))
        if best is None or seconds < best[1]:
            best = (result, seconds, moved, moving, fresh)
    result, row.compute_s, row.moved_bytes, row.transfer_s, fresh = best
    try:
        row.error, row.result_type = workload.check(client, fresh, result)
    except Exception as exc:  # noqa: BLE001 - keep the timings, say what the check hit
        row.note = f"check failed: {type(exc).__name__}: {str(exc)[:200]}"
    if not row.note and not row.error <= TOLERANCE:
        row.note = "WRONG result"
    return row


def _bare_numpy_gemm(n: int, _tag: int) -> float:
    """Seconds of one plain NumPy float32 GEMM (n x 2n x n) in this worker."""
    a = np.ones((n, 2 * n), np.float32)
    b = np.ones((2 * n, n), np.float32)
    a @ b
    start = time.perf_counter()
    a @ b
    return time.perf_counter() - start


def machine_ceiling(client: Any, workers: Sequence[str], n: int) -> float:
    """The speedup the machine allows right now: plain NumPy GEMMs, one per worker at once,
    against one alone (other processes on a shared machine lower it below the worker count)."""
    alone = client.submit(_bare_numpy_gemm, n, -1, workers=workers[:1], pure=False).result()
    together = client.gather([client.submit(_bare_numpy_gemm, n, i, workers=[w], pure=False)
                              for i, w in enumerate(workers)])
    return len(workers) * alone / max(together)


def run(clusters: Sequence[tuple[str, Callable[[], Any]]], parts: int, sizes: Sizes,
        repeats: int, names: Sequence[str] | None = None, progress: Any = None,
        log: Callable[[str], None] = print) -> tuple[list[Row], dict[str, dict]]:
    """Every workload on every cluster (``clusters``: (label, a function starting it), the
    one-worker cluster first); returns the rows and, per cluster, where its workers run and the
    machine ceiling. ``parts`` (the largest cluster's worker count) sets the block counts, so
    every cluster runs the same task graphs."""
    from distributed import Client
    from clarray_gemm.interop.dask_backend import register_backend
    from clarray_gemm.interop.distributed import worker_device
    register_backend()
    chosen = [w for w in WORKLOADS if not names or w.name in names]
    rows: list[Row] = []
    info: dict[str, dict] = {}
    for label, start in clusters:
        with start() as cluster, Client(cluster) as client:
            client.run(register_backend)
            where = client.run(worker_device)
            workers = sorted(where)
            info[label] = {"workers": [where[w] for w in workers], "addresses": workers,
                           "scheduler": client.scheduler.address,
                           "ceiling": machine_ceiling(client, workers, sizes.ceiling)}
            log(f"{label}: " + "; ".join(info[label]["workers"]))
            for workload in chosen:
                rows.append(measure(client, workload(sizes, parts, workers), repeats))
                if progress is not None:
                    progress.update()
    order = {w.name: i for i, w in enumerate(chosen)}
    rows.sort(key=lambda r: (order[r.name], r.workers))
    alone = {r.workload: r.compute_s for r in rows if r.workers == 1}
    for r in rows:
        r.speedup = alone.get(r.workload, math.nan) / r.compute_s
    return rows, info


def format_table(rows: Sequence[Row], info: dict[str, dict]) -> str:
    """The rows as a Markdown table, one line per workload and cluster."""
    from ..memory.transfers import format_bytes
    from .report import markdown_table

    def rate(r: Row) -> str:
        if not r.moved_bytes:
            return "-"
        gbs = r.transfer_gbs
        return format_bytes(r.moved_bytes) + (f" at {gbs:.3g} GB/s" if gbs else "")

    table = markdown_table(
        ["workload", "workers", "setup s", "compute s", "speedup", "moved between workers",
         "rel. error", "result type", "note"],
        [[r.workload, str(r.workers), f"{r.setup_s:.3f}", f"{r.compute_s:.3f}",
          f"{r.speedup:.2f}x", rate(r), f"{r.error:.1e}", r.result_type, r.note]
         for r in rows])
    ceilings = "; ".join(f"{label}: {v['ceiling']:.2f}x" for label, v in info.items()
                         if len(v["workers"]) > 1)
    return table + f"\n\nmachine ceiling (plain NumPy GEMMs, one per worker at once, against " \
                   f"one alone): {ceilings}"


def as_json(rows: Sequence[Row], info: dict[str, dict], sizes: Sizes) -> dict:
    """The raw numbers for ``--json``."""
    from dataclasses import asdict
    return {"sizes": asdict(sizes), "clusters": info,
            "rows": [{**asdict(r), "transfer_gbs": r.transfer_gbs, "ok": r.ok} for r in rows]}

