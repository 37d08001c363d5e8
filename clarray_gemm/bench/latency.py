"""The latency bench: what one call costs a user, in wall-clock time, next to NumPy doing the
same thing on NumPy arrays, and (where installed) CuPy and PyTorch, all in one run.

Every row is written once against :class:`~clarray_gemm.bench.backends.Backend` and uses only
the public API, so it measures whatever the library does. Times are medians of per-call wall
time (:func:`~clarray_gemm.bench.timing.wall_seconds`: a warm-up, then at least ``min_reps``
calls and about ``budget_s`` seconds; calls slower than ``CAP_S / min_reps`` stop at 5 calls
after ``CAP_S`` seconds, so a slow device finishes the table in minutes):

* ``ours``: the call with the device's queue drained at its end (``device.queue.finish()``;
  CuPy and torch synchronize), i.e. the work is done when the clock stops;
* ``ours + np.asarray``: for device-operand rows, the call and reading its result on the host;
* ``NumPy``: the same row on NumPy arrays. Where NumPy has nothing to do, the row says what
  stands in: ``asarray(a)`` is compared with ``np.array(a)`` (a copy: the least a device array
  needs), ``np.asarray(y)`` with ``np.asarray`` of a NumPy array (no copy);
* ``OpenCL floor``: raw pyopencl on the same device and queue (:mod:`.raw_opencl`): one no-op
  launch + finish under compute rows, one blocking write under ``asarray``, one blocking map
  under ``np.asarray``.

Ratios are the peer's time divided by ours (above 1: ours is faster). NumPy is timed before and
after the others in its row and once more at the end of the run, and its fastest median counts:
on a shared CPU a whole cell can lose 4 ms scheduler ticks several-fold, and a ratio should
never flatter us.
Each row's first result is checked against NumPy's and the note says so if it differs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..device import Device
from . import backends
from .backends import Backend
from .raw_opencl import RawOpenCL
from .report import error_text, markdown_table, micros, noise_note, timing_json
from .timing import Timing, wall_seconds

__all__ = ["Call", "Case", "LatencyRow", "LatencyResult", "cases", "run", "format_table",
           "as_json", "MATMUL_SIZES", "CAP_S"]

MATMUL_SIZES = (16, 64, 256, 1024)
CAP_S = 3.0  # seconds after which a cell of slow calls (> 150 ms each) stops at 5 calls


@dataclass(frozen=True)
class Call:
    """A prepared row on one backend: ``run`` (timed) and an untimed ``setup`` before each call
    whose result ``run`` takes."""

    run: Callable[..., Any]
    setup: Callable[[], Any] | None = None


@dataclass(frozen=True)
class Case:
    """One latency row: ``build`` prepares operands on a backend (untimed) and returns the call.

    ``drain``: the queue is drained at the end of each timed call; ``read``: a second column also
    reads the result with the backend's ``get``; ``floor``: the raw OpenCL call under it.
    """

    op: str
    size: str
    build: Callable[[Backend], Call]
    drain: bool = True
    read: bool = True
    floor: Callable[[RawOpenCL], Callable[[], Any]] | None = None
    note: str = ""


@dataclass
class LatencyRow:
    """One row's timings, keyed ``ours``, ``ours + np.asarray``, ``NumPy``, ``OpenCL floor``,
    ``CuPy``, ``CuPy + get``, ..., and notes (a peer that failed, a wrong result)."""

    op: str
    size: str
    times: dict[str, Timing] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ratio(self, peer: str, column: str = "ours") -> float | None:
        """``peer``'s time over ours: above 1, ours is faster."""
        p, o = self.times.get(peer), self.times.get(column)
        return p.seconds / o.seconds if p and o and o.seconds > 0 else None


@dataclass
class LatencyResult:
    """All rows of one run, the peers that ran and those skipped (with the reason)."""

    rows: list[LatencyRow]
    peers: list[str]
    skipped: dict[str, str]


def _rng_matrix(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _matmul_case(n: int, rng: np.random.Generator) -> Case:
    a, b = _rng_matrix(rng, n, n), _rng_matrix(rng, n, n)

    def build(bk: Backend) -> Call:
        x, y = bk.put(a), bk.put(b)
        return Call(lambda: x @ y)
    return Case("`x @ y` (device operands)", f"{n}^3", build,
                floor=lambda raw: raw.launch_finish)


def _matmul_host_case(n: int, rng: np.random.Generator) -> Case:
    a, b = _rng_matrix(rng, n, n), _rng_matrix(rng, n, n)

    def build(bk: Backend) -> Call:
        operand = bk.host_operand  # ours takes NumPy's b as is; CuPy and torch need it put
        return Call(lambda: bk.get(bk.copy_in(a) @ operand(b)))
    return Case("`np.asarray(asarray(a) @ b)` (NumPy in/out)", f"{n}^3", build, drain=False,
                read=False, note="NumPy: `a @ b`")


def _add_case(n: int, rng: np.random.Generator) -> Case:
    a, b = _rng_matrix(rng, n, n), _rng_matrix(rng, n, n)

    def build(bk: Backend) -> Call:
        x, y = bk.put(a), bk.put(b)
        return Call(lambda: x + y)
    return Case("`x + y`", f"{n}^2", build, floor=lambda raw: raw.launch_finish)


def _asarray_case(n: int, rng: np.random.Generator) -> Case:
    a = _rng_matrix(rng, n, n)
    return Case("`asarray(a)`", f"{n}^2", lambda bk: Call(lambda: bk.copy_in(a)), read=False,
                floor=lambda raw: lambda: raw.write(a), note="NumPy: `np.array(a)` (a copy)")


def _to_host_case(n: int, rng: np.random.Generator) -> Case:
    a = _rng_matrix(rng, n, n)

    def build(bk: Backend) -> Call:
        x = bk.put(a)

        def fresh() -> Any:  # a result just written on the device, as a user's would be
            y = x + x
            bk.sync()
            return y
        return Call(bk.get, setup=fresh)
    return Case("`np.asarray(y)`", f"{n}^2", build, drain=False, read=False,
                floor=lambda raw: lambda: raw.map_read(a.nbytes),
                note="y = x + x fresh before each call (untimed); NumPy: `np.asarray` (no copy)")


def _convolve_case(n: int, m: int, rng: np.random.Generator) -> Case:
    s, w = _rng_matrix(rng, n), _rng_matrix(rng, m)

    def build(bk: Backend) -> Call:
        x, v = bk.put(s), bk.put(w)
        return Call(lambda: bk.convolve(x, v))
    return Case("`np.convolve(x, v)`", f"N={n}, m={m}", build,
                floor=lambda raw: raw.launch_finish)


def _sliced_case(n: int, rng: np.random.Generator) -> Case:
    a, b = _rng_matrix(rng, 2 * n, n), _rng_matrix(rng, n, n)

    def build(bk: Backend) -> Call:
        x, y = bk.put(a), bk.put(b)
        return Call(lambda: x[::2] @ y)
    return Case("`x[::2] @ y` (row-strided view)", f"{n}^3", build,
                floor=lambda raw: raw.launch_finish)


def _batched_case(batch: int, n: int, rng: np.random.Generator) -> Case:
    a, b = _rng_matrix(rng, batch, n, n), _rng_matrix(rng, batch, n, n)

    def build(bk: Backend) -> Call:
        x, y = bk.put(a), bk.put(b)
        return Call(lambda: x @ y)
    return Case("`x @ y` batched", f"{batch} x {n}^3", build, floor=lambda raw: raw.launch_finish)


def cases(matmul_sizes: Sequence[int] = MATMUL_SIZES, seed: int = 0) -> list[Case]:
    """Every row of the latency bench, in table order (float32 throughout)."""
    rng = np.random.default_rng(seed)
    return [*(_matmul_case(n, rng) for n in matmul_sizes),
            *(_matmul_host_case(n, rng) for n in matmul_sizes),
            *(_add_case(n, rng) for n in (64, 1024)),
            *(_asarray_case(n, rng) for n in (64, 1024)),
            *(_to_host_case(n, rng) for n in (64, 1024)),
            _convolve_case(4096, 31, rng), _sliced_case(64, rng), _batched_case(32, 64, rng)]


def _drained(bk: Backend, run: Callable[..., Any]) -> Callable[..., Any]:
    def call(*arg: Any) -> Any:
        result = run(*arg)
        bk.sync()
        return result
    return call


def _measure(row: LatencyRow, case: Case, bk: Backend, label: str, clock: dict[str, Any],
             reference: np.ndarray | None, read: bool = True) -> np.ndarray | None:
    """Time ``case`` on ``bk`` into ``row.times[label]`` (and, with ``read``, the call plus
    ``get`` of its result); returns its first result on the host (None when it failed, with a
    note). A time already in the row is kept when it is faster (NumPy is timed twice)."""
    try:
        call = case.build(bk)
        main = _drained(bk, call.run) if case.drain else call.run
        result = main(call.setup()) if call.setup else main()
        first = result if isinstance(result, np.ndarray) else bk.get(result)
        if reference is not None and not _close(first, reference):
            row.notes.append(f"{label}: WRONG RESULT")
        _keep_faster(row, label, wall_seconds(main, setup=call.setup, **clock))
        if case.read and read:
            read_label = label + (" + np.asarray" if bk.name == "ours" else " + get")
            row.times[read_label] = wall_seconds(lambda: bk.get(call.run()), **clock)
        return first
    except Exception as exc:  # a failed row is reported, and the others still run
        row.notes.append(f"{label} failed: {error_text(exc)}")
        return None


def _keep_faster(row: LatencyRow, label: str, t: Timing) -> None:
    old = row.times.get(label)
    row.times[label] = t if old is None or t.seconds < old.seconds else old


def _close(got: np.ndarray, ref: np.ndarray) -> bool:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return False
    scale = max(float(np.linalg.norm(ref)), 1e-30)
    return float(np.linalg.norm(got - ref)) / scale < 1e-4


def run(device: Device, matmul_sizes: Sequence[int] = MATMUL_SIZES, budget_s: float = 0.2,
        min_reps: int = 20, warmup: int = 2, cap_s: float | None = CAP_S,
        with_peers: bool = True, peers: Sequence[Backend] | None = None,
        progress: Any = None) -> LatencyResult:
    """Measure every row of :func:`cases` on ``device``, NumPy, the OpenCL floor and (with
    ``with_peers``) ``peers``, by default CuPy and PyTorch when importable with a CUDA device.
    A cell whose calls are so slow that ``min_reps`` of them would pass ``cap_s`` seconds stops
    at 5 calls."""
    clock = {"budget_s": budget_s, "min_reps": min_reps, "warmup": warmup, "cap_s": cap_s,
             "capped_min_reps": min(5, min_reps)}
    skipped: dict[str, str] = {}
    if not with_peers:
        peers = []
    elif peers is None:
        peers, skipped = backends.cuda_backends()
    numpy_bk, ours_bk = backends.numpy_backend(), backends.ours(device)
    raw = RawOpenCL(device)
    rows = []
    all_cases = cases(matmul_sizes)
    for case in all_cases:
        if progress is not None:
            progress.note(f"{case.op} {case.size}")
        row = LatencyRow(case.op, case.size, notes=[case.note] if case.note else [])
        reference = _measure(row, case, numpy_bk, "NumPy", clock, None, read=False)
        _measure(row, case, ours_bk, "ours", clock, reference)
        if case.floor is not None:
            row.times["OpenCL floor"] = wall_seconds(case.floor(raw), **clock)
        for bk in peers:
            _measure(row, case, bk, bk.name, clock, reference)
        _measure(row, case, numpy_bk, "NumPy", clock, None, read=False)  # again: the faster counts
        rows.append(row)
        if progress is not None:
            progress.update()
    for case, row in zip(all_cases, rows):  # NumPy once more, away from our calls
        _measure(row, case, numpy_bk, "NumPy", clock, None, read=False)
    return LatencyResult(rows, [bk.name for bk in peers], skipped)


def format_table(result: LatencyResult) -> str:
    """The rows as a Markdown table: times in microseconds, ratios peer / ours."""
    head = ["op", "size", "ours µs", "ours + np.asarray µs", "NumPy µs", "NumPy / ours",
            "OpenCL floor µs"]
    for p in result.peers:
        head += [f"{p} µs", f"{p} + get µs", f"{p} / ours"]
    head.append("note")
    table = []
    for r in result.rows:
        t = r.times
        cells = [r.op, r.size, micros(t.get("ours")), micros(t.get("ours + np.asarray")),
                 micros(t.get("NumPy")), _ratio(r.ratio("NumPy")),
                 micros(t.get("OpenCL floor"))]
        for p in result.peers:
            cells += [micros(t.get(p)), micros(t.get(p + " + get")), _ratio(r.ratio(p))]
        noisy = (noise_note(k, t.get(k)) for k in ("ours", "NumPy"))
        cells.append("; ".join([*r.notes, *(n for n in noisy if n)]))
        table.append(cells)
    return markdown_table(head, table)


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}x"


def as_json(result: LatencyResult, device: Device) -> dict[str, Any]:
    """The run's raw numbers (seconds), for ``--json``."""
    return {"bench": "latency", "device": device.name, "platform": device.info.platform,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "peers": result.peers,
            "skipped_peers": result.skipped,
            "rows": [{"op": r.op, "size": r.size, "notes": r.notes,
                      "times": {k: timing_json(v) for k, v in r.times.items()}}
                     for r in result.rows]}
