"""Every dtype rule in one place: OpenCL C types, the ``-D`` defines of a dtype, which dtype
kernels compute in for NumPy's result dtype, which dtypes kernels and copies take, and which no
device buffer can hold.

Device capabilities enter only through ``info`` (a :class:`~clarray_gemm.device.DeviceInfo`,
or anything with its ``fp64`` flag), so this module imports nothing of the package but
``_dispatch``'s ``NumPyDecides``.
"""
from __future__ import annotations

import functools

from typing import Any, Iterable

import numpy as np

from ._dispatch import NumPyDecides

__all__ = ["ctype", "dtype_defines", "KERNEL_DTYPES", "FLOATING", "WIDEN", "compute_dtype",
           "unsupported_dtype", "kernel_supports", "device_copy_supported", "part_dtype", "bfloat16_dtype",
           "storage_ctype",
           "mma_operand_dtype", "check_device_dtype", "numpy_only", "NARROW_INT_PRODUCTS",
           "PYTHON_SCALARS", "TYPED_SCALARS"]

_C_TYPES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.int8): "char", np.dtype(np.uint8): "uchar", np.dtype(np.bool_): "uchar",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort",
    np.dtype(np.int32): "int", np.dtype(np.uint32): "uint",
    np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong",
    np.dtype(np.float16): "half",
}

PYTHON_SCALARS = (bool, int, float)
"""Python numbers: "weak" scalars (NEP 50) whose value, not type, meets the array's dtype."""

TYPED_SCALARS = frozenset((*PYTHON_SCALARS, *(np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG")))
"""Scalar types whose type alone fixes what a ufunc computes with them: the Python numbers and
NumPy's numeric scalars (an elementwise plan may be keyed by the type, not the value)."""

KERNEL_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                                 np.uint32, np.uint64))
"""The dtypes the operation families compute in on the device (others are widened first)."""

FLOATING = (np.dtype(np.float32), np.dtype(np.float64))

HOST_TAPS_DTYPES = frozenset(np.dtype(t) for t in (
    np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64))
"""Result dtypes the convolution's ``host_taps`` passes compute as NumPy's direct loop does
(float16 is not among them: NumPy sums half floats in float32; complex products go through
NumPy's ``dot``)."""

# Results NumPy keeps narrow are computed exactly in 64 bits (integer overflow wraps modulo
# 2**64, so the low bits are NumPy's wrapped result; bool is "any nonzero") and float16 in
# float32, then cast back on the device.
WIDEN = {np.dtype(np.bool_): np.dtype(np.uint64), np.dtype(np.int8): np.dtype(np.int64),
         np.dtype(np.int16): np.dtype(np.int64), np.dtype(np.uint8): np.dtype(np.uint64),
         np.dtype(np.uint16): np.dtype(np.uint64), np.dtype(np.float16): np.dtype(np.float32)}

# Matrix products of 8- and 16-bit integers wrap modulo 2**8 or 2**16: their low bits are the same
# computed modulo 2**32 as modulo 2**64, and GPUs multiply 32-bit integers natively (64-bit ones
# take several instructions). ops/matmul.py computes them in these (gpu_blocked reads and writes
# them in their own dtype: kernels.gemm.GemmProblem.storage); other operations keep WIDEN.
NARROW_INT_PRODUCTS = {np.dtype(np.int8): np.dtype(np.int32),
                       np.dtype(np.int16): np.dtype(np.int32),
                       np.dtype(np.uint8): np.dtype(np.uint32),
                       np.dtype(np.uint16): np.dtype(np.uint32)}


# Kinds the device operations compute with (complex through their host paths); the rest is
# NumPy's alone: see numpy_only.
_DEVICE_OP_KINDS = frozenset("biufc")


def numpy_only(dtype: Any) -> bool:
    """True for a dtype no device operation computes with: strings, bytes, void (structured),
    Python objects, datetimes and timedeltas. An operation given such an operand hands the
    whole call to NumPy's own function, so the result or the exception is NumPy's (NumPy
    checks operand dtypes before shapes, and its messages name the dtypes). ml_dtypes'
    bfloat16 (a kind "V" dtype to NumPy) is a number: the tensor-core products take it."""
    dt = np.dtype(dtype)
    return dt.kind not in _DEVICE_OP_KINDS and dt != bfloat16_dtype()


def ctype(dtype: Any) -> str:
    """The OpenCL C scalar type with the same bytes as a native NumPy dtype."""
    try:
        return _C_TYPES[np.dtype(dtype).newbyteorder("=")]
    except KeyError:
        raise TypeError(f"no OpenCL type for dtype {np.dtype(dtype)}") from None


def storage_ctype(dtype: Any) -> str:
    """The OpenCL C type a kernel reads and writes ``dtype``'s elements as: :func:`ctype`'s,
    and float16 as its bits (``ushort``: ``opencl/half_bits.h`` converts them; no
    ``cl_khr_fp16`` needed)."""
    dt = np.dtype(dtype)
    return "ushort" if dt == np.float16 else ctype(dt)


def dtype_defines(dtype: Any, prefix: str = "") -> dict[str, object]:
    """``T`` (element type), ``ACC`` (accumulator: unsigned for integers, so that overflow wraps
    exactly as NumPy's does), ``IS_FP64`` and ``IS_INT`` for a native dtype."""
    dt = np.dtype(dtype)
    t = ctype(dt)
    acc = t
    if dt.kind in "iu":
        acc = "u" + t.lstrip("u") if not t.startswith("u") else t
    return {f"{prefix}T": t, f"{prefix}ACC": acc,
            f"{prefix}IS_FP64": int(dt == np.float64),
            f"{prefix}IS_INT": int(dt.kind in "iub")}


def compute_dtype(result: Any, info: Any) -> np.dtype | None:
    """The dtype kernels compute in for a ``result`` dtype on a device with ``info``, or None:
    only the host can."""
    compute = WIDEN.get(np.dtype(result), np.dtype(result))
    if compute not in KERNEL_DTYPES or (compute == np.float64 and not info.fp64):
        return None
    return compute


def _names(dtypes: Iterable[np.dtype]) -> str:
    names = [str(np.dtype(d)) for d in dtypes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def unsupported_dtype(dtype: Any, info: Any, *, only: Iterable[Any] | None = None,
                      min_itemsize: int = 1, why_only: str = "") -> str | None:
    """Why the arithmetic kernels (``T``/``ACC`` defines) cannot take ``dtype`` on a device with
    ``info``, or None when they can. ``only`` narrows it to the dtypes one kernel takes
    (``why_only`` appended to the reason), ``min_itemsize`` to elements of at least that many
    bytes."""
    dt = np.dtype(dtype)
    if dt == np.float64 and not info.fp64:
        return "the device has no fp64 (cl_khr_fp64)"
    if dt.kind not in "fiu" or dt == np.float16 or dt.itemsize < min_itemsize:
        return f"dtype {dt} has no kernel"
    if only is not None:
        allowed = tuple(np.dtype(d) for d in only)
        if dt not in allowed:
            return f"{_names(allowed)} only (not {dt}){why_only}"
    return None


def kernel_supports(dtype: Any, info: Any) -> bool:
    """True when the arithmetic kernels load and store ``dtype`` as it is (native byte order)."""
    dt = np.dtype(dtype)
    return dt.isnative and unsupported_dtype(dt, info) is None


_DEVICE_COPY_KINDS = "biuf"


@functools.lru_cache(maxsize=256)   # a pure rule on dtypes, asked on every slice assignment
def part_dtype(dtype: Any) -> np.dtype:
    """The real dtype of a complex dtype's real and imaginary parts (``z.real.dtype``):
    float32 for complex64, float64 for complex128."""
    return np.empty(0, np.dtype(dtype)).real.dtype


def device_copy_supported(src: Any, dst: Any) -> bool:
    """True when the copy kernel (``opencl/copy.cl``) casts ``src`` to ``dst``: native
    bool/int/uint/float16/float32/float64 (float16 held as its bits), and a complex dtype to
    itself (copied as its bits)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst and src.kind == "c" and src.isnative and src.itemsize <= 16:
        return True
    for dt in (src, dst):
        if dt.kind not in _DEVICE_COPY_KINDS or not dt.isnative or dt.itemsize > 8:
            return False
    return True


@functools.lru_cache(maxsize=1)
def bfloat16_dtype() -> np.dtype | None:
    """NumPy's bfloat16 (from the optional ``ml_dtypes`` package), or None without it."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def mma_operand_dtype(a: Any, b: Any, result: Any) -> np.dtype | None:
    """The operand dtype of a product the tensor-core kernel can take as it is, or None:
    float16 @ float16 -> float16 and bfloat16 @ bfloat16 -> float32 (NumPy's result types)."""
    a, b, result = np.dtype(a), np.dtype(b), np.dtype(result)
    if a != b:
        return None
    if a == np.float16 and result == np.float16:
        return a
    bf16 = bfloat16_dtype()
    if bf16 is not None and a == bf16 and result == np.float32:
        return a
    return None


def check_device_dtype(dtype: Any, context: str = "") -> None:
    """Raise NumPy's ``TypeError`` for a dtype no device buffer can hold (Python objects): a
    :class:`~clarray_gemm._dispatch.NumPyDecides`, so that dispatch hands the call to NumPy."""
    if np.dtype(dtype).hasobject:
        raise NumPyDecides(f"{context}{'' if not context else ': '}dtype {np.dtype(dtype)} holds "
                           "Python objects, which an OpenCL device cannot store; use a numeric, "
                           "bool, string or bytes dtype")
