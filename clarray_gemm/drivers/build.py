"""One OpenCL program build through pyopencl's binary cache, with a clear error when the driver
cannot build it.

A cache entry that cannot be read (truncated pickle, missing file, a binary the driver rejects) is
not a build failure: the program is built again from source without the cache, with a warning,
and the cache folder is cleared. Only a failure of that source build is a
:class:`KernelBuildError`.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import pyopencl as cl

from . import calls, caches

__all__ = ["KernelBuildError", "build"]


class KernelBuildError(RuntimeError):
    """The driver failed to compile a kernel source; names the kernel and the driver."""

    def __init__(self, kernel: str, driver: str, reason: str) -> None:
        self.kernel = kernel
        self.driver = driver
        self.reason = reason
        super().__init__(f"the OpenCL driver {driver!r} failed to build kernel {kernel!r}: "
                         f"{reason}")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if "error" in ln.lower()]
    return (lines[0] if lines else (text.splitlines() or [type(exc).__name__])[0])[:300]


def build(context: cl.Context, text: str, options: Sequence[str], kernel: str,
          driver: str) -> cl.Program:
    """Build ``text`` (the source of ``kernel``) for ``context`` on ``driver``; raise
    :class:`KernelBuildError` if the driver cannot."""
    caches.restore_pocl_cache_dir()
    cache_dir = caches.program_cache_dir()
    cached_failure = None
    if cache_dir is not False:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cl.CompilerWarning)
                with calls.guard():
                    return cl.Program(context, text).build(options=list(options),
                                                           cache_dir=cache_dir)
        except cl.Error as exc:
            cached_failure = exc  # maybe a bad cache entry: the uncached build below tells
        except Exception as exc:  # unreadable cache entry (pickle, OSError, ...)
            warnings.warn(f"clarray_gemm: the program cache {cache_dir} is damaged "
                          f"({type(exc).__name__}: {exc}); cleared, kernel {kernel!r} rebuilt",
                          RuntimeWarning, stacklevel=3)
            caches.wipe(cache_dir)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            with calls.guard():
                program = cl.Program(context, text).build(options=list(options), cache_dir=False)
    except cl.Error as exc:
        raise KernelBuildError(kernel, driver, _reason(exc)) from exc
    if cached_failure is not None:
        warnings.warn(f"clarray_gemm: a cached binary of kernel {kernel!r} failed to load "
                      f"({_reason(cached_failure)}); cache {cache_dir} cleared, kernel rebuilt",
                      RuntimeWarning, stacklevel=3)
        caches.wipe(cache_dir)
    return program
