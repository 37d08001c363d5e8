"""Which path small work takes on a device, and what reading a fresh result costs: the device's
memory facts, the host-path crossovers in force, the explained plans of three latency rows, the
stages of ``np.asarray(x + x)`` at 64^2 and 1024^2, and ``np.convolve`` (N=4096, m=31) on the
host mapping against the same call on ndarrays, and the three operations of a power-iteration
step (1024^2) on ndarrays and on device arrays.

    python benches/probes/host_path_check.py [--device Portable]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.kernels import crossover
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    info = device.info
    print(f"# {device}: {info.platform} / {device.cl_device.version} / "
          f"driver {device.cl_device.driver_version}")
    print(f"type {info.type}, host_unified_memory {info.host_unified_memory}, "
          f"simulator {info.is_simulator}, host path enabled {cg.host_path_enabled()}, "
          f"has host path {crossover.has_host_path(device)}")
    for family in ("matmul", "elementwise", "reduce", "convolve", "convolve_fft_short"):
        print(f"crossover {family}: {crossover.crossover(device, family, np.dtype(np.float32))}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    x = cg.asarray(a, device=device)
    print(cg.explain_matmul(x, a))
    signal = cg.asarray(rng.standard_normal(4096).astype(np.float32), device=device)
    print(cg.explain_convolve(signal, rng.standard_normal(31).astype(np.float32), "full"))
    for n in (64, 1024):
        big = cg.asarray(rng.standard_normal((n, n)).astype(np.float32), device=device)
        y = big + big
        print(f"{n}^2: x + x host-resident {y.storage.host_resident}")
        fresh = median_us(np.asarray, 300, setup=lambda: big + big)
        print(f"  np.asarray(fresh x + x): {fresh:.1f} us")
        print(f"  x + x; finish: {median_us(lambda: big + big, 300, sync=device.synchronize):.1f} us")
        print(f"  np.asarray(same y) again: {median_us(lambda: np.asarray(y), 300):.1f} us")
    s, v = rng.standard_normal(4096).astype(np.float32), rng.standard_normal(31).astype(np.float32)
    xs, xv = cg.asarray(s, device=device), cg.asarray(v, device=device)
    hs, hv = xs.host_view(), xv.host_view()
    print(f"convolve: mapping address mod 4096: {hs.ctypes.data % 4096}, {hv.ctypes.data % 4096}")
    for label, call in (("np.convolve(ndarrays)", lambda: np.convolve(s, v)),
                        ("np.convolve(host mappings)", lambda: np.convolve(hs, hv)),
                        ("np.convolve(mapping, ndarray)", lambda: np.convolve(hs, v)),
                        ("np.convolve(ndarray, mapping)", lambda: np.convolve(s, hv)),
                        ("np.convolve(device arrays)", lambda: np.convolve(xs, xv)),
                        ("np.convolve(ndarrays) again", lambda: np.convolve(s, v))):
        print(f"  {label}: {median_us(call, 300):.1f} us")
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    w = rng.standard_normal(1024).astype(np.float32)
    xa, xw = cg.asarray(a, device=device), cg.asarray(w, device=device)
    norm, xnorm = np.linalg.norm(w), np.linalg.norm(xw)
    print("power-iteration step, 1024^2 (ndarrays / device arrays):")
    for label, host_call, device_call in (
            ("a @ w", lambda: a @ w, lambda: xa @ xw),
            ("np.linalg.norm(w)", lambda: np.linalg.norm(w), lambda: np.linalg.norm(xw)),
            ("w / norm", lambda: w / norm, lambda: xw / xnorm),
            ("a @ w again", lambda: a @ w, lambda: xa @ xw)):
        print(f"  {label}: {median_us(host_call, 300):.1f} / {median_us(device_call, 300):.1f} us")


if __name__ == "__main__":
    main()
