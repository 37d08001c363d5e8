"""The elementwise, reduction and gather kernels under the Oclgrind simulator with its checks on
(out-of-bounds accesses, data races, uninitialized values, API misuse), at small sizes.

As in tests/kernels/test_gemm_oclgrind.py, each case runs in a fresh Python process with one simulator
thread, so the checkers' reports do not depend on test order. Each case also compares with NumPy.
"""
from __future__ import annotations

import pytest

from conftest import assert_clean_under_oclgrind

pytestmark = pytest.mark.slow


# argv: case name. Exit status 3 on a wrong result.
SCRIPT = r"""
import sys
import numpy as np
import clarray_gemm as cg
dev = next(d for d in cg.devices() if d.info.is_simulator)
rng = np.random.default_rng(0)
a = rng.standard_normal((7, 33)).astype(np.float32)
a[0, :3] = [np.nan, np.inf, -0.0]
b = rng.standard_normal((33,)).astype(np.float32)
i = rng.integers(-50, 50, (7, 33)).astype(np.int32)
x, y, xi = (cg.asarray(v, device=dev) for v in (a, b, i))
def same(got, want, tol=0.0):
    got = np.asarray(got)
    ok = got.shape == want.shape and got.dtype == want.dtype and (
        np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True) if tol else
        np.array_equal(got, want, equal_nan=want.dtype.kind == "f"))
    if not ok:
        print("MISMATCH", got, want)
        sys.exit(3)
case = sys.argv[1]
with np.errstate(all="ignore"):
    if case == "elementwise":
        same(x + y, a + b)
        same(x.ravel()[5:] - 1.5, a.ravel()[5:] - 1.5)  # elementwise_flat: offset, stride-0 scalar
        same(np.divmod(xi, 7)[1], np.divmod(i, 7)[1])  # elementwise_flat, two outputs
        same(np.where(x > 0, x, y[0]), np.where(a > 0, a, b[0]))  # elementwise_flat, three inputs
        same(np.floor_divide(xi.T, 7), np.floor_divide(i.T, 7))
        q, r = np.divmod(x[:, ::3], y[::3])
        same(q, np.divmod(a[:, ::3], b[::3])[0]); same(r, np.divmod(a[:, ::3], b[::3])[1])
        same(np.where(x > 0, x, 0.5), np.where(a > 0, a, 0.5))
        same(np.clip(xi, -3, 3), np.clip(i, -3, 3))
        out = cg.zeros((7, 33), np.float32, device=dev)
        np.exp(x, out=out, where=x > 0)
        same(np.asarray(out)[a > 0], np.exp(a)[a > 0], 1e-6)
        same(np.tanh(x), np.tanh(a), 1e-6)
    elif case == "elementwise_per_item":
        # the flat kernel as GPUs run it (PER_ITEM elements per work-item): the simulator's
        # context behind a device that reports a GPU
        import dataclasses
        gpu = object.__new__(cg.Device)
        gpu.__dict__.update(dev.__dict__)
        gpu.info = dataclasses.replace(dev.info, type="GPU")
        with cg.host_path(False):
            xg, yg, ig = (cg.asarray(v, device=gpu) for v in (a, b, i))
            same(xg + yg, a + b)
            same(xg.ravel()[5:] - 1.5, a.ravel()[5:] - 1.5)
            same(np.divmod(ig, 7)[1], np.divmod(i, 7)[1])
            same(np.where(xg > 0, xg, yg[0]), np.where(a > 0, a, b[0]))
            same(np.exp(xg[3]), np.exp(a[3]), 1e-6)
            same(xg - yg[:7, None], a - b[:7, None])  # the strided kernel: rows broadcast
            same(xg.T * 2.0, a.T * 2.0)  # elementwise_tiled from here: transposed operands
            same(np.where(xg.T > 0, xg.T, yg[:7]), np.where(a.T > 0, a.T, b[:7]))
            q, r = np.divmod(ig.T, 7)
            same(q, np.divmod(i.T, 7)[0]); same(r, np.divmod(i.T, 7)[1])
            three = rng.standard_normal((3, 33, 7)).astype(np.float32)
            same(cg.asarray(three, device=gpu).transpose(0, 2, 1) - xg,
                 three.transpose(0, 2, 1) - a)
            same(xg.T.copy(), a.T.copy())  # transposed_copy
            same(xg.T.astype(np.int32), a.T.astype(np.int32))
            same(xg[None, :, ::2] - xg[:3, None, ::2], a[None, :, ::2] - a[:3, None, ::2])  # 3-D
            same(xg[1:, ::3].copy(), a[1:, ::3].copy())  # strided_copy: 2 dims, 32-bit index
            same(np.broadcast_to(xg[:, None, :5], (7, 3, 5)).copy(),
                 np.broadcast_to(a[:, None, :5], (7, 3, 5)).copy())
            out = cg.zeros((7, 33), np.float32, device=gpu)
            np.exp(xg, out=out, where=xg > 0)
            same(np.asarray(out)[a > 0], np.exp(a)[a > 0], 1e-6)
            # float16 as GPUs run it: PER_ITEM elements, the tiled kernels, the GPU reductions
            h = a.astype(np.float16)
            hg = cg.asarray(h, device=gpu)
            same(hg + hg[0], h + h[0])
            same(hg.T * 2.0, h.T * 2.0)
            same(hg.T.astype(np.float32), h.T.astype(np.float32))
            same(xg.T.astype(np.float16), a.T.astype(np.float16))
            same(np.max(hg, axis=1), np.max(h, axis=1))
            same(np.argmax(hg, axis=0), np.argmax(h, axis=0))
    elif case == "elementwise_half":
        # float16 stored as its bits (opencl/half_bits.h): the flat, strided and tiled kernels,
        # a float16 result into float32, a where= mask, casts, reductions
        with cg.host_path(False):
            h, g = a.astype(np.float16), b.astype(np.float16)
            xh, yh = cg.asarray(h, device=dev), cg.asarray(g, device=dev)
            same(xh + yh, h + g)
            same(xh.ravel()[5:] * 1.5, h.ravel()[5:] * 1.5)
            same(xh.T - yh[:7], h.T - g[:7])
            same(np.maximum(xh, yh[0]), np.maximum(h, g[0]))
            same(np.add(xh, xh, out=cg.zeros((7, 33), np.float32, device=dev)),
                 np.add(h, h, out=np.zeros((7, 33), np.float32)))
            out = cg.zeros((7, 33), np.float16, device=dev)
            np.sqrt(xh, out=out, where=xh > 0)
            want = np.zeros((7, 33), np.float16)
            np.sqrt(h, out=want, where=h > 0)
            same(out, want)
            same(xh.astype(np.float32), h.astype(np.float32))   # copy.cl: float16 bits
            same(x.astype(np.float16), a.astype(np.float16))
            same(xh.T.astype(np.int32), h.T.astype(np.int32))
            same(xh[:, ::2].copy(), h[:, ::2].copy())
            same(np.max(xh, axis=0), np.max(h, axis=0))           # reduce.cl: float16 bits
            same(np.argmin(xh, axis=1), np.argmin(h, axis=1))
            same(np.mean(xh, axis=1), np.mean(h, axis=1))
            big = np.resize(h, 5000)                               # two launches: float partials
            same(np.sum(cg.asarray(big, device=dev)).astype(np.float32),
                 np.float32(big.astype(np.float64).sum()), 0.05)
    elif case == "conv_flipped":
        # conv_gpu reading a convolution's mask backwards in place (FLIP_W), with the mask
        # length compiled in (m <= 64) or not, one mask chunk or several (MC 16)
        from clarray_gemm.kernels import conv_direct
        from clarray_gemm.kernels.conv import ConvProblem
        gpu_variant = next(v for v in conv_direct.VARIANTS if v.name == "gpu")
        for n, m, extra in ((37, 9, {}), (37, 9, {"FIXED_M": 0}), (50, 70, {"MC": 16})):
            sig = rng.standard_normal(n).astype(np.float32)
            sig[n // 2] = np.nan
            mask = rng.standard_normal(m).astype(np.float32)
            xs, ms = cg.asarray(sig, device=dev), cg.asarray(mask, device=dev)
            out = cg.zeros(n + m - 1, np.float32, device=dev)
            problem = ConvProblem(n, m, m - 1, n + m - 1, np.dtype(np.float32),
                                  xs.storage.kernel_buffer(), 0, ms.storage.kernel_buffer(),
                                  out.storage.kernel_buffer(write=True))
            params = dict(gpu_variant.defaults, WG=16, R=4, JU=4, **extra)
            conv_direct.FLIPPED_MASK_PREPARES["gpu"](dev, problem, params)(
                problem.x, 0, problem.w, problem.out)
            want = np.convolve(sig.astype(np.float64), mask.astype(np.float64))
            got = np.asarray(out)
            if not np.array_equal(np.isnan(got), np.isnan(want)):
                same(np.isnan(got), np.isnan(want))
            same(np.nan_to_num(got).astype(np.float64), np.nan_to_num(want), 1e-5)
    elif case == "reduce":
        same(np.sum(x, axis=1), np.sum(a, axis=1), 1e-5)
        same(np.max(x, axis=0), np.max(a, axis=0))
        same(np.argmax(x, axis=1), np.argmax(a, axis=1))
        same(np.mean(xi), np.mean(i), 1e-12)
        same(np.any(x > 2, axis=0), np.any(a > 2, axis=0))
        same(np.linalg.norm(x, axis=1), np.linalg.norm(a, axis=1), 1e-6)  # fused: one launch
        same(np.linalg.norm(x[1:]), np.linalg.norm(a[1:]), 1e-6)
    elif case == "reduce_split":
        big = rng.standard_normal(20000).astype(np.float32)
        big[777] = np.nan
        xb = cg.asarray(big, device=dev)
        same(np.sum(xb[big == big]), np.sum(big[big == big]), 1e-4)
        same(np.argmin(xb), np.argmin(big))
        cols = rng.standard_normal((200, 1100)).astype(np.float32)  # column kernel, 4 chunks
        xc = cg.asarray(cols, device=dev)
        same(np.sum(xc, axis=0), cols.sum(axis=0), 1e-5)
        same(np.argmax(xc, axis=0), np.argmax(cols, axis=0))
        same(np.mean(xc[:3], axis=0), cols[:3].mean(axis=0), 1e-6)  # one launch
        same(np.linalg.norm(xb[big == big]), np.linalg.norm(big[big == big]), 1e-5)  # two
        same(np.linalg.norm(xc, axis=0), np.linalg.norm(cols, axis=0), 1e-6)
        rows = rng.standard_normal((5, 400)).astype(np.float32)
        xr = cg.asarray(rows, device=dev)
        same(np.sum(xr, axis=1), rows.sum(axis=1), 1e-5)
        same(np.argmax(xr[:, 3:], axis=1), np.argmax(rows[:, 3:], axis=1))
        from clarray_gemm.ops import fused_rows   # reduce.cl's CENTRED kernels, not one fused
        walk, fused_rows.walk = fused_rows.walk, lambda *args: None
        same(np.var(xc, axis=0), cols.var(axis=0), 1e-5)              # centred, by columns
        same(np.std(xr, axis=1, ddof=1), rows.std(axis=1, ddof=1), 1e-5)  # centred, by rows
        same(np.var(xb[big == big]), np.var(big[big == big]), 1e-5)   # centred, in two launches
        fused_rows.walk = walk
        same(np.max(xb[1:]), np.max(big[1:]))
    elif case == "reduce_finish_last":
        # a split reduction in one launch, as GPUs run it: the last work-group finishes
        # (FINISH_LAST: the group counters, the partials read back, float16 and int64 results)
        from clarray_gemm.ops.reduce_plan import ReducePlan
        big = rng.standard_normal(20000).astype(np.float32)
        big[777] = np.nan
        xb = cg.asarray(big, device=dev)
        f32, i64, f16 = np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.float16)
        clean = big[big == big]
        xn = cg.asarray(clean, device=dev)
        for rop, mean, arr, host, out, want, tol in (
                ("sum", True, xn, clean, f32, clean.mean(), 1e-5),
                ("argmin", False, xb, big, i64, np.argmin(big), 0),
                ("max", False, xb, big, f32, np.max(big), 0),
                ("sum", False, cg.asarray(clean.astype(f16), device=dev), clean.astype(f16),
                 f16, clean.astype(f16).astype(np.float64).sum(), 0.05)):
            plan = ReducePlan(rop, arr, (0,), out if rop == "sum" else arr.dtype, out, mean,
                              dev, finish_last=True)
            assert plan.finish_last and plan.groups > 1, plan.groups
            for _ in range(2):   # the counters are back at zero for the second launch
                got = plan.run(arr)
                assert got.dtype == out, got.dtype
                if tol:
                    same(np.asarray(got).astype(np.float64), np.asarray(want, np.float64), tol)
                else:
                    same(got, np.asarray(want))
    elif case == "random":
        # philox.cl: every distribution and word width, odd lengths (a partial last block)
        from clarray_gemm.random import default_rng
        rng = default_rng(9, device=dev)
        for n in (7, 33):
            for dt in (np.float32, np.float64):
                for draw in (rng.random, rng.standard_normal, rng.standard_exponential):
                    v = np.asarray(draw(n, dtype=dt))
                    if v.dtype != dt or v.shape != (n,) or not np.isfinite(v).all():
                        print("MISMATCH", draw.__name__, v)
                        sys.exit(3)
                for k in (0.5, 1.0, 3.0):   # philox_gamma: both rejection loops
                    v = np.asarray(rng.standard_gamma(k, n, dtype=dt))
                    if v.dtype != dt or v.shape != (n,) or not (v >= 0).all():
                        print("MISMATCH standard_gamma", v)
                        sys.exit(3)
            k = np.asarray(rng.integers(-3, 4, n, dtype=np.int8))
            if k.dtype != np.int8 or k.min() < -3 or k.max() > 3:
                print("MISMATCH integers", k)
                sys.exit(3)
            np.asarray(rng.integers(0, 2 ** 64, n, dtype=np.uint64))   # every 64-bit value
            u = np.asarray(rng.uniform(-1.0, 2.0, n))
            if u.min() < -1.0 or u.max() >= 2.0:
                print("MISMATCH uniform", u)
                sys.exit(3)
    elif case == "sort":
        # sort.cl: the bitonic network over padded rows, keys and indices, NaN, float16 bits
        b = a.copy()
        b[2, 5] = np.nan
        b[3, :4] = [-0.0, 0.0, np.inf, b[3, 7]]
        xb = cg.asarray(b, device=dev)
        same(np.sort(xb), np.sort(b, kind="stable"))
        same(np.argsort(xb, axis=0), np.argsort(b, axis=0, kind="stable"))
        same(np.sort(xi, axis=0), np.sort(i, axis=0, kind="stable"))
        h = b.astype(np.float16)
        same(np.argsort(cg.asarray(h, device=dev)), np.argsort(h, kind="stable"))
        same(np.sort(cg.asarray(b.astype(np.float64), device=dev)[:, 3:]),
             np.sort(b.astype(np.float64)[:, 3:], kind="stable"))
        ordered = np.sort(b[0], kind="stable")
        same(np.searchsorted(cg.asarray(ordered, device=dev), xb[1], side="right"),
             np.searchsorted(ordered, b[1], side="right"))
        from clarray_gemm.ops import radix_sort, sorting   # rows past 16 slots: radix.cl
        sorting.max_row = lambda device, dt: 16
        radix_sort.radix_shape = lambda device, key_bytes, pairs: radix_sort.RadixShape(4, 8, 4)
        same(np.sort(xb), np.sort(b, kind="stable"))
        same(np.argsort(xb.T, axis=0), np.argsort(b.T, axis=0, kind="stable"))
        same(np.sort(xi, axis=None), np.sort(i, axis=None, kind="stable"))   # no indices
        radix_sort._BARE_FLOATS = 0
        same(np.sort(xb, axis=None), np.sort(b, axis=None, kind="stable"))   # float, no indices
        radix_sort._SUMMED_TILES = 0   # radix_scan's prefix sums
        same(np.argsort(xb, axis=None), np.argsort(b, axis=None, kind="stable"))
        same(np.sort(cg.asarray(h, device=dev)), np.sort(h, kind="stable"))
    elif case == "counting":
        # bincount.cl: atomic counts and compare-and-swap sums, NumPy's histogram bins
        small = (i + 50) % 9
        same(np.bincount(cg.asarray(small.ravel(), device=dev)), np.bincount(small.ravel()))
        if dev.info.int64_atomics:
            same(np.bincount(cg.asarray(small.ravel(), device=dev), weights=x.ravel()),
                 np.bincount(small.ravel(), weights=a.ravel()), 1e-6)
        for bins, span in ((6, (-2.0, 3.0)), ([-2.0, -0.5, 0.0, 0.0, 1.5], None)):
            same(np.histogram(x, bins=bins, range=span)[0],
                 np.histogram(a, bins=bins, range=span)[0])
        same(np.histogram(x[1:], bins=5)[0], np.histogram(a[1:], bins=5)[0])   # range found
        wide = np.array([0, 5000, 7, 5000])   # past the local bins: straight to the bins
        same(np.bincount(cg.asarray(wide, device=dev)), np.bincount(wide))
    elif case == "scatter":
        # scatter.cl: atomic adds of repeated positions, int and float compare-and-swap
        target = i.copy()
        xt = cg.asarray(target, device=dev)
        rows = np.array([0, 6, 6, -1, 2])
        np.add.at(xt, cg.asarray(rows, device=dev), xi[:5])
        np.add.at(target, rows, i[:5])
        same(xt, target)
        ft = a.copy()
        xf = cg.asarray(ft, device=dev)
        np.add.at(xf, rows, np.float32(0.5))
        np.add.at(ft, rows, np.float32(0.5))
        same(xf, ft, 1e-6)
    elif case == "fft":
        # fft.cl: Stockham passes of radix 8, 4, 2, 3, 5, 7, Bluestein (11), irfft's rows
        r = rng.standard_normal((3, 56)).astype(np.float32)
        c = (r + 1j * r[::-1]).astype(np.complex64)
        xr, xc = cg.asarray(r, device=dev), cg.asarray(c, device=dev)
        same(np.fft.fft(xc), np.fft.fft(c), 1e-4)                  # 8 x 7
        same(np.fft.ifft(xc[:, :30]), np.fft.ifft(c[:, :30]), 1e-4)   # offset rows: 2 x 3 x 5
        same(np.fft.rfft(xr, n=16), np.fft.rfft(r, n=16), 1e-4)   # 8 x 2, truncated
        same(np.fft.fft(xr[:, :11], axis=0, n=4), np.fft.fft(r[:, :11], axis=0, n=4), 1e-4)
        same(np.fft.fft(xc[:, :11]), np.fft.fft(c[:, :11]), 1e-4)  # Bluestein on 32
        same(np.fft.irfft(xc[:, :6], n=9), np.fft.irfft(c[:, :6], n=9), 1e-4)
        same(np.fft.irfft(xc[:, :6]), np.fft.irfft(c[:, :6]), 1e-4)
        import clarray_gemm.ops.fft as fft_ops
        from clarray_gemm.kernels import plans
        fft_ops._local_pad = lambda device: 2   # GPUs' padded local rows (LPAD)
        plans.clear_all()
        same(np.fft.fft(xc), np.fft.fft(c), 1e-4)                  # 8 x 7, padded
        same(np.fft.ifft(xc[:, :11]), np.fft.ifft(c[:, :11]), 1e-4)   # Bluestein, padded
        fft_ops._local_pad = lambda device: 0
        plans.clear_all()
        fft_ops.local_max = lambda device, dtype: 16   # the four-step and pass-by-pass paths
        same(np.fft.fft(xc), np.fft.fft(c), 1e-4)                  # 7 x 8, two launches
        same(np.fft.rfft(xr[:, :34], n=40), np.fft.rfft(r[:, :34], n=40), 1e-4)   # padded
        same(np.fft.ifft(xc[:, :34]), np.fft.ifft(c[:, :34]), 1e-4)   # Bluestein on 8 x 16
        big = rng.standard_normal((2, 512)).astype(np.float32)
        same(np.fft.fft(cg.asarray(big, device=dev)), np.fft.fft(big), 1e-4)   # no split
    elif case == "complex":
        # complex.cl: NumPy's complex loops, broadcast, strided, a real operand and a scalar
        c = (a[:, :5] + 1j * a[::-1, :5]).astype(np.complex64)
        xc = cg.asarray(c, device=dev)
        with cg.host_path(False):
            same(xc * xc[0], c * c[0], 1e-5)
            same(xc[::2] / (x[::2, :5] + 1.0), c[::2] / (a[::2, :5] + 1.0), 1e-5)
            same(xc.T - 2j, c.T - 2j, 1e-7)
            same(abs(xc), np.abs(c), 1e-5)
            same(xc == xc[:, ::-1], c == c[:, ::-1])
    elif case == "linalg":
        # linalg_small.cl: pivoted LU of a stack, right-hand sides, identity, determinants
        m = rng.standard_normal((3, 5, 5)).astype(np.float32)
        rhs = rng.standard_normal((3, 5, 2)).astype(np.float32)
        xm, xr = cg.asarray(m, device=dev), cg.asarray(rhs, device=dev)
        with cg.host_path(False):
            same(np.linalg.solve(xm, xr), np.linalg.solve(m, rhs), 1e-4)
            same(np.linalg.solve(xm[0], xr[0, :, 0]), np.linalg.solve(m[0], rhs[0, :, 0]), 1e-4)
            same(np.linalg.inv(xm), np.linalg.inv(m), 1e-4)
            same(np.linalg.det(xm), np.linalg.det(m), 1e-4)
            same(np.linalg.slogdet(xm)[1], np.linalg.slogdet(m)[1], 1e-4)
            spd = m @ m.transpose(0, 2, 1) + 5 * np.eye(5, dtype=np.float32)
            same(np.linalg.cholesky(cg.asarray(spd, device=dev)), np.linalg.cholesky(spd), 1e-4)
            try:
                np.linalg.inv(cg.asarray(np.zeros((3, 3), np.float32), device=dev))
                raise AssertionError("no LinAlgError")
            except np.linalg.LinAlgError:
                pass
    elif case == "linalg_blocked":
        # linalg_blocked.cl: panels, swaps, triangular solves, determinants, Cholesky blocks
        # (blocks of 32 columns: 37 is a whole block and a partial one)
        from clarray_gemm.ops import linalg
        linalg._fits = lambda *args: False
        m = rng.standard_normal((2, 37, 37)).astype(np.float32)
        rhs = rng.standard_normal((2, 37, 3)).astype(np.float32)
        xm, xr = cg.asarray(m, device=dev), cg.asarray(rhs, device=dev)
        with cg.host_path(False):
            same(np.linalg.solve(xm, xr), np.linalg.solve(m, rhs), 1e-3)     # a column a group
            many = np.concatenate([rhs] * 3, axis=2)                         # blocked solves
            same(np.linalg.solve(xm, cg.asarray(many, device=dev)), np.linalg.solve(m, many), 1e-3)
            same(np.linalg.slogdet(xm)[1], np.linalg.slogdet(m)[1], 1e-3)
            spd = m @ m.transpose(0, 2, 1) + 37 * np.eye(37, dtype=np.float32)
            same(np.linalg.cholesky(cg.asarray(spd, device=dev)), np.linalg.cholesky(spd), 1e-4)
            from clarray_gemm.ops import linalg_blocked
            # lu_panel_private with 3 rows a work-item; then lu_panel (5 would be needed)
            for wg_max in (16, 8):
                linalg_blocked.PANEL_WG_MAX = wg_max
                same(np.linalg.solve(xm, xr), np.linalg.solve(m, rhs), 1e-3)
            linalg_blocked.CHOLESKY_BLOCKS = ((0, 64),)   # one 64-column step, partly filled
            same(np.linalg.cholesky(cg.asarray(spd, device=dev)), np.linalg.cholesky(spd), 1e-4)
    elif case == "user_kernels":
        # user_elementwise.cl assembled for contiguous, strided and broadcast operands, a raw
        # argument, a bool output; a RawKernel
        k = cg.ElementwiseKernel("T x, T y, raw T t", "T z, bool m",
                                 "z = x * y + t[i % 2]; m = z > 0", "user_fma")
        t = np.array([0.5, -0.5], np.float32)
        z, m = k(x, x, t)
        want = a * a + np.resize(t, a.size).reshape(a.shape)
        same(z, want, 1e-6)
        same(m, want > 0)
        z, m = k(x.T, x[:, 0], t)
        want = a.T * a[:, 0] + np.resize(t, a.size).reshape(a.T.shape)
        same(z, want, 1e-6)
        red = cg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
        same(red(x, axis=1), np.linalg.norm(a, axis=1), 1e-5)
        same(red(x.T[::2], axis=0), np.linalg.norm(a.T[::2], axis=0), 1e-5)
        # split: a second launch (rows longer than one group walks: reduce.per_lane_gpu off CPUs)
        long_row = rng.standard_normal(5000 if dev.info.is_cpu else 70000).astype(np.float32)
        same(red(cg.asarray(long_row, device=dev)), np.linalg.norm(long_row), 1e-4)
        fused = cg.fuse(lambda v, w: np.where(v > 0, np.tanh(v) * w, np.maximum(v, w) - 1))
        same(fused(x, x[0]), np.where(a > 0, np.tanh(a) * a[0], np.maximum(a, a[0]) - 1), 1e-5)
        # fused_rows.cl in both walks: a row softmax (two stages), column statistics over
        # axis 0 (strided full output, per-row outputs), a transposed operand
        from clarray_gemm.ops import fused_rows
        walk = fused_rows.walk
        for form in ((32, False), (4, True)):
            fused_rows.walk = lambda info, rows, cols, columns=False, form=form: form
            soft = cg.fuse(lambda v: np.exp(v - v.max(axis=-1, keepdims=True))
                           / np.exp(v - v.max(axis=-1, keepdims=True)).sum(axis=-1,
                                                                            keepdims=True))
            e = np.exp(a - a.max(axis=-1, keepdims=True))
            same(soft(x), e / e.sum(axis=-1, keepdims=True), 1e-5)
            e = np.exp(a.T - a.T.max(axis=-1, keepdims=True))
            same(soft(x.T), e / e.sum(axis=-1, keepdims=True), 1e-5)
            stats = cg.fuse(lambda v: (v - v.mean(axis=0), (v > 0).sum(axis=0)))
            centred, count = stats(x)
            same(centred, a - a.mean(axis=0), 1e-5)
            same(count, (a > 0).sum(axis=0))
        fused_rows.walk = walk
        r = cg.RawKernel("__kernel void twice(__global float* y, const int n) "
                         "{ const int i = get_global_id(0); if (i < n) y[i] *= 2.0f; }", "twice")
        y = cg.asarray(a.ravel().copy(), device=dev)
        r((a.size,), None, (y, a.size))
        same(y, a.ravel() * 2, 1e-6)
    elif case == "scan":
        same(np.cumsum(xi, axis=1), np.cumsum(i, axis=1))
        same(np.cumprod(x[:, :5], axis=0), np.cumprod(a[:, :5], axis=0), 1e-5)
        same(np.cumsum(x.T[5]), np.cumsum(a.T[5]), 1e-5)
    elif case == "gather":
        same(np.take(x, [3, 0, -1], axis=1), np.take(a, [3, 0, -1], axis=1))
        rows = np.array([2, 0, -1, 2])
        same(x[cg.asarray(rows, device=dev)], a[rows])   # device indices: checked in the kernel
        try:
            x[cg.asarray(np.array([1, 99]), device=dev)]
            raise AssertionError("no IndexError")
        except IndexError:
            pass
        same(x[x > 0], a[a > 0])
        same(x + x[0], a + a[0])              # a broadcast row: the row layout class
        same(x[:, ::2] * 2, a[:, ::2] * 2)    # a strided view
        same(x[1:, 1:] + x[:-1, :-1], a[1:, 1:] + a[:-1, :-1])
        same(np.arange(3, 40, 3, like=x), np.arange(3, 40, 3))
        same(np.concatenate([x, x[:2]]), np.concatenate([a, a[:2]]))
print("ok")
"""

CASES = ["elementwise", "elementwise_per_item", "elementwise_half", "conv_flipped", "reduce",
         "reduce_split", "reduce_finish_last", "scan", "gather", "random", "sort", "counting",
         "scatter", "fft", "complex", "linalg", "linalg_blocked", "user_kernels"]
# Oclgrind's race checker does not follow an order made by a global fence and an atomic counter
# between work-groups (the last group reading the others' partials is reported as a race), so
# those cases run with its other checks only.
NO_RACE_CHECK = {"reduce_finish_last"}


@pytest.fixture(scope="module", autouse=True)
def _needs_oclgrind(oclgrind):
    return oclgrind


@pytest.mark.parametrize("case", CASES)
def test_kernels_are_clean(case):
    assert_clean_under_oclgrind(SCRIPT, case, races=case not in NO_RACE_CHECK)
