"""The kernels one product launches and how long each runs on the device: every
``clEnqueueNDRangeKernel`` of a call is recorded on a profiling queue, and its own START->END
time summed (launch gaps excluded, unlike the fence spans of ``bench.timing.device_seconds``);
with ``--each``, every launch of the call by kernel name as well.

    python benches/probes/kernel_events.py --sizes 64 100 128 \\
        --configs '{}' '{"kernel": "gpu_blocked", "params": {"PRESET": 4, "BK": 32}}'
    python benches/probes/kernel_events.py --sizes --shapes 4608x5000x704 --each --calls 10
"""
from __future__ import annotations

import argparse
import contextlib
import statistics

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from small_gemm import configured_calls, product_operands

_recorded: list[tuple[str, cl.Event]] = []
_enqueue = cl.enqueue_nd_range_kernel


def _recording_enqueue(queue, kernel, *args, **kwargs):
    event = _enqueue(queue, kernel, *args, **kwargs)
    _recorded.append((kernel.function_name, event))
    return event


@contextlib.contextmanager
def record_launches():
    """Every ``cl.enqueue_nd_range_kernel`` inside the block records its event."""
    cl.enqueue_nd_range_kernel = _recording_enqueue
    try:
        yield
    finally:
        cl.enqueue_nd_range_kernel = _enqueue


def _span_us(event: cl.Event) -> float:
    return (event.profile.end - event.profile.start) * 1e-3


def kernel_us(call, device: cg.Device, calls: int) -> tuple[float, int]:
    """Median summed kernel time per call (µs) and the launches of one call."""
    return kernel_breakdown(call, device, calls)[:2]


def kernel_breakdown(call, device: cg.Device,
                     calls: int) -> tuple[float, int, list[tuple[str, float]]]:
    """Median summed kernel time per call (µs), the launches of one call, and each launch's
    kernel name and median time."""
    per_call, each = [], []
    for _ in range(calls):
        _recorded.clear()
        call()
        device.queue.finish()
        per_call.append(sum(_span_us(e) for _, e in _recorded))
        each.append([(name, _span_us(e)) for name, e in _recorded])
    last = each[-1]
    launches = [(name, statistics.median(run[i][1] for run in each if len(run) == len(last)))
                for i, (name, _) in enumerate(last)]
    return statistics.median(per_call), len(last), launches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--sizes", type=int, nargs="*", default=[64, 100, 128])
    parser.add_argument("--configs", nargs="*", default=["{}"], help="JSON: kernel and params")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--shapes", nargs="*", default=[], help="MxKxN products besides --sizes")
    parser.add_argument("--each", action="store_true", help="every launch's name and time")
    args = parser.parse_args()
    device = cg.get_device(args.device)
    rng = np.random.default_rng(0)
    device.enable_profiling()
    print(f"# {device}: kernel time per call (profiling START->END, summed), median of "
          f"{args.calls}")
    with record_launches():
        products = [(f"{n}^3", n, n, n) for n in args.sizes]
        products += [(s, *map(int, s.split("x"))) for s in args.shapes]
        for label, m, k, n in products:
            _, _, x, y, want = product_operands(rng, (m, k), device, args.dtype, (k, n))
            for text, call, err in configured_calls(x, y, want, args.configs):
                if call is None:
                    print(f"{label} {args.dtype} {text}: {err}")
                    continue
                us, launches, each = kernel_breakdown(call, device, args.calls)
                print(f"{label} {args.dtype} {text:56} kernels {us:6.2f} us in {launches} "
                      f"launch(es), error {err:.1e}", flush=True)
                if args.each:
                    print("    " + ", ".join(f"{name} {t:.1f}" for name, t in each))


if __name__ == "__main__":
    main()
