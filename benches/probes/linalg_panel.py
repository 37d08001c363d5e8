"""Large dense linear algebra on a GPU against CuPy (cuSOLVER): np.linalg.solve (one vector),
inv and cholesky of float32 n x n device arrays (well conditioned: standard normal plus
2 sqrt(n) on the diagonal; Cholesky of a a^T / n + I), wall clock per call with the queue
drained (best of a few calls after a warm-up), each answer checked against NumPy's (relative
norm error <= 1e-3). Then the blocked factorisation's pieces A/B: the LU panel kernels alone
(lu_panel through global memory against lu_panel_private at several work-group widths) on
the first panel of an n x n matrix, the whole solve with each, and steps of 32 against 64
columns for Cholesky and for inv's blocked triangular solves.

    python3 benches/probes/linalg_panel.py                 # n = 512 1024 2048 4096
    python3 benches/probes/linalg_panel.py --sizes 256 --no-cupy   # anywhere
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)   # this checkout's package, not an installed one

import numpy as np   # noqa: E402

import clarray_gemm as cg   # noqa: E402
from clarray_gemm.ops import linalg_blocked   # noqa: E402


def best_ms(call, sync, budget_s: float = 0.6, max_calls: int = 8) -> float:
    """The fastest wall-clock ms of a call with the queue drained, after one warm-up call."""
    call()
    sync()
    best, spent, calls = float("inf"), 0.0, 0
    while calls < 2 or (spent < budget_s and calls < max_calls):
        start = time.perf_counter()
        call()
        sync()
        took = time.perf_counter() - start
        best, spent, calls = min(best, took), spent + took, calls + 1
    return best * 1e3


def rel_error(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def operands(n: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    dominant = (a + np.float32(2 * np.sqrt(n)) * np.eye(n, dtype=np.float32)).astype(np.float32)
    spd = (a.astype(np.float64) @ a.T.astype(np.float64) / n + np.eye(n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return dominant, spd, b


class Forced:
    """linalg_blocked's tuning values set for a ``with`` block."""

    def __init__(self, **values):
        self.values, self.saved = values, {}

    def __enter__(self):
        for name, value in self.values.items():
            self.saved[name] = getattr(linalg_blocked, name)
            setattr(linalg_blocked, name, value)

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            setattr(linalg_blocked, name, value)


# (the default is private wg1024 up to 4 rows a work-item)
PANEL_VARIANTS = (("lu_panel", dict(PANEL_ROWS_PER_ITEM=0)),
                  ("private wg1024", dict(PANEL_WG_MAX=1024, PANEL_ROWS_PER_ITEM=8)),
                  ("private wg512", dict(PANEL_WG_MAX=512, PANEL_ROWS_PER_ITEM=8)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    parser.add_argument("--no-cupy", action="store_true", help="ours and NumPy only")
    args = parser.parse_args()
    dev = cg.default_device()
    print(f"device: {dev}")
    cp = None
    if not args.no_cupy:
        try:
            import cupy as cp
            print(f"cupy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name']}")
        except ImportError:
            print("cupy: not installed (ours only)")
    sync = dev.synchronize
    cp_sync = (lambda: cp.cuda.Device().synchronize()) if cp is not None else None
    failures = 0

    print("\n| op | n | ours ms | cupy ms | ratio (cupy/ours) | ours err | cupy err |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        a, spd, b = operands(n)
        want = {"solve": np.linalg.solve(a.astype(np.float64), b.astype(np.float64)),
                "inv": np.linalg.inv(a.astype(np.float64)),
                "cholesky": np.linalg.cholesky(spd.astype(np.float64))}
        xa, xs, xb = (cg.asarray(v, device=dev) for v in (a, spd, b))
        ours = {"solve": lambda: np.linalg.solve(xa, xb), "inv": lambda: np.linalg.inv(xa),
                "cholesky": lambda: np.linalg.cholesky(xs)}
        theirs = {}
        if cp is not None:
            ca, cs, cb = (cp.asarray(v) for v in (a, spd, b))
            theirs = {"solve": lambda: cp.linalg.solve(ca, cb), "inv": lambda: cp.linalg.inv(ca),
                      "cholesky": lambda: cp.linalg.cholesky(cs)}
        for op in ("solve", "inv", "cholesky"):
            err = rel_error(ours[op](), want[op])
            ms = best_ms(ours[op], sync)
            c_ms = c_err = None
            if op in theirs:
                c_err = rel_error(cp.asnumpy(theirs[op]()), want[op])
                c_ms = best_ms(theirs[op], cp_sync)
            ok = err <= 1e-3
            failures += not ok
            ratio = f"{c_ms / ms:.2f}x" if c_ms else "-"
            print(f"| {op} | {n} | {ms:.2f} | {f'{c_ms:.2f}' if c_ms else '-'} | {ratio} | "
                  f"{err:.1e}{'' if ok else ' FAIL'} | {f'{c_err:.1e}' if c_err is not None else '-'} |",
                  flush=True)

    print("\nLU panel alone (the first panel of n x n: n rows, "
          f"{linalg_blocked.BLOCK} columns), and the whole solve with each panel kernel")
    print("| n | panel kernel | panel ms | solve ms | solve err | factors equal lu_panel's |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        a, _, b = operands(n, 1)
        want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
        xa, xb = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
        work = cg.asarray(a, device=dev)
        reference = None
        for name, values in PANEL_VARIANTS:
            with Forced(**values):
                kernel, wg = linalg_blocked._panel(dev, np.dtype(np.float32), n)
                piv = cg.empty((1, n), np.int32, device=dev)
                status = cg.zeros((1,), np.int32, device=dev)
                w = min(linalg_blocked.BLOCK, n)

                def panel():
                    kernel(dev.queue, (wg,), (wg,), work.storage.kernel_buffer(write=True),
                           np.int64(0), np.int64(n * n), np.int32(n), np.int32(0), np.int32(w),
                           piv.storage.kernel_buffer(write=True), np.int64(n),
                           status.storage.kernel_buffer(write=True))
                panel_ms = best_ms(panel, sync)   # (refactors its own output: same work)
                lu = cg.asarray(a.reshape(1, n, n), device=dev)
                linalg_blocked.lu_factor(lu)
                got = np.asarray(lu)
                reference = got if reference is None else reference
                same = got.tobytes() == reference.tobytes()
                err = rel_error(np.linalg.solve(xa, xb), want)
                solve_ms = best_ms(lambda: np.linalg.solve(xa, xb), sync)
            failures += err > 1e-3 or not same
            print(f"| {n} | {name} | {panel_ms:.3f} | {solve_ms:.2f} | {err:.1e} | "
                  f"{'yes' if same else 'NO'} |", flush=True)

    print("\nStep widths: Cholesky (CHOLESKY_BLOCKS), inv's blocked solves (SOLVE_BLOCKS)")
    print("| n | block | cholesky ms | err | inv ms | err |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        a, spd, _ = operands(n, 2)
        want = np.linalg.cholesky(spd.astype(np.float64))
        want_inv = np.linalg.inv(a.astype(np.float64))
        xs, xa = cg.asarray(spd, device=dev), cg.asarray(a, device=dev)
        for block in (32, 64):
            with Forced(CHOLESKY_BLOCKS=((0, block),), SOLVE_BLOCKS=((0, block),)):
                err = rel_error(np.linalg.cholesky(xs), want)
                ms = best_ms(lambda: np.linalg.cholesky(xs), sync)
                i_err = rel_error(np.linalg.inv(xa), want_inv)
                i_ms = best_ms(lambda: np.linalg.inv(xa), sync, max_calls=4)
            failures += err > 1e-3 or i_err > 1e-3
            print(f"| {n} | {block} | {ms:.2f} | {err:.1e} | {i_ms:.2f} | {i_err:.1e} |",
                  flush=True)
    print("\nall answers within 1e-3" if not failures else f"\n{failures} FAILED checks")
    return int(failures > 0)


if __name__ == "__main__":
    sys.exit(main())
