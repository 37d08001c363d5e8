"""The kernels one small product launches and how long each runs on the device: every
``clEnqueueNDRangeKernel`` of a call is recorded on a profiling queue, and its own START->END
time summed (launch gaps excluded, unlike the fence spans of ``bench.timing.device_seconds``).

    python benches/probes/kernel_events.py --sizes 64 100 128 \\
        --configs '{}' '{"kernel": "gpu_blocked", "params": {"PRESET": 4, "BK": 32}}'
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from small_gemm import configured_calls, product_operands

_recorded: list[cl.Event] = []
_enqueue = cl.enqueue_nd_range_kernel


def _recording_enqueue(*args, **kwargs):
    event = _enqueue(*args, **kwargs)
    _recorded.append(event)
    return event


def kernel_us(call, device: cg.Device, calls: int) -> tuple[float, int]:
    """Median summed kernel time per call (µs) and the launches of one call."""
    per_call, launches = [], 0
    for _ in range(calls):
        _recorded.clear()
        call()
        device.queue.finish()
        launches = len(_recorded)
        per_call.append(sum(e.profile.end - e.profile.start for e in _recorded) * 1e-3)
    return statistics.median(per_call), launches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 100, 128])
    parser.add_argument("--configs", nargs="*", default=["{}"], help="JSON: kernel and params")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    device = cg.get_device(args.device)
    rng = np.random.default_rng(0)
    cl.enqueue_nd_range_kernel = _recording_enqueue
    device.enable_profiling()
    print(f"# {device}: kernel time per call (profiling START->END, summed), median of "
          f"{args.calls}")
    for n in args.sizes:
        _, _, x, y, want = product_operands(rng, (n, n), device, args.dtype)
        for text, call, err in configured_calls(x, y, want, args.configs):
            if call is None:
                print(f"{n}^3 {args.dtype} {text}: {err}")
                continue
            us, launches = kernel_us(call, device, args.calls)
            print(f"{n}^3 {args.dtype} {text:56} kernels {us:6.2f} us in {launches} launch(es), "
                  f"error {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
