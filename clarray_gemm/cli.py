"""The command line: ``python -m clarray_gemm info | demo | bench | tune``.

* ``info``: every OpenCL device with what kernel selection depends on, the default marked.
* ``demo``: multiply and convolve on the default device; prints the kernel that ran, the check
  against NumPy and the speed next to NumPy's, measured in the same run (exit status 1 if a
  check fails).
* ``bench [matmul|convolve|latency|programs|shapes|patterns|random|sort|fft|linalg|fuse|dask]``:
  the benchmark tables (see ``clarray_gemm.bench``); ``latency`` and ``programs`` are wall-clock
  time per call; ``dask`` is scale-out on dask.distributed, 1 worker against N.
* ``tune``: search kernel parameters for this device and store the winners, and measure the
  host/OpenCL crossovers (see ``clarray_gemm.tuning``); ``--crossover-only`` measures just the
  crossovers, ``--reset`` removes the stored results.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np

from . import __version__
from .device import Device, NoDeviceError, default_device, devices, get_device

__all__ = ["main"]


# -- info --------------------------------------------------------------------------------------
def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"


def _info_rows(d: Device) -> list[tuple[str, str]]:
    i = d.info
    try:
        driver = d.cl_device.driver_version.strip()
    except Exception:  # some drivers do not report it
        driver = "?"
    images = (f"yes, image2d up to {i.image2d_max_width} x {i.image2d_max_height}"
              if i.image_support else "no")
    return [
        ("platform", f"{i.platform} (vendor {i.vendor}, driver {driver})"),
        ("type", i.type + (" (simulator)" if i.is_simulator else "")),
        ("driver probe", d.verdict.summary()),
        ("compute units", str(i.compute_units)),
        ("max work-group size", str(i.max_work_group_size)),
        ("local memory", _size(i.local_mem_bytes)
         + (" (emulated in global memory)" if i.local_mem_is_global else "")),
        ("constant memory", _size(i.constant_mem_bytes)),
        ("global memory", f"{_size(i.global_mem_bytes)} (max allocation "
                          f"{_size(i.max_alloc_bytes)})"),
        ("unified host memory", "yes" if i.host_unified_memory else "no"),
        ("images", images),
        ("fp64 / fp16", f"{'yes' if i.fp64 else 'no'} / {'yes' if i.fp16 else 'no'}"),
        ("preferred vector width", f"float {i.preferred_vector_width_float}, double "
                                   f"{i.preferred_vector_width_double}, int "
                                   f"{i.preferred_vector_width_int} (native float "
                                   f"{i.native_vector_width_float})"),
    ]


def cmd_info(args: argparse.Namespace) -> int:
    """Print every OpenCL device with the capabilities dispatch depends on."""
    from . import settings
    from .drivers import registration, vetting
    from .kernels import tuned
    all_devs = devices(all=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vetting.vet(d.cl_device for d in all_devs)  # every driver's verdict, probed in parallel
    with warnings.catch_warnings(record=True) as caught_default:
        warnings.simplefilter("always")
        try:
            default = default_device()
        except RuntimeError as exc:
            default = None
            print(f"no usable default device: {exc}")
    print(f"clarray_gemm {__version__}: {len(all_devs)} OpenCL device(s)")
    reg = registration()
    if reg.folder is not None:
        print(f"pip drivers registered: {reg.intel_library} (OCL_ICD_VENDORS={reg.folder})")
    print(f"cache: {settings.cache_dir()} (driver verdicts, program caches, tuning)")
    for d in all_devs:
        mark = "  [default]" if d == default else ""
        print(f"\n{d}{mark}")
        for name, value in _info_rows(d):
            print(f"  {name:<24}{value}")
        if d.usable:
            stored = tuned.store_for(d).entries
            print(f"  {'tuning':<24}{len(stored)} stored result(s) in {tuned.store_path(d)}")
    for w in caught + caught_default:
        print(f"\nnote: {w.message}")
    return 0


# -- demo --------------------------------------------------------------------------------------
def _rel_error(got: Any, ref: np.ndarray) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(got - ref) / max(float(np.linalg.norm(ref)), 1e-300))


def _ran(explain: str) -> str:
    """What an ``explain_*`` text says runs: the kernel and its parameters, or the host path."""
    lines = explain.splitlines()
    fields = dict(ln.split(": ", 1) for ln in lines if ": " in ln)
    if "kernel" in fields:
        return f"kernel {fields['kernel']}; {fields.get('parameters', '')}"
    return lines[-1]


def _speed_line(ours_s: float, numpy_s: float, flops: float) -> str:
    def rate(s: float) -> str:
        return f"{flops / s * 1e-9:.3g} GFLOP/s"
    return (f"  speed:  {ours_s * 1e3:.2f} ms = {rate(ours_s)}; NumPy {numpy_s * 1e3:.2f} ms = "
            f"{rate(numpy_s)}; ratio {numpy_s / ours_s:.3g}x NumPy")


def _demo_matmul(device: Device, n: int, budget: float) -> bool:
    from . import asarray, explain_matmul, host_path
    from .bench.timing import host_seconds
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    x, y = asarray(a, device=device), asarray(b, device=device)
    explain = explain_matmul(x, y)
    print(f"matmul {n}x{n} @ {n}x{n} float32")
    print(f"  runs:   {_ran(explain)}")
    reference = a.astype(np.float64) @ b.astype(np.float64)
    err = _rel_error(x @ y, reference)
    ok = err < 1e-4
    print(f"  check:  relative error {err:.2e} against NumPy in float64: "
          f"{'OK' if ok else 'FAILED'} (limit 1e-4)")
    ref = host_seconds(lambda: a @ b, budget_s=budget)
    if "kernel: " in explain:
        ours = host_seconds(lambda: np.asarray(x @ y), budget_s=budget)
        print(_speed_line(ours.seconds, ref.seconds, 2.0 * n**3)
              + " (device operands, result read on the host)")
        return ok
    # The host path ran NumPy's own call on the buffers: a speed ratio would compare NumPy with
    # itself. Check and time the OpenCL kernel it stands in for, and say what the path adds.
    with host_path(False):
        kernel_explain, kernel_err = explain_matmul(x, y), _rel_error(x @ y, reference)
        kernel = host_seconds(lambda: np.asarray(x @ y), budget_s=budget)
    ok = ok and kernel_err < 1e-4
    print(f"  OpenCL: {_ran(kernel_explain)}: relative error {kernel_err:.2e} "
          f"{'OK' if kernel_err < 1e-4 else 'FAILED'}")
    print(_speed_line(kernel.seconds, ref.seconds, 2.0 * n**3).replace("speed: ", "kernel:")
          + " (device operands, result read on the host)")
    ours = host_seconds(lambda: np.asarray(x @ y), budget_s=budget)
    print(f"  host:   `a @ b` runs NumPy's own call here (faster than the kernel on this "
          f"device); with the device arrays around it: {ours.seconds * 1e3:.2f} ms, NumPy "
          f"{ref.seconds * 1e3:.2f} ms")
    return ok


def _demo_convolve(device: Device, n: int, m: int, budget: float) -> bool | None:
    from . import asarray
    from .bench.timing import host_seconds
    from ._dispatch import FUNCTIONS
    if np.convolve not in FUNCTIONS:
        print("convolve: no device implementation in this installation (skipped)")
        return None
    from .ops.convolve import explain_convolve
    rng = np.random.default_rng(1)
    s = rng.standard_normal(n).astype(np.float32)
    w = rng.standard_normal(m).astype(np.float32)
    xs, xw = asarray(s, device=device), asarray(w, device=device)
    explain = explain_convolve(xs, xw)
    print(f"convolve signal {n} with mask {m} float32 (mode 'full')")
    print(f"  runs:   {_ran(explain)}")
    err = _rel_error(np.convolve(xs, xw), np.convolve(s.astype(np.float64), w.astype(np.float64)))
    ok = err < 1e-4
    print(f"  check:  relative error {err:.2e} against NumPy in float64: "
          f"{'OK' if ok else 'FAILED'} (limit 1e-4)")
    ours = host_seconds(lambda: np.asarray(np.convolve(xs, xw)), budget_s=budget)
    ref = host_seconds(lambda: np.convolve(s, w), budget_s=budget)
    print(_speed_line(ours.seconds, ref.seconds, 2.0 * n * m)
          + " (direct-method flops; device operands, result read on the host)")
    return ok


def _guarded(what: str, fn: Any, *args: Any) -> bool | None:
    """Run one part of the demo; an exception is a failed check, reported in one line."""
    try:
        return fn(*args)
    except Exception as exc:  # the demo reports every failure and goes on
        first = next((ln for ln in str(exc).splitlines() if "error" in ln.lower()),
                     str(exc).splitlines()[0] if str(exc) else "")
        print(f"  {what} FAILED: {type(exc).__name__}: {first.strip()[:200]}")
        return False


def cmd_demo(args: argparse.Namespace) -> int:
    """Multiply and convolve on the device; print the kernel, the check and the speed."""
    device = get_device(args.device) if args.device is not None else default_device()
    sim = device.info.is_simulator
    n = args.size or (64 if sim else 512)
    print(f"device: {device} - {device.info.type} on {device.info.platform}"
          + (" (simulator: small sizes)" if sim else ""))
    budget = 0.05 if sim else 0.3
    results = [_guarded("matmul", _demo_matmul, device, n, budget),
               _guarded("convolve", _demo_convolve, device, 4096 if sim else 2**20,
                        15 if sim else 31, budget)]
    failed = [r for r in results if r is False]
    print("all checks passed" if not failed else f"{len(failed)} check(s) FAILED")
    return 1 if failed else 0


# -- bench -------------------------------------------------------------------------------------
def _bench_device(args: argparse.Namespace) -> Device:
    return get_device(args.device) if args.device is not None else default_device()


def _bench_convolve_grid(device: Device, args: argparse.Namespace, dtype: np.dtype) -> int:
    """``bench convolve --grid``: ours against the fastest peer at every (N, m) of the grid."""
    from .bench import convolve_grid as grid
    from .bench.progress import Progress
    signals = args.sizes or grid.GRID_SIGNALS
    masks = args.masks or grid.GRID_MASKS
    cells = sum(1 for n in signals for m in masks if m < n)
    budget = 0.3 if args.budget is None else args.budget
    with Progress(cells, "bench convolve --grid", not args.quiet) as bar:
        rows = grid.run(device, signals, masks, dtype, budget_s=budget, repeats=args.repeats,
                        progress=bar)
    print(f"dtype {dtype}; np.asarray(np.convolve(a, v)) with NumPy a, v ('full'), wall clock "
          f"per call: the fastest of {args.repeats} interleaved medians (budget {budget} s); "
          f"ran: what dispatch chose")
    print(grid.format_grid(rows))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a benchmark and print its table (Markdown) and, with ``--plot``, save a chart."""
    from .bench import report
    from .bench.progress import Progress
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib: pip install 'clarray_gemm[bench]' "
                         "(or pip install matplotlib)")
    device = _bench_device(args)
    what = args.what
    print(f"# {what} on {device.name} ({device.info.platform}), {time.strftime('%Y-%m-%d')}")
    if what == "dask" and args.devices and args.cpu_workers:
        raise UsageError("give --devices or --cpu-workers, not both")
    if what in ("latency", "programs", "shapes", "patterns", "random", "sort", "fft",
                "linalg", "fuse", "dask"):
        from .bench import commands
        return getattr(commands, what)(device, args)
    args.budget = 0.5 if args.budget is None else args.budget
    dtype = np.dtype(args.dtype)
    if what == "convolve" and args.grid:
        return _bench_convolve_grid(device, args, dtype)
    if what == "matmul":
        from .bench import matmul as runner
        from .kernels import gemm
        names = args.kernels or gemm.CATALOGUE.names()
        sizes = args.sizes or runner.default_sizes(device)
        extra: dict[str, Any] = {}
    else:
        from .bench import convolve as runner
        if not runner.available():
            print("convolve: no device implementation in this installation")
            return 1
        from .kernels import conv
        names = args.kernels or conv.CATALOGUE.names()
        sizes = args.sizes or runner.default_sizes(device)
        extra = {"mask": args.mask}
    with Progress(len(names) * len(sizes), f"bench {what}", not args.quiet) as bar:
        rows = runner.run(device, sizes, names, dtype=dtype, budget_s=args.budget,
                          with_peers=not args.no_peers, progress=bar, **extra)
    print(f"dtype {dtype}; device ms: device-only time from OpenCL profiling events (operands "
          f"already on the device); e2e: NumPy arrays in, NumPy array out, with the bytes "
          f"copied; ratios: peer time / our time in this run (>1: ours is faster)")
    print(report.format_table(rows))
    if args.plot:
        xlabel = "N (N x N @ N x N)" if what == "matmul" else f"signal length ({args.mask}-tap mask)"
        report.plot(rows, args.plot, f"{what} on {device.name} ({dtype})", xlabel)
        print(f"chart saved to {args.plot}")
    return 0


# -- tune --------------------------------------------------------------------------------------
def cmd_tune(args: argparse.Namespace) -> int:
    """Search kernel parameters and store those that beat the defaults, then measure the
    host/OpenCL crossovers; or only the crossovers; or ``--reset``."""
    from . import tuning
    if args.reset:
        device = get_device(args.device) if args.device is not None else None
        removed = tuning.reset(device)
        where = "for " + str(device) if device else "for every device"
        print(f"removed {len(removed)} tuning file(s) {where} from {tuning.cache_dir()}")
        for p in removed:
            print(f"  {p}")
        return 0
    device = _bench_device(args)
    if args.choices:
        return _tune_choices(args, device)
    if not args.crossover_only:
        _tune_parameters(args, device)
    if not args.no_crossover:
        _tune_crossovers(args, device)
    print(f"\nstored in {tuning.store_path(device)}")
    return 0


def _tune_choices(args: argparse.Namespace, device: Device) -> int:
    """``tune --choices``: time every fitting GEMM kernel over the shape grid and store the
    table kernel choice reads (and, with ``--export``, write it as a table to ship)."""
    import json

    from .kernels import tuned
    from .tuning import choices
    sizes = args.sizes or (choices.SMOKE_SIZES if args.quick else choices.GRID_SIZES)
    batched = () if args.quick else choices.BATCHED_GRID
    points = choices.grid(sizes, batched)
    dtypes = args.dtype if args.dtype_given else ["float32", "float64", "float16", "bfloat16",
                                                  "int32"]
    from .dtypes import bfloat16_dtype, compute_dtype
    usable = []
    for name in dtypes:
        dt = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
        if dt is None:
            print("skipping bfloat16: NumPy has none without ml_dtypes (pip install ml_dtypes)")
        elif dt.kind in "fiu" and compute_dtype(dt, device.info) is None:
            print(f"skipping {name}: no {name} kernel on {device.name}")
        else:
            usable.append(dt)
    print(f"timing every fitting GEMM kernel on {device} ({device.info.platform}): "
          f"{len(points)} products x {', '.join(dt.name for dt in usable)}")
    command = "python -m clarray_gemm " + " ".join(args.command_line)

    base = None
    if args.merge:   # this table's points, to which the kernels measured now are added
        base = json.loads(Path(args.merge).read_text())["points"]

    def checkpoint(results: dict) -> None:  # what is measured survives a stop midway
        choices.save(device, results if base is None else choices.merge(base, results))
        if args.export:
            choices.export(device, results, Path(args.export),
                           args.export_devices or [device.info.name], command)
    results = choices.measure(device, usable, points, budget_s=args.budget or 0.05,
                              kernels=args.kernels,
                              say=(lambda s: None) if args.quiet else print,
                              checkpoint=checkpoint,
                              kernels_for=None if base is None or not args.kernels
                              else choices.merge_plan(base, args.kernels, args.changed))
    checkpoint(results)
    print(f"\nstored in {tuned.store_path(device)}")
    if args.export:
        print(f"table written to {args.export}")
    if args.merge:
        choices.merge_into_table(device, results, Path(args.merge), command)
        print(f"added to {args.merge}")
    return 0


def _tune_parameters(args: argparse.Namespace, device: Device) -> None:
    from . import tuning
    fams = list(tuning.families()) if args.family == "all" else [args.family]
    print(f"tuning {', '.join(fams)} on {device} ({device.info.platform})")
    stored = 0
    for fam in fams:
        outcomes = tuning.tune(device, family=fam, dtypes=args.dtype, sizes=args.sizes,
                               kernels=args.kernels, quick=args.quick, limit=args.limit,
                               progress=not args.quiet)
        print(f"\n| {fam} kernel | size | defaults ms | best ms | speedup | stored | "
              "parameters / note |")
        print("|---|---|---|---|---|---|---|")
        for o in outcomes:
            _, variant, dt, cls = o.key.split("/")
            params = ", ".join(f"{k}={v}" for k, v in sorted((o.best_params or {}).items()))
            speed = f"{o.speedup:.2f}x" if o.speedup else "-"
            ms = (lambda s: f"{s * 1e3:.3f}" if s else "-")
            print(f"| {variant} ({dt}, {cls}) | {o.size} | {ms(o.default_s)} | {ms(o.best_s)} | "
                  f"{speed} | {'yes' if o.stored else 'no'} | "
                  f"{params + '; ' if o.stored else ''}{o.note} |")
            stored += o.stored
    print(f"\n{stored} tuned configuration(s) stored")


def _tune_crossovers(args: argparse.Namespace, device: Device) -> None:
    from . import tuning
    dtypes = args.dtype if args.dtype_given else None
    print(f"\nhost/OpenCL crossovers on {device}: NumPy on host arrays against the kernel "
          "on device arrays (queue drained)")
    results = tuning.measure_crossovers(device, dtypes=dtypes, quick=args.quick,
                                        progress=not args.quiet)
    print("\n| family | dtype | kernel | kernel faster from | per size: NumPy ms / kernel ms |")
    print("|---|---|---|---|---|")
    for r in results:
        where = "never" if r.size == float("inf") else f"{r.size:.4g} {r.unit}"
        points = "; ".join(f"{p.size:.3g}: {p.numpy_s * 1e3:.3g} / {p.kernel_s * 1e3:.3g}"
                           for p in r.points)
        print(f"| {r.family} | {r.dtype} | {r.kernel} | {where} | {points} |")
    if any(r.family.startswith("convolve_fft") for r in results):
        print("\nconvolve_fft (2^20-sample signal) and convolve_fft_short (2^16): 'NumPy' is the "
              "direct kernel dispatch would run, 'kernel' the host overlap-add FFT; sizes are "
              "mask lengths")


# -- parser ------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block) and exit status 2."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive(kind: type, zero_ok: bool = False) -> Any:
    """An argparse type: a ``kind`` number above zero (or at least zero with ``zero_ok``)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if not (value >= 0 if zero_ok else value > 0):
            raise argparse.ArgumentTypeError(
                f"{text!r} is {'negative' if zero_ok else 'not positive'}")
        return value
    parse.__name__ = f"{'non-negative' if zero_ok else 'positive'} {kind.__name__}"
    return parse


def _dtype_name(text: str) -> str:
    try:
        np.dtype(text)
    except TypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a NumPy dtype") from None
    return text


def _dtype_name_or_bf16(text: str) -> str:
    return "bfloat16" if text == "bfloat16" else _dtype_name(text)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m clarray_gemm",
                                description="NumPy-compatible OpenCL arrays: device info, demo, "
                                            "benchmarks and auto-tuning.")
    p.add_argument("--version", action="version", version=f"clarray_gemm {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("info", help="list OpenCL devices and what kernel selection depends on")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("demo", help="multiply and convolve on the default device, check and time")
    s.add_argument("--size", type=_positive(int), help="matrix size N (N x N @ N x N); default 512 "
                                            "(64 on a simulator)")
    s.add_argument("--device", help="device index, 'opencl:N' or a name substring")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("bench", help="benchmark kernels against NumPy, CLBlast and cuBLAS")
    s.add_argument("what", nargs="?", default="matmul",
                   choices=("matmul", "convolve", "latency", "programs", "shapes", "patterns",
                            "random", "sort", "fft", "linalg", "fuse", "dask"),
                   help="matmul (default), convolve, "
                        "latency (wall time per call vs NumPy, CuPy, torch, raw OpenCL), "
                        "programs (six NumPy programs on device arrays vs NumPy) or shapes "
                        "(a @ b over a grid of shapes, dtypes, batches and layouts against the "
                        "fastest peer: the distribution and the worst cells) or patterns "
                        "(broadcasts, views, reductions, gathers, slice assignment, out= "
                        "against CuPy and torch, NumPy on CPU devices), random (random "
                        "numbers into device arrays against CuPy's or NumPy's generator), sort "
                        "(sort, argsort, unique, median, bincount, histogram against CuPy or "
                        "NumPy), fft (np.fft against cuFFT or NumPy), linalg (solve, inv, "
                        "slogdet, cholesky against cuSOLVER or NumPy), fuse (fused "
                        "expressions against unfused, cupy.fuse, NumPy, numexpr) or dask "
                        "(GEMM, convolution, elementwise chain, reduction, blocked solve and "
                        "sort on dask.distributed, 1 worker against N)")
    s.add_argument("--sizes", type=_positive(int), nargs="+",
                   help="matrix sizes N, or signal lengths")
    s.add_argument("--kernels", nargs="+", help="kernel names (default: all of the family)")
    s.add_argument("--dtype", default="float32", type=_dtype_name,
                   help="element type (default float32)")
    s.add_argument("--mask", type=_positive(int), default=31,
                   help="convolution mask width (default 31)")
    s.add_argument("--grid", action="store_true",
                   help="convolve: every signal length (--sizes, default 2^12 2^16 2^20 2^24) "
                        "x mask length (--masks) against NumPy and scipy, NumPy in and out")
    s.add_argument("--masks", type=_positive(int), nargs="+",
                   help="convolve --grid: mask lengths (default 3 31 63 255 1023 4095 8191)")
    s.add_argument("--repeats", type=_positive(int), default=3,
                   help="convolve --grid: interleaved rounds per cell; dask: repetitions, the "
                        "fastest kept (default 3)")
    s.add_argument("--plot", metavar="FILE.png", help="save a chart of rate against size")
    s.add_argument("--device", help="device index, 'opencl:N' or a name substring")
    s.add_argument("--budget", type=_positive(float, zero_ok=True), help="seconds of repetitions per "
                   "measurement (at least 3 runs; default 0.5; latency / programs: 0.2 / 1.0)")
    s.add_argument("--min-reps", type=_positive(int), help="latency / programs: at least this "
                   "many calls per measurement (default 20 / 5)")
    s.add_argument("--json", metavar="FILE",
                   help="latency / programs / shapes / patterns / random / sort / fft / linalg "
                        "/ fuse / dask: write the raw numbers")
    s.add_argument("--dtypes", nargs="+", type=_dtype_name_or_bf16,
                   help="shapes: dtypes (default float32 float64 float16 bfloat16 int32 int8)")
    s.add_argument("--smoke", action="store_true",
                   help="shapes / patterns / random / sort / fft / linalg / fuse: a small grid "
                        "that runs anywhere (shapes: sizes 1 7 33, float32 and int32; patterns: "
                        "10x10 and 37x100; random: 1000 and 65536 numbers; sort: 1000 elements, "
                        "7 x 33; fft: 1024, 7 x 33 and 31; linalg: 10 x 7^2, 70^2 and 33^2; "
                        "fuse: 4099 elements; dask: GEMM 96^2, signals 2^12, solve 64^2, one "
                        "repetition)")
    g = s.add_argument_group("dask", "bench dask: the clusters and sizes")
    g.add_argument("--devices", nargs="+", metavar="DEVICE",
                   help="one worker per entry (device index, 'opencl:N' or a name substring; "
                        "a device may be named twice); the 1-worker run uses the first")
    g.add_argument("--cpu-workers", type=_positive(int), metavar="N",
                   help="N workers on the default device, --cpu-threads cores each "
                        "(default when --devices is not given: 2)")
    g.add_argument("--cpu-threads", type=_positive(int), default=1,
                   help="cores per worker on CPU devices (default 1)")
    g.add_argument("--host", default="127.0.0.1",
                   help="address the scheduler and workers listen on (default 127.0.0.1)")
    g.add_argument("--workloads", nargs="+",
                   choices=("GEMM", "convolution", "elementwise", "reduction", "solve", "sort"),
                   help="run only these (default: all)")
    g.add_argument("--gemm", type=_positive(int), help="GEMM size n (default 8192)")
    g.add_argument("--conv-log2", type=_positive(int),
                   help="signal length 2^k of the convolution, the elementwise chain and the "
                        "reduction (default 24)")
    g.add_argument("--taps", type=_positive(int), help="convolution mask length (default 1023)")
    g.add_argument("--chunks", type=_positive(int), help="signal chunks (default 4)")
    g.add_argument("--solve", type=_positive(int), help="solve size n (default 4096)")
    g.add_argument("--sort-log2", type=_positive(int), help="sort length 2^k (default 24)")
    s.add_argument("--no-peers", action="store_true",
                   help="skip NumPy, CLBlast and cuBLAS (latency: CuPy and torch)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("tune", help="search kernel parameters for this device and store them")
    s.add_argument("--reset", action="store_true",
                   help="remove stored results (of --device, else of every device) and exit")
    s.add_argument("--quick", action="store_true", help="one small size, 4 sets per kernel")
    s.add_argument("--family", default="matmul", choices=("matmul", "convolve", "all"))
    s.add_argument("--sizes", type=_positive(int), nargs="+",
                   help="sizes to tune (matrix N, or signal length with a 31-tap mask)")
    s.add_argument("--kernels", nargs="+",
                   help="kernels to tune (default: the one dispatch chooses at each size; "
                        "'all': every kernel that fits)")
    s.add_argument("--dtype", nargs="+", type=_dtype_name_or_bf16,
                   help="dtypes (default float32; crossovers: float32, and float64 where the "
                        "device has fp64)")
    s.add_argument("--choices", action="store_true",
                   help="time every GEMM kernel that fits over a shape grid (M, N, K each of "
                        "--sizes, default 1 8 33 128 512 2048 4097, and batches of small "
                        "products) and store which is fastest where: kernel choice follows it")
    s.add_argument("--budget", type=_positive(float), help="--choices: seconds of repetitions "
                   "per kernel and product (default 0.05)")
    s.add_argument("--export", metavar="FILE.json",
                   help="--choices: also write the table in the form shipped with the package")
    s.add_argument("--merge", metavar="FILE.json",
                   help="--choices: add the kernels named by --kernels to the table in FILE "
                        "(timed again beside the kernels contesting each point, the others' "
                        "times kept) and store the merged table")
    s.add_argument("--changed", action="store_true",
                   help="--merge: the kernels named by --kernels changed since the table timed "
                        "them: time them at every point, also where they measured far slower")
    s.add_argument("--export-devices", nargs="+", metavar="NAME",
                   help="--export: the device-name substrings the table applies to "
                        "(default: this device's name)")
    s.add_argument("--crossover-only", action="store_true",
                   help="only measure where OpenCL kernels start to beat NumPy on the host")
    s.add_argument("--no-crossover", action="store_true",
                   help="only search kernel parameters, no crossovers")
    s.add_argument("--limit", type=_positive(int),
                   help="parameter sets per kernel and size (default 24)")
    s.add_argument("--device", help="device index, 'opencl:N' or a name substring")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_tune)
    return p


def _one_line_warning(message: Warning | str, category: type, filename: str, lineno: int,
                      line: str | None = None) -> str:
    return f"warning: {message}\n"


class UsageError(Exception):
    """A bad command-line argument: reported in one line, exit status 2."""


def _device_arg(value: str | None) -> Any:
    if value is not None and value.isdigit():
        return int(value)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2: bad arguments, 1: no usable device)."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.command_line = list(sys.argv[1:] if argv is None else argv)
    warnings.formatwarning = _one_line_warning
    if args.command == "tune":
        args.dtype_given = args.dtype is not None
        args.dtype = args.dtype or ["float32"]
    try:
        if getattr(args, "device", None) is not None:
            args.device = _device_arg(args.device)
            try:
                get_device(args.device)
            except (ValueError, TypeError) as exc:  # unknown index or name: a usage error
                parser.error(str(exc))
        return int(args.func(args) or 0)
    except UsageError as exc:
        parser.error(str(exc))
    except NoDeviceError as exc:  # nothing to run on: say why in one line
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into `head`: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
