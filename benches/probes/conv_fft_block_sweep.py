"""The block FFT convolution (``fft_block``) on an NVIDIA GPU: registers and spills of its builds,
its error against NumPy, and wall clock per call beside the direct ``gpu`` kernel and
``cupy.convolve`` over (N, m), with the block length P and points per work-item forced.

    source .whl/prelude.sh; CLARRAY_GEMM_NV_VERBOSE=1 python3 benches/probes/conv_fft_block_sweep.py

Two wall clocks: ``np.convolve`` on device arrays (the whole call, as users time it) and
``kernels.conv.run`` on a prepared problem (the launches alone: what a call costs without the
per-call Python of ``ops/convolve.py``); both with the queue drained after each call.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import wall_seconds  # noqa: E402
import pyopencl as cl  # noqa: E402
from clarray_gemm.kernels import conv  # noqa: E402
from clarray_gemm.kernels.conv import ConvProblem  # noqa: E402
from clarray_gemm.kernels.programs import build_program  # noqa: E402


def say(*args) -> None:
    print(*args, flush=True)


def wall(call, sync, budget: float, max_reps: int = 30) -> float:
    """Median wall seconds of call(); sync() within the budget (3 calls at least), after one
    warm-up."""
    return wall_seconds(lambda: (call(), sync()), budget_s=budget, min_reps=3,
                        max_reps=max_reps, warmup=1).seconds


def builds(dev) -> None:
    say("\n## builds (-cl-nv-verbose)")
    for dt in ("float", "double"):
        for log2p, npt, regs in ((11, 16, 0), (12, 16, 0), (13, 16, 0), (14, 16, 0),
                                 (14, 32, 0)):
            if dt == "double" and log2p == 14:
                continue
            d = {"T": dt, "IS_FP64": int(dt == "double"), "LOG2P": log2p, "NPT": npt,
                 "NSPECIAL": 32}
            options = (f"-cl-nv-maxrregcount={regs}",) if regs else ()
            try:
                prog = build_program(dev, "conv_fft_block.cl", d, options)
                log = prog.get_build_info(dev.cl_device, cl.program_build_info.LOG)
                lines = [ln.strip() for ln in log.splitlines()
                         if "Used" in ln or "spill" in ln or "Function properties" in ln
                         or "Compiling entry" in ln]
                say(f"{dt} P=2^{log2p} NPT={npt} regs<={regs}: " + " | ".join(lines[-8:]))
            except Exception as exc:  # noqa: BLE001
                say(f"{dt} P=2^{log2p} NPT={npt}: BUILD FAILED {type(exc).__name__}: {exc}"[:800])


def accuracy(dev) -> None:
    say("\n## error vs NumPy (float64 reference), forced P")
    rng = np.random.default_rng(0)
    cases = [(np.float32, 2**20, 8191, 16384, 16), (np.float32, 2**20, 4095, 8192, 16),
             (np.float32, 2**20, 4095, 16384, 32), (np.float32, 99991, 1023, 0, 16),
             (np.float32, 5, 3, 0, 16), (np.float64, 2**18, 4095, 8192, 16),
             (np.float64, 77777, 8191, 0, 16)]
    for dt, n, m, P, npt in cases:
        a = rng.standard_normal(n).astype(dt)
        v = rng.standard_normal(m).astype(dt)
        want = np.fft.irfft(np.fft.rfft(a.astype(np.float64), 2 * n + 2 * m)
                            * np.fft.rfft(v.astype(np.float64), 2 * n + 2 * m))[:n + m - 1]
        for mode, op in (("full", "convolve"), ("same", "correlate"), ("valid", "convolve")):
            try:
                got = np.asarray(getattr(cg, op)(cg.asarray(a, device=dev),
                                                 cg.asarray(v, device=dev), mode,
                                                 kernel="fft_block",
                                                 params={"P": P, "NPT": npt}))
                ref = np.asarray(getattr(np, op)(a[:3000].astype(np.float64),
                                                 v.astype(np.float64), mode)) if n < 3000 \
                    else None
                if op == "convolve" and mode == "full":
                    ref = want
                if ref is None:
                    continue
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                say(f"{dt.__name__} n={n} m={m} P={P} NPT={npt} {op} {mode}: {err:.2e}")
            except Exception as exc:  # noqa: BLE001
                say(f"{dt.__name__} n={n} m={m} P={P} NPT={npt}: ERROR {exc}"[:500])
    # the NaN/inf pattern at a size with several block pairs per call
    a = rng.standard_normal(300000).astype(np.float32)
    v = rng.standard_normal(4095).astype(np.float32)
    for idx in ((0,), (150000,), (299999,), tuple(rng.choice(300000, 40, replace=False))):
        b = a.copy()
        b[list(idx)] = np.nan
        b[idx[0] // 2 + 7] = np.inf
        with np.errstate(all="ignore"):
            want = np.convolve(b, v)
        got = np.asarray(cg.convolve(cg.asarray(b, device=dev), cg.asarray(v, device=dev),
                                     kernel="fft_block"))
        ok = all(np.array_equal(f(got), f(want)) for f in (np.isnan, np.isposinf, np.isneginf))
        say(f"specials at {len(idx)} places: pattern {'matches' if ok else 'DIFFERS'}")


def sweep(dev, budget: float, signals, masks, configs, dtype=np.float32) -> None:
    import cupy as cp
    say(f"\n## wall ms per call, {np.dtype(dtype)} 'full'; run = conv.run on a prepared problem")
    head = ["N", "m", "cupy", "gpu", "gpu run"] + [f"{c[0]}" for c in configs]
    say("| " + " | ".join(head) + " |")
    say("|" + "---|" * len(head))
    rng = np.random.default_rng(1)
    sync = dev.synchronize
    sync_cp = cp.cuda.Device().synchronize
    for n in signals:
        a = rng.standard_normal(n).astype(dtype)
        xa, xc = cg.asarray(a, device=dev), cp.asarray(a)
        for m in masks:
            if m >= n:
                continue
            v = rng.standard_normal(m).astype(dtype)
            xv, vc = cg.asarray(v, device=dev), cp.asarray(v)
            row = [str(n), str(m)]
            row.append(f"{wall(lambda: cp.convolve(xc, vc), sync_cp, budget) * 1e3:.3f}")
            L = n + m - 1
            out = cg.empty(L, dtype, device=dev)
            prob = ConvProblem(n, m, m - 1, L, np.dtype(dtype), xa.storage.kernel_buffer(),
                               0, xv.storage.kernel_buffer(), out.storage.kernel_buffer(write=True))
            row.append(f"{wall(lambda: cg.convolve(xa, xv, kernel='gpu'), sync, budget) * 1e3:.3f}")
            row.append(f"{wall(lambda: conv.run(dev, prob, 'gpu'), sync, budget) * 1e3:.3f}")
            for label, params in configs:
                try:
                    conv.choose(dev, prob, "fft_block", params)
                except ValueError:
                    row.append("-")
                    continue
                t = wall(lambda: conv.run(dev, prob, "fft_block", params), sync, budget)
                row.append(f"{t * 1e3:.3f}")
            say("| " + " | ".join(row) + " |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=0.05)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    dev = next(d for d in cg.devices() if d.info.is_gpu and d.usable)
    say(f"# conv_fft_block_sweep on {dev.name}: static local {dev.info.static_local_bytes}, "
        f"max work-group {dev.info.max_work_group_size}")
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    builds(dev)
    accuracy(dev)
    say(f"({time.perf_counter() - t0:.0f} s)")
    configs = [("P=auto", {}), ("P=2048", {"P": 2048}), ("P=4096", {"P": 4096}),
               ("P=8192", {"P": 8192}), ("P=16384", {"P": 16384})]
    sweep(dev, args.budget, (2**20, 2**24), (255, 511, 1023, 2047, 4095, 8191), configs)
    if not args.quick:
        sweep(dev, args.budget, (2**22,), (255, 383, 511), configs)
        sweep(dev, args.budget, (2**20, 2**24), (1023, 4095),
              [("P=auto", {}), ("P=4096", {"P": 4096}), ("P=8192", {"P": 8192})], np.float64)
    say(f"(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
