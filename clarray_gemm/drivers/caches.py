"""Where PoCL's and pyopencl's program caches live, and how a broken cache is survived.

All three caches go under our cache directory (``settings.cache_dir()``):

* ``pocl/``: PoCL's kernel cache (``POCL_CACHE_DIR``, unless the user set it). Wiped when PoCL
  fails its probe, so that an aborted build never leaves an entry that breaks the next run.
* ``pyopencl/``: pyopencl's binary cache (drivers without their own cache, such as Intel's),
  passed as ``cache_dir`` to each build. A probe child writes into a scratch folder that the parent
  merges in only when the driver passed. A folder that cannot be written is not used.
* ``pytools/``: pyopencl's kernel-invoker cache (an SQLite file). It is wrapped so that a corrupt,
  deleted or read-only database gives one warning and code generation, never an exception.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import time
import warnings
from pathlib import Path
from typing import Any, MutableMapping

from .. import settings

__all__ = ["steer", "pocl_cache_dir", "restore_pocl_cache_dir", "check_pocl_cache",
           "program_cache_dir", "wipe", "merge_scratch",
           "SCRATCH_ENV"]

SCRATCH_ENV = settings.PROGRAM_CACHE_ENV
_STALE_LOCK_S = 30.0
_pocl_dir: Path | None = None


def pocl_cache_dir() -> Path | None:
    """PoCL's cache folder when we chose it (None when the user set ``POCL_CACHE_DIR``)."""
    return _pocl_dir


def restore_pocl_cache_dir() -> None:
    """Recreate PoCL's cache folder if it was deleted while this process runs (PoCL makes it only
    at start-up, and its builds fail without it)."""
    if _pocl_dir is not None:
        try:
            _pocl_dir.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


_warned_unwritable: set[str] = set()


def program_cache_dir() -> str | bool:
    """pyopencl's ``cache_dir`` for a build: our folder (a probe's scratch folder inside a probe
    child), or False (no binary cache) when it cannot be written."""
    path = settings.program_cache_dir()
    if _writable_dir(path):
        _remove_stale_lock(path)
        return str(path)
    if str(path) not in _warned_unwritable:
        _warned_unwritable.add(str(path))
        warnings.warn(f"clarray_gemm: the program cache {path} cannot be written; kernels are "
                      "compiled in each process", RuntimeWarning, stacklevel=3)
    return False


def _remove_stale_lock(folder: Path) -> None:
    """pyopencl holds ``lock`` for milliseconds; an old one is left by a killed process, and would
    make every build wait 60 s for it."""
    lock = folder / "lock"
    try:
        if time.time() - lock.stat().st_mtime > _STALE_LOCK_S:
            lock.unlink()
    except OSError:
        pass


def wipe(path: Path | str | None) -> None:
    """Remove a cache folder (missing is fine)."""
    if path:
        shutil.rmtree(path, ignore_errors=True)


def merge_scratch(scratch: Path) -> None:
    """Move a passing probe's pyopencl entries into the shared folder, then drop the scratch."""
    target = settings.cache_dir() / "pyopencl"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for entry in scratch.iterdir():
            if entry.is_dir() and not (target / entry.name).exists():
                os.replace(entry, target / entry.name)
    except OSError:
        pass
    wipe(scratch)


class _SafeInvokerCache:
    """pyopencl's invoker cache with every database failure turned into a cache miss."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._warned = False

    def _failed(self, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"clarray_gemm: pyopencl's invoker cache failed ({type(exc).__name__}: "
                          f"{exc}); it is regenerated in memory", RuntimeWarning, stacklevel=4)
        self._inner = None

    def __getitem__(self, key: Any) -> Any:
        if self._inner is None:
            raise KeyError(key)
        try:
            return self._inner[key]
        except KeyError:
            raise
        except Exception as exc:  # sqlite3 errors, unpickling errors, OSError
            self._failed(exc)
            raise KeyError(key) from None

    def store_if_not_present(self, key: Any, value: Any) -> None:
        if self._inner is None:
            return
        try:
            self._inner.store_if_not_present(key, value)
        except Exception as exc:
            self._failed(exc)


def _import_invoker(environ: MutableMapping[str, str], folder: Path) -> Any:
    """Import ``pyopencl.invoker`` with its SQLite file in ``folder`` (pytools derives it from
    ``XDG_CACHE_HOME`` when the module is imported); a corrupt file is removed and made again."""
    saved = environ.get("XDG_CACHE_HOME")
    environ["XDG_CACHE_HOME"] = str(folder)
    try:
        for attempt in range(2):
            try:
                import pyopencl.invoker as invoker
                return invoker
            except sqlite3.Error as exc:
                warnings.warn(f"clarray_gemm: pyopencl's invoker cache in {folder} is corrupt "
                              f"({exc}); rebuilding it", RuntimeWarning, stacklevel=4)
                wipe(folder / "pytools")
        return None
    finally:
        if saved is None:
            environ.pop("XDG_CACHE_HOME", None)
        else:
            environ["XDG_CACHE_HOME"] = saved


def steer(cache_dir: Path, environ: MutableMapping[str, str] = os.environ) -> None:
    """Point PoCL's and pyopencl's caches into ``cache_dir`` (before the first OpenCL call)."""
    global _pocl_dir
    if "POCL_CACHE_DIR" not in environ or environ["POCL_CACHE_DIR"] == str(cache_dir / "pocl"):
        environ["POCL_CACHE_DIR"] = str(cache_dir / "pocl")
        _pocl_dir = cache_dir / "pocl"
    import sys
    if "pyopencl.invoker" in sys.modules or not _writable_dir(cache_dir):
        invoker = sys.modules.get("pyopencl.invoker")
    else:
        invoker = _import_invoker(environ, cache_dir)
    if invoker is not None and hasattr(invoker, "invoker_cache") and not isinstance(
            invoker.invoker_cache, _SafeInvokerCache):
        invoker.invoker_cache = _SafeInvokerCache(invoker.invoker_cache)


# -- PoCL's cache: structural checks -------------------------------------------------------------
# PoCL trusts its cache: a truncated program.bc or kernel .so (a killed process, a full disk, a
# damaged file) makes later processes fail to find kernels, abort in LLVM or die of SIGBUS. The
# checks below read only headers: an LLVM bitcode file is a sequence of top-level blocks whose
# lengths must add up to the file size; an ELF file's segments and section table must lie inside it.
_BITCODE_MAGIC = b"BC\xc0\xde"


def _read_bits(data: bytes, bit: int, width: int) -> int:
    start, shift = bit // 8, bit % 8
    chunk = int.from_bytes(data[start:start + (shift + width + 7) // 8], "little")
    return (chunk >> shift) & ((1 << width) - 1)


def _read_vbr(data: bytes, bit: int, width: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if bit + width > len(data) * 8:
            raise ValueError("truncated")
        piece = _read_bits(data, bit, width)
        bit += width
        value |= (piece & ((1 << (width - 1)) - 1)) << shift
        shift += width - 1
        if not piece >> (width - 1):
            return value, bit


def bitcode_is_whole(data: bytes) -> bool:
    """True when ``data`` is LLVM bitcode whose top-level blocks exactly fill it."""
    if len(data) < 8 or data[:4] != _BITCODE_MAGIC or len(data) % 4:
        return False
    bit = 32
    try:
        while bit < len(data) * 8:
            if _read_bits(data, bit, 2) != 1:  # ENTER_SUBBLOCK, the only top-level entry
                return False
            _, bit = _read_vbr(data, bit + 2, 8)   # block id
            _, bit = _read_vbr(data, bit, 4)       # abbreviation width
            bit = (bit + 31) // 32 * 32
            if bit + 32 > len(data) * 8:
                return False
            words = _read_bits(data, bit, 32)
            bit += 32 + 32 * words
    except ValueError:
        return False
    return bit == len(data) * 8


def elf_is_whole(data: bytes) -> bool:
    """True when ``data`` is a 64-bit little-endian ELF file whose segments and sections fit."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return False
    u = lambda off, n: int.from_bytes(data[off:off + n], "little")  # noqa: E731
    phoff, shoff = u(0x20, 8), u(0x28, 8)
    phentsize, phnum, shentsize, shnum = u(0x36, 2), u(0x38, 2), u(0x3A, 2), u(0x3C, 2)
    if phoff + phnum * phentsize > len(data) or shoff + shnum * shentsize > len(data):
        return False
    for i in range(phnum):
        entry = phoff + i * phentsize
        if u(entry, 4) == 1 and u(entry + 8, 8) + u(entry + 32, 8) > len(data):  # PT_LOAD
            return False
    return True


def _entry_is_whole(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return bitcode_is_whole(data) if path.suffix == ".bc" else elf_is_whole(data)


def check_pocl_cache(folder: Path | None = None) -> list[Path]:
    """Remove the programs of PoCL's cache whose bitcode or kernel library is damaged (with one
    warning); returns the folders removed."""
    folder = folder if folder is not None else pocl_cache_dir()
    if folder is None or not folder.is_dir():
        return []
    removed = []
    for program in folder.glob("*/*"):
        files = [p for p in program.rglob("*") if p.suffix in (".bc", ".so") and p.is_file()]
        if any(not _entry_is_whole(p) for p in files):
            wipe(program)
            removed.append(program)
    if removed:
        warnings.warn(f"clarray_gemm: removed {len(removed)} damaged program(s) from PoCL's "
                      f"cache {folder}; they are rebuilt", RuntimeWarning, stacklevel=3)
    return removed
