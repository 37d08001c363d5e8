"""The ``host_taps`` strategy of ``np.convolve`` / ``np.correlate`` for short masks on devices
whose memory is the host's: one vectorised multiply and one add per tap, over the whole signal,
in cache-sized chunks of the output, written straight into the result's host-resident buffer.

NumPy's direct loop (``small_correlate``, masks of up to 11 taps) computes one output at a
time: for each output a short scalar sum. Here each tap is a NumPy ufunc pass over a chunk of
outputs (``out += x[shifted] * w[j]``), so the work is SIMD-wide; a chunk (``CHUNK_BYTES`` of
outputs, its signal slice and one scratch row) stays in the core's L2 across the passes, and
the result is a fresh host-resident one (host-born, or past the device's host-born bound a
pooled buffer that is already paged in). It pays two passes a tap, so it wins for short masks
over long enough signals (see ``ops/convolve.py`` for where it is chosen).

Every output sums its in-window products in NumPy's order (tap 0 first) from a zero start, so
interior values are NumPy's bit for bit (``small_correlate`` starts each sum at 0 and adds the
products in tap order, in the result dtype); a NaN or infinity spoils exactly the outputs whose
window covers it, as in NumPy's loop. The edges, which NumPy sums with its ``dot``, may differ in
the last bit for floats.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["tap_passes", "correlate_taps"]

# Outputs per chunk, in bytes: the chunk, its signal slice and the scratch row (3 x 256 KiB)
# stay in a 2 MiB L2 across a chunk's passes. 2-core Xeon (2 MiB L2 a core), float32, m = 3,
# us per call at N = 2**16 / 2**20: one chunk of everything 35 / 1517, 64 KiB chunks 54 / 1013,
# 256 KiB 38 / 800 (NumPy's loop: 55 / 898).
CHUNK_BYTES = 256 << 10

_multiply, _add = np.multiply, np.add


@lru_cache(maxsize=256)
def tap_passes(n: int, m: int, pad: int, length: int, itemsize: int
               ) -> tuple[tuple[slice, tuple | None, tuple[tuple, ...]], ...]:
    """The passes of one problem, resolved once, chunk by chunk: ``(chunk, first, taps)``.

    ``chunk``: the chunk's outputs; ``first``: (output slice, signal slice) of tap 0, written
    straight into the output (None where the chunk lies before tap 0's first output: there the
    outputs start at 0); ``taps``: (tap j, output slice, signal slice, scratch slice) of the
    other taps that reach into the chunk. Output i of the correlation is
    ``sum_j x[i - pad + j] * w[j]`` over the taps whose signal index lands in ``x``."""
    step = max(1, CHUNK_BYTES // itemsize)
    chunks = []
    for start in range(0, length, step):
        stop = min(start + step, length)
        first, taps = None, []
        for j in range(m):
            lo, hi = max(start, pad - j), min(stop, n + pad - j)
            if lo >= hi:
                continue
            out_s, x_s = slice(lo, hi), slice(lo - pad + j, hi - pad + j)
            if j == 0:
                first = (out_s, x_s)
            else:
                taps.append((j, out_s, x_s, slice(0, hi - lo)))
        chunks.append((slice(start, stop), first, tuple(taps)))
    return tuple(chunks)


def correlate_taps(out: np.ndarray, x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """``out[i] = sum_j x[i - pad + j] * w[j]`` (in-window terms only) for every i, in NumPy's
    order and result dtype; ``out``, ``x`` and ``w`` share one dtype of
    ``dtypes.HOST_TAPS_DTYPES``. ``out`` may be a strided view (a reversed one for
    ``np.correlate``'s swapped operands)."""
    n, m, length = x.shape[0], w.shape[0], out.shape[0]
    itemsize = out.dtype.itemsize
    chunks = tap_passes(n, m, pad, length, itemsize)
    weights = [w[j] for j in range(m)]  # NumPy scalars of the dtype: the passes keep it
    scratch = np.empty(min(length, max(1, CHUNK_BYTES // itemsize)), out.dtype)
    # NumPy's loop raises no floating-point warnings (inf * 0, overflow): neither do the passes
    with np.errstate(all="ignore"):
        _passes(out, x, chunks, weights, scratch, out.dtype.kind == "f")
    return out


def _passes(out: np.ndarray, x: np.ndarray, chunks: tuple, weights: list,
            scratch: np.ndarray, floats: bool) -> None:
    w0 = weights[0]
    for chunk, first, taps in chunks:
        if first is None:
            out[chunk] = 0
        else:
            if first[0].start > chunk.start:  # the outputs before tap 0's first one
                out[chunk.start:first[0].start] = 0
            _multiply(x[first[1]], w0, out=out[first[0]])
        for j, out_s, x_s, tmp_s in taps:
            t, o = scratch[tmp_s], out[out_s]
            _multiply(x[x_s], weights[j], out=t)
            _add(o, t, out=o)
        if floats:  # NumPy's sums start at 0: where every product is -0.0 the sum is +0.0
            o = out[chunk]
            _add(o, 0, out=o)
