"""Tensor cores from OpenCL on an NVIDIA GPU: the ``mma`` kernel's builds, its
correctness against float64 products (beside cuBLAS's error for the same inputs) and its wall
clock against cuBLAS (torch) float16, bfloat16 and TF32, and against our own float32 kernel.

Usage on the GPU machine, from the repository root:
    source .whl/prelude.sh; python3 benches/gpu_tensor_cores.py [--sizes 4096 8192] [--quick]
Every row catches its own exception and prints it (with the build log where a build failed),
so one run shows everything that works and everything that does not. PTX files of the builds
go to $OUT (or --ptx-dir) when set.

Targets: float16 / bfloat16 wall clock >= 0.7x cuBLAS; TF32 >= 0.7x cuBLAS TF32 and
>= 3x our float32 kernel; each relative Frobenius error within 2x cuBLAS's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import synced_seconds  # noqa: E402
from clarray_gemm.dtypes import bfloat16_dtype  # noqa: E402
from clarray_gemm.sources import source_text  # noqa: E402

BF16 = bfloat16_dtype()
STARTED = time.perf_counter()
DTYPES = ["float16", "bfloat16", "tf32"]
ELEM = {"float16": 1, "bfloat16": 2, "tf32": 3}


def log(msg: str = "") -> None:
    print(msg, flush=True)


# -- builds -------------------------------------------------------------------------------------
def build_report(dev: cg.Device, name: str, defines: dict, ptx_dir: Path | None) -> None:
    """Build gemm_mma.cl with -cl-nv-verbose; print the log (registers, spills) and PTX counts."""
    opts = [f"-D{k}={v}" for k, v in sorted(defines.items())] + ["-cl-nv-verbose"]
    prg = cl.Program(dev.context, source_text("gemm_mma.cl"))
    t0 = time.perf_counter()
    try:
        prg.build(options=opts)
    except Exception as exc:  # noqa: BLE001  (the log is the point)
        log(f"### build {name}: FAILED ({type(exc).__name__})")
        try:
            log(prg.get_build_info(dev.cl_device, cl.program_build_info.LOG))
        except Exception:  # noqa: BLE001
            log(str(exc))
        return
    log(f"### build {name}: ok in {time.perf_counter() - t0:.1f} s, options {' '.join(opts)}")
    build_log = prg.get_build_info(dev.cl_device, cl.program_build_info.LOG).strip()
    ptxas = [ln.strip() for ln in build_log.splitlines()
             if "registers" in ln or "spill" in ln or "smem" in ln]
    log("ptxas: " + (" | ".join(ptxas) if ptxas else build_log[-2000:]))
    try:
        ptx = prg.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
    except Exception as exc:  # noqa: BLE001
        log(f"(no binary: {exc})")
        return
    counts = {k: ptx.count(k) for k in ("mma.sync", "ldmatrix", "cp.async.cg", "cvt.rna.tf32",
                                        "ld.global.v4", "ld.global.nc.v4", "st.shared.v4",
                                        "ld.shared.v4", "ld.shared.u32", "ld.shared.b32",
                                        "ld.shared.f32", "st.global.v2",
                                        "ld.local", "st.local", "bar.sync")}
    target = next((line for line in ptx.splitlines() if line.startswith(".target")), "?")
    log(f"PTX {target}: " + ", ".join(f"{k} x{v}" for k, v in counts.items()))
    if ptx_dir is not None:
        ptx_dir.mkdir(parents=True, exist_ok=True)
        (ptx_dir / f"gemm_mma_{name}.ptx").write_text(ptx)


# -- data ---------------------------------------------------------------------------------------
def operands(kind: str, shape_a, shape_b, seed: int):
    """Host inputs (NumPy, in the operand dtype) and their float64 values."""
    rng = np.random.default_rng(seed)
    a32 = rng.standard_normal(shape_a).astype(np.float32)
    b32 = rng.standard_normal(shape_b).astype(np.float32)
    if kind == "float16":
        a, b = a32.astype(np.float16), b32.astype(np.float16)
    elif kind == "bfloat16":
        a, b = a32.astype(BF16), b32.astype(BF16)
    else:
        a, b = a32, b32
    return a, b


def torch_product(torch, kind: str, a: np.ndarray, b: np.ndarray):
    """cuBLAS's product of the same inputs (float16 / bfloat16 / float32 with TF32 on)."""
    if kind == "float16":
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    elif kind == "bfloat16":
        ta = torch.from_numpy(a.astype(np.float32)).cuda().to(torch.bfloat16)
        tb = torch.from_numpy(b.astype(np.float32)).cuda().to(torch.bfloat16)
    else:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    return ta, tb


def rel_fro(torch, got, ref) -> float:
    got = got.to(torch.float64)
    return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


def ours(dev, kind: str, a: np.ndarray, b: np.ndarray, trans: bool, params=None):
    """Our product as a device array (transposed views when ``trans``): the default kernel, or
    ``mma`` forced with ``params`` (the emulation rows)."""
    if trans:
        x = cg.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=dev)
        y = cg.asarray(np.ascontiguousarray(np.swapaxes(b, -1, -2)), device=dev)
        x, y = x.mT, y.mT
    else:
        x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
    prec = "tf32" if kind == "tf32" else None
    kernel = "mma" if params else None
    return cg.matmul(x, y, kernel=kernel, params=params, precision=prec), x, y


# -- correctness --------------------------------------------------------------------------------
def check_row(torch, dev, kind, M, N, K, batch, trans, params, seed=0) -> None:
    label = (f"{kind} {M}x{N}x{K} batch={batch} trans={int(trans)} "
             f"{'emulated' if params and params.get('EMULATE') else 'ptx'}")
    try:
        shape_a = (batch, M, K) if batch > 1 else (M, K)
        shape_b = (batch, K, N) if batch > 1 else (K, N)
        a, b = operands(kind, shape_a, shape_b, seed)
        c, _, _ = ours(dev, kind, a, b, trans, params)
        got = np.asarray(c)
        ta, tb = torch_product(torch, kind, a, b)
        ref = torch.matmul(ta.to(torch.float64), tb.to(torch.float64))
        ours_err = rel_fro(torch, torch.from_numpy(got.astype(np.float32)).cuda(), ref)
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        cub_err = rel_fro(torch, torch.matmul(ta, tb), ref)
        torch.backends.cuda.matmul.allow_tf32 = False
        expected_dtype = {"float16": np.float16}.get(kind, np.float32)
        ratio = ours_err / max(cub_err, 1e-30)
        finite = bool(np.isfinite(got).all())
        within = ratio <= 2.0 or ours_err < 1e-6
        judged = "2x cuBLAS"
        if kind == "tf32" and cub_err < 1e-5:
            # cuBLAS ran plain float32 here (small sizes ignore allow_tf32): judge against the
            # TF32 bound |C - AB| <= (2u + u^2 + gamma_K) |A||B|, u = 2^-11 (ops/precision.py).
            u, k_eff = 2.0 ** -11, K * 2.0 ** -24
            scale = 2 * u + u * u + k_eff / (1 - k_eff)
            bound = scale * torch.matmul(ta.abs().to(torch.float64), tb.abs().to(torch.float64))
            gpu_got = torch.from_numpy(got.astype(np.float64)).cuda()
            within = bool(((gpu_got - ref).abs() <= bound).all())
            judged = "TF32 bound (cuBLAS ran fp32)"
        ok = finite and got.dtype == expected_dtype and within
        log(f"| {label} | {got.dtype} | {ours_err:.3e} | {cub_err:.3e} | {ratio:.2f} | "
            f"{'PASS' if ok else 'FAIL'} ({judged}) |")
        if not ok:
            ref_np = ref.cpu().numpy()
            diff = np.abs(got.astype(np.float64) - ref_np)
            worst = np.unravel_index(np.argmax(diff), diff.shape)
            log(f"    worst element {worst}: ours {got[worst]!r} ref {ref_np[worst]!r}; "
                f"bad rows {sorted(set(np.nonzero(diff > 0.1 * np.abs(ref_np).max())[-2]))[:16]} "
                f"bad cols {sorted(set(np.nonzero(diff > 0.1 * np.abs(ref_np).max())[-1]))[:16]}")
    except Exception as exc:  # noqa: BLE001
        log(f"| {label} | ERROR {type(exc).__name__}: {str(exc)[:3000]} |")
        traceback.print_exc(limit=4, file=sys.stdout)


# -- timing -------------------------------------------------------------------------------------
def tflops(n: int, seconds: float) -> float:
    return 2.0 * n ** 3 / seconds / 1e12


def time_row(torch, dev, kind: str, n: int, fp32_ms: dict) -> None:
    try:
        a, b = operands(kind, (n, n), (n, n), n)
        _, x, y = ours(dev, kind, a, b, False)
        prec = "tf32" if kind == "tf32" else None
        reps = 10 if n <= 4096 else 5
        ours_s = synced_seconds(lambda: cg.matmul(x, y, precision=prec), dev.queue.finish,
                                reps=reps).seconds
        plan = cg.explain_matmul(x, y, precision=prec).splitlines()[1]
        ta, tb = torch_product(torch, kind, a, b)
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        cub_s = synced_seconds(lambda: torch.matmul(ta, tb), torch.cuda.synchronize,
                               reps=reps).seconds
        torch.backends.cuda.matmul.allow_tf32 = False
        extra = ""
        if kind != "tf32":   # the warp-level kernel, forced: what wgmma replaced on Hopper
            mma_s = synced_seconds(lambda: cg.matmul(x, y, kernel="mma"), dev.queue.finish,
                                   reps=reps).seconds
            extra = f" | mma {mma_s * 1e3:.3f} ms ({cub_s / mma_s:.3f}x)"
        if kind == "tf32" and n in fp32_ms:
            extra = f" | {fp32_ms[n] / (ours_s * 1e3):.2f}x our fp32"
        log(f"| {kind} | {n} | {ours_s * 1e3:.3f} ({tflops(n, ours_s):.0f} TF/s) | "
            f"{cub_s * 1e3:.3f} ({tflops(n, cub_s):.0f} TF/s) | {cub_s / ours_s:.3f}x{extra} | "
            f"{plan} |")
    except Exception as exc:  # noqa: BLE001
        log(f"| {kind} | {n} | ERROR {type(exc).__name__}: {str(exc)[:3000]} |")
        traceback.print_exc(limit=4, file=sys.stdout)


def time_fp32(torch, dev, n: int, fp32_ms: dict) -> None:
    """Our float32 kernel (precision "highest") against cuBLAS float32 without TF32."""
    try:
        a, b = operands("tf32", (n, n), (n, n), n)
        x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
        reps = 10 if n <= 4096 else 5
        ours_s = synced_seconds(lambda: cg.matmul(x, y, precision="highest"),
                                dev.queue.finish, reps=reps).seconds
        fp32_ms[n] = ours_s * 1e3
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        torch.backends.cuda.matmul.allow_tf32 = False
        cub_s = synced_seconds(lambda: torch.matmul(ta, tb), torch.cuda.synchronize,
                               reps=reps).seconds
        plan = cg.explain_matmul(x, y, precision="highest").splitlines()[1]
        log(f"| float32 (ours: highest) | {n} | {ours_s * 1e3:.3f} ({tflops(n, ours_s):.0f} TF/s) "
            f"| {cub_s * 1e3:.3f} ({tflops(n, cub_s):.0f} TF/s) | {cub_s / ours_s:.3f}x | {plan} |")
    except Exception as exc:  # noqa: BLE001
        log(f"| float32 | {n} | ERROR {type(exc).__name__}: {str(exc)[:3000]} |")


# -- probes for the next steps -------------------------------------------------------------------
PROBE_SOURCE = r"""
__kernel void dyn_local(__global float* out, __local float* buf, const int n)
{
    for (int i = get_local_id(0); i < n; i += get_local_size(0))
        buf[i] = (float)i;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        out[get_group_id(0)] = buf[n - 1];
}
#ifdef WGMMA_PROBE
__kernel void wgmma_fence(__global float* out)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    out[get_global_id(0)] = 1.0f;
}
#endif
"""


def probes(dev) -> None:
    """Can a work-group take more than 48 KB of dynamic local memory, and does wgmma build?"""
    log("\n## Probes: dynamic local memory per work-group, wgmma (sm_90a) in inline PTX")
    out = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4096)
    try:
        knl = cl.Kernel(cl.Program(dev.context, PROBE_SOURCE).build(), "dyn_local")
        for kib in (48, 64, 100, 160, 227):
            n = kib * 1024 // 4
            try:
                knl(dev.queue, (256,), (256,), out, cl.LocalMemory(n * 4), np.int32(n))
                dev.queue.finish()
                got = np.empty(1, np.float32)
                cl.enqueue_copy(dev.queue, got, out)
                log(f"dynamic __local {kib} KiB: ran, {'ok' if got[0] == n - 1 else got[0]}")
            except Exception as exc:  # noqa: BLE001
                log(f"dynamic __local {kib} KiB: {type(exc).__name__}: {str(exc)[:300]}")
    except Exception as exc:  # noqa: BLE001
        log(f"dynamic __local probe: {type(exc).__name__}: {str(exc)[:500]}")
    prg = cl.Program(dev.context, PROBE_SOURCE)
    try:
        prg.build(options=["-DWGMMA_PROBE", "-cl-nv-verbose"])
        log("wgmma.fence: builds (" + prg.get_build_info(
            dev.cl_device, cl.program_build_info.LOG).strip()[:300] + ")")
    except Exception as exc:  # noqa: BLE001
        try:
            log("wgmma.fence: build FAILED: " + prg.get_build_info(
                dev.cl_device, cl.program_build_info.LOG)[-800:])
        except Exception:  # noqa: BLE001
            log(f"wgmma.fence: build FAILED: {str(exc)[:800]}")


# -- forced configurations ------------------------------------------------------------------------
# Candidates per dtype (the first is the variant's default): 4 warps of 64x64 with a 3-deep ring
# fit 48 KB of static local memory; 8 warps of 64x64 only with 2 stages. DYN_LOCAL=1 puts the ring
# in a __local argument, which may go past 48 KB (the probes above say whether the driver lets it).
_W64 = {"WM": 64, "WN": 64}
_DYN = {"DYN_LOCAL": 1}
CANDIDATES = {
    "16bit": [
        {"BM": 128, "BN": 128, "BK": 32, "STAGES": 3, **_W64},
        {"BM": 128, "BN": 256, "BK": 32, "STAGES": 2, **_W64},
        {"BM": 256, "BN": 128, "BK": 32, "STAGES": 2, **_W64},
        {"BM": 128, "BN": 128, "BK": 32, "STAGES": 3, "WM": 64, "WN": 32},
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 4, **_W64},
        {"BM": 128, "BN": 128, "BK": 32, "STAGES": 2, **_W64},
        {"BM": 128, "BN": 128, "BK": 32, "STAGES": 4, **_W64, **_DYN},
        {"BM": 128, "BN": 256, "BK": 32, "STAGES": 3, **_W64, **_DYN},
        {"BM": 128, "BN": 256, "BK": 32, "STAGES": 4, **_W64, **_DYN},
        {"BM": 256, "BN": 128, "BK": 32, "STAGES": 4, **_W64, **_DYN},
    ],
    "tf32": [
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 3, **_W64},
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 3, **_W64, "NPERM": 0},
        {"BM": 128, "BN": 256, "BK": 16, "STAGES": 2, **_W64},
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 3, "WM": 64, "WN": 32},
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 2, **_W64},
        {"BM": 128, "BN": 128, "BK": 32, "STAGES": 3, **_W64, **_DYN},
        {"BM": 128, "BN": 256, "BK": 16, "STAGES": 4, **_W64, **_DYN},
        {"BM": 128, "BN": 128, "BK": 16, "STAGES": 3, "WM": 64, "WN": 32, **_DYN},
    ],
}


def config_name(params: dict) -> str:
    return (f"{params['BM']}x{params['BN']}x{params['BK']} w{params['WM']}x{params['WN']} "
            f"s{params['STAGES']}{' dyn' if params.get('DYN_LOCAL') else ''}"
            f"{' nperm0' if params.get('NPERM') == 0 else ''}")


def candidate_builds(dev, kind: str, ptx_dir: Path | None) -> None:
    """The -cl-nv-verbose build (registers, spills) of every candidate of ``kind``."""
    for params in CANDIDATES["tf32" if kind == "tf32" else "16bit"]:
        if time.perf_counter() - STARTED > 200:
            log(f"build {kind} {config_name(params)}: skipped (4-minute budget)")
            continue
        nperm = int(kind == "tf32" and params.get("NPERM", 1) and params["WN"] % 32 == 0)
        defines = {"ELEM": ELEM[kind], "MMA_PTX": 1, "TRANS_A": 0, "TRANS_B": 0, "VEC_A": 1,
                   "VEC_B": 1, "VEC_C": 1, "GROUP_M": 8, **params, "NPERM": nperm}
        build_report(dev, f"{kind} {config_name(params)}".replace(" ", "_"), defines, ptx_dir)


def time_candidates(torch, dev, kind: str, n: int, started: float) -> None:
    """Wall clock of each forced candidate at n^3, its error beside cuBLAS's, and its speed."""
    try:
        a, b = operands(kind, (n, n), (n, n), n)
        ta, tb = torch_product(torch, kind, a, b)
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        cub_s = synced_seconds(lambda: torch.matmul(ta, tb), torch.cuda.synchronize,
                               reps=10).seconds
        ref = torch.matmul(ta.to(torch.float64), tb.to(torch.float64))
        cub_err = rel_fro(torch, torch.matmul(ta, tb), ref)
        torch.backends.cuda.matmul.allow_tf32 = False
    except Exception as exc:  # noqa: BLE001
        log(f"| {kind} | cuBLAS ERROR {type(exc).__name__}: {str(exc)[:2000]} |")
        return
    prec = "tf32" if kind == "tf32" else None
    for params in CANDIDATES["tf32" if kind == "tf32" else "16bit"]:
        name = config_name(params)
        if time.perf_counter() - started > 225:
            log(f"| {kind} | {name} | skipped: 4-minute budget |")
            continue
        try:
            x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
            forced = {**params, "GROUP_M": 8}
            c = cg.matmul(x, y, kernel="mma", params=forced, precision=prec)
            err = rel_fro(torch, torch.from_numpy(np.asarray(c).astype(np.float32)).cuda(), ref)
            s = synced_seconds(lambda: cg.matmul(x, y, kernel="mma", params=forced,
                                                 precision=prec),
                               dev.queue.finish, reps=10).seconds
            log(f"| {kind} | {name} | {s * 1e3:.3f} ({tflops(n, s):.0f} TF/s) | "
                f"{cub_s * 1e3:.3f} | {cub_s / s:.3f}x | {err:.2e} vs {cub_err:.2e} |")
        except Exception as exc:  # noqa: BLE001
            log(f"| {kind} | {name} | ERROR {type(exc).__name__}: {str(exc)[:1500]} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--quick", action="store_true", help="builds and small checks only")
    ap.add_argument("--candidates", action="store_true",
                    help="also the probes and the forced mma configurations (the sweep behind "
                         "mma's defaults)")
    ap.add_argument("--ptx-dir", default=os.environ.get("OUT"))
    ap.add_argument("--device", default=None, help="a device name substring (default: a GPU)")
    args = ap.parse_args()
    import torch
    started = time.perf_counter()
    dev = (cg.get_device(args.device) if args.device
           else next(d for d in cg.devices() if d.info.is_gpu))
    info = dev.info
    log(f"device: {dev.name} ({info.platform}), vendor {info.vendor}, compute capability "
        f"{info.compute_capability}, tensor_cores={info.tensor_cores}; torch {torch.__version__}, "
        f"ml_dtypes bfloat16: {BF16 is not None}")
    kinds = [k for k in DTYPES if k != "bfloat16" or BF16 is not None]
    ptx_dir = Path(args.ptx_dir) if args.ptx_dir else None

    log(f"local memory: {info.local_mem_bytes} bytes per work-group")
    log("\n## Builds of the defaults (-cl-nv-verbose)")
    for kind in kinds:
        for ta, tb in ((0, 0), (1, 1)):
            defines = {"ELEM": ELEM[kind], "MMA_PTX": 1, "TRANS_A": ta, "TRANS_B": tb,
                       "BK": 16 if kind == "tf32" else 32, "VEC_A": 1, "VEC_B": 1,
                       "VEC_C": 1, "GROUP_M": 8, "NPERM": int(kind == "tf32" and tb == 0)}
            build_report(dev, f"{kind}_t{ta}{tb}", defines, ptx_dir)

    log("\n## Correctness: relative Frobenius error against a float64 product of the same inputs")
    log("| case | dtype | ours | cuBLAS | ours/cuBLAS | verdict |\n|---|---|---|---|---|---|")
    # The emulation first (plain OpenCL, same tiling, loads and C fragments): where it passes
    # and PTX fails, the bug is in the A/B fragment layouts or the ldmatrix addressing; and a
    # PTX kernel that faults cannot spoil these rows.
    emulate = {"EMULATE": 1}
    for kind in kinds:
        check_row(torch, dev, kind, 129, 77, 200, 1, False, emulate)
        check_row(torch, dev, kind, 33, 17, 65, 2, True, emulate)
    for kind in kinds:
        for M, N, K, batch, trans in ((129, 77, 200, 1, False), (1, 8, 16, 1, False),
                                      (33, 17, 65, 2, True), (256, 256, 256, 1, False),
                                      (129, 77, 200, 1, True)):
            check_row(torch, dev, kind, M, N, K, batch, trans, None)
    if args.quick:
        return
    for kind in kinds:
        check_row(torch, dev, kind, 4096, 4096, 4096, 1, False, None)
    log(f"(correctness done at {time.perf_counter() - started:.0f} s)")

    log("\n## Wall clock per call (device arrays, queue drained after each call)")
    log("| dtype | n^3 | ours ms | cuBLAS ms | ours speed / cuBLAS | kernel |\n"
        "|---|---|---|---|---|---|")
    fp32_ms: dict[int, float] = {}
    for n in args.sizes:
        if n > 4096 and time.perf_counter() - started > 200:
            log(f"| {n} | skipped: {time.perf_counter() - started:.0f} s spent (4-minute budget) |")
            continue
        time_fp32(torch, dev, n, fp32_ms)
        for kind in kinds:
            time_row(torch, dev, kind, n, fp32_ms)
    log(f"(default timings done at {time.perf_counter() - started:.0f} s)")
    if not args.candidates:
        return
    probes(dev)
    log("\n## Builds of the forced configurations (-cl-nv-verbose; row-major operands)")
    for kind in kinds:
        if kind != "bfloat16":   # bfloat16 builds differ from float16 only in the mma type
            candidate_builds(dev, kind, ptx_dir)

    log(f"\n## Forced configurations at {args.sizes[0]}^3 (wall clock; error vs float64)")
    log("| dtype | config | ours ms | cuBLAS ms | ours/cuBLAS | error ours vs cuBLAS |\n"
        "|---|---|---|---|---|---|")
    for kind in kinds:
        time_candidates(torch, dev, kind, args.sizes[0], started)
    log(f"(candidates done at {time.perf_counter() - started:.0f} s)")
    log(f"(done in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
