"""fft_rows' local-memory padding (``LPAD``: one unused element after every 2^LPAD) or its
work-group shapes (the widest group x the elements a work-item takes) A/B on a GPU: row
transforms, the four-step FFT, fft2, Bluestein lengths, each setting in turn (plans rebuilt at
each switch, two rounds, each cell's faster), every answer checked against NumPy (relative norm
error <= 1e-4), cupy.fft beside them where CuPy is installed. The tuned constants
``fft.local_pad_gpu`` and ``fft.rows_group_gpu`` come from this probe.

    python benches/probes/fft_local_pad.py --device NVIDIA [--pads 0 3 4 5]
    python benches/probes/fft_local_pad.py --device NVIDIA --groups 256x8 512x4
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)   # this checkout's package, not an installed one

import numpy as np   # noqa: E402

import clarray_gemm as cg   # noqa: E402
import clarray_gemm.ops.fft as fft_ops   # noqa: E402
from clarray_gemm.kernels import plans   # noqa: E402
from clock import median_us   # noqa: E402


def cases(rng: np.random.Generator) -> list:
    """(name, input, np.fft function)."""
    def c64(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return [("rows 1024 x 4096", c64((1024, 4096)), np.fft.fft),
            ("rows 16384 x 64", c64((16384, 64)), np.fft.fft),
            ("rows 1000 x 1000", c64((1000, 1000)), np.fft.fft),
            ("rows 4096 x 512", c64((4096, 512)), np.fft.fft),
            ("fft 2^20", c64((1 << 20,)), np.fft.fft),
            ("fft 2^24", c64((1 << 24,)), np.fft.fft),
            ("rfft float32 2^24", rng.standard_normal(1 << 24).astype(np.float32), np.fft.rfft),
            ("fft2 4096^2", c64((4096, 4096)), np.fft.fft2),
            ("fft 1000", c64((1000,)), np.fft.fft),
            ("fft 3^10", c64((3 ** 10,)), np.fft.fft),
            ("fft 4099", c64((4099,)), np.fft.fft),
            ("rows 64 x 4099", c64((64, 4099)), np.fft.fft)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="device index or name substring")
    ap.add_argument("--pads", type=int, nargs="+", default=[0, 4, 3, 5])
    ap.add_argument("--groups", nargs="+", default=None,
                    help="work-group shapes MAXxITEMS to compare (at the shipped LPAD)")
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    dev = cg.get_device(args.device) if args.device else cg.default_device()
    rng = np.random.default_rng(0)
    todo = cases(rng)
    times: dict = {name: {} for name, _, _ in todo}
    try:
        import cupy
        for name, a, func in todo:
            ca, cf = cupy.asarray(a), getattr(cupy.fft, func.__name__)
            times[name]["cupy"] = median_us(lambda: cf(ca), args.calls,
                                            sync=cupy.cuda.Device().synchronize)
    except ImportError:
        pass
    shipped_pad, shipped_group = fft_ops._local_pad(dev), fft_ops._group_shape(dev)
    if args.groups:
        settings = {g: (shipped_pad, tuple(int(v) for v in g.split("x"))) for g in args.groups}
    else:
        settings = {pad: (pad, shipped_group) for pad in args.pads}
    for _ in range(2):
        for label, (pad, group) in settings.items():
            fft_ops._local_pad = lambda device, pad=pad: pad
            fft_ops._group_shape = lambda device, group=group: group
            plans.clear_all()
            for name, a, func in todo:
                x = cg.asarray(a, device=dev)
                want = func(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
                err = np.linalg.norm(np.asarray(func(x)) - want) / np.linalg.norm(want)
                assert err <= 1e-4, (name, label, err)
                us = median_us(lambda: func(x), args.calls, sync=dev.synchronize)
                times[name][label] = min(us, times[name].get(label, float("inf")))
    print(f"# {dev}: us per call, " + ("groups " if args.groups else "LPAD ")
          + " / ".join(map(str, settings)) + " (cupy.fft)")
    for name, row in times.items():
        cells = " / ".join(f"{row[k]:.1f}" for k in settings)
        peer = f" ({row['cupy']:.1f})" if "cupy" in row else ""
        print(f"{name:20s} {cells}{peer}")


if __name__ == "__main__":
    main()
