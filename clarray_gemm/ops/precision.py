"""The precision of float32 matrix products: ``"highest"`` (float32 arithmetic, the default) or
``"tf32"`` (opt-in: inputs rounded to TF32 and multiplied on NVIDIA tensor cores, float32
accumulation), like torch's ``allow_tf32``.

    >>> clarray_gemm.set_precision("tf32")          # for the rest of the program
    >>> with clarray_gemm.precision("tf32"):        # for a block (thread- and task-local)
    ...     c = a @ b
    >>> clarray_gemm.matmul(a, b, precision="tf32")  # for one call

The starting value comes from ``CLARRAY_GEMM_MATMUL_PRECISION`` (read once by ``settings``).
Where the device has no tensor cores, "tf32" runs the float32 kernels: it permits lower
precision, it never demands it. float16 and bfloat16 products are not affected.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

from .. import settings

__all__ = ["set_precision", "get_precision", "precision", "resolve_precision", "TF32_BOUND"]

TF32_BOUND = ("|C_tf32 - A@B| <= (2u + u^2 + K*2^-24/(1 - K*2^-24)) * (|A|@|B|) elementwise, "
              "u = 2^-11 (each input rounded to 10 mantissa bits, nearest, ties away; products "
              "and sums in float32)")
"""The documented error bound of a TF32 product (the classic dot-product bound with the two
input roundings of unit roundoff 2^-11 added)."""

_global = settings.matmul_precision()
_local: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "clarray_gemm_precision", default=None)


def _checked(value: str) -> str:
    if not isinstance(value, str) or value.lower() not in settings.PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, settings.PRECISIONS))}, "
                         f"not {value!r}")
    return value.lower()


def set_precision(value: str) -> None:
    """Set the float32 matmul precision for the program: ``"highest"`` or ``"tf32"``."""
    global _global
    _global = _checked(value)


def get_precision() -> str:
    """The float32 matmul precision in force here (a ``precision`` block's, else the global)."""
    return _local.get() or _global


@contextlib.contextmanager
def precision(value: str) -> Iterator[str]:
    """Use ``value`` as the float32 matmul precision inside a ``with`` block."""
    token = _local.set(_checked(value))
    try:
        yield value
    finally:
        _local.reset(token)


def resolve_precision(value: str | None) -> str:
    """A call's ``precision=`` argument, or the precision in force when it is None."""
    return get_precision() if value is None else _checked(value)
