"""Blocked LU and Cholesky factorisations, and the solves on them, for matrices larger than one
work-group's local memory (``opencl/linalg_blocked.cl``): LAPACK's right-looking getrf/potrf a
block of columns at a time, the panel or diagonal block factored by one work-group per
matrix (an LU panel held in the work-group's private memory where it fits), row swaps and triangular solves by their kernels, and every trailing update a matrix
product on the GEMM kernels (``c -= a @ b`` on views of the factor). Internal API for
``ops/linalg.py``: the operands are C-contiguous ``(batch, n, n)`` device arrays that these
functions own and overwrite.
"""
from __future__ import annotations

import numpy as np

from ..array import DeviceArray, empty, zeros
from ..device import Device
from ..kernels.constants import constant
from ..kernels.programs import get_kernel

__all__ = ["lu_factor", "lu_solve", "lu_det", "cholesky_factor", "BLOCK", "CHOLESKY_BLOCKS",
           "SOLVE_BLOCKS", "PANEL_WG_MAX", "PANEL_ROWS_PER_ITEM"]

SOURCE = "linalg_blocked.cl"
# Tuning values (the kernels take them as -D defines).
# LU columns a step: the panel's private rows (registers) and serial work grow with it, the
# launches a matrix shrink
BLOCK = 32
# Cholesky columns a step, and rows a step of the blocked triangular solves (lu_solve), by
# matrix order: (smallest n, block) pairs, the last that applies wins where the device's local
# memory holds two blocks (the diagonal block and trsm's triangle live there). Fewer, larger
# steps each cost the same 3-5 launches.
CHOLESKY_BLOCKS = tuple(tuple(pair) for pair in constant("linalg.cholesky_blocks"))
SOLVE_BLOCKS = tuple(tuple(pair) for pair in constant("linalg.solve_blocks"))
# lu_panel_private: the widest work-group and the most rows a work-item holds privately;
# taller panels take lu_panel (through global memory, a column at a time)
PANEL_WG_MAX = 1024
PANEL_ROWS_PER_ITEM = 4
# Right-hand sides up to which a solve runs as one launch, a work-group a column (its loads of
# the factor are repeated per column; the blocked solve's products read it once)
_COLUMNS_MAX = 8


def _defines(device: Device, dtype: np.dtype, wg: int = 256, nb: int = BLOCK,
             **extra: int) -> dict:
    wg = min(wg, device.info.max_work_group_size)
    wg = 1 << (wg.bit_length() - 1)  # the reductions halve it
    return {"T": "double" if dtype == np.float64 else "float",
            "IS_FP64": int(dtype == np.float64), "WG": wg, "NB": nb, **extra}


def _block(device: Device, dtype: np.dtype, n: int, table: tuple) -> int:
    """The step for order ``n`` from ``table`` (``CHOLESKY_BLOCKS``, ``SOLVE_BLOCKS``), as
    local memory allows."""
    nb = BLOCK
    for smallest, block in table:
        if n >= smallest and 2 * block * block * dtype.itemsize <= device.info.local_mem_bytes:
            nb = block
    return nb


def _panel(device: Device, dtype: np.dtype, rows: int) -> tuple:
    """(kernel, work-group size) that factors an LU panel of ``rows`` rows: lu_panel_private
    where a work-group holds the panel privately, else lu_panel."""
    wg = min(PANEL_WG_MAX, device.info.max_work_group_size, 1 << max(rows - 1, 1).bit_length())
    wg = 1 << (wg.bit_length() - 1)
    rpt = -(-rows // wg)
    if rpt <= PANEL_ROWS_PER_ITEM:
        return get_kernel(device, SOURCE, "lu_panel_private",
                          _defines(device, dtype, wg, RPT=rpt)), wg
    defines = _defines(device, dtype, min(1024, 1 << (rows - 1).bit_length()))
    return get_kernel(device, SOURCE, "lu_panel", defines), defines["WG"]


def _buffer(x: DeviceArray, write: bool = False):
    return x.storage.kernel_buffer(write=write)


def _offset(x: DeviceArray) -> np.int64:
    return np.int64(x.offset // x.itemsize)


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _subtract_product(c: DeviceArray, a: DeviceArray, b: DeviceArray) -> None:
    """``c -= a @ b`` for views of the factors (the trailing update)."""
    np.subtract(c, np.matmul(a, b), out=c)


def _trsm(device: Device, dtype: np.dtype, lower: bool, unit: bool, t: DeviceArray, t0: int,
          w: int, x: DeviceArray, x_start: int, x_rs: int, x_cs: int, ncols: int,
          nb: int = BLOCK) -> None:
    """Solve the w x w triangle of ``t`` at (t0, t0) against the w x ncols block of ``x``
    starting at element ``x_start`` of each matrix, rows ``x_rs`` and columns ``x_cs`` apart
    (w <= nb)."""
    defines = _defines(device, dtype, nb=nb, LOWER=int(lower), UNIT=int(unit))
    wg = defines["WG"]
    batch, n = t.shape[0], t.shape[-1]
    xn = x.shape[-1] * x.shape[-2]
    get_kernel(device, SOURCE, "trsm", defines).launch(
        device, (_round_up(ncols, wg), batch), (wg, 1), _buffer(t), _offset(t),
        np.int64(n * n), np.int32(n), np.int32(t0), np.int32(w), _buffer(x, True),
        np.int64(_offset(x) + x_start), np.int64(xn), np.int64(x_rs), np.int64(x_cs),
        np.int32(ncols))


def lu_factor(a: DeviceArray) -> tuple[DeviceArray, DeviceArray]:
    """Factor each matrix of ``a`` (batch, n, n) in place as P A = L U (getrf's order);
    returns (pivots (batch, n) int32: row j was swapped with pivots[j], status (batch,) int32:
    1 + the first zero pivot's column, else 0)."""
    device, dtype = a.device, a.dtype
    batch, n = a.shape[0], a.shape[-1]
    piv = empty((batch, n), np.int32, device=device)
    status = zeros((batch,), np.int32, device=device)
    swap = get_kernel(device, SOURCE, "swap_rows", _defines(device, dtype))
    nn, n32 = np.int64(n * n), np.int32(n)
    for k in range(0, n, BLOCK):
        w = min(BLOCK, n - k)
        panel, wg = _panel(device, dtype, n - k)
        panel.launch(device, (batch * wg,), (wg,), _buffer(a, True), _offset(a), nn, n32,
                     np.int32(k), np.int32(w), _buffer(piv, True), np.int64(n),
                     _buffer(status, True))
        if n > w:   # the swaps on the columns left and right of the panel
            swap.launch(device, (_round_up(n - w, 64), batch), (64, 1), _buffer(a, True),
                        _offset(a), nn, n32, np.int32(n - w), np.int32(k), np.int32(w),
                        _buffer(piv), np.int64(n), np.int32(k), np.int32(k + w))
        rest = n - k - w
        if rest:
            _trsm(device, dtype, True, True, a, k, w, a, k * n + k + w, n, 1, rest)  # U12
            _subtract_product(a[:, k + w:, k + w:], a[:, k + w:, k:k + w], a[:, k:k + w, k + w:])
    return piv, status


def lu_solve(lu: DeviceArray, piv: DeviceArray, b: DeviceArray) -> DeviceArray:
    """Overwrite ``b`` (batch, n, k) with the solutions of A X = B from ``lu_factor``'s
    results; returns ``b``."""
    device, dtype = lu.device, lu.dtype
    batch, n, k = b.shape
    if k <= _COLUMNS_MAX:
        xmax = 1 << max(n - 1, 31).bit_length()
        defines = _defines(device, dtype, 1024, XMAX=xmax)
        wg = defines["WG"]
        local = (xmax + wg + 32 * 32 + 32) * dtype.itemsize
        if wg >= 32 and local <= device.info.local_mem_bytes - 1024:
            get_kernel(device, SOURCE, "lu_solve_columns", defines).launch(
                device, (k * wg, batch), (wg, 1), _buffer(lu), _offset(lu),
                np.int64(n * n), np.int32(n), _buffer(piv), np.int64(n), _buffer(b, True),
                _offset(b), np.int64(n * k), np.int32(k))
            return b
    swap = get_kernel(device, SOURCE, "swap_rows", _defines(device, dtype))
    swap.launch(device, (_round_up(k, 64), batch), (64, 1), _buffer(b, True), _offset(b),
                np.int64(n * k), np.int32(k), np.int32(k), np.int32(k), np.int32(0), _buffer(piv),
                np.int64(n), np.int32(0), np.int32(n))
    nb = _block(device, dtype, n, SOLVE_BLOCKS)
    starts = range(0, n, nb)
    for s in starts:   # L Y = P B, a block of rows at a time
        w = min(nb, n - s)
        _trsm(device, dtype, True, True, lu, s, w, b, s * k, k, 1, k, nb)
        if s + w < n:
            _subtract_product(b[:, s + w:, :], lu[:, s + w:, s:s + w], b[:, s:s + w, :])
    for s in reversed(starts):   # U X = Y, from the last block up
        w = min(nb, n - s)
        _trsm(device, dtype, False, False, lu, s, w, b, s * k, k, 1, k, nb)
        if s:
            _subtract_product(b[:, :s, :], lu[:, :s, s:s + w], b[:, s:s + w, :])
    return b


def lu_det(lu: DeviceArray, piv: DeviceArray) -> tuple[DeviceArray, DeviceArray, DeviceArray]:
    """NumPy's (det, sign, logdet) of each matrix from ``lu_factor``'s results, each (batch,)."""
    device, dtype = lu.device, lu.dtype
    batch, n = lu.shape[0], lu.shape[-1]
    defines = _defines(device, dtype)
    wg = defines["WG"]
    outs = [empty((batch,), dtype, device=device) for _ in range(3)]
    get_kernel(device, SOURCE, "lu_det", defines).launch(
        device, (batch * wg,), (wg,), _buffer(lu), _offset(lu), np.int64(n * n),
        np.int32(n), _buffer(piv), np.int64(n), *(_buffer(v, True) for v in outs))
    return outs[0], outs[1], outs[2]


def cholesky_factor(a: DeviceArray) -> DeviceArray:
    """Overwrite each matrix of ``a`` (batch, n, n) with its lower Cholesky factor (potrf, from
    the lower triangle; zeros above the diagonal); returns status (batch,) int32: 1 + the first
    column whose pivot was not positive, else 0."""
    device, dtype = a.device, a.dtype
    batch, n = a.shape[0], a.shape[-1]
    nb = _block(device, dtype, n, CHOLESKY_BLOCKS)
    defines = _defines(device, dtype, nb=nb)
    wg = defines["WG"]
    status = zeros((batch,), np.int32, device=device)
    block = get_kernel(device, SOURCE, "cholesky_block", defines)
    nn, n32 = np.int64(n * n), np.int32(n)
    for k in range(0, n, nb):
        w = min(nb, n - k)
        block.launch(device, (batch * wg,), (wg,), _buffer(a, True), _offset(a), nn, n32,
                     np.int32(k), np.int32(w), _buffer(status, True))
        rest = n - k - w
        if rest:
            # L21 = A21 L11^-T, as L11 X = A21^T on the transposed view of the block
            _trsm(device, dtype, True, False, a, k, w, a, (k + w) * n + k, 1, n, rest, nb)
            l21 = a[:, k + w:, k:k + w]
            _subtract_product(a[:, k + w:, k + w:], l21, np.swapaxes(l21, -1, -2))
    get_kernel(device, SOURCE, "zero_upper", defines).launch(
        device, (_round_up(n, 16), _round_up(n, 16), batch), (16, 16, 1),
        _buffer(a, True), _offset(a), nn, n32)
    return status
