"""dask.distributed with one worker per OpenCL device: scale-out over the GPUs of a host (or, on
a CPU driver, over groups of cores), on dask's own scheduler.

    >>> from clarray_gemm.interop.distributed import device_cluster
    >>> from distributed import Client
    >>> cluster = device_cluster()                 # one worker per GPU (or the default device)
    >>> client = Client(cluster)
    >>> client.run(worker_device)                  # {worker address: "opencl:1 (...)"}

Each worker is a separate process whose environment pins it to its device before anything
opens OpenCL: ``PYOPENCL_CTX="<platform>:<device>"`` (read once, by
``clarray_gemm.default_device()``), and for CPU drivers the number of cores it may use
(``POCL_MAX_PTHREAD_COUNT`` / ``POCL_CPU_MAX_CU_NUM`` for PoCL; Intel's CPU runtime keeps its
own thread count; and the BLAS thread counts of the
host path). On a cluster of machines start the same workers by hand, one per device:
``PYOPENCL_CTX=0:1 dask worker tcp://scheduler:8786 --nthreads 1 --name gpu1``.
Create large inputs on the workers (``dask.config.set({"array.backend": "clarray_gemm"})`` and
``da.random.RandomState``, ``da.ones``, ... or ``map_blocks`` of a creation function) so that
they never travel from the client.
"""
from __future__ import annotations

from typing import Any, Sequence

import pyopencl as cl

from ..device import Device, devices as _devices, get_device

__all__ = ["device_cluster", "worker_specs", "worker_device", "pyopencl_ctx"]

_THREAD_VARIABLES = ("POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_NUM", "OMP_NUM_THREADS",
                     "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "CLARRAY_GEMM_HOST_THREADS")


def pyopencl_ctx(device: Device) -> str:
    """The ``PYOPENCL_CTX`` value ("platform index:device index") that selects ``device``."""
    platforms = cl.get_platforms()
    for p, platform in enumerate(platforms):
        for d, cl_device in enumerate(platform.get_devices()):
            if cl_device == device.cl_device:
                return f"{p}:{d}"
    raise ValueError(f"{device!r} is not on any OpenCL platform")  # pragma: no cover


def _default_devices() -> list[Device]:
    """Every usable GPU; on a machine without one, the default device alone (two CPU drivers,
    e.g. PoCL and Intel's, are the same cores twice, not two devices)."""
    from ..device import default_device
    gpus = [d for d in _devices() if d.info.is_gpu and not d.info.is_simulator]
    return gpus or [default_device()]


def worker_specs(devices: Sequence[Any] | None = None, *, threads_per_worker: int = 1,
                 cpu_threads: int | None = None, host: str = "127.0.0.1"
                 ) -> dict[str, dict[str, Any]]:
    """``SpecCluster`` worker specifications: one ``Nanny`` process per entry of ``devices``
    (device specs as ``clarray_gemm.get_device`` takes; a device may be named twice, e.g. two
    workers sharing a CPU driver). Default: every usable GPU, else the default device.
    ``cpu_threads``: cores each worker on a CPU device may use (default: the device's
    compute units divided among the workers that share it). ``host``: the address the workers
    listen on (loopback unless the caller names another). Each worker may hold an equal share
    of the host's memory (as dask-cuda's workers do), not dask's default share per thread: a
    GPU worker with one thread on a 32-core host would otherwise be paused, spilled to disk or
    restarted at 1/32 of the memory."""
    from distributed import Nanny
    from distributed.system import MEMORY_LIMIT

    chosen = [get_device(d) for d in devices] if devices is not None else _default_devices()
    if not chosen:
        raise RuntimeError("no usable OpenCL device for dask workers")
    specs = {}
    for i, dev in enumerate(chosen):
        env = {"PYOPENCL_CTX": pyopencl_ctx(dev)}
        if dev.info.is_cpu:
            sharing = sum(1 for d in chosen if d == dev)
            threads = cpu_threads or max(1, dev.info.compute_units // sharing)
            env.update({name: str(threads) for name in _THREAD_VARIABLES})
        specs[f"opencl{dev.index}-{i}"] = {
            "cls": Nanny,
            "options": {"nthreads": threads_per_worker, "env": env, "host": host,
                        "memory_limit": MEMORY_LIMIT // len(chosen),
                        "resources": {"opencl": 1}},
        }
    return specs


def device_cluster(devices: Sequence[Any] | None = None, *, threads_per_worker: int = 1,
                   cpu_threads: int | None = None, host: str = "127.0.0.1", **kwargs: Any):
    """A local dask.distributed cluster with one worker process per entry of ``devices`` (see
    :func:`worker_specs`), each pinned to its OpenCL device. The scheduler and the workers
    listen on ``host``: loopback, as dask's ``LocalCluster``, unless the caller names an
    address other machines may reach. ``kwargs`` go to ``SpecCluster`` (``asynchronous``,
    ``silence_logs``, ...). Use it as ``LocalCluster`` is used: ``Client(device_cluster())``,
    and close it (or use ``with``) when done."""
    from distributed import Scheduler, SpecCluster

    from .dask_backend import register_backend
    register_backend()   # ``array.backend = "clarray_gemm"`` from a checkout too
    kwargs.setdefault("scheduler", {"cls": Scheduler,
                                    "options": {"dashboard_address": None, "host": host}})
    specs = worker_specs(devices, threads_per_worker=threads_per_worker,
                         cpu_threads=cpu_threads, host=host)
    if kwargs.get("silence_logs"):  # SpecCluster quiets this process only: the workers too
        for spec in specs.values():
            spec["options"]["silence_logs"] = kwargs["silence_logs"]
    return SpecCluster(workers=specs, **kwargs)


def worker_device() -> str:
    """On a worker (``client.run(worker_device)``): the device its arrays go to, with its
    compute units."""
    from ..device import default_device
    dev = default_device()
    return f"{dev} [{dev.info.compute_units} compute units]"
