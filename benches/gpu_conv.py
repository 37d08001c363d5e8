"""GPU convolution benchmark: ``np.convolve`` on device-resident float32 data
against ``cupy.convolve`` and the device's copy bandwidth, on one NVIDIA GPU.

Run on the GPU machine (see benches/gpu-notes.md, "Convolution"); every number of one table comes
from one run::

    python benches/gpu_conv.py --out $OUT [--gemm-e2e]

Timers are those of ``clarray_gemm.bench.timing``: kernel times are device spans between fence
kernels around each launch, enqueued behind a user event (median of the spans); ``np.convolve`` and ``cupy.convolve`` are also timed end to end (wall, after a
warm-up, median of 7, synchronised), and CuPy's device time with CUDA events. Errors: relative
2-norm against ``cupy.convolve`` in float64. ``--gemm-e2e`` adds ``gpu_gemm.e2e`` (NumPy in,
NumPy out 4096^2 product against CuPy).
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
import gpu_gemm  # noqa: E402
from gpu_gemm import ROWS, say  # noqa: E402
from clarray_gemm.bench.timing import (cuda_event_seconds, device_seconds,  # noqa: E402
                                       synced_seconds)
from clarray_gemm.kernels import conv  # noqa: E402
from clarray_gemm.kernels.conv import ConvProblem  # noqa: E402

N = 1 << 24
MASKS = (5, 63, 1023)
# (label, kernel, params); None params: the catalogue's defaults.
VARIANTS = (
    ("gpu (defaults)", "gpu", None),
    ("gpu GPC8", "gpu", {"GPC": 8}),
    ("gpu GPC16", "gpu", {"GPC": 16}),
    ("gpu WG32", "gpu", {"WG": 32}),
    ("gpu WG128", "gpu", {"WG": 128}),
    ("gpu R24", "gpu", {"R": 24}),
    ("gpu JU8", "gpu", {"JU": 8}),
    ("gpu JU32", "gpu", {"JU": 32}),
    ("gpu MC1024", "gpu", {"MC": 1024}),
    ("gpu WG128 R16 (run-2 defaults)", "gpu", {"WG": 128, "R": 16}),
)


def row(shape, name, seconds, flops, err=None, extra=""):
    gpu_gemm.record(shape, name, seconds, flops, err, extra)


def correctness(dev) -> None:
    """Every dtype, mode and edge of the gpu kernel against NumPy, on the GPU."""
    rng = np.random.default_rng(1)
    bad = total = 0
    for dt in (np.float32, np.int32, np.float64, np.int64):
        for n, m in ((1, 1), (7, 3), (100, 5), (5000, 63), (10000, 1023), (9000, 2500),
                     (4096, 16), (4097, 17), (70001, 5)):
            for mode in ("full", "same", "valid"):
                for params in (None, {"R": 8, "JU": 8, "WG": 64, "MC": 16}, {"R": 32, "WG": 128}):
                    a = (rng.standard_normal(n) * 8).astype(dt)
                    v = (rng.standard_normal(m) * 8).astype(dt)
                    try:
                        r = np.asarray(cg.convolve(cg.asarray(a, device=dev), v, mode,
                                                   kernel="gpu", params=params))
                    except ValueError as exc:
                        say(f"  check skipped {dt.__name__} {n} {m} {params}: {exc}")
                        continue
                    total += 1
                    if dt in (np.int32, np.int64):
                        ok = np.array_equal(r, np.convolve(a, v, mode))
                    else:
                        ref = np.convolve(a.astype(np.float64), v.astype(np.float64), mode)
                        tol = 1e-5 if dt == np.float32 else 1e-12
                        ok = np.linalg.norm(r - ref) <= tol * max(np.linalg.norm(ref), 1e-30)
                    if not ok:
                        bad += 1
                        say(f"  WRONG {dt.__name__} n={n} m={m} {mode} {params}")
    say(f"correctness: {total - bad}/{total} calls match NumPy")


def copy_bandwidth(dev, nbytes: int) -> float:
    src = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(dev.queue, src, np.float32(1), 0, nbytes)
    t = device_seconds(dev, lambda: cl.enqueue_copy(dev.queue, dst, src), reps=20).seconds
    gbs = 2 * nbytes / t / 1e9
    row(f"copy {nbytes >> 20} MiB", "clEnqueueCopyBuffer", t, 0.0, None, f"{gbs:.0f} GB/s")
    return gbs


def nv_report(dev, configs) -> None:
    """ptxas's register and spill report of conv_gpu.cl for each parameter set (float32)."""
    from clarray_gemm.kernels import programs
    for params in configs:
        params = dict(params)
        m = params.pop("_m", 63)
        full = dict(conv.CATALOGUE["gpu"].defaults, **params)
        full = conv._gpu_resolve(ConvProblem(N, m, 0, N, np.dtype(np.float32), None, 0, None,
                                             None), full)
        full.pop("GPC")
        defines = dict(programs.dtype_defines(np.float32), **full)
        opts = [f"-D{k}={v}" for k, v in sorted(defines.items())] + ["-cl-nv-verbose"]
        prog = cl.Program(dev.context, programs.source_text("conv_gpu.cl")).build(options=opts)
        log = prog.get_build_info(dev.cl_device, cl.program_build_info.LOG)
        lines = [x.split(":", 1)[-1].strip() for x in log.split("\n") if "ptxas" in x and
                 ("registers" in x or "spill" in x or "bytes stack" in x)]
        say(f"  ptxas {full}: " + " | ".join(lines[-3:]))


def overhead(dev) -> None:
    """Where the wall time of one np.convolve call goes, beyond the kernel."""
    import cProfile
    import io
    import pstats
    rng = np.random.default_rng(3)
    x = cg.asarray(rng.standard_normal(N, dtype=np.float32), device=dev)
    dw = cg.asarray(rng.standard_normal(63, dtype=np.float32), device=dev)
    fin = dev.synchronize
    for label, fn in (("np.convolve", lambda: np.convolve(x, dw, "same")),
                      ("cg.empty(2^24)", lambda: cg.empty(N, np.float32, device=dev)),
                      ("mask dw[::-1].astype", lambda: dw[::-1].astype(np.float32)),
                      ("explain (choice only)", lambda: cg.explain_convolve(x, dw, "same"))):
        row("overhead", label, synced_seconds(fn, fin, reps=15).seconds, 0.0)
    # The same launch on ALLOC_HOST_PTR buffers (the library's) and on plain device buffers.
    w = cg.asarray(rng.standard_normal(63, dtype=np.float32), device=dev)
    out = cg.empty(N, np.float32, device=dev)
    mapped = ConvProblem(N, 63, 31, N, np.dtype(np.float32), x.storage.buffer, 0,
                         w.storage.buffer, out.storage.buffer)
    plain = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nb) for nb in (4 * N, 4 * 63, 4 * N)]
    cl.enqueue_copy(dev.queue, plain[0], np.asarray(x))
    cl.enqueue_copy(dev.queue, plain[1], np.asarray(w))
    bare = ConvProblem(N, 63, 31, N, np.dtype(np.float32), plain[0], 0, plain[1], plain[2])
    for label, prob in (("conv.run + finish, ALLOC_HOST_PTR", mapped),
                        ("conv.run + finish, plain buffers", bare)):
        row("overhead", label, synced_seconds(lambda: conv.run(dev, prob), fin, reps=15).seconds,
            0.0)
        t0 = time.perf_counter()
        for _ in range(50):
            conv.run(dev, prob)
        row("overhead", label.replace("+ finish", "enqueue only"),
            (time.perf_counter() - t0) / 50, 0.0)
        fin()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(30):
        np.convolve(x, dw, "same")
    fin()
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(12)
    say("\n".join(buf.getvalue().splitlines()[-20:]))


def cupy_method(cx, cw) -> str:
    import cupy as cp
    try:
        from cupy._math import misc
        src = inspect.getsource(misc.convolve)
        lines = [x.strip() for x in src.splitlines() if "fft" in x or "method" in x]
        chooser = getattr(misc, "_choose_conv_method", None)
        chosen = chooser(cx, cw, "same") if chooser else "?"
        return f"chosen={chosen}; " + " | ".join(lines[:6])
    except Exception as exc:  # only informative
        return f"unknown ({type(exc).__name__}: {exc})"
    finally:
        cp.cuda.runtime.deviceSynchronize()


def masks(dev, copy_gbs: float, variants, extra_masks=()) -> None:
    import cupy as cp
    rng = np.random.default_rng(7)
    xh = rng.standard_normal(N, dtype=np.float32)
    x = cg.asarray(xh, device=dev)
    out = cg.empty(N, np.float32, device=dev)
    cx, cx64 = cp.asarray(xh), cp.asarray(xh.astype(np.float64))
    host = np.empty(N, np.float32)
    floor_ms = 8 * N / (copy_gbs * 1e9) * 1e3
    say(f"memory floor at the measured copy bandwidth: {floor_ms:.4f} ms; 70%: "
        f"{floor_ms / 0.7:.4f} ms")
    for m in tuple(MASKS) + tuple(extra_masks):
        shape = f"conv 2^24 m={m}"
        wh = rng.standard_normal(m, dtype=np.float32)
        w = cg.asarray(np.ascontiguousarray(wh[::-1]), device=dev)
        dw, cw = cg.asarray(wh, device=dev), cp.asarray(wh)
        ref = cp.asnumpy(cp.convolve(cx64, cp.asarray(wh.astype(np.float64)), "same"))
        refn = np.linalg.norm(ref)
        problem = ConvProblem(N, m, m // 2, N, np.dtype(np.float32), x.storage.buffer, 0,
                              w.storage.buffer, out.storage.buffer)
        flops = 2.0 * N * m
        todo = variants if m in MASKS else (("gpu (defaults)", "gpu", None),
                                            ("fft", "fft", None))
        for label, kernel, params in todo:
            if kernel == "vec" and m > 63:
                continue
            if params and params.get("JU") == 4 and m > 8:
                continue
            try:
                op = (lambda k=kernel, p=params: conv.run(dev, problem, k, p)[0])
                cl.enqueue_fill_buffer(dev.queue, out.storage.buffer, np.float32(np.nan), 0, 4 * N)
                op()
                cl.enqueue_copy(dev.queue, host, out.storage.buffer)
                err = float(np.linalg.norm(host - ref) / refn)
                t = device_seconds(dev, op, budget_s=0.1).seconds
                row(shape, label, t, flops, err,
                    f"{8 * N / t / 1e9:.0f} GB/s = {8 * N / t / 1e9 / copy_gbs:.0%} of copy")
            except Exception as exc:  # a variant that fails to build or run is reported
                say(f"  {shape} {label} FAILED {type(exc).__name__}: {str(exc)[:300]}")
        if m not in MASKS:
            continue
        say("  " + cg.explain_convolve(dw, x).split("\n")[1])
        r = np.asarray(np.convolve(x, dw, "same"))
        err = float(np.linalg.norm(r - ref) / refn)
        t = synced_seconds(lambda: np.convolve(x, dw, "same"), dev.queue.finish, reps=7).seconds
        row(shape, "np.convolve(x_dev, v_dev) wall", t, flops, err)
        rc = cp.asnumpy(cp.convolve(cx, cw, "same"))
        err = float(np.linalg.norm(rc - ref) / refn)
        sync = cp.cuda.runtime.deviceSynchronize
        t = synced_seconds(lambda: cp.convolve(cx, cw, "same"), sync, reps=7).seconds
        row(shape, "cupy.convolve wall", t, flops, err)
        t = cuda_event_seconds(cp.cuda.Event, lambda: cp.convolve(cx, cw, "same"), sync,
                               reps=20).seconds
        row(shape, "cupy.convolve CUDA events", t, flops, None)
        if m == MASKS[0]:
            say("  cupy method: " + cupy_method(cx, cw))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    ap.add_argument("--gemm-e2e", action="store_true")
    ap.add_argument("--quick", action="store_true", help="defaults only, no tuning variants")
    ap.add_argument("--extra-masks", default="4095,8191,16383")
    args = ap.parse_args()
    out = Path(args.out) if args.out else None
    dev = [d for d in cg.devices() if d.info.is_gpu and not d.info.is_simulator][0]
    say(f"device: {dev.name} | {dev.info.platform} | CUs {dev.info.compute_units} | "
        f"local {dev.info.local_mem_bytes} | {time.strftime('%Y-%m-%d %H:%M:%S')}")
    correctness(dev)
    nv_report(dev, ({}, {"_m": 1023}, {"_m": 5}, {"R": 24}, {"JU": 32}, {"WG": 128, "R": 16}))
    overhead(dev)
    gbs = copy_bandwidth(dev, 1 << 30)
    gbs64 = copy_bandwidth(dev, 8 * N // 2)
    variants = VARIANTS[:1] if args.quick else VARIANTS + (("vec (previous GPU choice)", "vec", None),)
    extra = tuple(int(s) for s in args.extra_masks.split(",") if s)
    masks(dev, max(gbs, gbs64), variants, extra)
    if args.gemm_e2e:
        gpu_gemm.e2e(dev)
    say("\n== summary ==")
    say(f"{'shape':>22} {'kernel':<36} {'ms':>9} {'TFLOP/s':>8} {'err':>8}  notes")
    for r in ROWS:
        e = "" if r["err"] is None else f"{r['err']:.1e}"
        say(f"{r['shape']:>22} {r['name']:<36} {r['ms']:9.4f} {r['tflops']:8.2f} {e:>8}  {r['extra']}")
    if out:
        (out / "gpu_conv.json").write_text(json.dumps(ROWS, indent=1))
        (out / "gpu_conv.log").write_text("\n".join(gpu_gemm.LOG))


if __name__ == "__main__":
    main()
