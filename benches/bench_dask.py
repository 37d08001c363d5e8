#!/usr/bin/env python
"""Scale-out on dask.distributed: a blocked GEMM and a long convolution on 1 worker vs N workers,
one OpenCL device (or a group of CPU cores) each, in one run.

    python benches/bench_dask.py                          # 8192^2 GEMM, 2^24 x 1023 convolution
    python benches/bench_dask.py --devices Portable Portable --cpu-threads 1   # 2 PoCL workers, 1 core each
    python benches/bench_dask.py --devices 0 1            # two GPUs of one host

Inputs are created on the workers (``array.backend = "clarray_gemm"``, ``da.random``) and
persisted before the clock starts, A's and the signal's blocks in contiguous runs, one run
per worker, and B replicated to every worker (worker to worker); the timed part is ``persist`` + ``wait`` + every worker's queue drained
(``clarray_gemm.synchronize``), of the product (row blocks (n/2, n) @ (n, n): two independent
GEMMs, no transfer) and of the convolution
(``map_overlap`` with a halo of (taps - 1) / 2 on each side, ``np.convolve(..., "same")`` per
block). The same task graph runs on the one-worker cluster (the first device of ``--devices``)
and on the full one. A block of each result is checked against NumPy. "machine ceiling" is the
speedup plain NumPy GEMMs get, one per worker at once against one alone, measured right after:
on a machine shared with other work it falls below the worker count, and so does ours.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import clarray_gemm as cg
except ImportError:  # a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import clarray_gemm as cg

import dask
import dask.array as da
from distributed import Client, wait

from clarray_gemm.interop.distributed import device_cluster, worker_device


def _register_backend() -> None:
    """``array.backend = "clarray_gemm"`` in a checkout that is not installed (no entry point)."""
    from dask.array.backends import array_creation_dispatch
    from clarray_gemm.interop.dask_backend import DeviceBackendEntrypoint
    if "clarray_gemm" not in getattr(array_creation_dispatch, "_lookup", {}):
        array_creation_dispatch.register_backend("clarray_gemm", DeviceBackendEntrypoint())


_register_backend()


def _block_convolve(block, taps):
    return np.convolve(block, taps, mode="same")


def _explain(rows: int, inner: int, cols: int, n: int, taps: int) -> str:
    a = cg.empty((rows, inner), np.float32)
    b = cg.empty((inner, cols), np.float32)
    x = cg.empty((n,), np.float32)
    v = cg.empty((taps,), np.float32)
    return cg.explain_matmul(a, b) + "\n" + cg.explain_convolve(x, v, "same")


def _same(block, tag):
    return block


def _spread(client: Client, x):
    """``x`` persisted with its blocks (first axis) in W contiguous runs, run j on worker j. A
    task on device arrays ends as soon as its kernels are queued, so dask sees it as free and
    stacks ready tasks on one worker unless their inputs live apart; and creation puts
    neighbouring chunks on one worker (seen on 2 workers of one H100 and of two H200s: both GEMM
    blocks on one worker, 1.00x). Contiguous runs keep map_overlap's halo exchanges between
    workers to W - 1 chunk boundaries."""
    workers = sorted(client.scheduler_info()["workers"])
    count = x.numblocks[0]
    blocks = [client.persist(x.blocks[i], workers=[workers[i * len(workers) // count]])
              for i in range(count)]
    return da.concatenate(blocks, axis=0)


def _bare_numpy_gemm(_tag) -> float:
    """Seconds of one plain NumPy float32 GEMM (2048 x 4096 x 2048) in this worker."""
    a = np.ones((2048, 4096), np.float32)
    b = np.ones((4096, 2048), np.float32)
    a @ b
    start = time.perf_counter()
    a @ b
    return time.perf_counter() - start


def machine_ceiling(client: Client) -> float:
    """The speedup the machine allows right now: plain NumPy GEMMs, one per worker at once,
    against one alone (other processes on a shared machine lower it below the worker count)."""
    workers = sorted(client.scheduler_info()["workers"])
    alone = client.submit(_bare_numpy_gemm, -1, workers=workers[:1], pure=False).result()
    together = client.gather([client.submit(_bare_numpy_gemm, i, workers=[w], pure=False)
                              for i, w in enumerate(workers)])
    return len(workers) * alone / max(together)


def measure(client: Client, n: int, conv_n: int, taps: int, chunks: int, repeats: int) -> dict:
    with dask.config.set({"array.backend": "clarray_gemm"}):
        state = da.random.RandomState(0)
        a = state.random_sample((n, n), chunks=(n // 2, n)).astype(np.float32)
        b = state.random_sample((n, n), chunks=(n, n)).astype(np.float32)
        signal = state.standard_normal(conv_n, chunks=conv_n // chunks).astype(np.float32)
    mask = np.random.default_rng(1).standard_normal(taps).astype(np.float32)
    a, b, signal = client.persist([a, b, signal])
    wait([a, b, signal])

    def gemm(a, b, signal):
        return a @ b

    def convolution(a, b, signal):
        return signal.map_overlap(_block_convolve, depth=(taps - 1) // 2, boundary=0,
                                  taps=mask, dtype=np.float32)

    repetition = iter(range(1 << 30))

    def run(build):
        """``build`` on inputs renamed for this run (the same device arrays under new keys, so
        no result of an earlier run is reused), persisted; only this part is timed."""
        tag = next(repetition)
        a_run, b_run, signal_run = (x.map_blocks(_same, tag=tag, dtype=x.dtype, meta=x._meta)
                                    for x in (a, b, signal))
        inputs = [_spread(client, a_run), client.persist(b_run), _spread(client, signal_run)]
        wait(inputs)
        client.replicate(inputs[1])  # b on every worker (worker to worker, before the clock)
        start = time.perf_counter()
        result = client.persist(build(*inputs))
        wait(result)
        client.run(cg.synchronize)  # a task ends when its kernels are queued: wait for them too
        return result, time.perf_counter() - start

    results = {"gemm_s": min(run(gemm)[1] for _ in range(repeats)),
               "conv_s": min(run(convolution)[1] for _ in range(repeats))}
    c, _ = run(gemm)
    filtered, _ = run(convolution)
    placement = {}
    for holders in client.who_has(c).values():
        for worker in holders:
            placement[worker] = placement.get(worker, 0) + 1
    results["gemm_blocks_per_worker"] = sorted(placement.values())

    # Checks: one output block of the product, and the signal around a chunk boundary.
    try:
        _check(results, a, b, c, signal, filtered, mask, n, conv_n, taps, chunks)
    except Exception as exc:  # noqa: BLE001 - keep the timings, say what the check hit
        results["gemm_err"] = results["conv_err"] = float("nan")
        results["types"] = (f"check failed: {type(exc).__name__}: {str(exc)[:300]}", "")
    return results


def _check(results, a, b, c, signal, filtered, mask, n, conv_n, taps, chunks) -> None:
    block = c[: n // 8, -n // 8:].compute()
    ref = (a[: n // 8].compute().get().astype(np.float64)
           @ b[:, -n // 8:].compute().get().astype(np.float64))
    results["gemm_err"] = float(np.linalg.norm(np.asarray(block) - ref) / np.linalg.norm(ref))
    edge = conv_n // chunks
    lo, hi = edge - 2 * taps, edge + 2 * taps
    piece = filtered[lo:hi].compute()
    window = signal[lo - taps: hi + taps].compute().get().astype(np.float64)
    ref = np.convolve(window, mask.astype(np.float64), mode="same")[taps:-taps]
    results["conv_err"] = float(np.linalg.norm(np.asarray(piece) - ref) / np.linalg.norm(ref))
    results["types"] = (type(block).__name__, type(piece).__name__)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", nargs="+", default=["cpu", "cpu"],
                        help="one worker per entry (clarray_gemm device specs); default: cpu cpu")
    parser.add_argument("--cpu-threads", type=int, default=1,
                        help="cores per worker on CPU devices (default 1)")
    parser.add_argument("--gemm", type=int, default=8192, help="GEMM size n (n x n float32)")
    parser.add_argument("--conv-log2", type=int, default=24, help="signal length 2^k")
    parser.add_argument("--taps", type=int, default=1023, help="mask length (odd)")
    parser.add_argument("--chunks", type=int, default=4, help="signal chunks")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    conv_n = 2 ** args.conv_log2

    rows = {}
    for label, devs in (("1 worker", args.devices[:1]), (f"{len(args.devices)} workers", args.devices)):
        with device_cluster(devs, cpu_threads=args.cpu_threads, silence_logs=40) as cluster, \
                Client(cluster) as client:
            client.run(_register_backend)
            where = client.run(worker_device)
            if label == "1 worker":
                print(next(iter(client.run(_explain, args.gemm // 2, args.gemm, args.gemm,
                                           conv_n // args.chunks, args.taps).values())))
            print(f"{label}: " + "; ".join(sorted(where.values())), flush=True)
            rows[label] = measure(client, args.gemm, conv_n, args.taps, args.chunks, args.repeats)
            rows[label]["ceiling"] = machine_ceiling(client)
            print(rows[label], flush=True)

    one, many = rows["1 worker"], rows[f"{len(args.devices)} workers"]
    print(f"\n| workers | GEMM {args.gemm}^2 float32 (s) | speedup | convolution 2^{args.conv_log2}"
          f" x {args.taps} (s) | speedup | machine ceiling | rel. error GEMM / conv | result type |")
    print("|---|---|---|---|---|---|---|---|")
    for label, r in rows.items():
        print(f"| {label} | {r['gemm_s']:.2f} | {one['gemm_s'] / r['gemm_s']:.2f}x | "
              f"{r['conv_s']:.2f} | {one['conv_s'] / r['conv_s']:.2f}x | {r['ceiling']:.2f}x | "
              f"{r['gemm_err']:.1e} / {r['conv_err']:.1e} | {r['types'][0]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
