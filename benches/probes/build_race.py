"""Which OpenCL calls may run while another thread is inside clBuildProgram? (raw pyopencl)

The suite's threaded tests crashed the NVIDIA H100 driver (SIGSEGV in a driver thread) twice
in one run, each time with one thread in ``clBuildProgram`` and others in a blocking read or a
map of the same context's queue. This probe separates the cases, each in its own process so a
crash is an exit status, not the end of the probe:

    python benches/probes/build_race.py [--device NVIDIA] [--repeats 3]

  builds+reads    one thread builds fresh programs; six threads do small blocking reads
  builds+maps     ... six threads map WRITE_INVALIDATE, write, unmap
  builds+kernels  ... six threads launch a prebuilt kernel and wait on it
  reads+maps      no builds: six threads of reads and maps
  locked          builds+reads+maps, every call behind one process-wide lock
"""
from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from children import tally  # noqa: E402

WORKERS = 6
SOURCE = "__kernel void k{n}(__global float *x) {{ x[get_global_id(0)] += {n}.0f; }}\n"


def _device(name: str):
    import pyopencl as cl
    for platform in cl.get_platforms():
        for dev in platform.get_devices():
            if name.lower() in (dev.name + platform.name).lower():
                return dev
    raise SystemExit(f"no OpenCL device matching {name!r}")


def child(case: str, device_name: str) -> None:
    import numpy as np
    import pyopencl as cl

    dev = _device(device_name)
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    lock = threading.Lock() if case == "locked" else None
    guard = lock if lock is not None else _NoLock()
    stop = threading.Event()
    built = [0]
    prebuilt = cl.Program(ctx, SOURCE.format(n=0)).build().k0

    def builder() -> None:
        for n in range(1, 41):
            src = SOURCE.format(n=n) + "// " + "x" * (n * 37) + "\n"  # new text: a real compile
            with guard:
                cl.Program(ctx, src).build(options=[f"-DSALT={n}"])
            built[0] += 1
        stop.set()

    def worker(t: int) -> None:
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, 4096 * (t + 1))
        host = np.empty(buf.size, np.uint8)
        kind = case
        while not stop.is_set():
            if kind in ("builds+reads", "reads+maps", "locked"):
                with guard:
                    cl.enqueue_copy(queue, host, buf, is_blocking=True)
            if kind in ("builds+maps", "reads+maps", "locked"):
                with guard:
                    mapped, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.WRITE_INVALIDATE_REGION,
                                                      0, (buf.size,), np.uint8, is_blocking=True)
                mapped[:] = t
                with guard:
                    mapped.base.release(queue=queue)
            if kind == "builds+kernels":
                with guard:
                    prebuilt(queue, (buf.size // 4,), None, buf).wait()

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(WORKERS)]
    if case == "reads+maps":
        threading.Timer(8.0, stop.set).start()
    else:
        threads.append(threading.Thread(target=builder))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    queue.finish()
    print(f"{case}: ok, {built[0]} builds")


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.device)
        return
    print("| case | runs | crashed (signal) | other failures |\n|---|---|---|---|")
    for case in ("builds+reads", "builds+maps", "builds+kernels", "reads+maps", "locked"):
        crashes, others = tally([__file__, "--child", case, "--device", args.device],
                                args.repeats, 120)
        print(f"| {case} | {args.repeats} | {len(crashes)} ({','.join(crashes)}) | "
              f"{'; '.join(others)} |", flush=True)

if __name__ == "__main__":
    main()
