"""Rows too long for one work-group's local memory, sorted by ``opencl/radix.cl``: a
least-significant-digit radix sort of every row at once (the row number's digits sorted last),
NumPy's stable order bit for bit. A pass is three launches (count, scan, scatter), two when the
rows fill at most ``_SUMMED_TILES`` tiles; a 32-bit key takes four passes of 8-bit digits.
One row sorted for its values carries no indices (:func:`_restore_zeros_and_nans` puts back
the float bits its keys lose)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..array import DeviceArray, empty
from ..device import Device
from ..dtypes import storage_ctype
from ..kernels.constants import constant
from ..kernels.programs import get_kernel
from ..memo import Memo

__all__ = ["RadixShape", "radix_shape", "sort_rows_radix", "LONGEST"]

SOURCE = "radix.cl"
LONGEST = (1 << 31) - 1   # elements in all rows together (indices are int32)
_LOCAL_SHARE = 0.75       # of the device's local memory, for radix_scatter's arrays
_WG = 256
# Up to this many tiles radix_scatter sums the tiles' counts itself (a loop of this length a
# digit), saving radix_scan's launch a pass; past it the launch is the cheaper.
_SUMMED_TILES = 64
# From this many elements a float row sorted for its values goes without indices: the zeros and
# NaNs put back afterwards cost a few launches and two reads to the host, against the indices'
# traffic saved (tuning data: on the one GPU measured this never paid, so the value is out of
# reach of any array there).
_BARE_FLOATS = constant("radix.bare_float_min")


@dataclass(frozen=True)
class RadixShape:
    """One radix_scatter configuration: ``bits`` a digit, tiles of ``items`` rounds of ``wg``
    elements."""

    bits: int
    wg: int
    items: int


def _scatter_local_bytes(shape: RadixShape, key_bytes: int, pairs: bool) -> int:
    radix, tile = 1 << shape.bits, shape.wg * shape.items
    vote_words = -(-shape.wg // 32)
    # votes, three per-digit int arrays (next, prior, offset), the scan's parts, the staging
    return (4 * radix * vote_words + 12 * radix + 4 * shape.wg + tile * key_bytes
            + (tile * 4 if pairs else 4))


def radix_shape(device: Device, key_bytes: int, pairs: bool) -> RadixShape:
    """The widest digit, then the longest tile, that fit the device's local memory."""
    budget = int(device.info.local_mem_bytes * _LOCAL_SHARE)
    wg = min(_WG, device.info.max_work_group_size)
    for bits in (8, 6, 4):
        for items in (8, 4, 2):
            shape = RadixShape(bits, wg, items)
            if _scatter_local_bytes(shape, key_bytes, pairs) <= budget:
                return shape
    return RadixShape(2, wg, 1)


_KERNELS: Memo[Any] = Memo("radix sort kernels")


def _kernels(device: Device, dtype: np.dtype, shape: RadixShape, pairs: bool, arg: bool):
    key = (device, dtype, shape, pairs, arg)

    def build():
        key_bits = 16 if dtype == np.float16 else 8 * dtype.itemsize
        defines = {"T": storage_ctype(dtype), "KB": key_bits, "KEY64": int(key_bits == 64),
                   "IS_FLOAT": int(dtype.kind == "f"), "HALF": int(dtype == np.float16),
                   "SIGNED": int(dtype.kind == "i"), "RB": shape.bits, "WG": shape.wg,
                   "ITEMS": shape.items, "PAIRS": int(pairs), "ARG": int(arg)}
        if dtype == np.float64:
            defines["IS_FP64"] = 1
        return tuple(get_kernel(device, SOURCE, name, defines)
                     for name in ("radix_count", "radix_scan", "radix_scatter"))
    return _KERNELS.find(key) or _KERNELS.get(key, build)


def _passes(bits: int, digit: int) -> int:
    return -(-bits // digit)


def sort_rows_radix(x: DeviceArray, out: DeviceArray, rows: int, n: int, arg: bool,
                    shape: RadixShape | None = None) -> None:
    """Sort the ``rows`` C-contiguous rows of ``n`` elements of ``x`` into ``out`` (the values,
    or with ``arg`` their indices in the row, int64). ``rows * n`` is at most :data:`LONGEST`."""
    device, dtype = x.device, x.dtype
    total = rows * n
    # One row of values needs no indices: every key turns back into its value but a float's
    # zeros and NaNs, put back afterwards in their order (_restore_zeros_and_nans).
    pairs = arg or rows > 1 or (dtype.kind == "f" and total < _BARE_FLOATS)
    key_bits = 16 if dtype == np.float16 else 8 * dtype.itemsize
    key_words = 2 if key_bits == 64 else 1
    shape = shape or radix_shape(device, 4 * key_words, pairs)
    count, scan, scatter = _kernels(device, dtype, shape, pairs, arg)
    groups = -(-total // (shape.wg * shape.items))
    radix = 1 << shape.bits
    steps = [(s * shape.bits, 0) for s in range(_passes(key_bits, shape.bits))]
    steps += [(s * shape.bits, 1) for s in range(_passes(int(rows - 1).bit_length(), shape.bits))]
    # One scratch buffer of words: keys (even offsets: 64-bit keys stay aligned) and indices
    # of the two sides the passes alternate between, then the counts and the totals.
    side = key_words * total + (key_words * total) % 2
    keys_at = (0, side)
    ids_at = (2 * side, 2 * side + total) if pairs else (0, 0)
    counts_at = 2 * side + (2 * total if pairs else 0)
    totals_at = counts_at + radix * groups
    work = empty((totals_at + radix,), np.uint32, device=device)
    buf = work.storage.kernel_buffer(write=True)
    src, src_off = x.storage.kernel_buffer(), np.int64(x.offset // x.itemsize)
    dst = out.storage.kernel_buffer(write=True)
    scanned = groups > _SUMMED_TILES
    i32, i64, wg = np.int32, np.int64, shape.wg
    for p, (shift, row_pass) in enumerate(steps):
        first, last = i32(p == 0), i32(p == len(steps) - 1)
        inp, outp = p % 2, (p + 1) % 2
        common = (i32(total), i32(n), i32(shift), i32(row_pass), first)
        count.launch(device, (groups * wg,), (wg,), *common, src, src_off, buf,
                     i64(keys_at[inp]), i64(ids_at[inp]), i64(counts_at))
        if scanned:
            scan.launch(device, (radix * wg,), (wg,), i32(groups), buf, i64(counts_at),
                        i64(totals_at))
        scatter.launch(device, (groups * wg,), (wg,), *common, last, i32(scanned), src, src_off,
                       buf, i64(keys_at[inp]), i64(ids_at[inp]), i64(keys_at[outp]),
                       i64(ids_at[outp]), i64(counts_at), i64(totals_at), dst)
    if dtype.kind == "f" and not pairs:
        _restore_zeros_and_nans(x.reshape(-1), out.reshape(-1))


def _restore_zeros_and_nans(x: DeviceArray, out: DeviceArray) -> None:
    """``out``, ``x`` sorted without indices, given NumPy's stable order where the keys lose
    bits: the NaNs (last) and the zeros (after the negatives: -0.0 and 0.0 are equal) copied
    from ``x`` in their order, where any NaN or a -0.0 is there."""
    nan = np.isnan(x)
    nans = int(np.count_nonzero(nan))
    if nans:
        out[out.size - nans:] = x[nan]
    zero = x == 0
    if bool(np.any(zero & np.signbit(x))):
        below = int(np.count_nonzero(x < 0))
        zeros = x[zero]
        out[below:below + zeros.size] = zeros
