"""clarray_gemm: NumPy-compatible OpenCL arrays with fast matrix products and 1-D convolutions.

    >>> import numpy as np, clarray_gemm
    >>> x = clarray_gemm.asarray(np.ones((3, 4), np.float32))
    >>> y = x @ np.ones((4, 2), np.float32)      # an OpenCL GEMM kernel
    >>> np.asarray(y)                             # a mapped view, no copy on unified memory
"""
from __future__ import annotations

import importlib

from .drivers import KernelBuildError, prepare as _prepare_drivers

_prepare_drivers()  # before the first OpenCL call: register pip drivers, steer program caches

from . import ops  # noqa: F401,E402  (fills the dispatch table)
from .array import (DeviceArray, asarray, empty, empty_like, full, full_like, is_device_array,
                    ones, ones_like, zeros, zeros_like)
from .device import (Device, DeviceInfo, current_device, default_device, devices, get_device,
                     synchronize, use_device)
from .memory import TransferStats, free_cached_memory, reset_transfer_stats, transfer_stats
from .ops.matmul import dot, explain_matmul, matmul
from .ops.precision import get_precision, precision, set_precision
from .kernels.crossover import host_path, host_path_enabled
from .fallbacks import on_host_calls, reset_host_calls
from .ops.arrayfuncs import arange, eye, linspace
from .ops.convolve import convolve, correlate, explain_convolve
from .ops.user_kernels import ElementwiseKernel, RawKernel, ReductionKernel
from .ops.fusion import fuse
from .kernels.registry import CATALOGUES as _CATALOGUES
from . import _dispatch  # noqa: E402
from . import random  # noqa: F401,E402  (random numbers on the device)
from . import interop  # noqa: F401,E402  (pickling; dask/distributed hooks, run when they import)

__version__ = "0.3.0"


def _array_namespace(api_version: str | None = None):
    # clarray_gemm.array_api imports array_api_compat.numpy (NumPy's f2py, testing, ma and
    # polynomial with it: a seventh of this package's import time), so it loads on first use
    return __getattr__("array_api").namespace(api_version)


_dispatch.register_namespace(_array_namespace)


def __getattr__(name: str):
    """``clarray_gemm.array_api``, imported on first access."""
    if name == "array_api":   # (importlib: ``from . import`` would ask this function again)
        return importlib.import_module(__name__ + ".array_api")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def kernels(family: str = "matmul") -> list[str]:
    """The names of the kernels of an operation family (``"matmul"`` or ``"convolve"``)."""
    try:
        return _CATALOGUES[family].names()
    except KeyError:
        raise ValueError(f"unknown family {family!r}; known: {', '.join(_CATALOGUES)}") from None


__all__ = ["DeviceArray", "asarray", "empty", "empty_like", "full", "full_like", "ones",
           "ones_like", "zeros", "zeros_like", "is_device_array", "Device", "DeviceInfo",
           "devices", "default_device", "current_device", "get_device", "use_device", "synchronize",
           "TransferStats", "transfer_stats", "reset_transfer_stats", "free_cached_memory", "matmul", "dot",
           "explain_matmul", "kernels", "__version__",
           "convolve", "correlate", "explain_convolve", "host_path", "host_path_enabled",
           "on_host_calls", "reset_host_calls", "arange", "linspace", "eye", "KernelBuildError",
           "set_precision", "get_precision", "precision", "ElementwiseKernel", "ReductionKernel",
           "RawKernel", "fuse"]
