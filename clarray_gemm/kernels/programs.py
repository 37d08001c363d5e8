"""Kernel sources and the program cache: each (device, source, defines) is built once.

Sources are the ``.cl`` files of the top-level ``opencl/`` folder. An installed wheel carries them
as the ``clarray_gemm.opencl`` package; a source checkout reads the folder directly.
"""
from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, register_fork_reset

__all__ = ["source_text", "build_program", "get_kernel", "ctype", "dtype_defines",
           "build_count"]

_CHECKOUT_DIR = Path(__file__).resolve().parents[2] / "opencl"


_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.MULTILINE)


@lru_cache(maxsize=None)
def source_text(name: str) -> str:
    """The text of ``opencl/<name>`` (from the installed package, else the checkout), with
    ``#include "file"`` lines replaced by that file's text, so no include path is needed."""
    try:
        text = resources.files("clarray_gemm.opencl").joinpath(name).read_text()
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        text = (_CHECKOUT_DIR / name).read_text()
    return _INCLUDE.sub(lambda m: source_text(m.group(1)), text)


_C_TYPES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.int8): "char", np.dtype(np.uint8): "uchar", np.dtype(np.bool_): "uchar",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort",
    np.dtype(np.int32): "int", np.dtype(np.uint32): "uint",
    np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong",
    np.dtype(np.float16): "half",
}


def ctype(dtype: np.dtype) -> str:
    """The OpenCL C scalar type with the same bytes as a native NumPy dtype."""
    try:
        return _C_TYPES[np.dtype(dtype).newbyteorder("=")]
    except KeyError:
        raise TypeError(f"no OpenCL type for dtype {np.dtype(dtype)}") from None


def dtype_defines(dtype: np.dtype, prefix: str = "") -> dict[str, object]:
    """``T`` (element type), ``ACC`` (accumulator: unsigned for integers, so that overflow wraps
    exactly as NumPy's does) and ``IS_FP64`` for a native dtype."""
    dt = np.dtype(dtype)
    t = ctype(dt)
    acc = t
    if dt.kind in "iu":
        acc = "u" + t.lstrip("u") if not t.startswith("u") else t
    return {f"{prefix}T": t, f"{prefix}ACC": acc,
            f"{prefix}IS_FP64": int(dt == np.float64),
            f"{prefix}IS_INT": int(dt.kind in "iub")}


def unsupported_dtype(dtype: np.dtype, info) -> str | None:
    """Why the arithmetic kernels (T/ACC defines) cannot take ``dtype`` on a device with
    ``info`` (a DeviceInfo), or None when they can."""
    dt = np.dtype(dtype)
    if dt == np.float64 and not info.fp64:
        return "the device has no fp64 (cl_khr_fp64)"
    if dt.kind not in "fiu" or dt == np.float16:
        return f"dtype {dt} has no kernel"
    return None


_cache: dict[tuple, cl.Program] = {}
_kernels: dict[tuple[int, str], cl.Kernel] = {}
register_fork_reset(_cache)
register_fork_reset(_kernels)
_lock = threading.Lock()
_builds = 0


def build_count() -> int:
    """How many programs were compiled in this process (tests use it to prove caching)."""
    return _builds


def _options(defines: Mapping[str, object], extra: tuple[str, ...]) -> list[str]:
    opts = [f"-D{k}={v}" for k, v in sorted(defines.items())]
    return opts + list(extra)


def build_program(device: Device, source: str, defines: Mapping[str, object] | None = None,
                  options: tuple[str, ...] = ()) -> cl.Program:
    """Build ``opencl/<source>`` for ``device`` with ``-D`` defines, once per process."""
    global _builds
    defines = dict(defines or {})
    key = (device.cl_device.int_ptr, source, tuple(sorted((k, str(v)) for k, v in defines.items())),
           options)
    prog = _cache.get(key)
    if prog is not None:
        return prog
    with _lock:
        prog = _cache.get(key)
        if prog is None:
            text = source_text(source)
            if defines.get("IS_FP64") or defines.get("T") == "double":
                text = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text
            opts = _options(defines, options)
            if os.environ.get("CLARRAY_GEMM_NV_VERBOSE") and device.info.is_nvidia:
                opts.append("-cl-nv-verbose")
            prog = cl.Program(device.context, text).build(options=opts)
            _cache[key] = prog
            _builds += 1
    return prog


def get_kernel(device: Device, source: str, name: str,
               defines: Mapping[str, object] | None = None,
               options: tuple[str, ...] = ()) -> cl.Kernel:
    """A kernel object from the cached program (kernel objects are cached too)."""
    prog = build_program(device, source, defines, options)
    key = (id(prog), name)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = getattr(prog, name)
    return k
