"""The libraries our kernels are compared with, each measured in the same run as our kernels:

* NumPy on the host (its BLAS): end-to-end time only;
* CLBlast on the same OpenCL device, through ``ctypes`` (``libclblast.so.1``), when it loads:
  device time from profiling events, like ours;
* cuBLAS through CuPy or PyTorch, when importable with a CUDA device: device time from CUDA
  events (TF32 off, so it is a true FP32 product) and end-to-end time (NumPy in, NumPy out).

A peer that is not installed is skipped with the reason, never faked.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..device import Device
from .timing import Timing, cuda_event_seconds, device_seconds, host_seconds

__all__ = ["PeerResult", "numpy_matmul", "clblast_gemm", "cuda_matmuls", "clblast_library",
           "numpy_convolve"]


@dataclass(frozen=True)
class PeerResult:
    """A peer's device time and/or end-to-end time, or why it was not measured."""

    name: str
    device: Timing | None = None
    e2e: Timing | None = None
    skipped: str | None = None


def numpy_matmul(a: np.ndarray, b: np.ndarray, budget_s: float = 0.5) -> PeerResult:
    """NumPy's ``a @ b`` on the host."""
    return PeerResult("numpy", e2e=host_seconds(lambda: a @ b, budget_s=budget_s))


def numpy_convolve(x: np.ndarray, m: np.ndarray, budget_s: float = 0.5) -> PeerResult:
    """NumPy's ``np.convolve(x, m)`` on the host."""
    return PeerResult("numpy", e2e=host_seconds(lambda: np.convolve(x, m), budget_s=budget_s))


# -- CLBlast -----------------------------------------------------------------------------------
_ROW_MAJOR, _NO_TRANS = 101, 111
_CLBLAST_NAMES = ("libclblast.so.1", "libclblast.so", "libclblast.dylib", "clblast.dll")


@lru_cache(maxsize=1)
def clblast_library() -> ctypes.CDLL | None:
    """CLBlast's shared library, or None when it is not installed."""
    names = list(_CLBLAST_NAMES)
    found = ctypes.util.find_library("clblast")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        for fn, scalar in (("CLBlastSgemm", ctypes.c_float), ("CLBlastDgemm", ctypes.c_double)):
            f = getattr(lib, fn)
            sz, ptr = ctypes.c_size_t, ctypes.c_void_p
            f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, sz, sz, sz, scalar,
                          ptr, sz, sz, ptr, sz, sz, scalar, ptr, sz, sz,
                          ctypes.POINTER(ptr), ctypes.POINTER(ptr)]
            f.restype = ctypes.c_int
        return lib
    return None


def clblast_gemm(device: Device, bench: Any, budget_s: float = 0.5) -> PeerResult:
    """CLBlast's xGEMM on ``bench.problem``'s buffers (a ``tuning.BenchProblem``), checked
    against NumPy once, then timed on the device."""
    lib = clblast_library()
    if lib is None:
        return PeerResult("CLBlast", skipped="libclblast not found")
    p = bench.problem
    dt = np.dtype(p.dtype)
    if dt not in (np.float32, np.float64):
        return PeerResult("CLBlast", skipped=f"no CLBlast GEMM for {dt}")
    fn = lib.CLBlastSgemm if dt == np.float32 else lib.CLBlastDgemm
    def op() -> None:
        queue = ctypes.c_void_p(device.queue.int_ptr)  # the profiling queue, once timing
        status = fn(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, p.M, p.N, p.K, 1.0,
                    p.a.buffer.int_ptr, 0, p.a.ld, p.b.buffer.int_ptr, 0, p.b.ld, 0.0,
                    p.c.buffer.int_ptr, 0, p.c.ld, ctypes.byref(queue), None)
        if status != 0:
            raise RuntimeError(f"CLBlast GEMM failed with status {status}")
    try:
        bench.poison()
        op()
        bench.check()
    except RuntimeError as exc:
        return PeerResult("CLBlast", skipped=str(exc))
    return PeerResult("CLBlast", device=device_seconds(device, op, budget_s=budget_s, warmup=0))


# -- cuBLAS through CuPy / PyTorch ---------------------------------------------------------------
def _cupy(a: np.ndarray, b: np.ndarray, budget_s: float) -> PeerResult:
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return PeerResult("cuBLAS (CuPy)", skipped="no CUDA device")
    except Exception as exc:  # ImportError, or CUDA driver errors
        return PeerResult("cuBLAS (CuPy)", skipped=f"CuPy unavailable: {type(exc).__name__}")
    da, db = cupy.asarray(a), cupy.asarray(b)
    dev = cuda_event_seconds(lambda: cupy.cuda.Event(), lambda: da @ db,
                              cupy.cuda.runtime.deviceSynchronize, budget_s)
    e2e = host_seconds(lambda: cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b)), budget_s=budget_s)
    return PeerResult("cuBLAS (CuPy)", device=dev, e2e=e2e)


def _torch(a: np.ndarray, b: np.ndarray, budget_s: float) -> PeerResult:
    try:
        import torch
        if not torch.cuda.is_available():
            return PeerResult("cuBLAS (torch)", skipped="torch has no CUDA device")
    except Exception as exc:
        return PeerResult("cuBLAS (torch)", skipped=f"torch unavailable: {type(exc).__name__}")
    torch.backends.cuda.matmul.allow_tf32 = False
    da, db = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    dev = cuda_event_seconds(lambda: torch.cuda.Event(enable_timing=True), lambda: da @ db,
                              torch.cuda.synchronize, budget_s)
    e2e = host_seconds(lambda: (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda())
                       .cpu().numpy(), budget_s=budget_s)
    return PeerResult("cuBLAS (torch)", device=dev, e2e=e2e)


def cuda_matmuls(a: np.ndarray, b: np.ndarray, budget_s: float = 0.5) -> list[PeerResult]:
    """cuBLAS through CuPy and through PyTorch, each when importable with a CUDA device."""
    return [_cupy(a, b, budget_s), _torch(a, b, budget_s)]
