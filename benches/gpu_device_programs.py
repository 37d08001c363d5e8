"""NumPy programs on clarray_gemm arrays against the same code on CuPy arrays, on one NVIDIA
GPU, and elementwise/reduction bandwidth against a device-to-device copy.

Run on the GPU machine in one call (prints a Markdown table; ``--out DIR`` also writes JSON)::

    python benches/gpu_device_programs.py [--out $OUT] [--quick]

Programs (float32, the same functions for both libraries: NumPy's API dispatches to either):
softmax attention (4096x1024 Q/K/V), an MLP forward+backward with 8192x4096 layers, and a
k-means step. Times are wall clock: one warm-up call, then the median of 5 rounds of R calls,
each round ended by a device synchronisation (``queue.finish()`` / ``deviceSynchronize``).
Bandwidth at 2^26 elements: bytes each kernel must move / time, next to ``x.copy()``.
Our runs also report the host fallbacks they made (``cg.on_host_calls()``; expected: none).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.programs import kmeans_step, mlp_classifier_step  # noqa: E402
from clarray_gemm.bench.timing import pipelined_seconds  # noqa: E402


def attention(q, k, v):
    s = q @ k.T * (1.0 / math.sqrt(q.shape[-1]))  # a Python float: float32 stays float32
    w = np.exp(s - np.max(s, axis=-1, keepdims=True))
    w /= np.sum(w, axis=-1, keepdims=True)
    return w @ v


def program_inputs(quick: bool) -> dict:
    rng = np.random.default_rng(0)
    f = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)  # noqa
    t, d = (1024, 256) if quick else (4096, 1024)
    b, w = (1024, 512) if quick else (8192, 4096)
    n, k, dim = (16384, 16, 16) if quick else (131072, 64, 32)
    classes = np.zeros((b, w), np.float32)
    classes[np.arange(b), np.arange(b) % w] = 1
    return {
        f"attention {t}x{d}": (attention, (f(t, d), f(t, d), f(t, d))),
        f"MLP fwd+bwd {b}x{w}": (mlp_classifier_step, (f(b, w), f(w, w, scale=w ** -0.5), f(w),
                                            f(w, w, scale=w ** -0.5), classes)),
        f"k-means step N={n} K={k} D={dim}": (kmeans_step, (f(n, dim), f(k, dim))),
    }


def timed(fn, sync, reps: int) -> float:
    """Median seconds per call: 5 rounds of ``reps`` calls, each ended by ``sync``."""
    return pipelined_seconds(fn, sync, reps, rounds=5).seconds


def rel_error(ours, theirs) -> float:
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    denom = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / denom) if denom else float(np.linalg.norm(a - b))


class _NumPyPeer:
    """NumPy standing in for CuPy (``--smoke``)."""

    __version__ = "numpy stand-in"

    class cuda:  # noqa: N801 - CuPy's namespace
        class runtime:  # noqa: N801
            deviceSynchronize = staticmethod(lambda: None)  # noqa: N815

    def __getattr__(self, name):
        return {"asnumpy": np.asarray}.get(name) or getattr(np, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for results.json")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--smoke", action="store_true",
                        help="no GPU: the default device against NumPy, small sizes (checks the "
                             "script itself)")
    args = parser.parse_args()
    if args.smoke:
        args.quick = True
        cp = _NumPyPeer()
        device = cg.default_device()
    else:
        import cupy as cp
        device = next(d for d in cg.devices() if d.info.is_gpu and d.usable)
    sync_cl, sync_cp = device.synchronize, cp.cuda.runtime.deviceSynchronize
    rows, records = [], []
    print(f"device: {device}  cupy {cp.__version__}  numpy {np.__version__}", flush=True)

    for label, (program, host_args) in program_inputs(args.quick).items():
        ours = [cg.asarray(a, device=device) for a in host_args]
        theirs = [cp.asarray(a) for a in host_args]
        cg.reset_host_calls()
        result_ours = program(*ours)
        fallbacks = cg.on_host_calls()
        result_theirs = program(*theirs)
        first = lambda r: r[0] if isinstance(r, tuple) else r  # noqa: E731
        err = rel_error(first(result_ours), cp.asnumpy(first(result_theirs)))
        reps = 3 if not args.quick else 5
        t_ours = timed(lambda: program(*ours), sync_cl, reps)
        t_theirs = timed(lambda: program(*theirs), sync_cp, reps)
        rows.append((label, t_ours * 1e3, t_theirs * 1e3, t_theirs / t_ours, err,
                     ", ".join(f"{k}:{v}" for k, v in fallbacks.items()) or "none"))
        records.append(dict(zip(("program", "ours_ms", "cupy_ms", "speedup_vs_cupy",
                                 "rel_error_vs_cupy", "host_fallbacks"), rows[-1])))
        print(f"  {label}: {t_ours * 1e3:.2f} ms vs CuPy {t_theirs * 1e3:.2f} ms", flush=True)

    n = 1 << (22 if args.quick else 26)
    rng = np.random.default_rng(1)
    host_x = rng.standard_normal(n).astype(np.float32)
    host_y = rng.standard_normal(n).astype(np.float32)
    x, y = cg.asarray(host_x, device=device), cg.asarray(host_y, device=device)
    cx, cy = cp.asarray(host_x), cp.asarray(host_y)
    c, cc = x > 0, cx > 0
    nbytes = n * 4
    # (label, our call, CuPy's call, bytes moved)
    kernels = [
        ("copy (x.copy())", lambda: x.copy(), lambda: cx.copy(), 2 * nbytes),
        ("x + y", lambda: x + y, lambda: cx + cy, 3 * nbytes),
        ("np.exp(x)", lambda: np.exp(x), lambda: cp.exp(cx), 2 * nbytes),
        # two kernels: x > 0 (4 B in, 1 B out per element), then where (9 B in, 4 B out)
        ("np.where(x > 0, x, y)", lambda: np.where(x > 0, x, y),
         lambda: cp.where(cx > 0, cx, cy), 18 * n),
        ("np.where(c, x, y), c = x > 0 computed before", lambda: np.where(c, x, y),
         lambda: cp.where(cc, cx, cy), 13 * n),
        ("np.sum(x)", lambda: np.sum(x), lambda: cp.sum(cx), nbytes),
        ("np.max(x)", lambda: np.max(x), lambda: cp.max(cx), nbytes),
        ("np.argmax(x)", lambda: np.argmax(x), lambda: cp.argmax(cx), nbytes),
        ("x.reshape(8192, -1).sum(axis=1)", lambda: x.reshape(8192, -1).sum(axis=1),
         lambda: cx.reshape(8192, -1).sum(axis=1), nbytes),
        ("x.reshape(-1, 8192).sum(axis=0)", lambda: x.reshape(-1, 8192).sum(axis=0),
         lambda: cx.reshape(-1, 8192).sum(axis=0), nbytes),
    ]
    bw_rows = []
    copy_bw = None
    for label, ours_fn, theirs_fn, moved in kernels:
        t_ours = timed(ours_fn, sync_cl, 20)
        t_theirs = timed(theirs_fn, sync_cp, 20)
        bw_ours, bw_theirs = moved / t_ours / 1e9, moved / t_theirs / 1e9
        copy_bw = copy_bw or bw_ours
        bw_rows.append((label, t_ours * 1e3, bw_ours, bw_ours / copy_bw, t_theirs * 1e3, bw_theirs))
        records.append(dict(zip(("kernel", "ours_ms", "ours_GBps", "of_our_copy_bw", "cupy_ms",
                                 "cupy_GBps"), bw_rows[-1])))

    # the k-means step piece by piece (where a program loses to CuPy)
    pieces = []
    for label, (program, host_args) in program_inputs(args.quick).items():
        if program is not kmeans_step:
            continue
        hx, hc = host_args
        for side, xp_x, xp_c, xp, sync in (("ours", cg.asarray(hx, device=device),
                                            cg.asarray(hc, device=device), np, sync_cl),
                                           ("cupy", cp.asarray(hx), cp.asarray(hc), cp, sync_cp)):
            diff = xp_x[:, None, :] - xp_c[None, :, :]
            sq = diff ** 2
            d = xp.sum(sq, axis=-1)
            labels = xp.argmin(d, axis=1)
            steps = [("x[:, None, :] - c[None, :, :]", lambda: xp_x[:, None, :] - xp_c[None, :, :]),
                     ("diff ** 2", lambda: diff ** 2),
                     ("sum(axis=-1)", lambda: xp.sum(sq, axis=-1)),
                     ("argmin(axis=1)", lambda: xp.argmin(d, axis=1)),
                     ("labels[:, None] == arange", lambda: labels[:, None] == xp.arange(
                         hc.shape[0], like=xp_x) if side == "ours" else
                      labels[:, None] == xp.arange(hc.shape[0]))]
            for name, fn in steps:
                pieces.append((side, name, timed(fn, sync, 5) * 1e3))
    if pieces:
        print("\n## k-means step, piece by piece (wall ms)\n")
        print("| piece | ours ms | CuPy ms |\n|---|---:|---:|")
        table = {}
        for side, name, ms in pieces:
            table.setdefault(name, {})[side] = ms
        for name, v in table.items():
            print(f"| {name} | {v.get('ours', float('nan')):.3f} | {v.get('cupy', float('nan')):.3f} |")

    print("\n## Programs (wall clock, float32)\n")
    print("| program | clarray_gemm ms | CuPy ms | CuPy/ours (≥1.0: target met) | rel. error vs CuPy "
          "| host fallbacks |")
    print("|---|---:|---:|---:|---:|---|")
    for label, ours_ms, cupy_ms, ratio, err, fb in rows:
        print(f"| {label} | {ours_ms:.2f} | {cupy_ms:.2f} | {ratio:.2f} | {err:.1e} | {fb} |")
    print(f"\n## Bandwidth at 2^{n.bit_length() - 1} float32 elements (target: ≥ 80% of copy)\n")
    print("| kernel | ours ms | ours GB/s | of our copy | CuPy ms | CuPy GB/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, ms, bw, frac, cms, cbw in bw_rows:
        print(f"| {label} | {ms:.3f} | {bw:.0f} | {frac:.0%} | {cms:.3f} | {cbw:.0f} |")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_device_programs.json").write_text(json.dumps(
            {"device": str(device), "records": records}, indent=1, default=str))


if __name__ == "__main__":
    main()
