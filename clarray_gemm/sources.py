"""The OpenCL C sources: the ``.cl`` and ``.h`` files of the top-level ``opencl/`` folder.

An installed wheel carries them as the ``clarray_gemm.opencl`` package; a source checkout reads the
folder directly. ``#include "file"`` lines are replaced by that file's text, so no include path is
needed. The bottom layer: the kernels build from it, the driver probe hashes it.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["source_text", "source_names"]

_CHECKOUT_DIR = Path(__file__).resolve().parents[1] / "opencl"
_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.MULTILINE)


@lru_cache(maxsize=None)
def source_text(name: str) -> str:
    """The text of ``opencl/<name>`` with its ``#include`` lines expanded."""
    try:
        text = resources.files("clarray_gemm.opencl").joinpath(name).read_text()
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        text = (_CHECKOUT_DIR / name).read_text()
    return _INCLUDE.sub(lambda m: source_text(m.group(1)), text)


def source_names(suffix: str = ".cl") -> list[str]:
    """The names of the sources ending in ``suffix``, sorted."""
    try:
        return sorted(p.name for p in resources.files("clarray_gemm.opencl").iterdir()
                      if p.name.endswith(suffix))
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return sorted(p.name for p in _CHECKOUT_DIR.glob("*" + suffix))
