"""The radix sort of long 1-D rows (``opencl/radix.cl``) on an NVIDIA GPU against CuPy (CUB):
wall clock of ``np.sort`` / ``np.argsort`` on device arrays beside ``cupy.sort`` /
``cupy.argsort`` (queue drained after each call, answers checked against NumPy bit for bit),
then the device time of each launch of one 2^24 sort (profiling START->END; count / scan /
scatter of one pass, each kernel's sum over the passes) for the default shape and with the
digit width and tile forced (``RadixShape``: bits a digit, work-group size, items a
work-item): float32 and int32 sorts (keys alone) and float32 argsort ((key, index) pairs).

    python3 benches/probes/radix_scatter.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import clarray_gemm as cg  # noqa: E402
import pyopencl as cl  # noqa: E402
from clarray_gemm.ops import radix_sort  # noqa: E402

SIZES = (1 << 16, 1 << 20, 1 << 24)
BUDGET = 1.0   # seconds of calls a measurement


def say(*args) -> None:
    print(*args, flush=True)


def wall(call, sync, budget: float = BUDGET) -> float:
    """Median seconds per call, the queue drained after each."""
    call()
    sync()
    times, spent = [], 0.0
    while spent < budget or len(times) < 5:
        t0 = time.perf_counter()
        call()
        sync()
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
        if len(times) >= 200:
            break
    return statistics.median(times)


def data(rng, n: int, dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype)
        a[rng.integers(0, n, 8)] = np.nan   # NaN last, -0.0 and 0.0 equal: NumPy's order
        a[rng.integers(0, n, 8)] = -0.0
        a[rng.integers(0, n, 8)] = 0.0
        return a
    return rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


def comparison(dev, cp) -> None:
    say("\n## wall us per call (median), device arrays; ratio = cupy / ours (>1: ours faster)")
    say("| op | dtype | n | cupy | ours | ratio | answer |")
    say("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    sync, sync_cp = dev.queue.finish, cp.cuda.Device().synchronize
    for op, dtype in (("sort", np.float32), ("sort", np.int32), ("argsort", np.float32)):
        for n in SIZES:
            a = data(rng, n, dtype)
            xa, xc = cg.asarray(a, device=dev), cp.asarray(a)
            ours = (lambda: np.sort(xa)) if op == "sort" else (
                lambda: np.argsort(xa, kind="stable"))
            theirs = (lambda: cp.sort(xc)) if op == "sort" else (lambda: cp.argsort(xc))
            want = np.sort(a, kind="stable") if op == "sort" else np.argsort(a, kind="stable")
            ok = same(np.asarray(ours()), want)
            t_cp, t_us = wall(theirs, sync_cp), wall(ours, sync)
            say(f"| {op} | {np.dtype(dtype)} | 2^{n.bit_length() - 1} | {t_cp * 1e6:.0f} | "
                f"{t_us * 1e6:.0f} | {t_cp / t_us:.2f} | {'ok' if ok else 'WRONG'} |")


_recorded: list = []
_enqueue = cl.enqueue_nd_range_kernel


def _recording(queue, kernel, *args, **kwargs):
    event = _enqueue(queue, kernel, *args, **kwargs)
    _recorded.append((kernel.function_name, event))
    return event


def launches(call, dev, calls: int = 5) -> list[tuple[str, float]]:
    """Each launch of ``call``: its kernel name and median device time (us)."""
    runs = []
    cl.enqueue_nd_range_kernel = _recording
    try:
        for _ in range(calls):
            _recorded.clear()
            call()
            dev.queue.finish()
            runs.append([(name, (e.profile.end - e.profile.start) * 1e-3)
                         for name, e in _recorded])
    finally:
        cl.enqueue_nd_range_kernel = _enqueue
    return [(name, statistics.median(r[i][1] for r in runs))
            for i, (name, _) in enumerate(runs[-1])]


def per_kernel(dev, op: str, dtype) -> None:
    """Each launch of one 2^24 sort (``op`` "sort": no indices; "argsort": (key, index) pairs)
    over forced shapes; a shape past the device's local memory is left out."""
    rng = np.random.default_rng(1)
    n = 1 << 24
    a = data(rng, n, dtype)
    arg = op == "argsort"
    want = np.argsort(a, kind="stable") if arg else np.sort(a, kind="stable")
    xa = cg.asarray(a, device=dev)
    shapes = [None] + [radix_sort.RadixShape(bits, wg, items) for bits in (8, 6, 4)
                       for wg in (128, 256) for items in (2, 4, 8, 16)]
    say(f"\n## device us per launch, {op} {np.dtype(dtype)} 2^24 (the default shape: "
        f"{radix_sort.radix_shape(dev, 4, arg)}); each shape's sum by kernel and answer")
    for shape in shapes:
        if shape is not None and radix_sort._scatter_local_bytes(shape, 4, arg) > \
                dev.info.local_mem_bytes:
            say(f"{shape}: past the device's local memory")
            continue
        out = cg.empty(n, np.int64 if arg else dtype, device=dev)

        def call():
            radix_sort.sort_rows_radix(xa, out, 1, n, arg, shape)
        try:
            each = launches(call, dev)
        except cl.Error as error:
            say(f"{shape}: {type(error).__name__} {error}")
            continue
        ok = same(np.asarray(out), want)
        total = sum(t for _, t in each)
        by_name: dict[str, float] = {}
        for name, t in each:
            by_name[name] = by_name.get(name, 0.0) + t
        parts = ", ".join(f"{k} {v:.0f}" for k, v in by_name.items())
        say(f"{shape or 'default'}: {len(each)} launches, {total:.0f} us ({parts}); "
            f"{'ok' if ok else 'WRONG'}")
        if shape is None:
            say("    one pass: " + ", ".join(f"{k} {t:.1f}" for k, t in each[:3]))


def main() -> None:
    import cupy as cp
    dev = cg.get_device("NVIDIA")
    say(f"# {dev}")
    comparison(dev, cp)
    dev.enable_profiling()
    try:
        for op, dtype in (("sort", np.float32), ("sort", np.int32), ("argsort", np.float32)):
            per_kernel(dev, op, dtype)
    finally:
        dev.disable_profiling()


if __name__ == "__main__":
    main()
