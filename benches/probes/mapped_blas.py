"""Is NumPy's BLAS slower on a driver's host-mapped buffers than on NumPy's own arrays, and do
transparent huge pages close the gap? ``a @ b`` (1024^3 float32) and ``a @ w`` (a 1024^2 GEMV),
in interleaved rounds, with the operands and the output in: ndarrays (NumPy asks the kernel for
huge pages from 4 MiB), mappings of fresh ``ALLOC_HOST_PTR`` buffers, and mappings advised
``MADV_HUGEPAGE`` before their first write.

    python benches/probes/mapped_blas.py [--device Portable] [--rounds 5]
"""
from __future__ import annotations

import argparse
import ctypes

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clock import median_us

MADV_HUGEPAGE = 14
HUGE = 2 << 20
_libc = ctypes.CDLL(None, use_errno=True)
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def advise_huge(mapped: np.ndarray) -> int:
    """madvise(MADV_HUGEPAGE) over the 2 MiB-aligned part of ``mapped``; 0 on success."""
    start, end = mapped.ctypes.data, mapped.ctypes.data + mapped.nbytes
    lo, hi = (start + HUGE - 1) & ~(HUGE - 1), end & ~(HUGE - 1)
    return _libc.madvise(lo, hi - lo, MADV_HUGEPAGE) if hi > lo else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    ctx, queue = device.context, device.queue
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
    rw = cl.map_flags.READ | cl.map_flags.WRITE
    keep = []

    def mapped_like(x: np.ndarray, huge: bool) -> np.ndarray:
        buf = cl.Buffer(ctx, flags, x.nbytes)
        host, _ = cl.enqueue_map_buffer(queue, buf, rw, 0, (x.nbytes,), np.uint8,
                                        is_blocking=True)
        if huge:
            advise_huge(host)
        view = host.view(x.dtype).reshape(x.shape)
        view[...] = x
        keep.append((buf, host))
        return view

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal(1024).astype(np.float32)
    sets = {"ndarray": (a, b, w, np.empty_like(a), np.empty_like(w))}
    for label, huge in (("mapping", False), ("mapping + MADV_HUGEPAGE", True)):
        sets[label] = tuple(mapped_like(x, huge) for x in (a, b, w, np.empty_like(a),
                                                           np.empty_like(w)))
    print(f"# {device}; THP {open('/sys/kernel/mm/transparent_hugepage/enabled').read().strip()}")
    print("addresses mod 2 MiB: " + "; ".join(
        f"{k}: {[x.ctypes.data % HUGE for x in v[:2]]}" for k, v in sets.items()))
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in sets}
    for _ in range(args.rounds):
        for label, (x, y, v, out, out_v) in sets.items():
            gemm = median_us(lambda: np.matmul(x, y, out=out), 5) / 1e3
            gemv = median_us(lambda: np.matmul(x, v, out=out_v), 200) / 1e3
            results[label].append((gemm, gemv * 1e3))
    for label, rows in results.items():
        gemm, gemv = zip(*rows)
        print(f"{label:26s} 1024^3 GEMM ms: median {np.median(gemm):.2f} (min {min(gemm):.2f}); "
              f"1024^2 GEMV us: median {np.median(gemv):.1f} (min {min(gemv):.1f})")


if __name__ == "__main__":
    main()
