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
from .timing import (Timing, cuda_event_seconds, device_seconds, host_seconds,
                     per_call_seconds)

__all__ = ["PeerResult", "CudaPeers", "numpy_matmul", "clblast_gemm", "cuda_matmuls",
           "clblast_library",
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


class CudaPeers:
    """torch (cuBLAS, TF32 off) and CuPy, where importable with a CUDA device: the peers of
    ``bench shapes`` and ``bench patterns``."""

    def __init__(self) -> None:
        self.torch = self.cupy = None
        try:
            import torch
            if torch.cuda.is_available():
                torch.backends.cuda.matmul.allow_tf32 = False
                self.torch = torch
        except Exception:  # noqa: BLE001 - any import or CUDA failure: no torch peer
            pass
        try:
            import cupy
            if cupy.cuda.runtime.getDeviceCount() > 0:
                self.cupy = cupy
        except Exception:  # noqa: BLE001
            pass

    @classmethod
    def on(cls, device: Device) -> "CudaPeers | None":
        """The peers beside a GPU ``device`` where torch or CuPy sees a CUDA device, else None."""
        if not device.info.is_gpu:
            return None
        peers = cls()
        return peers if peers.torch is not None or peers.cupy is not None else None

    def matmul_times(self, a: np.ndarray, b: np.ndarray, budget_s: float
                     ) -> list[tuple[str, float]]:
        """Wall-clock seconds per call of ``a @ b`` on each peer, operands already on the
        device in the same layout (a transposed view stays one)."""
        out = []
        dt = a.dtype
        if self.torch is not None and (dt.kind == "f" or dt.name == "bfloat16"):
            torch = self.torch
            tdt = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                   "bfloat16": torch.bfloat16}[dt.name]
            ta = torch.from_numpy(np.ascontiguousarray(a).astype(np.float32)).to(
                "cuda", tdt) if dt.name == "bfloat16" else torch.from_numpy(
                np.ascontiguousarray(a)).cuda()
            tb = torch.from_numpy(np.ascontiguousarray(b).astype(np.float32)).to(
                "cuda", tdt) if dt.name == "bfloat16" else torch.from_numpy(
                np.ascontiguousarray(b)).cuda()
            if not a.flags.c_contiguous:  # the same transposed layout
                ta = ta.transpose(-1, -2).contiguous().transpose(-1, -2)
            if not b.flags.c_contiguous:
                tb = tb.transpose(-1, -2).contiguous().transpose(-1, -2)
            out.append(("torch", per_call_seconds(lambda: (ta @ tb, torch.cuda.synchronize()), budget_s)))
        if self.cupy is not None and dt.name != "bfloat16":
            cp = self.cupy
            ca, cb = cp.asarray(a), cp.asarray(b)
            if not a.flags.c_contiguous:
                ca = cp.ascontiguousarray(ca.swapaxes(-1, -2)).swapaxes(-1, -2)
            if not b.flags.c_contiguous:
                cb = cp.ascontiguousarray(cb.swapaxes(-1, -2)).swapaxes(-1, -2)
            sync = cp.cuda.runtime.deviceSynchronize
            out.append(("CuPy", per_call_seconds(lambda: (ca @ cb, sync()), budget_s)))
        return out
