"""The MLP program of ``benches/gpu_device_programs.py`` (``mlp_classifier_step``, 8192 x 4096
float32 layers) line by line on device arrays and on CuPy arrays: wall clock per piece (median of
rounds ended by a device synchronisation), to see where the program loses to CuPy.

    python benches/probes/mlp_pieces.py [--batch 8192] [--width 4096]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import pipelined_seconds


def pieces(xp, x, w1, b1, w2, onehot) -> list:
    """(name, call) for each line of the step, with the earlier lines' results computed once."""
    a1 = x @ w1
    h = xp.tanh(a1 + b1)
    logits = h @ w2
    m = logits.max(axis=1, keepdims=True)
    p = xp.exp(logits - m)
    s = p.sum(axis=1, keepdims=True)
    p = p / s
    lp = xp.log(p + 1e-30)
    prod = onehot * lp
    rows = xp.sum(prod, axis=1)
    dlogits = (p - onehot) / x.shape[0]
    h2 = h ** 2
    dpre = (dlogits @ w2.T) * (1 - h2)
    return [("x @ w1 (NN)", lambda: x @ w1), ("+ b1 (row broadcast)", lambda: a1 + b1),
            ("tanh", lambda: xp.tanh(a1)), ("h @ w2 (NN)", lambda: h @ w2),
            ("max(axis=1, keepdims)", lambda: logits.max(axis=1, keepdims=True)),
            ("logits - max (column broadcast)", lambda: logits - m),
            ("exp", lambda: xp.exp(logits)), ("sum(axis=1, keepdims)",
                                              lambda: p.sum(axis=1, keepdims=True)),
            ("p / s", lambda: p / s), ("p + 1e-30", lambda: p + 1e-30), ("log", lambda: xp.log(p)),
            ("onehot * log p", lambda: onehot * lp), ("sum(axis=1)", lambda: xp.sum(prod, axis=1)),
            ("-mean", lambda: -xp.mean(rows)), ("p - onehot", lambda: p - onehot),
            ("/ batch", lambda: dlogits / x.shape[0]), ("h.T @ dlogits (TN)", lambda: h.T @ dlogits),
            ("dlogits @ w2.T (NT)", lambda: dlogits @ w2.T), ("h ** 2", lambda: h ** 2),
            ("1 - h2", lambda: 1 - h2), ("x.T @ dpre (TN)", lambda: x.T @ dpre),
            ("dpre.sum(axis=0)", lambda: dpre.sum(axis=0))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8192)
    parser.add_argument("--width", type=int, default=4096)
    args = parser.parse_args()
    import cupy as cp
    device = next(d for d in cg.devices() if d.info.is_gpu and d.usable)
    rng = np.random.default_rng(0)
    b, w = args.batch, args.width
    f = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)  # noqa
    onehot = np.zeros((b, w), np.float32)
    onehot[np.arange(b), np.arange(b) % w] = 1
    host = (f(b, w), f(w, w, scale=w ** -0.5), f(w), f(w, w, scale=w ** -0.5), onehot)
    ours = pieces(np, *(cg.asarray(a, device=device) for a in host))
    theirs = pieces(cp, *(cp.asarray(a) for a in host))
    sync_cl, sync_cp = device.synchronize, cp.cuda.runtime.deviceSynchronize
    print(f"# {device}, MLP {b} x {w} float32, wall ms per piece (median of 5 rounds of 3 calls)")
    print("| piece | ours ms | CuPy ms | CuPy / ours |\n|---|---:|---:|---:|")
    total = [0.0, 0.0]
    for (name, ours_fn), (_, theirs_fn) in zip(ours, theirs):
        t_ours = pipelined_seconds(ours_fn, sync_cl, 3, rounds=5).seconds * 1e3
        t_theirs = pipelined_seconds(theirs_fn, sync_cp, 3, rounds=5).seconds * 1e3
        total[0] += t_ours
        total[1] += t_theirs
        print(f"| {name} | {t_ours:.3f} | {t_theirs:.3f} | {t_theirs / t_ours:.2f}x |", flush=True)
    print(f"| all pieces | {total[0]:.3f} | {total[1]:.3f} | {total[1] / total[0]:.2f}x |")


if __name__ == "__main__":
    main()
