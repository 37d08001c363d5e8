"""Kernel sources and the program cache: each (device, source, defines) is built once.

Sources are the ``.cl`` files of the top-level ``opencl/`` folder. An installed wheel carries them
as the ``clarray_gemm.opencl`` package; a source checkout reads the folder directly.
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Mapping

import pyopencl as cl

from .. import settings
from ..device import Device
# The dtype rules live in clarray_gemm.dtypes; importable from here too for older callers.
from ..dtypes import ctype, dtype_defines, unsupported_dtype  # noqa: F401

__all__ = ["source_text", "build_program", "get_kernel", "ctype", "dtype_defines",
           "unsupported_dtype", "build_count"]

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


_cache: dict[tuple, cl.Program] = {}
_kernels: dict[tuple[int, str], cl.Kernel] = {}
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
            if settings.nv_verbose() and device.info.is_nvidia:
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
