"""Settings from the environment, read in this one place (once; :func:`reload` reads again).

=============================  ==============================================================
variable                       meaning
=============================  ==============================================================
``CLARRAY_GEMM_CACHE_DIR``     where tuning results are stored (default: the user cache dir)
``CLARRAY_GEMM_NV_VERBOSE``    non-empty: build kernels with ``-cl-nv-verbose`` on NVIDIA
=============================  ==============================================================

``PYOPENCL_CTX`` (the default device) is pyopencl's own convention and is read by
``device.py`` when the default device is first chosen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import platformdirs

__all__ = ["CACHE_ENV", "NV_VERBOSE_ENV", "Settings", "current", "reload", "cache_dir",
           "nv_verbose"]

CACHE_ENV = "CLARRAY_GEMM_CACHE_DIR"
NV_VERBOSE_ENV = "CLARRAY_GEMM_NV_VERBOSE"


@dataclass(frozen=True)
class Settings:
    """The package's settings, as read from the environment."""

    cache_dir: Path
    nv_verbose: bool


@lru_cache(maxsize=1)
def _user_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("clarray_gemm"))


def _read() -> Settings:
    folder = os.environ.get(CACHE_ENV)
    return Settings(cache_dir=Path(folder) if folder else _user_cache_dir(),
                    nv_verbose=bool(os.environ.get(NV_VERBOSE_ENV)))


_current = _read()


def current() -> Settings:
    """The settings in force."""
    return _current


def reload() -> Settings:
    """Read the environment again (after a change to ``os.environ``, e.g. in tests)."""
    global _current
    _current = _read()
    return _current


def cache_dir() -> Path:
    """Where tuning results are stored: ``$CLARRAY_GEMM_CACHE_DIR``, else the user cache dir."""
    return _current.cache_dir


def nv_verbose() -> bool:
    """True when kernels are built with ``-cl-nv-verbose`` on NVIDIA devices."""
    return _current.nv_verbose
