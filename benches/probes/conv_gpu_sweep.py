"""The direct ``gpu`` convolution kernel under forced parameters on a GPU, for short masks on a
long signal: the time per launch of 20 launches queued back to back (the device's pace, no
Python in between) beside ``x.copy()``'s, as a share of copy bandwidth (the target: >= 80% for
masks of up to 63 taps at N = 2^24).

    python benches/probes/conv_gpu_sweep.py [--n 16777216] [--masks 3 31 63] \\
        [--params '{"WG": 128}' '{"R": 16, "GPC": 4}' ...]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import clarray_gemm as cg
from clarray_gemm.kernels import conv
from clarray_gemm.kernels.conv import ConvProblem


def per_launch_s(launch, finish, reps: int = 20) -> float:
    launch()
    finish()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            launch()
        finish()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--masks", type=int, nargs="+", default=[3, 31, 63])
    parser.add_argument("--params", nargs="*", default=[], help="JSON, one per configuration")
    parser.add_argument("--device", default="NVIDIA")
    args = parser.parse_args()
    device = cg.get_device(args.device)
    finish = device.queue.finish
    rng = np.random.default_rng(0)
    n = args.n
    x = cg.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    copy_s = per_launch_s(lambda: x.copy(), finish)
    print(f"# {device}: N={n}, x.copy() {copy_s * 1e3:.4f} ms ({8 * n / copy_s / 1e9:.0f} GB/s)")
    for m in args.masks:
        w = cg.asarray(rng.standard_normal(m).astype(np.float32), device=device)
        out = cg.empty(n + m - 1, np.float32, device=device)
        problem = ConvProblem(n, m, m - 1, n + m - 1, np.dtype(np.float32),
                              x.storage.kernel_buffer(), 0, w.storage.kernel_buffer(),
                              out.storage.kernel_buffer(write=True))
        ref = np.convolve(np.asarray(x).astype(np.float64), np.asarray(w)[::-1].astype(np.float64))
        for text in ["{}"] + args.params:
            params = json.loads(text)
            try:
                choice = conv.choose(device, problem, "gpu", params)
                launch = lambda: conv.launch(device, problem, choice)  # noqa: E731
                s = per_launch_s(launch, finish)
                got = np.asarray(out).astype(np.float64)
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            except Exception as exc:  # noqa: BLE001  (a sweep reports every configuration)
                print(f"  m={m} {params}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            gbps = 4 * (2 * n + m - 1) / s / 1e9
            print(f"  m={m} {dict(choice.params)}: {s * 1e3:.4f} ms, {gbps:.0f} GB/s, "
                  f"{gbps / (8 * n / copy_s / 1e9):.0%} of copy, error {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
