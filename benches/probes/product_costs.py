"""Where a product's wall clock goes on an NVIDIA GPU, as chosen by the library: the choice
(``explain_matmul``'s kernel, parameters and resolved split), the wall time per call with the
queue drained, the host time of a burst of calls (not waiting in between), the device span
(``bench.timing.device_seconds``) and the launches recorded on a profiling queue (launches
enqueued without events are not recorded); torch (cuBLAS, TF32 off) beside it.

    python benches/probes/product_costs.py --shapes 10x256x10 7x4097x33 --dtypes float64 float32
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from clock import median_us
from kernel_events import kernel_breakdown, record_launches
from small_gemm import host_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["10x256x7", "10x4097x10", "64x64x64"],
                        help="MxKxN")
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    for dtype in args.dtypes:
        for shape in args.shapes:
            m, k, n = (int(d) for d in shape.split("x"))
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((k, n)).astype(dtype)
            x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            peer = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
            wall = median_us(lambda: x @ y, args.calls, sync=device.synchronize)
            host = host_us(lambda: x @ y, device)
            dev = device_seconds(device, lambda: x @ y, reps=20).seconds * 1e6
            print(f"{dtype} {shape}: torch {peer:.1f} us; ours wall {wall:.1f}, host {host:.1f}, "
                  f"device {dev:.1f}", flush=True)
            for line in cg.explain_matmul(x, y).splitlines():
                if line.strip().startswith(("kernel:", "parameters:", "resolved:")):
                    print("   ", line.strip()[:200])
            device.enable_profiling()
            with record_launches():
                total, count, each = kernel_breakdown(lambda: x @ y, device, 20)
            device.disable_profiling()
            print(f"    recorded launches {count}, {total:.1f} us: "
                  + ", ".join(f"{name} {us:.1f}" for name, us in each), flush=True)


if __name__ == "__main__":
    main()
