"""Device-side strided copy (``opencl/copy.cl``): astype, contiguous packing, transposes,
broadcasts and writes into strided views, without a round trip through the host."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pyopencl as cl
import pyopencl.cltypes as cltypes

from .. import _dispatch
from ..device import Device
from ..memo import Memo
from ..drivers import calls
from ..dtypes import storage_ctype
from .programs import eventless_copy_enqueue, get_kernel

__all__ = ["strided_copy", "copy_plan", "prepare_strided_copy", "merge_dims", "as_long8", "tile_layout",
           "row_layout",
           "MAX_DIMS", "TILE", "TILE_ROWS"]

MAX_DIMS = 8
# The transposed layout class (opencl/transpose_tile.h's defaults): TILE x TILE blocks,
# TILE x TILE_ROWS work-items. A GPU grid's second and third dimensions hold at most 65535
# work-groups.
TILE, TILE_ROWS, _GRID_MAX = 32, 8, 65535


def merge_dims(shape: Sequence[int], *strides: Sequence[int]
               ) -> tuple[list[int], list[list[int]]]:
    """Drop extent-1 dimensions and merge neighbours that are contiguous in every operand."""
    dims = [(n, [s[i] for s in strides]) for i, n in enumerate(shape) if n != 1]
    out: list[tuple[int, list[int]]] = []
    for n, st in dims:
        if out:
            pn, pst = out[-1]
            if all(ps == s * n for ps, s in zip(pst, st)):
                out[-1] = (pn * n, st)
                continue
        out.append((n, st))
    return [n for n, _ in out], [[st[i] for _, st in out] for i in range(len(strides))]


def as_long8(values: Sequence[int], fill: int) -> np.ndarray:
    padded = (fill,) * (MAX_DIMS - len(values)) + tuple(values)
    return np.array(padded, dtype=cltypes.long8)  # 10x cheaper than cltypes.make_long8


def tile_layout(device: Device, dims: Sequence[int], sources: Sequence[Sequence[int]],
                targets: Sequence[Sequence[int]]) -> tuple | None:
    """The transposed layout class of merged dimensions ``dims`` on GPUs, or None: sources
    (element strides per dimension) running along one of the two innermost dimensions, the
    targets along the other. Returns ((rows, cols, batch), the indices of the sources to stage
    through local memory, the (batch, row, column, 0) strides of each source then each target
    as long4s, the launch geometry); the columns are the targets' contiguous dimension."""
    info = device.info
    if len(dims) not in (2, 3) or not info.is_gpu or info.max_work_group_size < TILE * TILE_ROWS:
        return None
    row, col = len(dims) - 2, len(dims) - 1
    if any(t[col] != 1 for t in targets):
        if any(t[row] != 1 for t in targets):
            return None
        row, col = col, row
    staged = [k for k, s in enumerate(sources) if s[row] == 1 and s[col] not in (0, 1)]
    rows, cols = dims[row], dims[col]
    batch = dims[0] if len(dims) == 3 else 1
    if not staged or -(-rows // TILE) > _GRID_MAX or batch > _GRID_MAX:
        return None
    strides = [np.array((s[0] if len(dims) == 3 else 0, s[row], s[col], 0), dtype=cltypes.long4)
               for s in (*sources, *targets)]
    geometry = ((-(-cols // TILE) * TILE, -(-rows // TILE) * TILE_ROWS, batch),
                (TILE, TILE_ROWS, 1))
    return (rows, cols, batch), staged, strides, geometry


def row_layout(device: Device, dims: Sequence[int], sources: Sequence[Sequence[int]],
               targets: Sequence[Sequence[int]]) -> tuple | None:
    """The row layout class of merged dimensions ``dims``, or None: two or three dimensions
    ([batch,] rows, columns) with every target contiguous along the columns and no source to
    stage (a broadcast row or column, a strided or offset view). Returned as
    :func:`tile_layout` does, with no source staged: each work-item then addresses its element
    by a row and a column index, where the general strided loop divides its flat index once
    per dimension (a 256 x 256 ``a + row`` on Intel's CPU runtime: 163 us against 21 us for
    ``a + b``)."""
    if len(dims) not in (2, 3) or device.info.max_work_group_size < TILE * TILE_ROWS:
        return None
    row, col = len(dims) - 2, len(dims) - 1
    if any(t[col] != 1 for t in targets):
        return None
    rows, cols = dims[row], dims[col]
    batch = dims[0] if len(dims) == 3 else 1
    if -(-rows // TILE) > _GRID_MAX or batch > _GRID_MAX:
        return None
    strides = [np.array((s[0] if len(dims) == 3 else 0, s[row], s[col], 0), dtype=cltypes.long4)
               for s in (*sources, *targets)]
    geometry = ((-(-cols // TILE) * TILE, -(-rows // TILE) * TILE_ROWS, batch),
                (TILE, TILE_ROWS, 1))
    return (rows, cols, batch), [], strides, geometry


def _is_plain(src_dtype: np.dtype, dst_dtype: np.dtype, dims: list, ss: list, ds: list) -> bool:
    """A byte copy between two contiguous ranges (``clEnqueueCopyBuffer``, no kernel)."""
    return (src_dtype == dst_dtype and len(dims) <= 1
            and (not dims or (ss[0] == 1 and ds[0] == 1)))


_launchers: Memo[Any] = Memo("copy launches", capacity=1024)


def copy_plan(device: Device, shape: tuple, src_dtype: np.dtype, src_strides: tuple,
              dst_dtype: np.dtype, dst_strides: tuple):
    """``copy(src, src_offset, dst, dst_offset, wait_for=None)`` (offsets in elements) for one
    geometry, kept per geometry: a slice assignment repeated in a loop resolves its kernel (or
    plain buffer copy) and fixed arguments once. None where the copy is empty; raises
    ``NotImplementedError`` beyond 8 dimensions after merging."""
    key = (device, shape, src_dtype, src_strides, dst_dtype, dst_strides)
    found = _launchers.find(key)
    if found is not None:
        return found
    if np.dtype(src_dtype).kind == "c":   # one complex dtype to itself: its bits
        return _launchers.get(key, lambda: _complex_copy(device, shape, np.dtype(src_dtype),
                                                         src_strides, dst_strides))
    n = math.prod(shape)
    dims, (ss, ds) = merge_dims(shape, src_strides, dst_strides)
    if len(dims) > MAX_DIMS:
        raise NotImplementedError("strided copy of more than 8 non-contiguous dimensions")
    if n == 0:
        return None
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    if _is_plain(src_dtype, dst_dtype, dims, ss, ds):
        return _launchers.get(key, lambda: _plain_copy(device, n * src_dtype.itemsize,
                                                       src_dtype.itemsize))
    return _launchers.get(key, lambda: _new_copy_launcher(device, n, dims, ss, ds, src_dtype,
                                                          dst_dtype))


def _complex_copy(device: Device, shape: tuple, dtype: np.dtype, src_strides: tuple,
                  dst_strides: tuple):
    """A :func:`copy_plan` copy of complex numbers as bits: complex64 as one 64-bit word each,
    complex128 as two (a last axis of two; no doubles needed); None where the copy is empty."""
    word = np.dtype(np.uint64)
    if dtype.itemsize == 8:
        return copy_plan(device, tuple(shape), word, tuple(src_strides), word,
                         tuple(dst_strides))
    inner = copy_plan(device, tuple(shape) + (2,), word,
                      tuple(2 * s for s in src_strides) + (1,), word,
                      tuple(2 * s for s in dst_strides) + (1,))
    if inner is None:
        return None

    def copy(src: cl.Buffer, src_offset: int, dst: cl.Buffer, dst_offset: int,
             wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
        return inner(src, 2 * src_offset, dst, 2 * dst_offset, wait_for)
    return copy


def _plain_copy(device: Device, nbytes: int, itemsize: int):
    """A :func:`copy_plan` copy between two contiguous ranges: ``clEnqueueCopyBuffer`` (with
    no event object where the device's events are costly: then it returns None)."""
    fast = eventless_copy_enqueue(device)

    def copy(src: cl.Buffer, src_offset: int, dst: cl.Buffer, dst_offset: int,
             wait_for: Sequence[cl.Event] | None = None) -> cl.Event | None:
        if fast is not None and wait_for is None:
            with calls.guard():
                if not fast(device.queue.int_ptr, src.int_ptr, dst.int_ptr, src_offset * itemsize,
                            dst_offset * itemsize, nbytes, 0, None, None):
                    return None
            # refused: pyopencl's call raises the driver's error in its words
        return calls.copy_buffer(device.queue, src, dst, nbytes, src_offset * itemsize,
                                 dst_offset * itemsize, wait_for)
    return copy


def _new_copy_launcher(device: Device, n: int, dims: list, ss: list, ds: list,
                       src_dtype: np.dtype, dst_dtype: np.dtype):
    """``copy(src, src_offset, dst, dst_offset, wait_for=None)`` through ``copy.cl`` for merged
    dimensions ``dims`` and element strides ``ss``/``ds``: kernel, geometry and the fixed
    arguments resolved here, each call only enqueues."""
    half = np.dtype(np.float16)
    defines = {"SRC_T": storage_ctype(src_dtype), "DST_T": storage_ctype(dst_dtype),
               "TO_BOOL": int(dst_dtype == np.bool_ and src_dtype != np.bool_),
               "NDIM": max(len(dims), 1), "IDX32": int(n < 2 ** 31)}
    if src_dtype == half:    # float16 as its bits (opencl/half_bits.h)
        defines["SRC_HALF"] = 1
        if dst_dtype == np.float64:
            defines["HALF_TO_DOUBLE"] = 1
    if dst_dtype == half:
        defines["DST_HALF"] = 1
        if src_dtype == np.float64:
            defines["HALF_FROM"] = "double"
    if np.float64 in (src_dtype, dst_dtype):
        defines["IS_FP64"] = 1
    tiling = tile_layout(device, dims, [ss], [ds])
    if tiling is not None:
        (rows, cols, _), _, (src4, dst4), (gsize, lsize) = tiling
        # bound: the extents and strides set once, a call passes the buffers and offsets
        transposed = get_kernel(device, "copy.cl", "transposed_copy", defines).bind(
            device, gsize, lsize, (np.int64(rows), np.int64(cols), None, None, src4, None,
                                   None, dst4), per_call=(2, 3, 5, 6))
        return _offsets_as_int64(transposed)
    local = min(256, device.info.max_work_group_size)
    gsize, lsize = ((n + local - 1) // local * local,), (local,)
    strided = get_kernel(device, "copy.cl", "strided_copy", defines).bind(
        device, gsize, lsize, (np.int64(n), None, None, None, None, as_long8(dims, 1),
                               as_long8(ss, 0), as_long8(ds, 0)), per_call=(1, 2, 3, 4))
    return _offsets_as_int64(strided)


def _offsets_as_int64(bound):
    """A :func:`copy_plan` copy over a bound launch taking (src, src offset, dst, dst offset)."""
    int64 = np.int64

    def copy(src: cl.Buffer, src_offset: int, dst: cl.Buffer, dst_offset: int,
             wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
        return bound(src, int64(src_offset), dst, int64(dst_offset), wait_for=wait_for)
    return copy


def strided_copy(device: Device, shape: Sequence[int],
                 src: cl.Buffer, src_dtype: np.dtype, src_offset: int, src_strides: Sequence[int],
                 dst: cl.Buffer, dst_dtype: np.dtype, dst_offset: int, dst_strides: Sequence[int],
                 wait_for: Sequence[cl.Event] | None = None) -> cl.Event | None:
    """Copy ``shape`` elements between two strided layouts (offsets and strides in elements),
    casting ``src_dtype`` to ``dst_dtype`` with NumPy's rules for the numeric types.

    Raises ``NotImplementedError`` when the layout needs more than 8 dimensions after merging
    (the caller goes through the host then)."""
    copy = copy_plan(device, tuple(shape), src_dtype, tuple(src_strides), dst_dtype,
                     tuple(dst_strides))
    return None if copy is None else copy(src, src_offset, dst, dst_offset, wait_for)


def prepare_strided_copy(device: Device, shape: Sequence[int], src_dtype: np.dtype,
                         src_strides: Sequence[int], dst_dtype: np.dtype,
                         dst_strides: Sequence[int]):
    """:func:`strided_copy` for one geometry, resolved once: a function
    ``copy(src, src_offset, dst, dst_offset)`` (offsets in elements) that only enqueues, for a
    plan's repeated calls; None where the copy is empty, a plain buffer copy or beyond 8
    dimensions (the caller uses :func:`strided_copy` then)."""
    n = math.prod(shape)
    dims, (ss, ds) = merge_dims(shape, src_strides, dst_strides)
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    if n == 0 or len(dims) > MAX_DIMS or _is_plain(src_dtype, dst_dtype, dims, ss, ds):
        return None
    return copy_plan(device, tuple(shape), src_dtype, tuple(src_strides), dst_dtype,
                     tuple(dst_strides))


_dispatch.register_strided_copy(strided_copy, copy_plan)
