"""Loops of small NumPy calls, NumPy arrays against device arrays: a 128 x 128 heat-equation
stencil, RK4 on an 8 x 3 state, logistic regression (1000 x 10) and power iteration (256^2).
Each step is 10-30 calls on arrays of 24 to 16384 elements, where a call's own cost decides.
Prints NumPy's time / ours per loop (median of ``--reps`` runs a side, the sides interleaved).

    python benches/probes/small_loops.py [--reps 7] [--minimal]

``--minimal`` also runs RK4 on a minimal wrapper (an ndarray in one slot; each operator and
ufunc one NumPy call and one new wrapper): the floor of any array type written in Python.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import clarray_gemm as cg


def heat(u, steps=100, alpha=0.1):
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                                 + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
    return u


def rk4(y, steps=100, h=0.01):
    def f(y):
        return -0.5 * y + np.sin(y) * 0.1
    for _ in range(steps):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def logistic(X, y, w, steps=50, lr=0.1):
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(X @ w)))
        w = w - lr * (X.T @ (p - y)) / X.shape[0]
    return w


def power(A, v, steps=50):
    for _ in range(steps):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v


class Minimal:
    """An ndarray in one slot; each operator or ufunc is one NumPy call and one new wrapper."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __mul__(self, other):
        return Minimal(self.a * (other.a if type(other) is Minimal else other))

    def __add__(self, other):
        return Minimal(self.a + (other.a if type(other) is Minimal else other))

    __rmul__, __radd__ = __mul__, __add__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return Minimal(ufunc(*[x.a if type(x) is Minimal else x for x in inputs]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--minimal", action="store_true", help="RK4 on a minimal wrapper too")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = [("heat-equation stencil 128^2, 100 steps", heat,
              (rng.random((128, 128)).astype(np.float32),)),
             ("RK4 8 x 3, 100 steps", rk4, (rng.random((8, 3)).astype(np.float32),)),
             ("logistic regression 1000 x 10, 50 steps", logistic,
              (rng.standard_normal((1000, 10)).astype(np.float32),
               (rng.random(1000) > 0.5).astype(np.float32), np.zeros(10, np.float32))),
             ("power iteration 256^2, 50 steps", power,
              (rng.random((256, 256)).astype(np.float32), rng.random(256).astype(np.float32)))]
    print(f"# {cg.default_device()}")
    for name, loop, operands in cases:
        on_device = [cg.asarray(x) for x in operands]
        want, got = loop(*[x.copy() for x in operands]), np.asarray(loop(*on_device))
        assert np.allclose(got, want, rtol=1e-4, atol=1e-6), name
        times = {"numpy": [], "ours": []}
        for _ in range(args.reps):
            for side, run in (("numpy", lambda: loop(*[x.copy() for x in operands])),
                              ("ours", lambda: np.asarray(loop(*on_device)))):
                t0 = time.perf_counter()
                run()
                times[side].append(time.perf_counter() - t0)
        numpy_s, ours_s = (sorted(t)[len(t) // 2] for t in (times["numpy"], times["ours"]))
        print(f"{name:42s} NumPy {numpy_s * 1e3:7.2f} ms  ours {ours_s * 1e3:7.2f} ms  "
              f"{numpy_s / ours_s:.2f}x")

    if args.minimal:
        y = rng.random((8, 3)).astype(np.float32)
        times = {"numpy": [], "minimal": []}
        for _ in range(args.reps):
            for side, arg in (("numpy", y), ("minimal", Minimal(y))):
                t0 = time.perf_counter()
                rk4(arg)
                times[side].append(time.perf_counter() - t0)
        numpy_s, wrapper_s = (sorted(t)[len(t) // 2] for t in times.values())
        print(f"{'RK4 8 x 3 on a minimal wrapper':42s} NumPy {numpy_s * 1e3:7.2f} ms  wrapper "
              f"{wrapper_s * 1e3:7.2f} ms  {numpy_s / wrapper_s:.2f}x")


if __name__ == "__main__":
    main()
