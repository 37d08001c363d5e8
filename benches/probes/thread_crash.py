"""Bisect the threaded-test crash (NVIDIA): tests/test_threads.py's eight threads, one variant
per process, each variant changing one thing. Exit status < 0 is a crash.

    python benches/probes/thread_crash.py [--repeats 2] [--variants ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from children import tally  # noqa: E402

VARIANTS = ["baseline", "gc_off", "always_set_args", "no_read_copy", "locked_calls",
            "kind:int32 *", "kind:int32 + -", "kind:float32 * +", "kind:float32 @",
            "kind:int32 @", "kind:float32 convolve", "kind:int32 convolve", "kind:shared @"]


def child(variant: str, ops: int) -> None:
    sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
    import gc

    import pyopencl as cl

    import clarray_gemm as cg
    import test_threads
    from clarray_gemm.device import DeviceInfo
    from clarray_gemm.kernels import programs

    if variant == "gc_off":
        gc.disable()
    elif variant == "always_set_args":
        plain = programs.Launcher.__call__

        def reset_then_call(self, *a, **kw):
            kernel, last = self._kernel_and_args()
            last.clear()
            return plain(self, *a, **kw)
        programs.Launcher.__call__ = reset_then_call
    elif variant == "no_read_copy":
        DeviceInfo.read_copy_max_bytes = property(lambda self: 0)
    elif variant == "locked_calls":
        lock = threading.RLock()

        def locked(fn):
            def call(*a, **kw):
                with lock:
                    return fn(*a, **kw)
            return call
        for name in ("enqueue_copy", "enqueue_map_buffer", "enqueue_nd_range_kernel"):
            setattr(cl, name, locked(getattr(cl, name)))
        cl.MemoryMap.release = locked(cl.MemoryMap.release)
        cl.Program.build = locked(cl.Program.build)
    elif variant.startswith("kind:"):
        test_threads.KINDS = (variant[5:],)
    device = cg.default_device()
    start = time.perf_counter()
    failures = test_threads.run_threads(device, ops, seed=1)
    print(f"{variant}: {len(failures)} wrong, {time.perf_counter() - start:.1f} s", failures[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--variants", nargs="*", default=VARIANTS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.ops)
        return
    print("| variant | runs | crashed | other |\n|---|---|---|---|")
    for variant in args.variants:
        crashes, other = tally([__file__, "--child", variant, "--ops", str(args.ops)],
                               args.repeats, 90, ok=lambda out: " 0 wrong" in out)
        print(f"| {variant} | {args.repeats} | {len(crashes)} | {'; '.join(other)} |", flush=True)

if __name__ == "__main__":
    main()
