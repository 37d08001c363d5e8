"""The convolution grid on one GPU against ``cupy.convolve`` (device arrays, wall clock) and
NumPy's NaN/inf pattern for every convolution kernel.

Run from the repository root on the GPU machine (the package need not be installed)::

    source .whl/prelude.sh; python3 benches/gpu_convolve.py [--budget 0.2] [--quick]

1. NaN/inf pattern: every kernel forced by name, float32 and float64, convolve and correlate,
   every mode, NaN/+inf/-inf at the start, middle and end of the signal and in the mask, and
   40 NaN at once; NaN, +inf and -inf positions must equal ``np.convolve``'s exactly.
2. Grid: N in {2^12, 2^16, 2^20, 2^24} x m in {3, 31, 63, 255, 1023, 4095, 8191} (m < N),
   float32, mode "full": ``np.convolve(x, v)`` on device arrays with the queue drained after each
   call (what dispatch picks, and the ``gpu``, ``fft`` and ``fft_block`` kernels forced) against
   ``cupy.convolve`` on CuPy arrays, synchronised; median wall clock of calls within the
   budget after a warm-up. ratio = CuPy time / ours (> 1: ours is faster). Each result is
   checked against CuPy's in float64 (relative 2-norm).
3. Bandwidth: for masks of up to 63 taps, the bytes a 'full' convolution moves per second of
   wall clock against ``x.copy()``'s on the same signal (the target: >= 80% at N=2^24).
Every row catches its own exceptions and the script goes on; it finishes in about 2 minutes.
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import wall_seconds  # noqa: E402

SIGNALS = (2**12, 2**16, 2**20, 2**24)
MASKS = (3, 31, 63, 255, 1023, 4095, 8191)


def say(*args) -> None:
    print(*args, flush=True)


def wall(call, sync, budget: float, max_reps: int = 50) -> float:
    """Median wall seconds of call(); sync() within the budget (3 calls at least), after one
    warm-up."""
    return wall_seconds(lambda: (call(), sync()), budget_s=budget, min_reps=3,
                        max_reps=max_reps, warmup=1).seconds


def _special_cases(dt, shapes, rng):
    """(label, a, v, {(op, mode): NumPy's result}) for every placement of a special value."""
    cases = []
    for n, m in shapes:
        for value in (np.nan, np.inf, -np.inf, "many"):
            for target, place in [(t, p) for t in ("signal", "mask")
                                  for p in ("start", "middle", "end")]:
                if value == "many" and (target == "mask" or place != "start"):
                    continue
                a = rng.standard_normal(n).astype(dt)
                v = rng.standard_normal(m).astype(dt)
                if value == "many":
                    a[rng.choice(n, size=min(n, 40), replace=False)] = np.nan
                else:
                    arr = a if target == "signal" else v
                    arr[{"start": 0, "middle": len(arr) // 2, "end": len(arr) - 1}[place]] = value
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    wants = {(op, mode): getattr(np, op)(a, v, mode)
                             for op in ("convolve", "correlate")
                             for mode in ("full", "same", "valid")}
                cases.append((f"n={n} m={m} {value} in {target} at {place}", a, v, wants))
    return cases


def pattern_check(dev, quick: bool) -> None:
    say("\n## NaN/inf pattern against np.convolve (every kernel forced)")
    rng = np.random.default_rng(0)
    shapes = ((100, 7), (301, 63), (1000, 203), (40, 57)) + (() if quick else
                                                           ((70000, 1023), (20000, 4095)))
    for dt in (np.float32, np.float64):
        cases = _special_cases(dt, shapes, rng)
        for kernel in cg.kernels("convolve"):
            bad = total = 0
            first = ""
            try:
                for label, a, v, wants in cases:
                    if kernel in ("basic", "const", "tiled", "cached") and a.size * v.size > 1e6:
                        continue
                    xa, xv = cg.asarray(a, device=dev), cg.asarray(v, device=dev)
                    for (op, mode), want in wants.items():
                        got = np.asarray(getattr(cg, op)(xa, xv, mode, kernel=kernel))
                        total += 1
                        if not all(np.array_equal(f(got), f(want)) for f in
                                   (np.isnan, np.isposinf, np.isneginf)):
                            bad += 1
                            first = first or f"{op} {mode} {label}"
                say(f"{kernel:7s} {dt.__name__}: {total - bad}/{total} cases match"
                    + (f"; first mismatch: {first}" if first else ""))
            except Exception as exc:  # noqa: BLE001 - report and go on
                say(f"{kernel:7s} {dt.__name__}: ERROR {type(exc).__name__}: {exc}")


def grid(dev, budget: float, quick: bool) -> None:
    import cupy as cp
    say("\n## Grid: wall clock per call, device arrays, float32 'full' (ms); ratio = CuPy / ours")
    say("| N | m | ran | ours ms | gpu ms | fft ms | fft_block ms | cupy ms | ratio "
        "| err vs CuPy |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    sync_cl = dev.synchronize
    sync_cp = cp.cuda.Device().synchronize
    rng = np.random.default_rng(1)
    ratios, times, copies = {}, {}, {}
    for n in SIGNALS[:2] if quick else SIGNALS:
        a = rng.standard_normal(n).astype(np.float32)
        xa, xc = cg.asarray(a, device=dev), cp.asarray(a)
        copies[n] = wall(lambda: xa.copy(), sync_cl, budget)
        for m in MASKS:
            if m >= n:
                continue
            try:
                v = rng.standard_normal(m).astype(np.float32)
                xv, vc = cg.asarray(v, device=dev), cp.asarray(v)
                ran = cg.explain_convolve(xa, xv).splitlines()[1].split(" (")[0]
                ours = wall(lambda: np.convolve(xa, xv), sync_cl, budget)
                forced = {}
                for k in ("gpu", "fft", "fft_block"):
                    try:
                        forced[k] = wall(lambda: cg.convolve(xa, xv, kernel=k), sync_cl,
                                         budget / 2) * 1e3
                    except Exception as exc:  # noqa: BLE001
                        forced[k] = float("nan")
                        say(f"  {k} forced at N={n} m={m}: {type(exc).__name__}: {exc}")
                theirs = wall(lambda: cp.convolve(xc, vc), sync_cp, budget)
                got = np.asarray(np.convolve(xa, xv)).astype(np.float64)
                ref = cp.asnumpy(cp.convolve(xc.astype(cp.float64), vc.astype(cp.float64)))
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                ratios[n, m], times[n, m] = theirs / ours, ours
                say(f"| {n} | {m} | {ran} | {ours * 1e3:.3f} | {forced['gpu']:.3f} | "
                    f"{forced['fft']:.3f} | {forced['fft_block']:.3f} | {theirs * 1e3:.3f} | "
                    f"{theirs / ours:.2f}x | "
                    f"{err:.1e} |")
            except Exception as exc:  # noqa: BLE001 - report and go on
                say(f"| {n} | {m} | ERROR {type(exc).__name__}: {exc} |")
                traceback.print_exc(limit=3)
    say("\nratio grid (N down, m across):")
    say("| N \\ m | " + " | ".join(map(str, MASKS)) + " |")
    say("|---|" + "---|" * len(MASKS))
    for n in sorted({k[0] for k in ratios}):
        say(f"| {n} | " + " | ".join(f"{ratios[n, m]:.2f}" if (n, m) in ratios else ""
                                      for m in MASKS) + " |")
    say("\nbandwidth (wall clock, float32): a 'full' convolution reads N and writes N + m - 1 "
        "elements, x.copy() reads and writes N")
    say("| N | m | convolve GB/s | x.copy() GB/s | of copy |")
    say("|---|---|---|---|---|")
    for (n, m), t in sorted(times.items()):
        if m <= 63 and n in copies:
            conv_gbps = 4 * (2 * n + m - 1) / t / 1e9
            copy_gbps = 8 * n / copies[n] / 1e9
            say(f"| {n} | {m} | {conv_gbps:.0f} | {copy_gbps:.0f} | "
                f"{conv_gbps / copy_gbps:.0%} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=0.2, help="seconds per measurement")
    p.add_argument("--quick", action="store_true", help="small shapes and N <= 2^16 only")
    args = p.parse_args()
    dev = next((d for d in cg.devices() if d.info.is_gpu and d.usable), None)
    if dev is None:
        say("no OpenCL GPU found; devices:", [d.name for d in cg.devices()])
        return 1
    say(f"# gpu_convolve on {dev.name} ({dev.info.platform}), "
        f"{time.strftime('%Y-%m-%d %H:%M:%S')}")
    t0 = time.perf_counter()
    pattern_check(dev, args.quick)
    say(f"(pattern check: {time.perf_counter() - t0:.0f} s)")
    try:
        grid(dev, args.budget, args.quick)
    except ImportError as exc:
        say(f"grid skipped: {exc}")
    say(f"(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
