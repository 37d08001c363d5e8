"""Where the time of one ``np.convolve(x, v)`` call on device arrays goes (float32, "full"):
the whole call beside each stage it is made of (the mask's reversed copy, the output's
allocation, the kernel's launch on prepared buffers) and a raw launch + finish, each the median
of many calls with the queue drained, then a cProfile of the whole call.

    python benches/probes/convolve_stages.py [--device NVIDIA] [--n 4096] [--m 31] [--calls 500]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.raw_opencl import RawOpenCL
from clarray_gemm.kernels import conv
from clarray_gemm.kernels.conv import ConvProblem
from clock import median_us, profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--m", type=int, default=31)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    queue, calls = device.queue, args.calls
    rng = np.random.default_rng(0)
    x = cg.asarray(rng.standard_normal(args.n).astype(np.float32), device=device)
    v = cg.asarray(rng.standard_normal(args.m).astype(np.float32), device=device)
    length = args.n + args.m - 1
    w = v[::-1].astype(np.float32)
    out = cg.empty(length, np.float32, device=device)
    problem = ConvProblem(args.n, args.m, args.m - 1, length, np.dtype(np.float32),
                          x.storage.kernel_buffer(), 0, w.storage.kernel_buffer(),
                          out.storage.kernel_buffer(write=True))
    choice = conv.choose(device, problem)
    raw = RawOpenCL(device)
    finish = queue.finish
    np.convolve(x, v)
    finish()
    print(f"# {device}: N={args.n} m={args.m}, stage medians (us), {calls} calls each; "
          f"kernel {choice.variant.name} {choice.params}")
    rows = [
        ("raw: no-op launch + finish", raw.launch_finish),
        ("np.convolve(x, v); finish", lambda: (np.convolve(x, v), finish())),
        ("np.convolve(x, v) (no finish)", lambda: np.convolve(x, v)),
        ("cg.convolve(x, v, kernel=chosen); finish",
         lambda: (cg.convolve(x, v, kernel=choice.variant.name), finish())),
        ("v[::-1].astype(float32); finish", lambda: (v[::-1].astype(np.float32), finish())),
        ("cg.empty(N+m-1)", lambda: cg.empty(length, np.float32, device=device)),
        ("conv.launch on prepared buffers; finish",
         lambda: (conv.launch(device, problem, choice), finish())),
    ]
    for label, call in rows:
        print(f"{median_us(call, calls):9.1f}  {label}")
    print("\n## cProfile: np.convolve(x, v); finish\n"
          + profile(lambda: (np.convolve(x, v), finish()), calls, 18))


if __name__ == "__main__":
    main()
