"""The environment variables the package reads, in one place.

* ``CLARRAY_GEMM_CACHE_DIR``: where everything the package stores lives (tuning results, driver
  verdicts, the OpenCL vendor folder, PoCL's and pyopencl's program caches); default the user cache
  directory (``platformdirs.user_cache_dir("clarray_gemm")``).
* ``CLARRAY_GEMM_REGISTER_DRIVERS=0``: leave ``OCL_ICD_VENDORS`` and the program caches alone.
* ``CLARRAY_GEMM_PROBE_TIMEOUT``: seconds a driver probe may take (default 180).
* ``CLARRAY_GEMM_PROBE_FAULT``: a test hook, ``abort:<text>[,<text>...]`` or ``hang:...``: the
  probe child of every driver whose platform or device name contains one of the texts aborts (or
  hangs) as a compiler that crashes would.
* ``CLARRAY_GEMM_PROBE_CHILD``: set by the package in its probe children (they trust the device).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

__all__ = ["CACHE_ENV", "cache_dir", "register_drivers", "probe_timeout_s", "probe_fault",
           "in_probe_child", "PROBE_CHILD_ENV"]

CACHE_ENV = "CLARRAY_GEMM_CACHE_DIR"
PROBE_CHILD_ENV = "CLARRAY_GEMM_PROBE_CHILD"


@functools.lru_cache(maxsize=1)
def _user_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("clarray_gemm"))


def cache_dir() -> Path:
    """``$CLARRAY_GEMM_CACHE_DIR``, else the user cache directory (read at each call: tests and
    users may change it)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else _user_cache_dir()


def register_drivers() -> bool:
    """False when ``CLARRAY_GEMM_REGISTER_DRIVERS=0``: no vendor folder, no cache steering."""
    return os.environ.get("CLARRAY_GEMM_REGISTER_DRIVERS", "1").strip().lower() not in (
        "0", "no", "false", "off")


def probe_timeout_s() -> float:
    """Seconds one driver probe (a child process) may run before it counts as hung."""
    try:
        return max(1.0, float(os.environ.get("CLARRAY_GEMM_PROBE_TIMEOUT", "180")))
    except ValueError:
        return 180.0


def probe_fault() -> tuple[str, tuple[str, ...]] | None:
    """The test hook ``CLARRAY_GEMM_PROBE_FAULT=abort:<text>[,<text>...]`` as
    ``("abort", (text, ...))``, or None."""
    spec = os.environ.get("CLARRAY_GEMM_PROBE_FAULT", "")
    kind, _, text = spec.partition(":")
    names = tuple(t for t in text.split(",") if t)
    if kind in ("abort", "hang") and names:
        return kind, names
    return None


def in_probe_child() -> bool:
    """True inside a driver probe child process."""
    return os.environ.get(PROBE_CHILD_ENV) == "1"
