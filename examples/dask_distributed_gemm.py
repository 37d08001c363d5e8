"""A blocked GEMM and a long convolution on dask.distributed, one worker per OpenCL device.

    python examples/dask_distributed_gemm.py [--size N] [--workers W]

``device_cluster`` starts one worker process per device (here: W workers sharing the default
device, one core each on a CPU driver). The inputs are created on the workers
(``array.backend = "clarray_gemm"``), each block's product and convolution runs there, and only
small results travel to the client, as device arrays.
"""
import argparse

import dask
import dask.array as da
import numpy as np
from distributed import Client

import clarray_gemm as cg
from clarray_gemm.interop.distributed import device_cluster, worker_device


def main(size: int = 1024, workers: int = 2) -> None:
    device = cg.default_device()
    with device_cluster([device] * workers, cpu_threads=1, silence_logs=40) as cluster, \
            Client(cluster) as client:
        for address, where in sorted(client.run(worker_device).items()):
            print(f"worker {address}: {where}")
        with dask.config.set({"array.backend": "clarray_gemm"}):
            state = da.random.RandomState(0)
            a = state.random_sample((size, size), chunks=(size // 2, size)).astype(np.float32)
            b = state.random_sample((size, size), chunks=(size, size // 2)).astype(np.float32)
            signal = state.standard_normal(size * 64, chunks=size * 16).astype(np.float32)
        taps = np.hanning(63).astype(np.float32)

        product = a @ b                                          # 4 block GEMMs on the workers
        row_sums = product.sum(axis=1).compute()
        filtered = signal.map_overlap(lambda s: np.convolve(s, taps, mode="same"),
                                      depth=len(taps) // 2, boundary=0, dtype=np.float32)
        edge = filtered[size * 16 - 100: size * 16 + 100].compute()

        a_host, b_host = a.compute().get(), b.compute().get()
        want = (a_host.astype(np.float64) @ b_host.astype(np.float64)).sum(axis=1)
        assert isinstance(row_sums, cg.DeviceArray) and isinstance(edge, cg.DeviceArray)
        np.testing.assert_allclose(np.asarray(row_sums), want, rtol=1e-4)
        s = signal[size * 16 - 200: size * 16 + 200].compute().get()
        np.testing.assert_allclose(np.asarray(edge), np.convolve(s, taps, "same")[100:-100],
                                   rtol=1e-4, atol=1e-4)
        print(f"(a @ b).sum(axis=1): {type(row_sums).__name__} {row_sums.shape}, matches NumPy")
        print(f"convolution across a chunk edge: {type(edge).__name__}, matches NumPy")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    main(args.size, args.workers)
