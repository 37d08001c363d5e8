"""Make pip-installed OpenCL drivers visible without root, before the first OpenCL call.

Intel's CPU runtime from pip (``intel-opencl-rt``) installs ``libintelocl.so`` but registers it
nowhere a loader looks (its shipped ``.icd`` holds a build-time placeholder path). The ICD loader
reads ``OCL_ICD_VENDORS`` (a folder of ``.icd`` files, each naming a library) instead of
``/etc/OpenCL/vendors`` when it is set, at its first call. So :func:`register` writes such a folder
in our cache directory (``opencl-vendors/<hash of its content>``): an ``.icd`` with the absolute path of ``libintelocl.so``, copies of the
system's ``.icd`` files and of the entries of any ``OCL_ICD_VENDORS`` already set (nothing that
worked before disappears), and points ``OCL_ICD_VENDORS`` at it.

pip's PoCL and Oclgrind need no entry: pyopencl's bundled loader reads the ``.icd`` files in
``pyopencl/.libs`` (found through ``$PYOPENCL_HOME``, which pyopencl sets) whatever
``OCL_ICD_VENDORS`` says, and a copy would list them twice. Only when pyopencl has no bundled
loader (conda, a distribution's pyopencl) are the environment's own ``etc/OpenCL/vendors`` entries
copied too.

``libintelocl.so`` finds its compiler runtime (libimf, libsvml, libirng, libintlc, libtbb) through
its ``$ORIGIN`` run path, which works when pip put them in the same ``lib`` folder; where a
dependency is not beside it (the runtime and the compiler libraries in different prefixes), it is
loaded here first with ``RTLD_GLOBAL`` (``LD_LIBRARY_PATH`` cannot change after start-up).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import importlib.metadata as metadata
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import MutableMapping

__all__ = ["Registration", "register", "intel_runtime_library", "vendor_entries",
           "SYSTEM_VENDORS_DIR", "INTEL_ICD_NAME"]

SYSTEM_VENDORS_DIR = Path("/etc/OpenCL/vendors")
INTEL_ICD_NAME = "clarray_gemm-intel-cpu.icd"
_INTEL_DEPENDENCIES = ("libintlc.so.5", "libimf.so", "libsvml.so", "libirng.so", "libtbb.so.12")
_DEPENDENCY_DISTRIBUTIONS = ("intel-cmplr-lib-rt", "tbb", "intel-opencl-rt")


@dataclass
class Registration:
    """What :func:`register` did: the folder ``OCL_ICD_VENDORS`` now names and its entries."""

    folder: Path | None = None
    entries: dict[str, str] = field(default_factory=dict)
    intel_library: Path | None = None
    preloaded: list[Path] = field(default_factory=list)
    note: str = ""


def _distribution_file(distribution: str, name: str) -> Path | None:
    """The installed path of the file ``name`` (a basename) of a pip distribution, or None."""
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    dist = metadata.distribution(distribution)
    for f in files:
        if f.name == name:
            path = Path(dist.locate_file(f)).resolve()
            if path.exists():
                return path
    return None


def intel_runtime_library() -> Path | None:
    """The absolute path of pip's ``libintelocl.so`` (``intel-opencl-rt``), or None."""
    return _distribution_file("intel-opencl-rt", "libintelocl.so")


def _preload_dependencies(library: Path) -> list[Path]:
    """Load the compiler runtime libraries ``library`` needs that are not beside it."""
    loaded = []
    for name in _INTEL_DEPENDENCIES:
        if (library.parent / name).exists():
            continue
        found = next((p for d in _DEPENDENCY_DISTRIBUTIONS
                      if (p := _distribution_file(d, name)) is not None), None)
        if found is not None:
            ctypes.CDLL(str(found), mode=ctypes.RTLD_GLOBAL)
            loaded.append(found)
    return loaded


def _pyopencl_bundles_loader() -> bool:
    """True when pyopencl ships its own ICD loader and driver entries (the PyPI wheels)."""
    spec = importlib.util.find_spec("pyopencl")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if any((Path(location) / ".libs").glob("*.icd")):
            return True
    return False


def _read_icd_folder(folder: Path) -> dict[str, str]:
    entries = {}
    try:
        for icd in sorted(folder.glob("*.icd")):
            try:
                entries[icd.name] = icd.read_text().strip()
            except OSError:
                continue
    except OSError:
        pass
    return entries


def _environment_entries(value: str, own_folder: Path) -> dict[str, str]:
    """The entries an existing ``OCL_ICD_VENDORS`` names: a folder, an ``.icd`` file or a
    library."""
    path = Path(value)
    if path.resolve() == own_folder.resolve() or path.resolve().parent == own_folder.resolve():
        return {}
    if path.is_dir():
        return {f"env-{k}": v for k, v in _read_icd_folder(path).items()}
    if path.suffix == ".icd" and path.is_file():
        return {f"env-{path.name}": path.read_text().strip()}
    return {"env-library.icd": value}


def _usable_library_line(line: str) -> bool:
    return bool(line) and (not os.path.isabs(line) or os.path.exists(line))


def vendor_entries(intel_library: Path | None, own_folder: Path,
                   system_dir: Path = SYSTEM_VENDORS_DIR,
                   env_vendors: str | None = None,
                   bundled_loader: bool = True) -> dict[str, str]:
    """The ``.icd`` files (name -> library line) of our vendor folder: the system's, those of an
    existing ``OCL_ICD_VENDORS``, the environment's own when pyopencl has no bundled loader, and
    Intel's runtime."""
    entries = {f"system-{k}": v for k, v in _read_icd_folder(system_dir).items()}
    if env_vendors:
        entries.update(_environment_entries(env_vendors, own_folder))
    if not bundled_loader:
        prefix_entries = _read_icd_folder(Path(sys.prefix) / "etc" / "OpenCL" / "vendors")
        entries.update({f"prefix-{k}": v for k, v in prefix_entries.items()
                        if _usable_library_line(v)})
    if intel_library is not None:
        entries[INTEL_ICD_NAME] = str(intel_library)
    unique: dict[str, str] = {}
    for name, line in entries.items():  # a library listed twice would be two platforms
        if line not in unique.values():
            unique[name] = line
    return unique


def _write_folder(folder: Path, entries: dict[str, str]) -> None:
    """Make ``folder`` hold exactly ``entries``, each file replaced atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in set(_read_icd_folder(folder)) - set(entries):
        (folder / stale).unlink(missing_ok=True)
    for name, line in entries.items():
        target = folder / name
        try:
            if target.read_text().strip() == line:
                continue
        except OSError:
            pass
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
        with os.fdopen(fd, "w") as f:
            f.write(line + "\n")
        os.replace(tmp, target)


def register(cache_dir: Path, environ: MutableMapping[str, str] = os.environ,
             system_dir: Path = SYSTEM_VENDORS_DIR,
             intel_library: Path | None | bool = True) -> Registration:
    """Register Intel's pip CPU runtime (if installed) through ``OCL_ICD_VENDORS``.

    ``intel_library=True`` looks the runtime up; a path uses that one; None registers nothing
    new (tests). Does nothing when no new driver needs registering. Call it before the first
    OpenCL call of the process: the loader reads the variable once.
    """
    if intel_library is True:
        intel_library = intel_runtime_library()
    if not intel_library:
        return Registration(note="no pip driver to register")
    parent = cache_dir / "opencl-vendors"
    current = environ.get("OCL_ICD_VENDORS")
    if current and Path(current).parent == parent:  # a parent process of ours registered it
        folder = Path(current)
        return Registration(folder, _read_icd_folder(folder), intel_library,
                            _preload_dependencies(intel_library), "inherited")
    entries = vendor_entries(intel_library, parent, system_dir, current,
                             _pyopencl_bundles_loader())
    # named after its content: processes of other environments sharing the cache never rewrite
    # a folder another process is about to read
    digest = hashlib.sha256(json.dumps(sorted(entries.items())).encode()).hexdigest()[:16]
    folder = parent / digest
    _write_folder(folder, entries)
    preloaded = _preload_dependencies(intel_library)
    environ["OCL_ICD_VENDORS"] = str(folder)
    return Registration(folder, entries, intel_library, preloaded)
