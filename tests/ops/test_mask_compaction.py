"""Boolean-mask indexing (``x[mask]``) on the device: the compaction of opencl/compact.cl against
NumPy bit for bit, for every element size, mask pattern, length (one chunk, several, more chunks
than the count scan has lanes), mask over leading dimensions, strided, reversed, transposed and
offset views of x and of the mask, empty arrays; and the three kernels under Oclgrind with its
checks on, at work-group sizes small enough that a few dozen elements span several chunks."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import compaction

from conftest import assert_clean_under_oclgrind


LENGTHS = [1, 7, 31, 33, 257, 4099, 70000]
DTYPES = ["float32", "float64", "int32", "int8", "uint8", "int16", "int64", "bool"]


def _dtypes(device) -> list[str]:
    return [d for d in DTYPES if d != "float64" or device.info.fp64]


def _source(rng, shape, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _masks(rng, n) -> dict[str, np.ndarray]:
    last = np.zeros(n, bool)
    last[-1] = True
    return {"none": np.zeros(n, bool), "all": np.ones(n, bool), "random": rng.random(n) < 0.5,
            "sparse": rng.random(n) < 0.02, "last": last}


def _same(got, want) -> None:
    """The device result equals NumPy's bit for bit (shape, dtype, bytes)."""
    host = np.asarray(got)
    assert isinstance(got, cg.DeviceArray)
    assert host.shape == want.shape and host.dtype == want.dtype, (host.shape, want.shape,
                                                                   host.dtype, want.dtype)
    assert np.array_equal(host.view(np.uint8), want.view(np.uint8)), "values differ"


@pytest.mark.parametrize("n", LENGTHS)
def test_flat_mask_matches_numpy_for_every_dtype(device, n):
    rng = np.random.default_rng(n)
    for dtype in _dtypes(device):
        a = _source(rng, n, dtype)
        x = cg.asarray(a, device=device)
        for m in _masks(rng, n).values():
            _same(x[cg.asarray(m, device=device)], a[m])
            _same(x[m], a[m])  # a NumPy mask, uploaded


def test_self_mask_and_special_floats_keep_their_bits(device):
    a = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    specials = np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0x80000000, 0x7F800000],
                        np.uint32).view(np.float32)   # NaN payloads, signalling NaN, -0.0, inf
    a[[3, 100, 500, 998, 999]] = specials
    x = cg.asarray(a, device=device)
    _same(x[x > 0], a[a > 0])
    keep = np.isnan(a) | (a == 0) | np.isinf(a)
    _same(x[keep], a[keep])
    assert np.array_equal(np.asarray(x[keep]).view(np.uint32), specials.view(np.uint32))
    if device.info.fp64:
        d = np.array([np.nan, -0.0, 1.0, -np.inf], np.float64)
        d[0] = np.array([0x7FF8000000000123], np.uint64).view(np.float64)[0]
        m = np.array([True, True, False, True])
        _same(cg.asarray(d, device=device)[m], d[m])


def test_more_chunks_than_the_count_scan_has_lanes(device):
    kernels = compaction._kernels(device)
    n = kernels.wg * compaction.ITEMS_CHOICES[0] * kernels.scan_wg + 12345
    assert -(-n // (kernels.wg * kernels.items(n))) > kernels.scan_wg
    rng = np.random.default_rng(2)
    a = rng.integers(-100, 100, n).astype(np.int32)
    x = cg.asarray(a, device=device)
    _same(x[x > 0], a[a > 0])
    m = np.zeros(n, bool)
    m[[0, n // 2, n - 1]] = True
    _same(x[m], a[m])


@pytest.mark.parametrize("shape, lead", [((6, 5), 1), ((6, 5), 2), ((3, 4, 5), 1),
                                         ((3, 4, 5), 2), ((3, 4, 5), 3), ((2, 3, 4, 5, 2), 2)])
def test_mask_over_leading_dimensions(device, shape, lead):
    rng = np.random.default_rng(3)
    for dtype in ("float32", "int8", "bool"):
        a = _source(rng, shape, dtype)
        x = cg.asarray(a, device=device)
        for m in _masks(rng, int(np.prod(shape[:lead]))).values():
            m = m.reshape(shape[:lead])
            _same(x[cg.asarray(m, device=device)], a[m])


def test_long_rows_over_few_chunks(device):
    """Few chunks of long rows: mask_compact splits each chunk's copy over several groups."""
    rng = np.random.default_rng(4)
    for shape in ((100, 4096), (3, 70001), (4099, 33)):
        a = rng.standard_normal(shape).astype(np.float32)
        x = cg.asarray(a, device=device)
        for m in _masks(rng, shape[0]).values():
            _same(x[m], a[m])
        b = a.reshape(shape[0], -1, 1)
        _same(cg.asarray(b, device=device)[a[:, 0] > 0], b[a[:, 0] > 0])


def test_views_of_x_and_of_the_mask(device):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((37, 29)).astype(np.float32)
    m = rng.random((37, 29)) < 0.4
    x = cg.asarray(a, device=device)
    mx = cg.asarray(m, device=device)
    _same(x[::2][mx[::2]], a[::2][m[::2]])
    _same(x.T[mx.T], a.T[m.T])
    _same(x.T[mx[0]], a.T[m[0]])
    _same(x[1:, 2:][mx[1:, 2:]], a[1:, 2:][m[1:, 2:]])
    _same(x[::-1][mx[::-1, 0]], a[::-1][m[::-1, 0]])
    _same(x[::-3, ::-2][mx[::-3, 5]], a[::-3, ::-2][m[::-3, 5]])
    _same(x[:, ::3][mx[:, 1]], a[:, ::3][m[:, 1]])       # strided columns
    _same(x.T[3:][mx[0, 3:]], a.T[3:][m[0, 3:]])          # transposed rows at an offset
    _same(x[5][mx[7]], a[5][m[7]])
    _same(x.ravel()[7:][mx.ravel()[:-7]], a.ravel()[7:][m.ravel()[:-7]])
    _same(x.ravel()[::-2][mx.ravel()[::2]], a.ravel()[::-2][m.ravel()[::2]])
    b = rng.standard_normal((4, 6, 5)).astype(np.float32)
    y = cg.asarray(b, device=device)
    t = b.transpose(2, 0, 1)
    mt = rng.random((5, 4)) < 0.5
    _same(y.transpose(2, 0, 1)[mt], t[mt])                 # rows of 3-D columns, strided
    _same(y.transpose(2, 0, 1)[cg.asarray(mt, device=device)], t[mt])
    # a broadcast mask (stride 0)
    row = np.array([True])
    _same(x[:, 0][np.broadcast_to(cg.asarray(row, device=device), (37,))],
          a[:, 0][np.broadcast_to(row, (37,))])


def test_empty_arrays(device):
    for shape, lead in (((0,), 1), ((0, 4), 1), ((3, 0), 1), ((3, 0), 2), ((0, 3), 2),
                        ((2, 0, 3), 1)):
        a = np.zeros(shape, np.float32)
        for m in (np.zeros(shape[:lead], bool), np.ones(shape[:lead], bool)):
            _same(cg.asarray(a, device=device)[cg.asarray(m, device=device)], a[m])


def test_shape_mismatch_raises_numpys_error(device):
    a = np.zeros((4, 5), np.float32)
    x = cg.asarray(a, device=device)
    for m in (np.ones(5, bool), np.ones((4, 4), bool)):
        with pytest.raises(IndexError) as ours:
            x[cg.asarray(m, device=device)]
        with pytest.raises(IndexError) as numpys:
            a[m]
        assert str(ours.value) == str(numpys.value)


# argv: none. Runs the three kernels on the Oclgrind device at small work-group sizes, with the
# buffers it writes poisoned, and compares with NumPy; exit status 3 on a wrong result.
SCRIPT = r"""
import sys
import numpy as np
import pyopencl as cl
import clarray_gemm as cg
from clarray_gemm.kernels.copy import as_long8, merge_dims
from clarray_gemm.kernels.programs import get_kernel
from clarray_gemm.ops import compaction

dev = next(d for d in cg.devices() if d.info.is_simulator)
ctx, queue = dev.context, dev.queue
rng = np.random.default_rng(0)
POISON = 0x5A
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

kept = []

def buffer(host):
    # COPY_HOST_PTR: Oclgrind's uninitialized-value checker sees the contents as written. Kept
    # to the end: launchers remember a buffer by its handle (the library's come from pools), and
    # a freed handle given to a new buffer would leave them the old one.
    host = host if host.nbytes else np.zeros(16, np.uint8)  # OpenCL has no 0-byte buffers
    kept.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                          hostbuf=host))
    return kept[-1]

def fail(*what):
    print("MISMATCH", *what)
    sys.exit(3)

def run(a, m, wg, items, scan_wg, slices):
    # a: rows x columns source view (NumPy), m: 1-D bool mask view
    n = a.shape[0]
    isz = a.itemsize
    base = a.base if a.base is not None else a
    cols, (cstride,) = merge_dims(a.shape[1:], [s // isz for s in a.strides[1:]])
    n_cols = int(np.prod(a.shape[1:]))
    src_buf = buffer(np.ascontiguousarray(base).view(np.uint8).ravel())
    src_off = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // isz
    mbase = m.base if m.base is not None else m
    mask_buf = buffer(np.ascontiguousarray(mbase).view(np.uint8).ravel())
    mask_off = m.__array_interface__["data"][0] - mbase.__array_interface__["data"][0]
    n_groups = -(-n // (wg * items))
    counts = np.full(n_groups + 1, -7, np.int64)
    counts_buf = buffer(counts)
    want = a[m].reshape(-1).view(UINT[isz])
    dst = np.full((want.size + 5) * isz, POISON, np.uint8)
    dst_buf = buffer(dst)
    chunk = {"WG": wg, "ITEMS": items}
    count_k = get_kernel(dev, "compact.cl", "mask_count", chunk)
    scan_k = get_kernel(dev, "compact.cl", "count_scan", {"SCAN_WG": scan_wg})
    compact_k = get_kernel(dev, "compact.cl", "mask_compact",
                           dict(chunk, T=compaction._UINT[isz], NDIM=len(cols)))
    count_k(queue, (n_groups * wg,), (wg,), np.int64(n), mask_buf, np.int64(mask_off),
            np.int64(m.strides[0]), counts_buf)
    scan_k(queue, (scan_wg,), (scan_wg,), np.int64(n_groups), counts_buf)
    cl.enqueue_copy(queue, counts, counts_buf)
    per_chunk = [int(m[g * wg * items:(g + 1) * wg * items].sum()) for g in range(n_groups)]
    if counts[0] != m.sum() or list(counts[1:]) != list(np.cumsum([0] + per_chunk)[:-1]):
        fail("counts", counts, per_chunk)
    if n_cols:
        compact_k(queue, (n_groups * wg, slices), (wg, 1), np.int64(n), np.int64(n_cols),
                  src_buf, np.int64(src_off), np.int64(a.strides[0] // isz),
                  as_long8(cols, 1), as_long8(cstride, 0), mask_buf, np.int64(mask_off),
                  np.int64(m.strides[0]), counts_buf, dst_buf)
    cl.enqueue_copy(queue, dst, dst_buf)
    got = dst.view(UINT[isz])
    if not np.array_equal(got[:want.size], want) or (dst[want.size * isz:] != POISON).any():
        fail(a.shape, a.strides, m.strides, wg, items, scan_wg, slices, got, want)

for n in (1, 7, 33, 50, 131):
    for dtype in (np.float32, np.int8, np.int16, np.float64):
        a = rng.standard_normal(n).astype(dtype) if dtype != np.int8 else \
            rng.integers(-100, 100, n).astype(dtype)
        for m in (rng.random(n) < 0.5, np.ones(n, bool), np.zeros(n, bool)):
            run(a, m, 8, 2, 4, 1)
    a = rng.standard_normal((n, 3)).astype(np.float32)
    m = rng.random(n) < 0.6
    run(a, m, 8, 2, 4, 1)
    run(a, m, 8, 2, 4, 3)                     # the chunk's copy in three slices
    run(a[::-1, ::2], m[::-1], 4, 3, 2, 2)    # reversed rows, strided columns and mask
    big = rng.standard_normal((n, 4, 3)).astype(np.float32)
    run(big.transpose(0, 2, 1), m, 8, 2, 8, 2)  # two column dimensions
    run(rng.standard_normal((n, 0)).astype(np.float32), m, 8, 2, 4, 1)

# the public path at the device's own geometry, over two chunks
a = rng.standard_normal(2100).astype(np.float32)
x = cg.asarray(a, device=dev)
got = np.asarray(x[x > 0])
if not np.array_equal(got, a[a > 0]):
    fail("x[x > 0]")
b = rng.standard_normal((70, 9)).astype(np.float32)
if not np.array_equal(np.asarray(cg.asarray(b, device=dev)[b[:, 0] > 0]), b[b[:, 0] > 0]):
    fail("rows")
print("ok")
"""


@pytest.mark.slow
def test_kernels_are_clean_under_oclgrind(oclgrind):
    assert_clean_under_oclgrind(SCRIPT)
