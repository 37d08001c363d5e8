"""The Array API standard namespace of device arrays: what ``x.__array_namespace__()`` returns.

    >>> import array_api_compat, clarray_gemm
    >>> x = clarray_gemm.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> xp = array_api_compat.array_namespace(x)        # this module
    >>> xp.vecdot(x, x)                                   # an OpenCL GEMM kernel

Three kinds of functions, one rule for devices (the ``device=`` argument, else the device of the
array arguments, else the current device):

- **Creation** (``asarray``, ``empty``, ``zeros``, ``ones``, ``full``, the ``*_like`` functions,
  ``astype``, ``from_dlpack``) and **views** (``reshape``, ``permute_dims``, ``expand_dims``,
  ``squeeze``, ``moveaxis``, ``broadcast_to``, ``matrix_transpose``) work on device buffers.
- **Accelerated**: ``matmul``, ``tensordot``, ``vecdot`` (and their ``linalg`` aliases) run the
  GEMM kernels of :mod:`clarray_gemm.ops.matmul` on reshaped and transposed device views.
- **Everything else** the standard defines is ``array_api_compat.numpy``'s function run on
  read-only host views of the arguments (a mapping, not a copy, on unified memory); array results
  come back as device arrays. One generic wrapper (:func:`_host_function`) does this for every name.

NumPy arrays are accepted wherever an array is: they go to the device of the other operands.
``array_api_compat.array_namespace`` itself refuses a mix of device and NumPy arrays (it raises
``TypeError: Multiple namespaces``); call it with the device arrays only, or convert with
``xp.asarray`` first.
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import sys
import types
from typing import Any, Callable, NamedTuple, Sequence

import array_api_compat.numpy as _compat
import numpy as np

from . import _dispatch, array as _array
from .array import DeviceArray
from .device import Device, current_device, devices as _usable_devices, get_device
from .ops import einsum as _einsum, matmul as _mm, padding as _padding

# The version of the array_api_compat.numpy that the host functions come from (2025.12 for
# array-api-compat 1.16; the functions of this module conform to 2023.12 and later).
__array_api_version__: str = _compat.__array_api_version__
_VERSIONS = tuple(v for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
                  if v <= __array_api_version__)
_V2025 = __array_api_version__ >= "2025.12"

# The standard's names (2024.12, then what 2025.12 added), by how this module provides them.
_OBJECTS = """bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64
    complex128 e inf nan newaxis pi""".split()
_DTYPE_FUNCTIONS = "can_cast iinfo isdtype result_type".split() + (
    ["broadcast_shapes"] if _V2025 else [])
_HOST_FUNCTIONS = """arange eye linspace meshgrid tril triu
    abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert
    bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp
    expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf isnan less less_equal
    log log1p log2 log10 logaddexp logical_and logical_not logical_or logical_xor maximum minimum
    multiply negative nextafter not_equal positive pow real reciprocal remainder round sign
    signbit sin sinh square sqrt subtract tan tanh trunc
    take take_along_axis
    broadcast_arrays concat flip repeat roll stack tile unstack
    argmax argmin count_nonzero nonzero searchsorted where
    unique_all unique_counts unique_inverse unique_values
    argsort sort
    cumulative_sum cumulative_prod max mean min prod std sum var
    all any diff""".split() + (["isin"] if _V2025 else [])
_OWN_FUNCTIONS = """asarray empty empty_like from_dlpack full full_like ones ones_like zeros
    zeros_like astype finfo matmul matrix_transpose tensordot vecdot reshape permute_dims
    expand_dims squeeze moveaxis broadcast_to __array_namespace_info__""".split()
# Beyond the standard, for libraries that look them up in the namespace (xarray's dot and shift).
_EXTRA_FUNCTIONS = ["einsum", "pad", "transpose"]
_LINALG_HOST = """cholesky cross det diagonal eigh eigvalsh inv matrix_norm matrix_power
    matrix_rank outer pinv qr slogdet solve svd svdvals trace vector_norm""".split() + (
    ["eig", "eigvals"] if _V2025 else [])
_LINALG_OWN = "matmul matrix_transpose tensordot vecdot".split()
_FFT_HOST = """fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift
    ifftshift""".split()
# array-api-compat 1.16's clip assigns into array bounds: it gets copies, not read-only views.
_WRITES_ITS_ARGUMENTS = {"clip"}


def namespace(api_version: str | None = None) -> types.ModuleType:
    """This module, for ``DeviceArray.__array_namespace__``; ``api_version`` may name any
    released version up to :data:`__array_api_version__` (else ``ValueError``)."""
    if api_version is not None and api_version not in _VERSIONS:
        raise ValueError(f"unsupported Array API version {api_version!r}; "
                         f"supported: {', '.join(_VERSIONS)}")
    return sys.modules[__name__]


_dispatch.register_namespace(namespace)


# -- devices and the host round trip ----------------------------------------------------------
def _arrays_in(obj: Any):
    if isinstance(obj, DeviceArray):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _arrays_in(o)


def _result_device(args: Sequence[Any], device: Any = None) -> Device:
    """``device`` if given, else the one device of the array arguments, else the current one."""
    if device is not None:
        return get_device(device)
    found = {a.device for a in _arrays_in(args)}
    if len(found) > 1:
        raise ValueError("arrays are on different devices: " + ", ".join(map(str, found)))
    return found.pop() if found else current_device()


def _to_device(obj: Any, device: Device) -> Any:
    if isinstance(obj, (np.ndarray, np.generic)):
        return _array.asarray(obj, device=device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # named results: eigh, svd, unique_*
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    return obj


def _host_function(func: Callable[..., Any], wrap_result: builtins.bool = True
                   ) -> Callable[..., Any]:
    """``func`` (an ``array_api_compat.numpy`` function) on host views of device arrays, with
    array results put on the ``device=`` argument's device or the arguments' device."""
    writable = func.__name__ in _WRITES_ITS_ARGUMENTS

    @functools.wraps(func)
    def on_host(*args, **kwargs):
        device = _result_device((args, tuple(kwargs.values())), kwargs.pop("device", None))
        result = func(*_array.to_host(args, writable),
                      **{k: _array.to_host(v, writable) for k, v in kwargs.items()})
        return _to_device(result, device) if wrap_result else result
    return on_host


def _device_array(x: Any, device: Device | None = None) -> DeviceArray:
    return x if isinstance(x, DeviceArray) else _array.asarray(x, device=device)


def _on_one_device(x1: Any, x2: Any) -> tuple[DeviceArray, DeviceArray]:
    device = _result_device((x1, x2))
    return _device_array(x1, device), _device_array(x2, device)


# -- creation ---------------------------------------------------------------------------------
def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: builtins.bool | None = None) -> DeviceArray:
    """A device array from an array, a (nested) sequence, a scalar or a buffer; ``copy=False``
    raises ``ValueError`` when the data is not already a device array on ``device``."""
    return _array.asarray(obj, dtype=dtype, device=device, copy=copy)


def empty(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """An uninitialised device array (default dtype float64)."""
    return _array.empty(shape, np.float64 if dtype is None else dtype, device)


def zeros(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """A device array of zeros (default dtype float64)."""
    return _array.zeros(shape, np.float64 if dtype is None else dtype, device)


def ones(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """A device array of ones (default dtype float64)."""
    return _array.ones(shape, np.float64 if dtype is None else dtype, device)


def full(shape: int | tuple[int, ...], fill_value: builtins.bool | int | float | complex, *,
         dtype: Any = None, device: Any = None) -> DeviceArray:
    """A device array of ``fill_value``; without ``dtype`` the default dtype of its Python type."""
    return _array.full(shape, fill_value, dtype, device)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """An uninitialised device array with the shape (and by default dtype and device) of ``x``."""
    return _array.empty_like(x, dtype, None, device)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """Zeros with the shape (and by default dtype and device) of ``x``."""
    return _array.zeros_like(x, dtype, None, device)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> DeviceArray:
    """Ones with the shape (and by default dtype and device) of ``x``."""
    return _array.ones_like(x, dtype, None, device)


def full_like(x: Any, /, fill_value: builtins.bool | int | float | complex, *, dtype: Any = None,
              device: Any = None) -> DeviceArray:
    """``fill_value`` with the shape (and by default dtype and device) of ``x``."""
    return _array.full_like(x, fill_value, dtype, None, device)


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None
                ) -> DeviceArray:
    """A device array from a DLPack producer: CPU producers (NumPy, PyTorch on the CPU) are
    copied once into a device buffer (``copy=False``: ``BufferError``); device arrays are
    returned, moved or copied as ``device`` and ``copy`` ask."""
    from .interop.dlpack import from_dlpack as _from_dlpack
    return _from_dlpack(x, device=device, copy=copy)


def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None
           ) -> DeviceArray:
    """``x`` cast to ``dtype`` on the device (``copy=False`` returns ``x`` when nothing changes)."""
    x = _device_array(x, None if device is None else get_device(device))
    if device is not None:
        x = x.to_device(device)
    return x.astype(dtype, copy=copy)


class FloatInfo(NamedTuple):
    """Machine limits of a floating-point dtype, as Python floats (NumPy's are NumPy scalars)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


def finfo(type: Any, /) -> FloatInfo:
    """Machine limits of a floating-point dtype (or an array's dtype); complex dtypes give those
    of their real components."""
    f = np.finfo(type.dtype if isinstance(type, (DeviceArray, np.ndarray)) else type)
    return FloatInfo(int(f.bits), float(f.eps), float(f.max), float(f.min),
                     float(f.smallest_normal), f.dtype)


# -- views ------------------------------------------------------------------------------------
def _view(x: Any, geometry: Callable[[np.ndarray], np.ndarray]) -> DeviceArray:
    return _device_array(x).geometry_view(geometry)


def reshape(x: Any, /, shape: tuple[int, ...], *, copy: builtins.bool | None = None
            ) -> DeviceArray:
    """A view with a new shape, or a device copy when no view can have it (``copy=False``:
    ``ValueError`` then)."""
    return _device_array(x).reshape(shape, copy=copy)


def permute_dims(x: Any, /, axes: tuple[int, ...]) -> DeviceArray:
    """A view with the axes permuted."""
    return _view(x, lambda t: np.permute_dims(t, axes))


def expand_dims(x: Any, /, axis: int | tuple[int, ...] = 0) -> DeviceArray:
    """A view with a new axis of length one at ``axis``."""
    return _view(x, lambda t: np.expand_dims(t, axis))


def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> DeviceArray:
    """A view without the given length-one axes."""
    return _view(x, lambda t: np.squeeze(t, axis))


def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...], /
             ) -> DeviceArray:
    """A view with axes moved from ``source`` to ``destination``."""
    return _view(x, lambda t: np.moveaxis(t, source, destination))


def broadcast_to(x: Any, /, shape: tuple[int, ...]) -> DeviceArray:
    """A (zero-stride) view of ``x`` broadcast to ``shape``."""
    return _view(x, lambda t: np.broadcast_to(t, shape))


def matrix_transpose(x: Any, /) -> DeviceArray:
    """The transpose of the last two axes, as a view (``ValueError`` below two dimensions)."""
    return _device_array(x).mT


# -- products on the GEMM kernels -------------------------------------------------------------
def matmul(x1: Any, x2: Any, /) -> DeviceArray:
    """The matrix product, one batched GEMM launch (:func:`clarray_gemm.matmul`)."""
    return _mm.matmul(*_on_one_device(x1, x2))


def _normalized_axes(axes: Sequence[int], ndim: int, which: str) -> list[int]:
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"tensordot: axis {a} is out of bounds for {which} of rank {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"tensordot: repeated axis in {which}'s axes {tuple(axes)}")
    return out


def tensordot(x1: Any, x2: Any, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> DeviceArray:
    """Contraction over ``axes`` as one GEMM: the free axes of ``x1`` become rows, its contracted
    axes columns, and ``x2`` the other way round (views; a device copy where no view fits)."""
    a, b = _on_one_device(x1, x2)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} needs 0 <= axes <= min(x1.ndim, x2.ndim)")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            seq_a, seq_b = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an int or a pair of sequences") from None
        if len(seq_a) != len(seq_b):
            raise ValueError("tensordot: the two sequences of axes differ in length")
        ax_a = _normalized_axes(seq_a, a.ndim, "x1")
        ax_b = _normalized_axes(seq_b, b.ndim, "x2")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: contracted axes differ in size: x1 axis {i} has "
                             f"{a.shape[i]}, x2 axis {j} has {b.shape[j]}")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    shape_a = tuple(a.shape[i] for i in free_a)
    shape_b = tuple(b.shape[j] for j in free_b)
    k = math.prod(a.shape[i] for i in ax_a)
    a2 = a.transpose(free_a + ax_a).reshape(math.prod(shape_a), k)
    b2 = b.transpose(ax_b + free_b).reshape(k, math.prod(shape_b))
    return _mm.matmul(a2, b2).reshape(shape_a + shape_b)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> DeviceArray:
    """Dot products of the vectors along ``axis`` (``x1`` conjugated), broadcasting the other
    axes, in one GEMM launch: a matrix-vector product when one operand is a single vector, else a
    batch of (1, n) @ (n, 1) products."""
    a, b = _on_one_device(x1, x2)
    n = builtins.min(a.ndim, b.ndim)
    axis = operator.index(axis)
    if axis >= 0:
        axis -= builtins.max(a.ndim, b.ndim)
    if not -n <= axis <= -1:
        raise ValueError(f"vecdot: axis {axis} is out of bounds for arrays of rank "
                         f"{a.ndim} and {b.ndim}")
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: the vectors differ in length ({a.shape[axis]} and "
                         f"{b.shape[axis]})")
    if a.dtype.kind == "c":
        a = np.conj(a)
    if b.ndim == 1:
        return _mm.matmul(moveaxis(a, axis, -1), b)
    if a.ndim == 1:
        return _mm.matmul(moveaxis(b, axis, -1), a)
    rows = moveaxis(a, axis, -1)[..., None, :]
    cols = moveaxis(b, axis, -1)[..., :, None]
    return _mm.matmul(rows, cols)[..., 0, 0]


def einsum(subscripts: str, /, *operands: Any, **kwargs: Any) -> DeviceArray:
    """NumPy's ``einsum`` (not in the standard; xarray's ``dot`` calls it): operand pairs
    contract in one batched GEMM each, other forms run on the host."""
    return _einsum.einsum(subscripts, *operands, **kwargs)


def pad(x: Any, /, pad_width: Any, mode: str = "constant", **kwargs: Any) -> DeviceArray:
    """NumPy's ``pad`` (not in the standard; xarray's ``shift`` and ``rolling`` call it): a
    constant border is filled on the device, other modes run on the host."""
    return _padding.pad(x, pad_width, mode, **kwargs)


def transpose(x: Any, /, axes: tuple[int, ...] | None = None) -> DeviceArray:
    """NumPy's ``transpose`` as a view (not in the standard; xarray's ``transpose`` calls it)."""
    return _device_array(x).transpose(axes)


def sliding_window_view(x: Any, window_shape: int | tuple[int, ...],
                        axis: int | tuple[int, ...] | None = None, *, subok: builtins.bool = False,
                        writeable: builtins.bool = False) -> DeviceArray:
    """NumPy's ``lib.stride_tricks.sliding_window_view`` as a device view (no copy); xarray's
    ``rolling`` finds it as ``xp.lib.stride_tricks.sliding_window_view``."""
    return _view(x, lambda t: np.lib.stride_tricks.sliding_window_view(t, window_shape, axis))


lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
    sliding_window_view=sliding_window_view))


# -- inspection -------------------------------------------------------------------------------
class _Info:
    """The inspection namespace returned by :func:`__array_namespace_info__`."""

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work (on the host); NumPy's 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        """The device arrays are created on without ``device=`` (see ``use_device``)."""
        return current_device()

    def devices(self) -> tuple[Device, ...] | list[Device]:
        """The OpenCL devices whose compiler works (a list before version 2025.12)."""
        usable = _usable_devices()
        return tuple(usable) if _V2025 else usable

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        """NumPy's defaults, on every device (float64 without fp64 runs on the host)."""
        get_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
               ) -> dict[str, Any]:
        """The standard's dtypes of ``kind`` (every device holds every dtype)."""
        get_device(device)
        return _compat.__array_namespace_info__().dtypes(kind=kind)


def __array_namespace_info__() -> _Info:
    """The Array API inspection namespace (devices, default dtypes, capabilities)."""
    return _Info()


# -- assembly ---------------------------------------------------------------------------------
def _extension(name: str, doc: str, host: Sequence[str], own: Sequence[str]) -> types.ModuleType:
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    source = getattr(_compat, name)
    for fname in host:
        setattr(mod, fname, _host_function(getattr(source, fname)))
    for fname in own:
        setattr(mod, fname, globals()[fname])
    mod.__all__ = sorted([*host, *own])
    return mod


for _name in _OBJECTS:
    globals()[_name] = getattr(_compat, _name)
for _name in _DTYPE_FUNCTIONS:
    globals()[_name] = _host_function(getattr(_compat, _name), wrap_result=False)
for _name in _HOST_FUNCTIONS:
    globals()[_name] = _host_function(getattr(_compat, _name))
del _name

linalg = _extension("linalg", "The standard's linalg extension on device arrays.",
                    _LINALG_HOST, _LINALG_OWN)
fft = _extension("fft", "The standard's fft extension on device arrays (through the host).",
                 _FFT_HOST, ())

__all__ = sorted([*_OBJECTS, *_DTYPE_FUNCTIONS, *_HOST_FUNCTIONS, *_OWN_FUNCTIONS, *_EXTRA_FUNCTIONS,
                  "linalg", "fft", "__array_api_version__"])
