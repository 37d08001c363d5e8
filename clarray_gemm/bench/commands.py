"""``python -m clarray_gemm bench latency`` and ``bench programs``: run the bench, print its
Markdown table with a line saying what was measured, and with ``--json FILE`` write the raw
numbers. The command line (``cli.py``) parses the options and hands them here.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

from ..device import Device
from .progress import Progress
from .report import write_json

__all__ = ["latency", "programs", "shapes", "patterns", "random", "sort", "fft", "linalg", "fuse", "dask", "host_load",
           "LATENCY_BUDGET_S",
           "PROGRAMS_BUDGET_S", "SHAPES_BUDGET_S"]

LATENCY_BUDGET_S = 0.2  # seconds of calls per measurement (at least --min-reps calls)
PROGRAMS_BUDGET_S = 1.0
SHAPES_BUDGET_S = 0.03


def host_load() -> str:
    """The host's CPU count and load average, printed with a table: on a shared machine a busy
    CPU slows NumPy's threads and ours alike, and the reader should know."""
    cpus = os.cpu_count() or 1
    try:
        one, five, _ = os.getloadavg()
    except OSError:  # not on every platform
        return f"host: {cpus} CPUs"
    busy = " (busy: expect noisy timings)" if five > 0.5 * cpus else ""
    return f"host: {cpus} CPUs, load average {one:.1f} / {five:.1f} (1 / 5 min){busy}"


def latency(device: Device, args: argparse.Namespace) -> int:
    """The per-call latency table; exit status 1 when a result was wrong or a row failed."""
    from . import latency as bench
    sizes = tuple(args.sizes) if args.sizes else bench.MATMUL_SIZES
    budget = args.budget if args.budget is not None else LATENCY_BUDGET_S
    min_reps = args.min_reps if args.min_reps is not None else 20
    with Progress(len(bench.cases(sizes)), "bench latency", not args.quiet, unit="row") as bar:
        result = bench.run(device, sizes, budget_s=budget, min_reps=min_reps,
                           with_peers=not args.no_peers, progress=bar)
    capped = (f" (calls over {bench.CAP_S / min_reps * 1e3:.0f} ms: 5 or more in "
              f"{bench.CAP_S:g} s)" if min_reps > 5 else "")
    print(f"per-call wall time, median of >= {min_reps} calls and ~{budget:g} s per cell"
          f"{capped}, after a warm-up; float32. "
          "ours: device operands, queue drained at the end of each call; "
          "'+ np.asarray' / '+ get': the result also read on the host; ratios: peer time / ours "
          "(>1: ours is faster); OpenCL floor: raw pyopencl on the same queue (one no-op launch "
          "+ finish, a blocking write, a blocking map)")
    print(host_load())
    print(bench.format_table(result))
    for name, why in result.skipped.items():
        print(f"\n{name} not measured: {why}")
    if args.json:
        write_json(args.json, {**bench.as_json(result, device), "host": host_load()})
        print(f"\nraw numbers written to {args.json}")
    failed = [r for r in result.rows if any("WRONG" in n or "ours failed" in n for n in r.notes)]
    return 1 if failed else 0


def programs(device: Device, args: argparse.Namespace) -> int:
    """The six-program table; exit status 1 when a program failed or gave a wrong answer."""
    from . import programs as bench
    budget = args.budget if args.budget is not None else PROGRAMS_BUDGET_S
    min_reps = args.min_reps if args.min_reps is not None else 5
    with Progress(len(bench.PROGRAMS), "bench programs", not args.quiet, unit="program") as bar:
        rows = bench.run(device, budget_s=budget, min_reps=min_reps, progress=bar)
    print(f"plain NumPy programs run on NumPy arrays and on device arrays (inputs converted "
          f"once, outside the clock; results read with np.asarray inside it); per-call wall "
          f"time, median of >= {min_reps} calls and ~{budget:g} s, the fastest of three such "
          f"measurements per side, interleaved; float32; ratio: NumPy time / "
          f"ours (>1: ours is faster); errors: relative norm error against the same program in "
          f"float64 NumPy (labels exact), limit {bench.TOLERANCE:g}")
    print(host_load())
    print(bench.format_table(rows))
    if args.json:
        write_json(args.json, {**bench.as_json(rows, device), "host": host_load()})
        print(f"\nraw numbers written to {args.json}")
    return 0 if all(r.ok for r in rows) else 1


def shapes(device: Device, args: argparse.Namespace) -> int:
    """The GEMM shape grid against the fastest peer: the distribution per dtype and the worst
    cells; exit status 1 when an answer was wrong."""
    from . import shapes as bench
    smoke = args.smoke
    sizes = tuple(args.sizes) if args.sizes else (bench.SMOKE_SIZES if smoke else bench.SIZES)
    dtypes = args.dtypes or (("float32", "int32") if smoke else bench.DTYPES)
    grid = bench.cells(sizes, dtypes, batched=not smoke, transposed=not smoke)
    budget = args.budget if args.budget is not None else SHAPES_BUDGET_S
    with Progress(len(grid), "bench shapes", not args.quiet, unit="cell") as bar:
        rows = bench.run(device, grid, budget_s=budget, progress=bar,
                         cuda_peers=not args.no_peers)
    peer = ("the faster of torch (cuBLAS, TF32 off) and CuPy" if device.info.is_gpu
            else "NumPy on host arrays")
    _grid_report(bench, rows, args,
                 f"a @ b on device arrays (automatic kernel choice), wall clock per call with the "
                 f"queue drained, median of >= 3 calls and ~{budget:g} s per cell; peer: {peer}, "
                 f"same run; ratio = peer / ours (> 1: ours is faster)")
    return 1 if any(r.note.startswith("WRONG") for r in rows) else 0


def _grid_report(bench: Any, rows: list, args: argparse.Namespace, intro: str) -> None:
    """What ``bench shapes`` and ``bench patterns`` print, and their ``--json`` file."""
    print(intro)
    print(host_load())
    print(bench.format_report(rows))
    if args.json:
        write_json(args.json, bench.as_json(rows))
        print(f"\nraw numbers written to {args.json}")


def patterns(device: Device, args: argparse.Namespace) -> int:
    """The call-form grid against CuPy and torch (NumPy on CPU devices): the distribution per
    peer and the worst cells; exit status 1 when an answer was wrong."""
    from . import patterns as bench
    shapes = bench.SMOKE_SHAPES if args.smoke else bench.SHAPES
    budget = args.budget if args.budget is not None else SHAPES_BUDGET_S
    with Progress(len(shapes) * len(bench.PATTERNS), "bench patterns", not args.quiet,
                  unit="cell") as bar:
        rows = bench.run(device, shapes, budget_s=budget, progress=bar,
                         cuda_peers=not args.no_peers)
    _grid_report(bench, rows, args,
                 f"NumPy's spelling on device arrays, float32, wall clock per call with the "
                 f"device drained, median of >= 3 calls and ~{budget:g} s per cell; peers in the "
                 f"same run; ratio = peer / ours (> 1: ours is faster)")
    return 1 if any(r.note == "WRONG result" for r in rows) else 0


def random(device: Device, args: argparse.Namespace) -> int:
    """Random numbers drawn into device arrays against CuPy's generator (NumPy's on devices
    without CUDA peers); exit status 1 when a draw's values were implausible."""
    from . import rng as bench
    sizes = bench.SMOKE_SIZES if args.smoke else (tuple(args.sizes) if args.sizes
                                                   else bench.SIZES)
    budget = args.budget if args.budget is not None else SHAPES_BUDGET_S
    with Progress(len(sizes) * len(bench.DRAWS), "bench random", not args.quiet,
                  unit="cell") as bar:
        rows = bench.run(device, sizes, budget_s=budget, progress=bar,
                         cuda_peers=not args.no_peers)
    _grid_report(bench, rows, args,
                 f"clarray_gemm.random.default_rng(seed).METHOD(size=n) into device arrays, wall "
                 f"clock per call with the device drained, median of >= 3 calls and ~{budget:g} "
                 f"s per cell; peer: CuPy's default_rng (NumPy's on the host without CUDA), same "
                 f"run; ratio = peer / ours (> 1: ours is faster)")
    return 1 if any(r.note == "WRONG values" for r in rows) else 0


def _case_grid(device: Device, args: argparse.Namespace, bench: Any, what: str,
               calls: str, peer: str) -> int:
    """A ``case_grid`` bench (``bench``: its module of cases): time, report, exit status 1
    when an answer was wrong."""
    cases = bench.SMOKE_CASES if args.smoke else bench.CASES
    budget = args.budget if args.budget is not None else SHAPES_BUDGET_S
    with Progress(len(cases), f"bench {what}", not args.quiet, unit="case") as bar:
        rows = bench.run(device, cases, budget_s=budget, progress=bar,
                         cuda_peers=not args.no_peers)
    _grid_report(bench, rows, args,
                 f"{calls} on device arrays, wall clock per call with the device drained, "
                 f"median of >= 3 calls and ~{budget:g} s per case; peer: {peer}, same run; "
                 f"ratio = peer / ours (> 1: ours is faster)")
    return 1 if any(r.note == "WRONG result" for r in rows) else 0


def sort(device: Device, args: argparse.Namespace) -> int:
    """Sorting and the functions computed from it against CuPy (NumPy on devices without CUDA
    peers); exit status 1 when an answer was wrong."""
    from . import sorts
    return _case_grid(device, args, sorts, "sort", "np.sort, np.argsort, np.unique, np.median, "
                      "np.bincount, np.histogram", "CuPy (NumPy without CUDA)")


def fft(device: Device, args: argparse.Namespace) -> int:
    """``np.fft`` against CuPy's cuFFT (NumPy without CUDA peers); exit status 1 when an answer
    was wrong."""
    from . import ffts
    return _case_grid(device, args, ffts, "fft", "np.fft", "CuPy (cuFFT; NumPy without CUDA)")


def linalg(device: Device, args: argparse.Namespace) -> int:
    """``np.linalg`` solves, inverses, determinants and Cholesky factors against CuPy's
    cuSOLVER (NumPy without CUDA peers); exit status 1 when an answer was wrong."""
    from . import linalgs
    return _case_grid(device, args, linalgs, "linalg", "np.linalg",
                      "CuPy (cuSOLVER; NumPy without CUDA)")


def fuse(device: Device, args: argparse.Namespace) -> int:
    """``clarray_gemm.fuse``d expressions against the same code unfused, ``cupy.fuse`` (CUDA
    machines), NumPy and numexpr (where installed); exit status 1 when an answer was wrong."""
    from . import fusions
    sizes = fusions.SMOKE_SIZES if args.smoke else tuple(args.sizes or fusions.SIZES)
    budget = args.budget if args.budget is not None else SHAPES_BUDGET_S
    with Progress(len(sizes) * len(fusions.EXPRESSIONS), "bench fuse", not args.quiet,
                  unit="cell") as bar:
        rows = fusions.run(device, sizes, budget_s=budget, progress=bar,
                           cuda_peers=not args.no_peers)
    _grid_report(fusions, rows, args,
                 f"fused and unfused NumPy expressions on device arrays (float32), peers in the "
                 f"same run (NumPy and numexpr on NumPy arrays); wall clock per call with the "
                 f"device drained, median of >= 3 calls and ~{budget:g} s per cell; ratio = "
                 f"other / fused (> 1: fused is faster)")
    return 1 if any(r.note == "WRONG result" for r in rows) else 0


def dask(device: Device, args: argparse.Namespace) -> int:
    """Scale-out on dask.distributed: GEMM, convolution, an elementwise chain, a reduction, a
    blocked solve and a sample sort on one worker and on N (``--devices``: one per device;
    ``--cpu-workers N``: N workers of ``--cpu-threads`` cores on the default device), each
    checked against NumPy; exit status 1 when an answer was wrong."""
    import importlib.util
    if importlib.util.find_spec("distributed") is None:
        print("bench dask needs dask.distributed: pip install 'clarray_gemm[dask]'")
        return 1
    from dataclasses import replace
    from . import scaleout as bench
    from ..interop.distributed import device_cluster
    sizes = bench.SMOKE_SIZES if args.smoke else bench.SIZES
    given = {"gemm": args.gemm, "taps": args.taps, "chunks": args.chunks, "solve": args.solve,
             "signal": 1 << args.conv_log2 if args.conv_log2 else None,
             "sort": 1 << args.sort_log2 if args.sort_log2 else None}
    sizes = replace(sizes, **{k: v for k, v in given.items() if v})
    specs = list(args.devices) if args.devices else [device] * (args.cpu_workers or 2)
    specs = [int(s) if isinstance(s, str) and s.isdigit() else s for s in specs]
    repeats = 1 if args.smoke else args.repeats

    from distributed import Scheduler

    def cluster(chosen):
        # no dashboard: it would take port 8787, or warn where another cluster holds it
        scheduler = {"cls": Scheduler, "options": {"dashboard": False, "host": args.host}}
        return lambda: device_cluster(chosen, cpu_threads=args.cpu_threads, host=args.host,
                                      scheduler=scheduler, silence_logs=40)

    clusters = [("1 worker", cluster(specs[:1])), (f"{len(specs)} workers", cluster(specs))]
    names = args.workloads
    count = len(names or bench.WORKLOADS) * len(clusters)
    with Progress(count, "bench dask", not args.quiet, unit="workload") as bar:
        rows, info = bench.run(clusters, len(specs), sizes, repeats, names=names, progress=bar,
                               log=bar.note)
    print(f"float32, inputs created on the workers and placed before the clock (setup); compute: "
          f"the fastest of {repeats}, persist + wait + every worker's queue drained; speedup: "
          f"1 worker's compute / this one's (same task graphs); moved: bytes workers fetched "
          f"from each other during compute, at the rate of those fetches (dask's "
          f"transfer_incoming_log); errors against float64 NumPy (solve: relative residual; "
          f"sort: bit for bit), limit {bench.TOLERANCE:g}; listening on {args.host}")
    print(host_load())
    for label, v in info.items():
        print(f"{label}: " + "; ".join(v["workers"]))
    print(bench.format_table(rows, info))
    if args.json:
        write_json(args.json, {**bench.as_json(rows, info, sizes), "host": host_load()})
        print(f"\nraw numbers written to {args.json}")
    return 0 if all(r.ok for r in rows) else 1
