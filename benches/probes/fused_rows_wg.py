"""Work-items a group for ``fuse``d functions with reductions (``opencl/fused_rows.cl``, one
work-group a row): a row softmax and a row normalisation at several shapes with the group size
forced, beside the function as written, NumPy (CPU devices) and CuPy (CUDA machines) in the
same run. The evidence of the tuned constant ``fuse.rows_wg_cpu``.

    python benches/probes/fused_rows_wg.py [--device NAME] [--sizes 1024x4096 4096x64 ...]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.peers import CudaPeers
from clarray_gemm.ops import fused_rows
from clock import median_us


def softmax(xp):
    def f(x):
        e = xp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return f


def normalise(xp):
    def f(x):
        m = x.mean(axis=-1, keepdims=True)
        d = x - m
        return d / xp.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--sizes", nargs="+", default=["1024x4096", "4096x64", "256x1000"])
    ap.add_argument("--groups", nargs="+", default=["r4", "r8", "r16", "r32", "32", "64",
                                                     "128", "256", "512"],
                    help="group sizes: N a work-group a row, rN a row a work-item in groups of N")
    ap.add_argument("--calls", type=int, default=7)
    a = ap.parse_args()
    dev = cg.get_device(a.device)
    peers = CudaPeers.on(dev)
    cupy = peers.cupy if peers is not None else None
    chosen = fused_rows.walk
    print(dev)
    for size in a.sizes:
        r, c = (int(v) for v in size.split("x"))
        host = np.random.default_rng(1).standard_normal((r, c)).astype(np.float32)
        x = cg.asarray(host, device=dev)
        for build in (softmax, normalise):
            plain = build(np)
            want = plain(host.astype(np.float64))
            line = [f"{build.__name__} {r} x {c}:"]
            for form in a.groups + ["chosen"]:
                wg = 0 if form == "chosen" else int(form.lstrip("r"))
                if wg > dev.info.max_work_group_size:
                    continue
                forced = (wg, form.startswith("r"))
                fused_rows.walk = chosen if wg == 0 else (
                    lambda info, rows, cols, columns=False, forced=forced: forced)
                f = cg.fuse(plain)
                plan = f.kernel_for(x)
                got = np.asarray(f(x))
                err = np.linalg.norm(got - want) / np.linalg.norm(want)
                if plan is None or err > 1e-5:
                    line.append(f"{form}: {'unfused' if plan is None else 'WRONG'}")
                    continue
                t = median_us(lambda: f(x), a.calls, sync=dev.synchronize)
                name = f"chosen {'r' * plan.per_item}{plan.lsize[0]}" if wg == 0 else form
                line.append(f"{name} {t:.1f}")
            fused_rows.walk = chosen
            t = median_us(lambda: plain(x), a.calls, sync=dev.synchronize)
            line.append(f"as written {t:.1f}")
            if dev.info.is_cpu:
                line.append(f"NumPy {median_us(lambda: plain(host), a.calls):.1f}")
            if cupy is not None:
                cx = cupy.asarray(host)
                cf = build(cupy)
                csync = cupy.cuda.runtime.deviceSynchronize
                line.append(f"CuPy {median_us(lambda: cf(cx), a.calls, sync=csync):.1f}")
                try:
                    fused = cupy.fuse(cf)
                    fused(cx)
                    t = median_us(lambda: fused(cx), a.calls, sync=csync)
                    line.append(f"cupy.fuse {t:.1f}")
                except Exception as exc:  # noqa: BLE001 - report what cupy.fuse refuses
                    line.append(f"cupy.fuse failed ({type(exc).__name__}: {str(exc)[:80]})")
            print(" | ".join(line) + " (us)", flush=True)


if __name__ == "__main__":
    main()
