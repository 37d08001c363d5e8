"""Integration with the libraries users pair with NumPy, registered lazily.

``import clarray_gemm`` imports none of them. It registers pickling of device arrays (their
elements travel as NumPy's out-of-band buffers, see :mod:`.pickling`) and their DLPack export
(:mod:`.dlpack`, which the array reaches through ``_dispatch``), and installs post-import
hooks: when dask (``dask.sizeof``, ``dask.tokenize``, ``dask.array``) or dask.distributed
(``distributed.protocol``) finishes importing, :mod:`clarray_gemm.interop.dask` registers device
arrays with it; a library that is already imported is registered at once.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import threading
import warnings
from typing import Callable

from . import pickling  # noqa: F401  (registers the pickle reducer)
from . import dlpack  # noqa: F401  (registers DLPack export with the array)

__all__ = ["when_imported"]

_hooks: dict[str, list[Callable[[], None]]] = {}
_lock = threading.RLock()


def when_imported(module: str, hook: Callable[[], None]) -> None:
    """Run ``hook()`` once ``module`` is imported: now if it already is, else right after the
    module's code has run (a failing hook warns instead of breaking the user's import)."""
    with _lock:
        if module not in sys.modules:
            _hooks.setdefault(module, []).append(hook)
            if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
                sys.meta_path.insert(0, _PostImportFinder())
            return
    _run(module, hook)


def _run(module: str, hook: Callable[[], None]) -> None:
    try:
        hook()
    except Exception as exc:  # an incompatible library version must not break its import
        warnings.warn(f"clarray_gemm: could not register with {module}: {exc!r}",
                      RuntimeWarning, stacklevel=2)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a watched module it asks the other finders and wraps the
    loader so the hooks run after the module's code."""

    def __init__(self) -> None:
        self._resolving: set[str] = set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in _hooks or fullname in self._resolving:
            return None
        self._resolving.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._resolving.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _HookedLoader(spec.loader, fullname)
        return spec


class _HookedLoader(importlib.abc.Loader):
    """A loader that delegates everything and runs the module's hooks after ``exec_module``."""

    def __init__(self, loader, fullname: str):
        self._loader, self._fullname = loader, fullname

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        with _lock:
            hooks = _hooks.pop(self._fullname, [])
        for hook in hooks:
            _run(self._fullname, hook)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _register_dask(part: str) -> Callable[[], None]:
    def hook() -> None:
        from . import dask as _dask
        getattr(_dask, f"register_{part}")()
    return hook


when_imported("dask.sizeof", _register_dask("sizeof"))
when_imported("dask.tokenize", _register_dask("tokenize"))
when_imported("dask.array", _register_dask("array"))
when_imported("distributed.protocol", _register_dask("serialization"))
