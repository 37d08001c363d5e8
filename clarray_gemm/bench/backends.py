"""The array libraries a latency row runs on, each reached only through its public API: NumPy,
clarray_gemm (``clarray_gemm.asarray``, ``@``, ``np.convolve``, ``np.asarray``) and, when
importable with a CUDA device, CuPy and PyTorch (TF32 off, so ``@`` is a true FP32 product).

A row is written once against a :class:`Backend` (``put`` operands, compute, ``sync``, ``get``)
and so does the same thing on every library. A peer that is missing is skipped with the reason,
never faked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..device import Device
from .report import error_text

__all__ = ["Backend", "numpy_backend", "ours", "cuda_backends"]


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Backend:
    """How one library does the steps of a latency row.

    ``put``: a host array onto the library's device (for operands, outside the clock);
    ``copy_in``: the timed "host array in" step (NumPy: a copy, ``np.array``);
    ``host_operand``: how a NumPy operand enters a mixed call (ours takes it as is);
    ``get``: a result as a NumPy array; ``sync``: drain the device's queue or stream;
    ``convolve``: ``np.convolve(x, v)`` (mode 'full').
    """

    name: str
    put: Callable[[np.ndarray], Any]
    copy_in: Callable[[np.ndarray], Any]
    host_operand: Callable[[np.ndarray], Any]
    get: Callable[[Any], np.ndarray]
    sync: Callable[[], None]
    convolve: Callable[[Any, Any], Any]


def numpy_backend() -> Backend:
    """NumPy on NumPy arrays: no device, nothing to drain; "host array in" is a copy."""
    return Backend("NumPy", put=lambda a: a, copy_in=np.array, host_operand=lambda a: a,
                   get=np.asarray, sync=_nothing, convolve=np.convolve)


def ours(device: Device) -> Backend:
    """clarray_gemm on ``device``, through its public API only."""
    from .. import asarray
    return Backend("ours", put=lambda a: asarray(a, device=device),
                   copy_in=lambda a: asarray(a, device=device), host_operand=lambda a: a,
                   get=np.asarray, sync=device.synchronize, convolve=np.convolve)


def _cupy() -> Backend:
    import cupy
    if cupy.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no CUDA device")
    return Backend("CuPy", put=cupy.asarray, copy_in=cupy.asarray, host_operand=cupy.asarray,
                   get=cupy.asnumpy, sync=cupy.cuda.runtime.deviceSynchronize,
                   convolve=cupy.convolve)


def _torch() -> Backend:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    conv1d = torch.nn.functional.conv1d

    def put(a: np.ndarray) -> Any:
        return torch.from_numpy(a).to("cuda")

    def convolve(x: Any, v: Any) -> Any:  # a full convolution is a correlation with v flipped
        return conv1d(x.view(1, 1, -1), v.flip(0).view(1, 1, -1), padding=v.numel() - 1).view(-1)
    return Backend("torch", put=put, copy_in=put, host_operand=put,
                   get=lambda t: t.cpu().numpy(), sync=torch.cuda.synchronize, convolve=convolve)


def cuda_backends() -> tuple[list[Backend], dict[str, str]]:
    """CuPy and PyTorch where each imports and sees a CUDA device; and why the others don't."""
    found: list[Backend] = []
    skipped: dict[str, str] = {}
    for name, make in (("CuPy", _cupy), ("torch", _torch)):
        try:
            found.append(make())
        except Exception as exc:  # ImportError, or the CUDA driver's own errors
            skipped[name] = error_text(exc)
    return found, skipped
