"""``clarray_gemm.random``: random numbers drawn on the device, after ``numpy.random``.

    >>> import clarray_gemm
    >>> rng = clarray_gemm.random.default_rng(42)
    >>> x = rng.standard_normal((1000, 1000), dtype="float32")   # a device array

The generator is Philox4x32-10 (counter-based, as CuPy's and JAX's): a seed gives the same
numbers on every device, but not NumPy's PCG64 numbers for that seed. See
:mod:`clarray_gemm.ops.random`.
"""
from __future__ import annotations

from .ops.random import Generator, default_rng, philox4x32_10

__all__ = ["Generator", "default_rng", "philox4x32_10"]
