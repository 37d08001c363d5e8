"""GPU GEMM benchmark: ``gpu_blocked`` against CLBlast and cuBLAS on one NVIDIA GPU.

Run on the GPU machine (see benches/gpu-notes.md); every number of one table comes from one run::

    python benches/gpu_gemm.py --stage full --out $OUT

Stages: ``explore`` (compiler report and SASS summary, layout checks, variants at the target
shapes: edit it for the next experiment), ``full`` (the target table: 4096^3 and 8192^3 at >= 0.85x
cuBLAS and >= 1.3x CLBlast, the other shapes at CLBlast's speed or more). Timers are those of
``clarray_gemm.bench.timing``: device times are spans between fence kernels around each launch,
enqueued behind a user event (no host time inside), median of R spans; cuBLAS is timed with CUDA
events (TF32 off); wall times drain the queue after each call. Correctness: relative Frobenius
error against a float64 product on the GPU (torch), output poisoned with NaN before the checked
run.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.kernels import gemm, gemm_gpu, programs  # noqa: E402
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem  # noqa: E402
from clarray_gemm.bench.timing import (cuda_event_seconds, device_seconds,  # noqa: E402
                                       host_seconds, synced_seconds)
from clarray_gemm.memory import new_buffer  # noqa: E402

ROWS: list[dict] = []
LOG: list[str] = []


def say(*args) -> None:
    line = " ".join(str(a) for a in args)
    print(line, flush=True)
    LOG.append(line)


# -- timing: clarray_gemm.bench.timing ----------------------------------------------------------
def reps_for(flops: float) -> int:
    return int(min(200, max(3, 2e11 / max(flops, 1))))


def finished(dev: cg.Device, fn, reps: int) -> float:
    """Median wall seconds of ``fn`` with the queue drained after it."""
    return synced_seconds(fn, dev.queue.finish, reps=reps).seconds


# -- CLBlast -------------------------------------------------------------------------------------
def clblast():
    try:
        lib = ctypes.CDLL("libclblast.so.1")
    except OSError as exc:
        say("CLBlast not loaded:", exc)
        return None
    f = lib.CLBlastSgemm
    sz, ptr = ctypes.c_size_t, ctypes.c_void_p
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, sz, sz, sz, ctypes.c_float,
                  ptr, sz, sz, ptr, sz, sz, ctypes.c_float, ptr, sz, sz,
                  ctypes.POINTER(ptr), ctypes.POINTER(ptr)]
    f.restype = ctypes.c_int
    return f


# -- problems ------------------------------------------------------------------------------------
class Case:
    """Device buffers A (batch, M, K), B (batch, K, N), C (batch, M, N), row-major, random."""

    def __init__(self, dev, M, N, K, batch=1, plain=False, seed=0):
        self.dev, self.M, self.N, self.K, self.batch = dev, M, N, K, batch
        rng = np.random.default_rng(seed)
        self.a = rng.standard_normal((batch, M, K), dtype=np.float32)
        self.b = rng.standard_normal((batch, K, N), dtype=np.float32)
        mk = (lambda n: cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, n)) if plain else \
            (lambda n: new_buffer(dev, n))
        self.A, self.B, self.C = mk(self.a.nbytes), mk(self.b.nbytes), mk(batch * M * N * 4)
        cl.enqueue_copy(dev.queue, self.A, self.a)
        cl.enqueue_copy(dev.queue, self.B, self.b)
        dev.queue.finish()
        self.problem = GemmProblem(batch, M, N, K, np.dtype(np.float32),
                                   GemmOperand(self.A, 0, K, M * K), GemmOperand(self.B, 0, N, K * N),
                                   GemmOperand(self.C, 0, N, M * N))
        self.flops = 2.0 * batch * M * N * K

    def poison(self):
        cl.enqueue_fill_buffer(self.dev.queue, self.C, np.float32(np.nan), 0,
                               self.batch * self.M * self.N * 4)

    def result(self):
        out = np.empty((self.batch, self.M, self.N), np.float32)
        cl.enqueue_copy(self.dev.queue, out, self.C)
        return out

    def error(self) -> float:
        import torch
        ref = torch.matmul(torch.from_numpy(self.a).cuda().double(), torch.from_numpy(self.b).cuda().double())
        got = torch.from_numpy(self.result()).cuda().double()
        if not bool(torch.isfinite(got).all()):
            return float("nan")
        return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


def ours(case: Case, params=None, kernel="gpu_blocked"):
    return lambda: gemm.run(case.dev, case.problem, kernel, params)[0]


def sgemm_clblast(case: Case, f):
    case.dev.enable_profiling()  # device time: CLBlast must run on the profiling queue
    q = ctypes.c_void_p(case.dev.queue.int_ptr)
    M, N, K = case.M, case.N, case.K

    def op():
        st = f(101, 111, 111, M, N, K, 1.0, case.A.int_ptr, 0, K, case.B.int_ptr, 0, N, 0.0,
               case.C.int_ptr, 0, N, ctypes.byref(q), None)
        if st != 0:
            raise RuntimeError(f"CLBlast status {st}")
    return op


def record(shape: str, name: str, seconds: float, flops: float, err=None, extra=""):
    tf = flops / seconds / 1e12 if seconds else 0.0
    ROWS.append(dict(shape=shape, name=name, ms=seconds * 1e3, tflops=tf, err=err, extra=extra))
    e = "" if err is None else f" err={err:.1e}"
    say(f"  {shape:>22} {name:<34} {seconds * 1e3:9.4f} ms {tf:7.2f} TFLOP/s{e} {extra}")


def bench_shape(dev, M, N, K, variants, f_clblast, batch=1, do_torch=True, do_clblast=True,
                check=True, plain=False):
    shape = f"{batch}x" if batch > 1 else ""
    shape += f"{M}x{N}x{K}"
    case = Case(dev, M, N, K, batch, plain=plain)
    reps = reps_for(case.flops)
    res = {}
    for name, params, kern in variants:
        try:
            op = ours(case, params, kern)
            err = None
            if check:
                case.poison()
                op()
                dev.queue.finish()
                err = case.error()
            t = device_seconds(dev, op, reps=reps).seconds
            extra = ""
            if kern == "gpu_blocked":
                d = gemm_gpu.resolve(case.problem, dev.info, params or {})
                extra = "P{PRESET} BK{BK} KS{KSPLIT} G{GROUP_M} V{VEC_A}{VEC_B}{VEC_C}".format(**d)
            record(shape, name, t, case.flops, err, extra)
            res[name] = t
        except Exception as exc:  # a variant that fails to build or run is reported, not fatal
            say(f"  {shape:>22} {name:<34} FAILED {type(exc).__name__}: {str(exc)[:300]}")
    if do_clblast and f_clblast is not None and batch == 1:
        try:
            op = sgemm_clblast(case, f_clblast)
            case.poison()
            op()
            dev.queue.finish()
            err = case.error() if check else None
            t = device_seconds(dev, op, reps=reps).seconds
            record(shape, "CLBlast", t, case.flops, err)
            res["CLBlast"] = t
        except Exception as exc:
            say(f"  {shape:>22} CLBlast FAILED {exc}")
    if do_torch:
        import torch
        ta, tb = torch.from_numpy(case.a).cuda(), torch.from_numpy(case.b).cuda()
        if batch == 1:
            ta, tb = ta[0], tb[0]
        t = cuda_event_seconds(lambda: torch.cuda.Event(enable_timing=True), lambda: ta @ tb,
                               torch.cuda.synchronize, reps=reps).seconds
        record(shape, "cuBLAS (torch, TF32 off)", t, case.flops)
        res["cuBLAS"] = t
        del ta, tb
    return res


def verbose_build(dev, out: Path, defines_extra=None):
    """Build one configuration with -cl-nv-verbose; print ptxas's report; save the PTX and, where
    ptxas and cuobjdump are installed, the SASS with a count of its instruction kinds."""
    import re
    import shutil
    import subprocess
    p = Case(dev, 256, 256, 256).problem
    d = gemm_gpu.resolve(p, dev.info, defines_extra or {"PRESET": 1})
    defines = gemm.base_defines(p)
    for k in ("BM", "BN", "BK", "TM", "TN", "WARP_X", "VEC_A", "VEC_B", "VEC_C", "PAD_A", "PAD_B",
              "GROUP_M", "KSPLIT", "EDGE_ONLY_CLAMP"):
        defines[k] = d[k]
    opts = [f"-D{k}={v}" for k, v in sorted(defines.items())] + ["-cl-nv-verbose"]
    prog = cl.Program(dev.context, programs.source_text("gemm_gpu.cl")).build(options=opts)
    log = prog.get_build_info(dev.cl_device, cl.program_build_info.LOG)
    tag = "_".join(f"{k}{v}" for k, v in sorted((defines_extra or {}).items())) or "default"
    lines = log.split("\n")
    i = max((j for j, line in enumerate(lines) if "'gemm_gpu'" in line), default=0)
    report = " | ".join(x.split(":", 1)[-1].strip() for x in lines[i:i + 4] if "ptxas" in x)
    say(f"-- nv-verbose {tag}: {report}")
    if not out:
        return
    folder = out / "ptx"
    folder.mkdir(exist_ok=True)
    ptx = folder / f"{tag}.ptx"
    ptx.write_bytes(prog.binaries[0].rstrip(b"\0"))
    if shutil.which("ptxas") and shutil.which("cuobjdump"):
        cubin = Path("/tmp") / f"{tag}.cubin"
        r = subprocess.run(["ptxas", "-arch=sm_90", "-v", str(ptx), "-o", str(cubin)],
                           capture_output=True, text=True)
        if r.returncode:
            say("   ptxas failed:", r.stderr[-300:])
            return
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        (folder / f"{tag}.sass").write_text(sass)
        sections = {sec.split("\n", 1)[0].strip(): sec for sec in sass.split("Function : ")[1:]}
        body = sections.get("gemm_gpu", sass)
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", body)
        counts = {}
        for o in ops:
            counts[o] = counts.get(o, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:14]
        say(f"   sass {tag}: {len(ops)} instr: " + ", ".join(f"{k} {v}" for k, v in top))
        # Where the main loop issues its global loads relative to its FMAs (early is the goal).
        body_lines = [x for x in body.split("\n") if re.search(r"/\*[0-9a-f]{4}\*/", x)]
        bars = [j for j, x in enumerate(body_lines) if "BAR.SYNC" in x]
        if len(bars) >= 2:
            loop = body_lines[bars[0]:bars[1] + 1]
            fm = [j for j, x in enumerate(loop) if "FFMA" in x]
            ld = [j for j, x in enumerate(loop) if "LDG" in x or "LDGSTS" in x]
            say(f"   loop {tag}: {len(loop)} instr, FFMA at {fm[:1]}..{fm[-1:]}, global loads at {ld}")


def e2e(dev, n=4096):
    import cupy as cp
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)

    def ours_e2e():
        return np.asarray(cg.asarray(a, device=dev) @ b)

    def cupy_e2e():
        return cp.asnumpy(cp.asarray(a) @ cp.asarray(b))
    def copies_e2e():
        # What a discrete-GPU memory path could do: clEnqueueWriteBuffer / ReadBuffer straight
        # from and into NumPy memory instead of mapping ALLOC_HOST_PTR buffers.
        flags = cl.mem_flags.READ_WRITE
        bufs = [cl.Buffer(dev.context, flags, a.nbytes) for _ in range(3)]
        cl.enqueue_copy(dev.queue, bufs[0], a)
        cl.enqueue_copy(dev.queue, bufs[1], b)
        p = GemmProblem(1, n, n, n, np.dtype(np.float32), GemmOperand(bufs[0], 0, n, 0),
                        GemmOperand(bufs[1], 0, n, 0), GemmOperand(bufs[2], 0, n, 0))
        gemm.run(dev, p)
        res = np.empty((n, n), np.float32)
        cl.enqueue_copy(dev.queue, res, bufs[2])
        return res
    r1, r2, r3 = ours_e2e(), cupy_e2e(), copies_e2e()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for name, fn, r in (("clarray_gemm np.asarray(asarray(a) @ b)", ours_e2e, r1),
                        ("cupy asnumpy(asarray(a) @ asarray(b))", cupy_e2e, r2),
                        ("write/gemm/read buffers (no mapping)", copies_e2e, r3)):
        err = float(np.linalg.norm(r - ref) / np.linalg.norm(ref))
        record(f"e2e {n}^2", name, host_seconds(fn, reps=5).seconds, 2.0 * n ** 3, err)


def layouts(dev, params, kernel="gpu_blocked"):
    """Transposed views, unaligned and aligned sizes, a batch: relative error of each."""
    for ta in (False, True):
        for tb in (False, True):
            for (M, N, K) in ((1003, 998, 1000), (1024, 512, 768), (129, 67, 33)):
                rng = np.random.default_rng(M + int(ta) * 2 + int(tb))
                a = rng.standard_normal((K, M) if ta else (M, K), dtype=np.float32)
                b = rng.standard_normal((N, K) if tb else (K, N), dtype=np.float32)
                x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
                x, y = (x.T if ta else x), (y.T if tb else y)
                ah, bh = (a.T if ta else a), (b.T if tb else b)
                try:
                    r = np.asarray(cg.matmul(x, y, kernel=kernel, params=params))
                except Exception as exc:
                    say(f"  layout {params} FAILED {type(exc).__name__}: {str(exc)[:400]}")
                    return
                ref = ah.astype(np.float64) @ bh.astype(np.float64)
                err = np.linalg.norm(r - ref) / np.linalg.norm(ref)
                say(f"  layout {params} ta={ta:d} tb={tb:d} {M}x{N}x{K}: err {err:.2e}"
                    + ("" if err < 1e-5 else "  <-- WRONG"))
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 130, 70), dtype=np.float32)
    b = rng.standard_normal((3, 70, 260), dtype=np.float32)
    x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
    r = np.asarray(cg.matmul(x, y, kernel=kernel, params=params))
    ref = np.matmul(a.astype(np.float64), b)
    err = np.linalg.norm(r - ref) / np.linalg.norm(ref)
    say(f"  layout {params} batch 3x130x260x70: err {err:.2e}" + ("" if err < 1e-5 else "  <-- WRONG"))


def e2e_parts(dev, n=4096):
    """Where the end-to-end time goes: upload, product, download, and a bare buffer's cost."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, n), dtype=np.float32)

    def timed(fn, reps=5):
        return finished(dev, fn, reps)
    t_up = timed(lambda: cg.asarray(a, device=dev))
    x = cg.asarray(a, device=dev)
    t_mm = timed(lambda: x @ x)
    t_down = timed(lambda: np.array(np.asarray(x @ x)))
    t_buf = timed(lambda: new_buffer(dev, a.nbytes))

    def buf_first_use():
        b = new_buffer(dev, a.nbytes)
        cl.enqueue_fill_buffer(dev.queue, b, np.float32(0), 0, a.nbytes)
        return b
    t_use = timed(buf_first_use)
    t_copy = timed(lambda: a.copy())
    pinned = np.empty_like(a)
    plain = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, a.nbytes)
    t_h2d = timed(lambda: cl.enqueue_copy(dev.queue, plain, a))
    t_d2h = timed(lambda: cl.enqueue_copy(dev.queue, pinned, plain))
    for name, t in (("cg.asarray(a) 64 MiB", t_up), ("x @ x (device arrays)", t_mm),
                    ("np.array(np.asarray(x @ x))", t_down), ("new_buffer 64 MiB", t_buf),
                    ("new_buffer + fill (first use)", t_use), ("numpy a.copy() 64 MiB", t_copy),
                    ("enqueue_copy host->plain buffer", t_h2d), ("enqueue_copy plain buffer->host", t_d2h)):
        record(f"e2e parts {n}^2", name, t, 0.0, None, f"{a.nbytes / t / 1e9:.1f} GB/s")


def batched(dev, nb=256, n=128):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((nb, n, n), dtype=np.float32)
    b = rng.standard_normal((nb, n, n), dtype=np.float32)
    x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
    xs, ys = [x[i] for i in range(nb)], [y[i] for i in range(nb)]
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))

    def one():
        return x @ y

    def many():
        return [xs[i] @ ys[i] for i in range(nb)]
    r = np.asarray(one())
    err = float(np.linalg.norm(r - ref) / np.linalg.norm(ref))
    rs = np.stack([np.asarray(t) for t in many()])
    err2 = float(np.linalg.norm(rs - ref) / np.linalg.norm(ref))
    flops = 2.0 * nb * n ** 3
    for name, fn, e in (("one batched @ (256 products)", one, err), ("256 separate @ calls", many, err2)):
        record(f"batch {nb}x{n}^3", name, finished(dev, fn, 7), flops, e, "wall, device arrays")


def convolve(dev):
    try:
        from clarray_gemm.ops import convolve as _conv  # noqa: F401
    except ImportError as exc:
        say("convolution: not measured (", exc, ")")
        return
    import cupy as cp
    n = 1 << 24
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n, dtype=np.float32)
    dx, cx = cg.asarray(x, device=dev), cp.asarray(x)
    for m in (5, 63, 1023):
        w = rng.standard_normal(m, dtype=np.float32)
        dw, cw = cg.asarray(w, device=dev), cp.asarray(w)
        ref = np.convolve(x.astype(np.float64), w.astype(np.float64), "same")
        r = np.asarray(np.convolve(dx, dw, "same"))
        err = float(np.linalg.norm(r - ref) / np.linalg.norm(ref))
        t = finished(dev, lambda: np.convolve(dx, dw, "same"), 7)
        record(f"conv 2^24 m={m}", "clarray_gemm np.convolve same", t, 2.0 * n * m, err)
        t = synced_seconds(lambda: cp.convolve(cx, cw, "same"), cp.cuda.runtime.deviceSynchronize,
                           reps=7).seconds
        record(f"conv 2^24 m={m}", "cupy.convolve same", t, 2.0 * n * m)
    nbytes = 1 << 30
    src = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(dev.queue, src, np.float32(1), 0, nbytes)
    t = device_seconds(dev, lambda: cl.enqueue_copy(dev.queue, dst, src), reps=10).seconds
    say(f"  device-to-device copy 1 GiB: {t * 1e3:.3f} ms = {2 * nbytes / t / 1e9:.0f} GB/s (read+write)")
    ROWS.append(dict(shape="copy 1GiB", name="clEnqueueCopyBuffer", ms=t * 1e3, tflops=0,
                     err=None, extra=f"{2 * nbytes / t / 1e9:.0f} GB/s"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", default="full")
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    args = ap.parse_args()
    out = Path(args.out) if args.out else None
    dev = [d for d in cg.devices() if d.info.is_gpu and not d.info.is_simulator][0]
    say(f"device: {dev.name} | {dev.info.platform} | CUs {dev.info.compute_units} | "
        f"local {dev.info.local_mem_bytes} | {time.strftime('%Y-%m-%d %H:%M:%S')}")
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    say("torch", torch.__version__, torch.cuda.get_device_name())
    f = clblast()
    G = "gpu_blocked"

    if args.stage == "explore":
        big = [("gpu auto", None, G),
               ("gpu P7 G32", {"PRESET": 7, "GROUP_M": 32}, G),
               ("gpu P7 G16 WX4", {"PRESET": 7, "WARP_X": 4}, G),
               ("gpu P7 G16 PAD_A8", {"PRESET": 7, "PAD_A": 8}, G),
               ("gpu P8 G16", {"PRESET": 8}, G),
               ("gpu auto (repeat)", None, G)]
        bench_shape(dev, 4096, 4096, 4096, big, f, check=False)
        bench_shape(dev, 8192, 8192, 8192, big, f, check=False)
    elif args.stage == "full":
        verbose_build(dev, out, {"PRESET": 7})
        layouts(dev, None)
        auto = [("gpu auto", None, G)]
        # the previous defaults, for the record of what each change gave
        before = [("gpu P7 GROUP_M=8", {"PRESET": 7, "GROUP_M": 8}, G),
                  ("gpu P7 EDGE_ONLY_CLAMP=1", {"PRESET": 7, "EDGE_ONLY_CLAMP": 1}, G),
                  ("gpu P1 (8x8, 256 work-items)", {"PRESET": 1}, G)]
        for M, N, K in ((1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192),
                        (4097, 3001, 2049), (8192, 8192, 64), (64, 8192, 8192), (8192, 64, 8192)):
            extra = before if M == N == K and M >= 4096 else []
            bench_shape(dev, M, N, K, auto + extra, f, check=M * N * K <= 4096 ** 3)
        batched(dev)
        e2e(dev)
        try:
            convolve(dev)
        except Exception as exc:  # the convolution is another module's; report, don't abort
            say(f"convolution: FAILED {type(exc).__name__}: {str(exc)[:300]}")

    say("\n== summary (" + args.stage + ") ==")
    say(f"{'shape':>22} {'kernel':<40} {'ms':>9} {'TFLOP/s':>8} {'err':>8}  notes")
    for r in ROWS:
        e = "" if r["err"] is None else f"{r['err']:.1e}"
        say(f"{r['shape']:>22} {r['name']:<40} {r['ms']:9.4f} {r['tflops']:8.2f} {e:>8}  {r['extra']}")
    if out:
        (out / f"gpu_gemm_{args.stage}.json").write_text(json.dumps(ROWS, indent=1))
        (out / f"gpu_gemm_{args.stage}.log").write_text("\n".join(LOG))


if __name__ == "__main__":
    main()
