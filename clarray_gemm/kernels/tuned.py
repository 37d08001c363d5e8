"""The tuning store that dispatch reads: tuned kernel parameters and host/OpenCL crossovers per
device, as one JSON file per device in :func:`clarray_gemm.settings.cache_dir`.

The search that fills it is ``clarray_gemm.tuning`` (on top of the library, next to ``bench``);
this module only reads, validates and writes. A file that is missing, unreadable, truncated or
of another format, and entries that are malformed, give a warning and the defaults, never an
error: the call path must not fail because of a cache. Writes go to a temporary file that
replaces the old one (``os.replace``), so a reader never sees half a file.

* ``entries["<family>/<variant>/<dtype>/<size class>"] = {"params": {...}, ...}``: parameters
  that beat the variant's defaults; :func:`install` makes the catalogues use them.
* ``crossover["<family>/<dtype>"] = {"size": float or "never", "unit": ...}``: the problem size
  (flops for ``matmul``, elements for ``elementwise``, ``N*m`` for ``convolve``) above which the
  OpenCL kernel beats NumPy on the host mapping; read with :func:`crossover`.
* ``measured["<family>/<dtype>"] = {"points": [[batch, M, N, K, {kernel: seconds}], ...],
  "date": ...}``: every fitting kernel timed over a shape grid; ``kernels/measured.py`` ranks
  the kernels of a problem by the nearest point (before any tables shipped with the package).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pyopencl as cl

from .. import settings
from ..device import Device
from ..memo import Memo
from . import crossover as host_path_crossovers
from . import measured as measured_choices
from .variant import Catalogue, Variant

__all__ = ["FORMAT", "SIZE_CLASSES", "CROSSOVER_FAMILIES", "size_class", "conv_size_class",
           "entry_key", "crossover_key", "device_identity", "store_path", "TuningStore",
           "store_for", "forget", "reset", "crossover", "tuned_params_hook", "install"]

FORMAT = 1

# (name, smallest geometric-mean size of M, N, K, the size tuned for it)
SIZE_CLASSES: tuple[tuple[str, int, int], ...] = (
    ("small", 0, 128), ("medium", 192, 512), ("large", 768, 2048), ("huge", 3072, 4096))

CROSSOVER_FAMILIES = {"matmul": "flops", "elementwise": "elements", "convolve": "N*m",
                      "convolve_fft": "m", "convolve_fft_short": "m", "convolve_host_fft": "m"}
"""The families with a measured crossover, and the unit of its problem size."""


def size_class(M: int, N: int, K: int) -> str:
    """The size class of a product, by the geometric mean of M, N and K."""
    mean = (max(M, 1) * max(N, 1) * max(K, 1)) ** (1.0 / 3.0)
    name = SIZE_CLASSES[0][0]
    for cls, lower, _ in SIZE_CLASSES:
        if mean >= lower:
            name = cls
    return name


def conv_size_class(n: int, m: int) -> str:
    """The size class of a 1-D convolution: signal length and mask width."""
    length = "short" if n < 2**15 else "mid" if n < 2**19 else "long"
    width = "narrow" if m < 64 else "wide" if m < 1024 else "huge"
    return f"{length}-{width}"


def entry_key(family: str, variant: str, dtype: Any, cls: str) -> str:
    return f"{family}/{variant}/{np.dtype(dtype).name}/{cls}"


def crossover_key(family: str, dtype: Any) -> str:
    return f"{family}/{np.dtype(dtype).name}"


_identities: Memo[tuple[str, str]] = Memo("device identities")  # by device handle


def device_identity(device: Device) -> str:
    """Platform, device name and driver version: a new driver gets a fresh tuning."""
    return _identity(device)[0]


def _identity(device: Device) -> tuple[str, str]:
    # dispatch asks for every call, so the driver query and the hash are done once per device
    def build() -> tuple[str, str]:
        try:
            driver = device.cl_device.driver_version.strip()
        except cl.Error:
            driver = "?"
        ident = f"{device.info.platform} | {device.info.name} | {driver}"
        slug = re.sub(r"[^A-Za-z0-9]+", "-", device.info.name).strip("-")[:40]
        digest = hashlib.sha1(ident.encode()).hexdigest()[:10]
        return ident, f"tuning-{slug}-{digest}.json"
    key = device.cl_device.int_ptr
    return _identities.find(key) or _identities.get(key, build)


def store_path(device: Device) -> Path:
    """The JSON file holding ``device``'s tuning results."""
    return settings.cache_dir() / _identity(device)[1]


def _valid_params(value: Any) -> bool:
    return (isinstance(value, dict) and all(isinstance(k, str) for k in value)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()))


def _valid_crossover(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    size = value.get("size")
    return size == "never" or (isinstance(size, (int, float)) and not isinstance(size, bool)
                               and math.isfinite(size) and size >= 0)


class TuningStore:
    """One device's tuning results: ``entries`` (parameters dispatch uses), ``searched`` (every
    search, kept or not, with its timings) and ``crossover`` (host/OpenCL crossovers)."""

    def __init__(self, path: Path, device: str = ""):
        self.path = path
        self.device = device
        self.entries: dict[str, dict[str, Any]] = {}
        self.searched: dict[str, dict[str, Any]] = {}
        self.crossover: dict[str, dict[str, Any]] = {}
        self.measured: dict[str, dict[str, Any]] = {}

    @classmethod
    def load(cls, path: Path) -> "TuningStore":
        """The store in ``path``; an empty one (with a warning) when the file is unusable."""
        store = cls(path)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return store
        except OSError as exc:
            warnings.warn(f"cannot read the tuning file {path} ({exc}); using the defaults",
                          RuntimeWarning, stacklevel=2)
            return store
        try:
            data = json.loads(text)
        except ValueError as exc:
            warnings.warn(f"the tuning file {path} is damaged ({exc}); using the defaults "
                          "(`python -m clarray_gemm tune` rebuilds it)", RuntimeWarning,
                          stacklevel=2)
            return store
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            warnings.warn(f"the tuning file {path} is not of format {FORMAT}; using the "
                          "defaults (`python -m clarray_gemm tune` rebuilds it)",
                          RuntimeWarning, stacklevel=2)
            return store
        store.device = data.get("device", "") if isinstance(data.get("device"), str) else ""
        store.entries = _sections(data, "entries", lambda e: _valid_params(e.get("params")), path)
        store.searched = _sections(data, "searched", lambda e: True, path)
        store.crossover = _sections(data, "crossover", _valid_crossover, path)
        store.measured = _sections(
            data, "measured", lambda e: measured_choices.valid_points(e.get("points")), path)
        return store

    def save(self) -> None:
        """Write the file atomically (a temporary file in the same folder, then ``os.replace``)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"format": FORMAT, "device": self.device, "entries": self.entries,
                           "searched": self.searched, "crossover": self.crossover,
                           "measured": self.measured},
                          indent=1, sort_keys=True)
        # a name of this process and thread: concurrent writers never share a temporary file
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(text)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def params(self, key: str) -> dict[str, int] | None:
        entry = self.entries.get(key)
        return dict(entry["params"]) if entry else None

    def crossover_size(self, key: str) -> float | None:
        entry = self.crossover.get(key)
        if entry is None:
            return None
        return math.inf if entry["size"] == "never" else float(entry["size"])


def _sections(data: dict, name: str, valid: Callable[[dict], bool], path: Path
              ) -> dict[str, dict[str, Any]]:
    """The entries of one section that are well formed; the others are dropped with a warning."""
    section = data.get(name, {})
    if not isinstance(section, dict):
        warnings.warn(f"the tuning file {path} has a malformed {name!r} section; ignored",
                      RuntimeWarning, stacklevel=3)
        return {}
    good = {k: v for k, v in section.items()
            if isinstance(k, str) and isinstance(v, dict) and valid(v)}
    if len(good) != len(section):
        bad = sorted(str(k) for k in section if k not in good)
        warnings.warn(f"the tuning file {path} has malformed {name} entries, ignored: "
                      + ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""),
                      RuntimeWarning, stacklevel=3)
    return good


_loaded: dict[Path, tuple[float, float, TuningStore]] = {}
RECHECK_S = 1.0
"""How often dispatch looks at the file for another process's tuning (a stat per variant and
call cost ~0.1 ms per operation; this process's own tuning updates the cached store directly)."""


def store_for(device: Device) -> TuningStore:
    """``device``'s store, re-read when the file changed (another process may have tuned)."""
    path = store_path(device)
    now = time.monotonic()
    cached = _loaded.get(path)
    if cached is not None and now - cached[0] < RECHECK_S:
        return cached[2]
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0
    if cached is None or cached[1] != mtime:
        store = TuningStore.load(path) if mtime >= 0 else TuningStore(path)
        store.device = store.device or device_identity(device)
    else:
        store = cached[2]
    _loaded[path] = (now, mtime, store)
    return store


def forget(path: Path) -> None:
    """Drop the cached copy of ``path``: the next :func:`store_for` reads the file again."""
    _loaded.pop(path, None)


def reset(device: Device | None = None) -> list[Path]:
    """Delete the stored tuning of ``device`` (all devices when None); returns the files removed."""
    if device is not None:
        paths: Iterable[Path] = [store_path(device)]
    else:
        paths = sorted(settings.cache_dir().glob("tuning-*.json"))
    removed = []
    for p in paths:
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
        except OSError as exc:
            warnings.warn(f"cannot remove the tuning file {p} ({exc})", RuntimeWarning,
                          stacklevel=2)
        forget(p)
    return removed


def measured_points(device: Device, key: str) -> tuple[list, str] | None:
    """The points ``tune --choices`` measured for ``key`` ("matmul/float32") on ``device``, with
    where they come from, or None."""
    store = store_for(device)
    entry = store.measured.get(key)
    if entry is None:
        return None
    return entry["points"], f"measured on this device by tune, {entry.get('date', '?')}"


def crossover(device: Device, family: str, dtype: Any) -> float | None:
    """The problem size above which ``family``'s OpenCL kernel beats NumPy on the host mapping
    of ``device`` for ``dtype`` (units: :data:`CROSSOVER_FAMILIES`); ``math.inf`` when it never
    did in the measured range, None when not measured (``python -m clarray_gemm tune``)."""
    return store_for(device).crossover_size(crossover_key(family, dtype))


def tuned_params_hook(catalogue: Catalogue, classify: Callable[[Any], str]
                      ) -> Callable[[Device, Variant, Any], dict | None]:
    """The ``Catalogue.tuned_params`` function of a catalogue: the stored parameters for
    (device, variant, dtype, ``classify(problem)``), or None when none are stored or they do
    not fit this problem."""
    family = catalogue.family

    def lookup(device: Device, variant: Variant, problem: Any) -> dict | None:
        if not variant.tunable:
            return None
        key = entry_key(family, variant.name, problem.dtype, classify(problem))
        stored = store_for(device).params(key)
        params = {k: v for k, v in (stored or {}).items() if k in variant.defaults}
        if not params:
            return None
        if variant.fits(problem, device.info, {**variant.defaults, **params}):
            return None
        return params
    return lookup


CLASSIFIERS: dict[str, Callable[[Any], str]] = {
    "matmul": lambda p: size_class(p.M, p.N, p.K),
    "convolve": lambda p: conv_size_class(p.n, p.m),
}
"""How each tunable family's problems map to the size classes of its store entries."""


def install(catalogues: Iterable[Catalogue]) -> None:
    """Make dispatch of ``catalogues`` use the stored parameters (``kernels/__init__`` calls it)."""
    for catalogue in catalogues:
        catalogue.tuned_params = tuned_params_hook(catalogue, CLASSIFIERS[catalogue.family])
    host_path_crossovers.set_tuned_lookup(crossover)
    measured_choices.set_store_lookup(measured_points)
