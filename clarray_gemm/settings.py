"""Settings from the environment, read in this one place (once; :func:`reload` reads again).

==================================  =========================================================
variable                            meaning
==================================  =========================================================
``CLARRAY_GEMM_CACHE_DIR``          where everything the package stores lives (tuning results,
                                    driver verdicts, the OpenCL vendor folder, PoCL's and
                                    pyopencl's program caches); default the user cache dir
``CLARRAY_GEMM_NV_VERBOSE``         non-empty: build kernels with ``-cl-nv-verbose`` on NVIDIA
``CLARRAY_GEMM_HOST_PATH``          ``0``: no host path (every operation with a kernel runs it)
``CLARRAY_GEMM_MATMUL_PRECISION``   ``tf32``: float32 products may run on TF32 tensor cores
                                    (the starting value of ``set_precision``); default
                                    ``highest`` (float32 arithmetic)
``CLARRAY_GEMM_REGISTER_DRIVERS``   ``0``: leave ``OCL_ICD_VENDORS`` and the program caches alone
``CLARRAY_GEMM_HOST_THREADS``       threads the host path's own parallel work may use (the
                                    overlap-add FFT); default the cores the process may run on
``CLARRAY_GEMM_FALLBACK_RESULTS``   ``host``: NumPy functions with no device implementation
                                    (host fallbacks) return NumPy's own objects; default
                                    ``device`` (their arrays come back as device arrays)
``CLARRAY_GEMM_EVENTLESS``          ``1``/``0``: kernel launches and buffer copies that no one
                                    waits on make no event object (or always make one); default:
                                    by the driver (``enqueue.eventless_vendors``, tuning data)
``CLARRAY_GEMM_PROBE_TIMEOUT``      seconds a driver probe may take (default 180)
``CLARRAY_GEMM_PROBE_FAULT``        test hook, ``abort:<text>[,<text>...]`` or ``hang:...``: the
                                    probe child of every driver whose platform or device name
                                    contains one of the texts aborts (or hangs), as a compiler
                                    that crashes would
``CLARRAY_GEMM_PROBE_CHILD``        set by the package in its probe children
``CLARRAY_GEMM_PROGRAM_CACHE``      pyopencl's program cache folder; default ``pyopencl`` in
                                    the cache dir (the package points each probe child at a
                                    scratch folder of its own)
==================================  =========================================================

``PYOPENCL_CTX`` (the default device) is pyopencl's own convention and is read by
``device.py`` when the default device is first chosen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import platformdirs

__all__ = ["CACHE_ENV", "NV_VERBOSE_ENV", "PROBE_CHILD_ENV", "PROGRAM_CACHE_ENV", "Settings",
           "current", "reload", "cache_dir", "program_cache_dir", "nv_verbose", "host_path",
           "matmul_precision", "PRECISIONS", "register_drivers", "probe_timeout_s", "host_threads",
           "probe_fault", "in_probe_child", "fallback_results", "FALLBACK_RESULTS",
           "eventless_enqueue"]

CACHE_ENV = "CLARRAY_GEMM_CACHE_DIR"
NV_VERBOSE_ENV = "CLARRAY_GEMM_NV_VERBOSE"
PROBE_CHILD_ENV = "CLARRAY_GEMM_PROBE_CHILD"
PROGRAM_CACHE_ENV = "CLARRAY_GEMM_PROGRAM_CACHE"
PRECISIONS = ("highest", "tf32")
"""float32 product precisions: float32 arithmetic, or TF32 inputs on tensor cores (opt-in)."""
FALLBACK_RESULTS = ("device", "host")
"""Where host fallbacks' array results live: device arrays on the operands' device, or NumPy's."""
_OFF = ("0", "no", "false", "off")


@dataclass(frozen=True)
class Settings:
    """The package's settings, as read from the environment."""

    cache_dir: Path
    nv_verbose: bool
    host_path: bool
    matmul_precision: str
    register_drivers: bool
    host_threads: int | None
    probe_timeout_s: float
    probe_fault: tuple[str, tuple[str, ...]] | None
    in_probe_child: bool
    program_cache_dir: Path
    fallback_results: str
    eventless: bool | None = None


@lru_cache(maxsize=1)
def _user_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("clarray_gemm"))


def _timeout(text: str) -> float:
    try:
        return max(1.0, float(text))
    except ValueError:
        return 180.0


def _fault(spec: str) -> tuple[str, tuple[str, ...]] | None:
    kind, _, text = spec.partition(":")
    names = tuple(t for t in text.split(",") if t)
    return (kind, names) if kind in ("abort", "hang") and names else None


def _precision(text: str) -> str:
    text = text.strip().lower()
    return text if text in PRECISIONS else "highest"


def _fallback_results(text: str) -> str:
    text = text.strip().lower()
    return text if text in FALLBACK_RESULTS else "device"


def _tristate(text: str) -> bool | None:
    text = text.strip().lower()
    if not text:
        return None
    return text not in _OFF


def _threads(text: str) -> int | None:
    try:
        return max(1, int(text))
    except ValueError:
        return None


def _read() -> Settings:
    env = os.environ
    folder = env.get(CACHE_ENV)
    cache = Path(folder) if folder else _user_cache_dir()
    programs = env.get(PROGRAM_CACHE_ENV)
    return Settings(
        cache_dir=cache,
        nv_verbose=bool(env.get(NV_VERBOSE_ENV)),
        host_path=env.get("CLARRAY_GEMM_HOST_PATH", "1").strip().lower() not in _OFF,
        matmul_precision=_precision(env.get("CLARRAY_GEMM_MATMUL_PRECISION", "")),
        register_drivers=env.get("CLARRAY_GEMM_REGISTER_DRIVERS", "1").strip().lower()
        not in _OFF,
        host_threads=_threads(env.get("CLARRAY_GEMM_HOST_THREADS", "")),
        probe_timeout_s=_timeout(env.get("CLARRAY_GEMM_PROBE_TIMEOUT", "180")),
        probe_fault=_fault(env.get("CLARRAY_GEMM_PROBE_FAULT", "")),
        in_probe_child=env.get(PROBE_CHILD_ENV) == "1",
        program_cache_dir=Path(programs) if programs else cache / "pyopencl",
        fallback_results=_fallback_results(env.get("CLARRAY_GEMM_FALLBACK_RESULTS", "")),
        eventless=_tristate(env.get("CLARRAY_GEMM_EVENTLESS", "")))


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
    """``$CLARRAY_GEMM_CACHE_DIR``, else the user cache directory."""
    return _current.cache_dir


def program_cache_dir() -> Path:
    """``$CLARRAY_GEMM_PROGRAM_CACHE``, else ``pyopencl`` in :func:`cache_dir`."""
    return _current.program_cache_dir


def nv_verbose() -> bool:
    """True when kernels are built with ``-cl-nv-verbose`` on NVIDIA devices."""
    return _current.nv_verbose


def host_path() -> bool:
    """False when ``CLARRAY_GEMM_HOST_PATH=0`` (the starting state of ``clarray_gemm.host_path``)."""
    return _current.host_path


def matmul_precision() -> str:
    """``$CLARRAY_GEMM_MATMUL_PRECISION`` (``"highest"`` unless it says ``"tf32"``)."""
    return _current.matmul_precision


def register_drivers() -> bool:
    """False when ``CLARRAY_GEMM_REGISTER_DRIVERS=0``: no vendor folder, no cache steering."""
    return _current.register_drivers


def host_threads() -> int | None:
    """Threads the host path's own parallel work may use, or None: the process's cores."""
    return _current.host_threads


def probe_timeout_s() -> float:
    """Seconds one driver probe (a child process) may run before it counts as hung."""
    return _current.probe_timeout_s


def probe_fault() -> tuple[str, tuple[str, ...]] | None:
    """The test hook ``CLARRAY_GEMM_PROBE_FAULT`` as ``("abort", (text, ...))``, or None."""
    return _current.probe_fault


def in_probe_child() -> bool:
    """True inside a driver probe child process."""
    return _current.in_probe_child


def fallback_results() -> str:
    """``"host"`` when ``CLARRAY_GEMM_FALLBACK_RESULTS=host``: host fallbacks return NumPy's
    objects; else ``"device"``: their arrays come back as device arrays."""
    return _current.fallback_results


def eventless_enqueue() -> bool | None:
    """``CLARRAY_GEMM_EVENTLESS``: True (launches no one waits on make no event object), False
    (they always do), or None: the driver's entry in the tuning data decides."""
    return _current.eventless
