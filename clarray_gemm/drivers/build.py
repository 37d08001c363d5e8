"""One OpenCL program build through pyopencl's binary cache, with a clear error when the driver
cannot build it.

A cache entry that cannot be read (truncated pickle, missing file, a binary the driver rejects) is
not a build failure: the program is built again from source without the cache, with a warning,
and the cache folder is cleared. Only a failure of that source build is a
:class:`KernelBuildError`.

NVIDIA's OpenCL compiler targets sm_90 on Hopper, never sm_90a, whose instructions (``wgmma``)
ptxas then refuses. A kernel writes such instructions as PTX comments marked ``// SM90A:``, and a
build asked to ``retarget`` has its program's PTX retargeted to sm_90a with the marks removed and
loaded as a program binary (:func:`retarget_sm90a`).
"""
from __future__ import annotations

import re
import warnings
from typing import Sequence

import pyopencl as cl

from . import calls, caches

__all__ = ["KernelBuildError", "build", "retarget_sm90a", "sm90a_ptx", "SM90A_MARK"]

SM90A_MARK = "// SM90A: "
"""Prefix of an inline-PTX line that only an sm_90a build may contain (see the module notes)."""
_MARK_RE = re.compile(r"//\s*SM90A:\s*")


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


def sm90a_ptx(ptx: str) -> str:
    """``ptx`` with its target raised to sm_90a and its ``SM90A_MARK`` lines made instructions."""
    # (a compiler that already targets sm_90a keeps its target; the marks go either way)
    retargeted, count = re.subn(r"^\.target sm_90a?\b", ".target sm_90a", ptx, count=1,
                                flags=re.MULTILINE)
    if not count:
        raise ValueError("the program's PTX targets no sm_90 (no '.target sm_90' line)")
    return _MARK_RE.sub("", retargeted)


def retarget_sm90a(context: cl.Context, program: cl.Program,
                   options: Sequence[str] = ()) -> cl.Program:
    """``program`` (built for NVIDIA sm_90) rebuilt from its PTX by :func:`sm90a_ptx`."""
    ptx = sm90a_ptx(program.get_info(cl.program_info.BINARIES)[0].decode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        with calls.guard():
            return cl.Program(context, context.devices, [ptx.encode()]).build(
                options=list(options))


def build(context: cl.Context, text: str, options: Sequence[str], kernel: str,
          driver: str, retarget: bool = False) -> cl.Program:
    """Build ``text`` (the source of ``kernel``) for ``context`` on ``driver``, and with
    ``retarget`` rebuild it for sm_90a; raise :class:`KernelBuildError` if the driver cannot."""
    program = _build_source(context, text, options, kernel, driver)
    if not retarget:
        return program
    try:
        return retarget_sm90a(context, program)
    except (cl.Error, ValueError) as exc:
        raise KernelBuildError(kernel, driver, "sm_90a rebuild: " + _reason(exc)) from exc


def _build_source(context: cl.Context, text: str, options: Sequence[str], kernel: str,
                  driver: str) -> cl.Program:
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
