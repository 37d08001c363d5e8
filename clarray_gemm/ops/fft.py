"""``np.fft`` on device arrays (``opencl/fft.cl``): every 1-D transform of the rows along one axis
at once, the n-D ones as 1-D transforms axis by axis, in NumPy's order.

A length whose prime factors are 2, 3, 5 and 7 runs a Stockham FFT (radix 8, 4, 2, 3, 5, 7
passes); any other length Bluestein's chirp-z algorithm on the power of two >= 2n - 1, its chirp
and the chirp's transform computed once per length in float64 on the host. Results have NumPy
2's dtypes (float32 and complex64 in, complex64 out; float64, integers and complex128 in,
complex128 out), its norms and its ``n`` (zero-padding or truncating each row). Rows along
another axis than the last are read with their strides (copied out first where the other axes
do not merge into one stride); the result comes back as a view with the axis in its place.
Rows that fit the local memory take one launch, longer ones the four-step FFT (two), lengths
that split into no such factors one launch a pass (see :func:`_transform`).

Where it runs: on devices without a host path (discrete GPUs); elsewhere NumPy's pocketfft on
the mapping (a device result). ``out=``, and complex128 on a device without doubles, take
NumPy's function on the host.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, empty, host_function
from ..array.geometry import c_strides
from ..memory import Storage
from ..device import Device
from ..dtypes import part_dtype
from ..kernels.crossover import has_host_path
from ..kernels.plans import PlanCache
from ..kernels.constants import constant
from ..kernels.programs import get_kernel
from ..memo import Memo

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
           "irfftn", "fft2", "ifft2", "rfft2", "irfft2", "fftshift", "ifftshift"]

SOURCE = "fft.cl"
_LOCAL = 64
_STOCKHAM_RADICES = (8, 4, 2, 3, 5, 7)


_SMOOTH: Memo[bool] = Memo("fft smooth lengths", capacity=4096)


def _is_smooth(n: int) -> bool:
    """Whether n's prime factors are 2, 3, 5 and 7 (remembered per length)."""
    found = _SMOOTH.find(n)
    return found if found is not None else _SMOOTH.get(
        n, lambda: stockham_radices(n) is not None)


def stockham_radices(n: int) -> list[int] | None:
    """The passes' radices for a transform of length ``n`` (8s first, then 4, 2, 3, 5, 7), or
    None where ``n`` has another prime factor (Bluestein's algorithm then)."""
    radices = []
    for r in _STOCKHAM_RADICES:
        while n % r == 0:
            radices.append(r)
            n //= r
    return radices if n == 1 else None


@dataclass(frozen=True)
class _Stockham:
    """A Stockham transform of length ``n``: its passes (radix, span, offset of its twiddles in
    ``table``)."""
    n: int
    passes: tuple
    table: DeviceArray


@dataclass(frozen=True)
class _Bluestein:
    """Bluestein's algorithm for length ``n`` and one direction: the inner power-of-two
    transform, the chirp (n values) and the chirp's scaled transform (``inner.n`` values)."""
    n: int
    inner: _Stockham
    chirp: DeviceArray
    kernel: DeviceArray


_PLANS: PlanCache[Any] = PlanCache("fft")


def _defines(real: np.dtype, **extra: Any) -> dict:
    return {"T": "double" if real == np.float64 else "float",
            "IS_FP64": int(real == np.float64), **extra}


def _grid(device: Device, count: int, rows: int) -> tuple:
    return ((-(-count // _LOCAL) * _LOCAL, rows), (_LOCAL, 1))


def _stockham(device: Device, n: int, real: np.dtype) -> _Stockham:
    key = ("stockham", device, n, real)
    found = _PLANS.find(key)
    return found if found is not None else _PLANS.get(key, lambda: _new_stockham(device, n, real))


def _new_stockham(device: Device, n: int, real: np.dtype) -> _Stockham:
    radices = stockham_radices(n)
    passes, span, offset = [], 1, 0
    for r in radices:
        passes.append((r, span, offset))
        offset += r * span
        span *= r
    complex_dtype = np.result_type(real, np.complex64)
    table = empty((max(offset, 1),), complex_dtype, device=device)   # (read by no pass at n 1)
    kernel = get_kernel(device, SOURCE, "fft_twiddles",
                        _defines(real, TW_DOUBLE=int(bool(device.info.fp64))))
    buf = table.storage.kernel_buffer(write=True)
    for r, span, off in passes:
        gsize, lsize = _grid(device, r * span, 1)
        kernel.launch(device, gsize[:1], lsize[:1], buf, np.int64(off), np.int32(r * span))
    return _Stockham(n, tuple(passes), table)


def _bluestein(device: Device, n: int, real: np.dtype, sign: int) -> _Bluestein:
    key = ("bluestein", device, n, real, sign)
    found = _PLANS.find(key)
    return found if found is not None else _PLANS.get(
        key, lambda: _new_bluestein(device, n, real, sign))


def _new_bluestein(device: Device, n: int, real: np.dtype, sign: int) -> _Bluestein:
    m = 1 << (2 * n - 2).bit_length()    # the power of two >= 2n - 1
    j = np.arange(n, dtype=np.int64)
    # exp(-sign pi i j^2 / n), j^2 reduced modulo 2n first: exact arguments for any n
    chirp = np.exp(-sign * 1j * np.pi * ((j * j) % (2 * n)) / n)
    b = np.zeros(m, np.complex128)
    b[:n] = np.conj(chirp)
    b[m - n + 1:] = np.conj(chirp[1:])[::-1]
    transformed = np.fft.fft(b) / m
    complex_dtype = np.result_type(real, np.complex64)
    return _Bluestein(n, _stockham(device, m, real),
                      _upload(chirp.astype(complex_dtype), device),
                      _upload(transformed.astype(complex_dtype), device))


def _upload(host: np.ndarray, device: Device) -> DeviceArray:
    return asarray(host, device=device)


def _run_passes(device: Device, plan: _Stockham, work: DeviceArray, rows: int,
                sign: int) -> DeviceArray:
    """``plan``'s passes over ``rows`` rows of ``work`` (complex, rows x plan.n); returns the
    block holding the transform (``work`` or a second block)."""
    if not plan.passes:
        return work
    real = part_dtype(work.dtype)
    spare = empty(work.shape, work.dtype, device=device)
    table = plan.table.storage.kernel_buffer()
    src, dst = work, spare
    for r, span, off in plan.passes:
        kernel = get_kernel(device, SOURCE, "fft_pass", _defines(real, RADIX=r))
        gsize, lsize = _grid(device, plan.n // r, rows)
        kernel.launch(device, gsize, lsize, src.storage.kernel_buffer(),
                      dst.storage.kernel_buffer(write=True), table, np.int64(off), np.int32(plan.n),
                      np.int32(span), np.int32(sign))
        src, dst = dst, src
    return src


def _row_layout(x: DeviceArray) -> tuple[int, int, int] | None:
    """(rows, row stride, element stride), in elements, of ``x`` read as rows along its last
    axis; None where its leading axes do not merge into one stride (a copy first then)."""
    item = x.itemsize
    if any(st % item for st in x.strides):
        return None
    lead = [(n, st // item) for n, st in zip(x.shape[:-1], x.strides[:-1]) if n != 1]
    for (n0, s0), (n1, s1) in zip(lead, lead[1:]):
        if s0 != s1 * n1:
            return None
    rows = int(np.prod([n for n, _ in lead], dtype=np.int64)) if lead else 1
    return rows, (lead[-1][1] if lead else 0), x.strides[-1] // item


_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _complex_of(real: np.dtype) -> np.dtype:
    return _COMPLEX.get(real) or np.result_type(real, np.complex64)


def _fresh(shape: tuple, dtype: np.dtype, device: Device) -> DeviceArray:
    """A C-contiguous result for a kernel to fill (a pooled device buffer, no checks)."""
    return DeviceArray.from_storage(Storage.for_output(device, math.prod(shape) * dtype.itemsize),
                                    shape, dtype, c_strides(shape, dtype.itemsize))




class _Rows(NamedTuple):
    """Rows of a device array as a kernel reads or writes them: ``rows`` rows of ``length``
    elements, element j of row r at element offset + r stride + j step of ``array``."""
    array: DeviceArray
    offset: int
    stride: int
    step: int
    length: int
    rows: int

    @property
    def real(self) -> bool:
        return self.array.dtype.kind != "c"


_NO_LIMIT = np.int64(1 << 62)


def local_max(device: Device, complex_dtype: np.dtype) -> int:
    """The longest row :func:`_rows_kernel` transforms in local memory on ``device``."""
    return device.info.local_mem_bytes * 3 // 4 // np.dtype(complex_dtype).itemsize


_GROUP_ELEMENTS = 1024   # a work-group's share of short rows: several rows for short lengths
_COALESCED_ROWS = 16     # rows a group when neighbouring rows are neighbours in memory
_LOCAL_PAD = constant("fft.local_pad_gpu")
_ROWS_GPU = constant("fft.rows_group_gpu")


def _local_pad(device: Device) -> int:
    """LPAD of fft_rows on ``device``: GPUs' local memory has banks; CPU drivers' has none."""
    return _LOCAL_PAD if device.info.is_gpu else 0


# CPU drivers: work-groups of at most 256 work-items of 8 elements (GPUs: fft.rows_group_gpu)
_ROWS_CPU = (256, 8)


def _group_shape(device: Device) -> tuple[int, int]:
    """fft_rows' widest work-group and the elements a work-item takes until it is that wide."""
    if device.info.is_gpu:
        return _ROWS_GPU["max_group"], _ROWS_GPU["item_elements"]
    return _ROWS_CPU


def _padded(n: int, lpad: int) -> int:
    """Local-memory elements of n values laid out with one unused element after every 2^lpad."""
    return n + (n >> lpad if lpad else 0)


def _rows_kernel(device: Device, real: np.dtype, n: int, src: _Rows, count: int,
                 in_batch: int, in_stride: int, in_step: int, dst: _Rows, out_batch: int,
                 out_stride: int, out_step: int, out_count: int, out_limit: Any, rows: int,
                 batches: int, sign: int, scale: float, tw_n: int = 0,
                 bluestein: _Bluestein | None = None) -> None:
    """One launch of ``fft_rows``: ``batches`` x ``rows`` transforms of length ``n`` (the
    power of two of ``bluestein`` when given) in local memory (see opencl/fft.cl), several
    rows a work-group where they are short or where neighbouring rows are neighbours in
    memory (the reads and writes then coalesce). The launch is bound once per geometry: a
    repeated call passes its buffers and offsets only."""
    key = ("rows", device, real, n, src.real, dst.real, count, in_batch, in_stride, in_step,
           out_batch, out_stride, out_step, out_count, int(out_limit), rows, batches, sign,
           scale, tw_n, bluestein.n if bluestein is not None else 0)
    launch = _PLANS.find(key)
    if launch is None:
        launch = _PLANS.get(key, lambda: _bind_rows(device, real, n, src.real, dst.real, key[6:]))
    launch(src.array.storage.kernel_buffer(), np.int64(src.offset),
           dst.array.storage.kernel_buffer(write=True), np.int64(dst.offset))


def _bind_rows(device: Device, real: np.dtype, n: int, src_real: bool, dst_real: bool,
               geometry: tuple):
    """The bound launch of :func:`_rows_kernel` (``geometry``: its key from ``count`` on)."""
    (count, in_batch, in_stride, in_step, out_batch, out_stride, out_step, out_count,
     out_limit, rows, batches, sign, scale, tw_n, bluestein_n) = geometry
    radices = stockham_radices(n)
    lpad = _local_pad(device)
    if _padded(n, lpad) > local_max(device, _complex_of(real)):
        lpad = 0   # a row that fills the local memory as it is
    room = local_max(device, _complex_of(real)) // _padded(n, lpad)
    fast_in = abs(in_stride) == 1 and abs(in_step) != 1
    fast_out = abs(out_stride) == 1 and abs(out_step) != 1
    want = _COALESCED_ROWS if (fast_in or fast_out) else _GROUP_ELEMENTS // n
    per_group = max(1, min(room, want, rows))
    max_group, item_elements = _group_shape(device)
    wg = min(max_group, max(32, per_group * n // item_elements), device.info.max_work_group_size)
    defines = _defines(real, N=n, WG=wg, ROWS=per_group, NPASS=len(radices), LPAD=lpad,
                       ROWS_FAST_IN=int(fast_in and per_group > 1),
                       ROWS_FAST_OUT=int(fast_out and per_group > 1), IN_REAL=int(src_real),
                       OUT_REAL=int(dst_real), CHIRP=int(bluestein_n > 0),
                       TWIDDLE=int(tw_n > 0), TW_DOUBLE=int(tw_n > 0 and bool(device.info.fp64)))
    defines.update({f"R{k}": r for k, r in enumerate(radices)})
    kernel = get_kernel(device, SOURCE, "fft_rows", defines)
    table = _stockham(device, n, real).table.storage.kernel_buffer()
    if bluestein_n:
        bluestein = _bluestein(device, bluestein_n, real, sign)
        extra = [bluestein.chirp.storage.kernel_buffer(), bluestein.kernel.storage.kernel_buffer()]
    else:
        extra = [table, table]
    int64 = np.int64
    args = [None, None, int64(in_batch), int64(in_stride), int64(in_step), np.int32(count),
            int64(rows), None, None, int64(out_batch), int64(out_stride), int64(out_step),
            np.int32(out_count), int64(out_limit), table, np.int32(sign), real.type(scale),
            int64(max(tw_n, 1)), *extra]
    groups = -(-rows // per_group)
    return kernel.bind(device, (groups * wg, batches), (wg, 1), args, (0, 1, 7, 8))


def split_length(n: int, limit: int) -> tuple[int, int] | None:
    """``n`` as n1 x n2, both at most ``limit`` and as near sqrt(n) as that allows (the
    four-step FFT's factors); None where none exists."""
    best = None
    for n1 in range(max(2, -(-n // limit)), min(limit, n - 1) + 1):
        if n % n1 == 0 and n // n1 <= limit:
            if best is None or abs(n1 - n // n1) < abs(best - n // best):
                best = n1
        if n1 * n1 > n and best is not None:
            break
    return None if best is None else (best, n // best)


def _four_step(device: Device, real: np.dtype, n: int, split: tuple[int, int], src: _Rows,
               dst: _Rows, sign: int, scale: float) -> None:
    """Transforms of length n = n1 n2 of every row of ``src`` (each ``n`` long) into ``dst``
    (its first ``dst.length`` outputs) in two launches: transforms of length n1 down the
    columns of each row seen as n1 x n2 (then the twiddles), of length n2 along the rows of
    the result, written transposed."""
    n1, n2 = split
    rows = src.rows
    complex_dtype = np.result_type(real, np.complex64)
    middle = _Rows(empty((rows, n), complex_dtype, device=device), 0, n, 1, n, rows)
    _rows_kernel(device, real, n1, src, n1, src.stride, src.step, n2 * src.step, middle, n,
                 n1, 1, n1, _NO_LIMIT, n2, rows, sign, 1.0, tw_n=n)
    _rows_kernel(device, real, n2, middle, n2, n, 1, n1, dst, dst.stride, dst.step,
                 n1 * dst.step, n2, dst.length * dst.step, n1, rows, sign, scale)


def _load_block(device: Device, real: np.dtype, src: _Rows, count: int, p: int,
                chirp: DeviceArray | None) -> DeviceArray:
    """``src``'s rows as a (rows, p) complex block: their first ``count`` elements (times
    ``chirp``), zeros past them."""
    complex_dtype = np.result_type(real, np.complex64)
    block = empty((src.rows, p), complex_dtype, device=device)
    kernel = get_kernel(device, SOURCE, "fft_load",
                        _defines(real, IN_REAL=int(src.real), CHIRP=int(chirp is not None)))
    gsize, lsize = _grid(device, p, src.rows)
    c = chirp if chirp is not None else block
    kernel.launch(device, gsize, lsize, src.array.storage.kernel_buffer(), np.int64(src.offset),
                  np.int64(src.stride), np.int64(src.step), np.int32(count),
                  block.storage.kernel_buffer(write=True), np.int32(p), c.storage.kernel_buffer())
    return block


def _block_transform(device: Device, real: np.dtype, block: DeviceArray, sign: int) -> DeviceArray:
    """The transforms (unscaled) of the rows of a contiguous complex (rows, p) block: in two
    launches where p splits into factors the local memory holds, else one per pass."""
    rows, p = block.shape
    split = split_length(p, local_max(device, block.dtype))
    if split is None:
        return _run_passes(device, _stockham(device, p, real), block, rows, sign)
    out = empty(block.shape, block.dtype, device=device)
    _four_step(device, real, p, split, _Rows(block, 0, p, 1, p, rows),
               _Rows(out, 0, p, 1, p, rows), sign, 1.0)
    return out


def _transform(x: DeviceArray, layout: tuple, n: int, sign: int, scale: float, kind: str,
               out_count: int) -> DeviceArray:
    """The transform of each row of ``x`` (its last axis; real for ``kind`` "r2c", complex
    otherwise) at length ``n``: "c2c" and "r2c" keep the first ``out_count`` outputs, "c2r"
    (``x`` the first half of Hermitian rows) the real parts of ``n``; times ``scale``. Rows
    that fit the local memory take one launch (Bluestein's too), longer ones the four-step
    FFT (two), the rest one launch a pass."""
    device = x.device
    complex_dtype = x.dtype if x.dtype.kind == "c" else _complex_of(x.dtype)
    real = part_dtype(complex_dtype)
    length = x.shape[-1]
    rows, stride, step = layout
    src = _Rows(x, x.offset // x.itemsize, stride, step, length, rows)
    if kind == "c2r":   # the Hermitian rows of length n, transformed as complex rows
        full = empty((rows, n), complex_dtype, device=device)
        kernel = get_kernel(device, SOURCE, "fft_hermitian", _defines(real))
        gsize, lsize = _grid(device, n, rows)
        kernel.launch(device, gsize, lsize, x.storage.kernel_buffer(), np.int64(src.offset),
                      np.int64(stride), np.int64(step), np.int32(min(length, n // 2 + 1)),
                      full.storage.kernel_buffer(write=True), np.int32(n))
        src = _Rows(full, 0, n, 1, n, rows)
    out_real = kind == "c2r"
    out = _fresh(x.shape[:-1] + (out_count,), real if out_real else complex_dtype, device)
    dst = _Rows(out, 0, out_count, 1, out_count, rows)
    count = min(src.length, n)
    limit = local_max(device, complex_dtype)
    if _is_smooth(n):
        if n <= limit:
            _rows_kernel(device, real, n, src, count, 0, src.stride, src.step, dst, 0,
                         dst.stride, 1, out_count, _NO_LIMIT, rows, 1, sign, scale)
            return out
        split = split_length(n, limit)
        if split is not None:
            if src.length != n:   # zero-padded or truncated rows first
                block = _load_block(device, real, src, count, n, None)
                src = _Rows(block, 0, n, 1, n, rows)
            _four_step(device, real, n, split, src, dst, sign, scale)
            return out
        done = _run_passes(device, _stockham(device, n, real),
                           _load_block(device, real, src, count, n, None), rows, sign)
        _store(device, real, done, n, dst, None, scale)
        return out
    bluestein = _bluestein(device, n, real, sign)
    m = bluestein.inner.n
    if m <= limit:   # Bluestein's whole algorithm in one launch
        _rows_kernel(device, real, m, src, count, 0, src.stride, src.step, dst, 0, dst.stride,
                     1, out_count, _NO_LIMIT, rows, 1, sign, scale, bluestein=bluestein)
        return out
    done = _block_transform(device, real, _load_block(device, real, src, count, m,
                                                       bluestein.chirp), sign)
    kernel = get_kernel(device, SOURCE, "fft_cmul", _defines(real))
    gsize, lsize = _grid(device, m, rows)
    kernel.launch(device, gsize, lsize, done.storage.kernel_buffer(write=True),
                  bluestein.kernel.storage.kernel_buffer(), np.int32(m))
    done = _block_transform(device, real, done, -sign)
    _store(device, real, done, m, dst, bluestein.chirp, scale)
    return out


def _store(device: Device, real: np.dtype, done: DeviceArray, p: int, dst: _Rows,
           chirp: DeviceArray | None, scale: float) -> None:
    """``dst``'s rows from the (rows, p) block ``done``: its first ``dst.length`` values (times
    ``chirp``) times ``scale`` (real parts into a real ``dst``)."""
    kernel = get_kernel(device, SOURCE, "fft_store",
                        _defines(real, OUT_REAL=int(dst.real), CHIRP=int(chirp is not None)))
    gsize, lsize = _grid(device, dst.length, dst.rows)
    c = chirp if chirp is not None else done
    kernel.launch(device, gsize, lsize, done.storage.kernel_buffer(), np.int32(p),
                  dst.array.storage.kernel_buffer(write=True), np.int64(dst.offset),
                  np.int64(dst.stride), np.int32(dst.length), c.storage.kernel_buffer(),
                  real.type(scale))


_RESULT_DTYPES: Memo[Any] = Memo("fft result dtypes", capacity=1024)


def _result_dtype(func: Any, dtype: np.dtype) -> np.dtype | None:
    """NumPy's result dtype of ``func`` for ``dtype`` (found on a stand-in once); None where
    NumPy refuses the dtype (rfft of complex numbers: its TypeError then comes from NumPy)."""
    def build():
        try:
            return np.asarray(func(np.zeros((4, 4), dtype))).dtype
        except Exception:   # noqa: BLE001 - NumPy's own error comes from its own call
            return False
    key = (func, dtype)
    found = _RESULT_DTYPES.find(key)
    if found is None:
        found = _RESULT_DTYPES.get(key, build)
    return found or None


def _on_device(a: Any, result: np.dtype) -> bool:
    return (type(a) is DeviceArray and a.size > 0 and a.dtype.kind in "biufc"
            and not has_host_path(a.device)
            and (result not in (np.complex128, np.float64) or bool(a.device.info.fp64)))


def _on_host(func: Any, a: Any, args: tuple, kwargs: dict) -> Any:
    """``func`` by NumPy: on the mapping where the device has a host path, else through the
    host fallback (both give device arrays)."""
    if type(a) is DeviceArray and has_host_path(a.device) and kwargs.get("out") is None:
        found = func(a.host_view(), *args, **kwargs)
        return adopt_host(np.ascontiguousarray(found), a.device)
    return host_function(func, (a, *args), kwargs)


def _scales(norm: Any, n: int) -> tuple[float, float] | None:
    """(forward, inverse) scale of a transform of length ``n`` under ``norm``; None for a norm
    NumPy refuses (its error then)."""
    if norm is None or norm == "backward":
        return 1.0, 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n), 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n, 1.0
    return None


def _one_axis(func: Any, a: Any, n: Any, axis: Any, norm: Any, out: Any) -> Any:
    """The 1-D transforms: ``func`` is np.fft's function of the same name."""
    name = func.__name__
    kwargs = {"n": n, "axis": axis, "norm": norm}
    if out is not None:
        kwargs["out"] = out
    real_in = name in ("rfft", "ihfft")
    result = _result_dtype(func, a.dtype) if type(a) is DeviceArray else None
    if (out is not None or result is None or not _on_device(a, result)
            or (real_in and a.dtype.kind == "c")):
        return _on_host(func, a, (), kwargs)
    try:
        axis = normalize_axis_index(axis, a.ndim)
    except (TypeError, np.exceptions.AxisError):   # NumPy's own error (an IndexError)
        return _on_host(func, a, (), kwargs)
    length = a.shape[axis]
    half_in = name in ("irfft", "hfft")
    if n is None:
        n = 2 * (length - 1) if half_in else length
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)) or n < 1:
        return _on_host(func, a, (), kwargs)
    n = int(n)
    scales = _scales(norm, n)
    if scales is None:
        return _on_host(func, a, (), kwargs)
    x = a if axis == a.ndim - 1 else np.moveaxis(a, axis, -1)
    work_dtype = result if result.kind == "c" else np.result_type(result, np.complex64)
    if real_in:
        work_dtype = part_dtype(work_dtype)
    elif a.dtype.kind != "c" and not half_in:
        work_dtype = part_dtype(work_dtype)   # a real input read as real numbers
    if x.dtype != work_dtype:
        x = x.astype(work_dtype)
    layout = _row_layout(x)
    if layout is None:   # leading axes that do not merge: rows copied out first
        x = x.copy()
        layout = _row_layout(x)
    forward, inverse = scales
    if name == "fft":
        y = _transform(x, layout, n, 1, forward, "r2c" if x.dtype.kind != "c" else "c2c", n)
    elif name == "ifft":
        y = _transform(x, layout, n, -1, inverse, "r2c" if x.dtype.kind != "c" else "c2c", n)
    elif name == "rfft":
        y = _transform(x, layout, n, 1, forward, "r2c", n // 2 + 1)
    elif name == "ihfft":   # conj(rfft(a)) under the swapped norm: the inverse direction
        y = _transform(x, layout, n, -1, inverse, "r2c", n // 2 + 1)
    elif name == "irfft":
        y = _transform(x, layout, n, -1, inverse, "c2r", n)
    else:                   # hfft: irfft(conj(a)) under the swapped norm: the forward direction
        y = _transform(x, layout, n, 1, forward, "c2r", n)
    return y if axis == a.ndim - 1 else np.moveaxis(y, -1, axis)


@implements(np.fft.fft)
def fft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.fft``: the discrete Fourier transform of each row along ``axis``."""
    return _one_axis(np.fft.fft, a, n, axis, norm, out)


@implements(np.fft.ifft)
def ifft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.ifft``: the inverse discrete Fourier transform along ``axis``."""
    return _one_axis(np.fft.ifft, a, n, axis, norm, out)


@implements(np.fft.rfft)
def rfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.rfft``: the first n // 2 + 1 outputs of the transform of real rows."""
    return _one_axis(np.fft.rfft, a, n, axis, norm, out)


@implements(np.fft.irfft)
def irfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.irfft``: the real rows of length n whose rfft is ``a``."""
    return _one_axis(np.fft.irfft, a, n, axis, norm, out)


@implements(np.fft.hfft)
def hfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.hfft``: the real transform of a Hermitian signal given by its first half."""
    return _one_axis(np.fft.hfft, a, n, axis, norm, out)


@implements(np.fft.ihfft)
def ihfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.ihfft``: the inverse of hfft (first half of a Hermitian spectrum)."""
    return _one_axis(np.fft.ihfft, a, n, axis, norm, out)


_cook_nd_args = getattr(getattr(np.fft, "_pocketfft", None), "_cook_nd_args", None)


def _n_axes(func: Any, a: Any, s: Any, axes: Any, norm: Any, out: Any, kind: str) -> Any:
    """The n-D transforms as NumPy composes them from 1-D ones, with its argument rules (its own
    ``_cook_nd_args``): ``kind`` "fft"/"ifft" along every axis, last axis first; "rfft": rfft
    along the last axis, then fft along the others, last first; "irfft": ifft along all but the
    last axis, first to last, then irfft along it. NumPy's deprecated forms (``s`` without
    ``axes``, None in ``s``) go to NumPy, with its warnings."""
    kwargs = {"s": s, "axes": axes, "norm": norm}
    if out is not None:
        kwargs["out"] = out
    result = _result_dtype(func, a.dtype) if type(a) is DeviceArray else None
    if (out is not None or _cook_nd_args is None or result is None or not _on_device(a, result)
            or (s is not None and (axes is None or None in list(s)))):
        return _on_host(func, a, (), kwargs)
    try:
        s, axes = _cook_nd_args(_Shape(a.shape), s, axes, invreal=int(kind == "irfft"))
    except Exception:   # NumPy's error, from NumPy
        return _on_host(func, a, (), kwargs)
    if kind in ("fft", "ifft"):
        one = fft if kind == "fft" else ifft
        for ii in range(len(axes) - 1, -1, -1):
            a = one(a, s[ii], axes[ii], norm)
    elif kind == "rfft":
        a = rfft(a, s[-1], axes[-1], norm)
        for ii in range(len(axes) - 2, -1, -1):
            a = fft(a, s[ii], axes[ii], norm)
    else:
        for ii in range(len(axes) - 1):
            a = ifft(a, s[ii], axes[ii], norm)
        a = irfft(a, s[-1], axes[-1], norm)
    return a


@dataclass(frozen=True)
class _Shape:
    """A stand-in carrying a shape, for NumPy's argument rules."""
    shape: tuple


@implements(np.fft.fftn)
def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.fftn``: the n-D transform, axis by axis."""
    return _n_axes(np.fft.fftn, a, s, axes, norm, out, "fft")


@implements(np.fft.ifftn)
def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.ifftn``: the n-D inverse transform, axis by axis."""
    return _n_axes(np.fft.ifftn, a, s, axes, norm, out, "ifft")


@implements(np.fft.rfftn)
def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.rfftn``: rfft along the last axis, then fft along the others."""
    return _n_axes(np.fft.rfftn, a, s, axes, norm, out, "rfft")


@implements(np.fft.irfftn)
def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """``np.fft.irfftn``: ifft along all but the last axis, then irfft along it."""
    return _n_axes(np.fft.irfftn, a, s, axes, norm, out, "irfft")


@implements(np.fft.fft2)
def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """``np.fft.fft2``: fftn over two axes."""
    return _n_axes(np.fft.fft2, a, s, axes, norm, out, "fft")


@implements(np.fft.ifft2)
def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """``np.fft.ifft2``: ifftn over two axes."""
    return _n_axes(np.fft.ifft2, a, s, axes, norm, out, "ifft")


@implements(np.fft.rfft2)
def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """``np.fft.rfft2``: rfftn over two axes."""
    return _n_axes(np.fft.rfft2, a, s, axes, norm, out, "rfft")


@implements(np.fft.irfft2)
def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
           out: Any = None) -> Any:
    """``np.fft.irfft2``: irfftn over two axes."""
    return _n_axes(np.fft.irfft2, a, s, axes, norm, out, "irfft")


def _shifted(x: Any, axes: Any, sign: int) -> Any:
    """NumPy's fftshift (``sign`` 1) or ifftshift (-1): a roll by half of each axis."""
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, (int, np.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return np.roll(x, shift, axes)


@implements(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """``np.fft.fftshift``: the zero frequency moved to the centre (a roll on the device)."""
    return _shifted(x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """``np.fft.ifftshift``: the inverse of fftshift (a roll on the device)."""
    return _shifted(x, axes, -1)
