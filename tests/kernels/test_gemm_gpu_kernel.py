"""The ``gpu_blocked`` GEMM kernel (opencl/gemm_gpu.cl): correct on every device it may run on.

* On the local CPU driver (forced, since it only ranks on GPUs): every operand layout, odd sizes,
  offsets (scalar-load path) and aligned ones (vector path), batches and broadcast batches,
  split-K, every tile preset, float64, with and without the interior fast path.
* Under the Oclgrind simulator with its API, data-race and uninitialized-value checks, in a subprocess
  (marked slow): small odd shapes through the presets, split-K and both pipelines.
* The selection logic (vector flags, split-K and preset choice for a 132-unit GPU, ranks).
* On a real OpenCL GPU (marked gpu, skipped without one): the kernel is chosen and correct at
  sizes that fill the device.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm, gemm_gpu
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem

from conftest import first_device, oclgrind_environment, rel_error

KERNEL = "gpu_blocked"


def _operands(rng, M, N, K, ta, tb, dtype=np.float32, batch=()):
    a = rng.standard_normal(batch + ((K, M) if ta else (M, K))).astype(dtype)
    b = rng.standard_normal(batch + ((N, K) if tb else (K, N))).astype(dtype)
    return a, b


def _product(device, a, b, ta, tb, params=None):
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    if ta:
        x, a = x.swapaxes(-1, -2), np.swapaxes(a, -1, -2)
    if tb:
        y, b = y.swapaxes(-1, -2), np.swapaxes(b, -1, -2)
    got = np.asarray(cg.matmul(x, y, kernel=KERNEL, params=params))
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    return got, want


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 7, 3), (129, 131, 67), (128, 256, 64),
                                   (200, 64, 300)])
def test_layouts_and_sizes(cpu, ta, tb, shape):
    rng = np.random.default_rng(hash((ta, tb, shape)) % 2**32)
    got, want = _product(cpu, *_operands(rng, *shape, ta, tb), ta, tb)
    assert got.shape == want.shape
    assert np.all(np.isfinite(got))
    assert rel_error(got, want) < 1e-5


@pytest.mark.parametrize("preset", sorted(gemm_gpu.PRESETS))
def test_every_preset(cpu, preset):
    rng = np.random.default_rng(preset)
    for ta, tb, shape in ((False, False, (150, 270, 45)), (True, True, (260, 132, 36))):
        got, want = _product(cpu, *_operands(rng, *shape, ta, tb), ta, tb,
                             {"PRESET": preset, "KSPLIT": 1})
        assert rel_error(got, want) < 1e-5, (preset, ta, tb, shape)


@pytest.mark.parametrize("params", [{"PRESET": 9}, {"PRESET": 7}, {"PRESET": 4, "KSPLIT": 3},
                                    {"PRESET": 9, "EDGE_ONLY_CLAMP": 0}])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
@pytest.mark.parametrize("shape", [(131, 77, 41), (132, 76, 44)])  # scalar / vector loads
def test_edge_tiles_keep_the_last_row_and_column_to_themselves(cpu, params, ta, tb, shape):
    """Edge tiles read rows of A past M as row M-1 and columns of B past N as column N-1 (the
    interior's loads): a NaN in A's last row and an infinity in B's last column reach only C's
    last row and column, where NumPy has them, and the rest of C is NumPy's product."""
    rng = np.random.default_rng(sum(shape))
    M, N, K = shape
    a, b = _operands(rng, M, N, K, ta, tb)
    (a.T if ta else a)[-1, :] = np.nan
    (b.T if tb else b)[:, -1] = np.inf
    with np.errstate(invalid="ignore"):  # NumPy's inf - inf in the last column
        got, want = _product(cpu, a, b, ta, tb, {"KSPLIT": 1, **params})
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert np.isfinite(want[:-1, :-1]).all()
    assert rel_error(got[:-1, :-1], want[:-1, :-1]) < 1e-5


@pytest.mark.parametrize("params", [{"PRESET": 7, "KSPLIT": 3}, {"PRESET": 4, "KSPLIT": 5},
                                    {"PRESET": 7, "KSPLIT": 3, "FINISH_LAST": 1},
                                    {"PRESET": 4, "KSPLIT": 5, "FINISH_LAST": 0},
                                    {"PRESET": 7, "EDGE_ONLY_CLAMP": 0},
                                    {"PRESET": 1, "EDGE_ONLY_CLAMP": 0, "KSPLIT": 2},
                                    {"PRESET": 7, "WARP_X": 4, "GROUP_M": 1, "PAD_B": 4},
                                    {"PRESET": 1, "BK": 16}])
def test_parameters(cpu, params):
    rng = np.random.default_rng(len(str(params)))
    for ta, tb, shape in ((False, False, (131, 77, 1001)), (False, True, (64, 128, 260))):
        got, want = _product(cpu, *_operands(rng, *shape, ta, tb), ta, tb, params)
        assert rel_error(got, want) < 1e-5, (params, ta, tb, shape)


@pytest.mark.parametrize("shape,batch,shared", [((7, 5, 3), (), None), ((33, 257, 31), (), None),
                                               ((128, 130, 64), (), None),
                                               ((13, 11, 17), (4,), None),
                                               ((16, 40, 9), (3,), "a"), ((21, 12, 10), (3,), "b")])
@pytest.mark.parametrize("tb", [False, True])
def test_packed_operands(cpu, monkeypatch, shape, batch, shared, tb):
    """PACK_A=1 / PACK_B=1: A (row-major) and B (either layout) copied into scratch space with
    rows along K first (operand_pack.cl), in batches or once for a broadcast operand; the
    same bits as reading them in place, every element written."""
    packed = []
    real = gemm_gpu._prepare_packed
    monkeypatch.setattr(gemm_gpu, "_prepare_packed",
                        lambda *args: packed.append(args[5:]) or real(*args))
    rng = np.random.default_rng(sum(shape))
    a, b = _operands(rng, *shape, False, tb, batch=batch)
    a, b = (a[0] if shared == "a" else a), (b[0] if shared == "b" else b)
    x, y = cg.asarray(a, device=cpu), cg.asarray(b, device=cpu)
    if tb:
        y, b = y.swapaxes(-1, -2), np.swapaxes(b, -1, -2)
    want = np.matmul(a.astype(np.float64), b)
    first = None
    for flags in ((1, 1), (1, 0), (0, 1), (0, 0)):
        for preset in (0, 7):
            params = {"PACK_A": flags[0], "PACK_B": flags[1], "PRESET": preset}
            out = cg.asarray(np.full(want.shape, np.nan, np.float32), device=cpu)  # poisoned
            cg.matmul(x, y, out=out, kernel=KERNEL, params=params)
            got = np.asarray(out)
            assert rel_error(got, want) < 1e-5, params
            first = got if first is None else first
            np.testing.assert_array_equal(got, first)
    assert packed == [(True, True)] * 2 + [(True, False)] * 2 + [(False, True)] * 2
    text = cg.explain_matmul(x, y, kernel=KERNEL, params={"PACK_A": 1, "PACK_B": 1})
    assert "A and B first packed with rows along K" in text, text


def test_packed_operand_refusals(cpu, h100_info):
    """PACK_A/PACK_B take float32 and one batch level, unsplit; automatically only on GPUs,
    for wide products of a row-major A or a column-major B."""
    x = cg.asarray(np.ones((8, 8), np.int32), device=cpu)
    for name in ("PACK_A", "PACK_B"):
        with pytest.raises(ValueError, match="float32"):
            cg.matmul(x, x, kernel=KERNEL, params={name: 1})
        y = cg.asarray(np.ones((8, 8), np.float32), device=cpu)
        with pytest.raises(ValueError, match="KSPLIT 1"):
            cg.matmul(y, y, kernel=KERNEL, params={name: 1, "KSPLIT": 2})

    def packs(problem, info=h100_info, **params):
        d = gemm_gpu.resolve(problem, info, params)
        return d["PACK_A"], d["PACK_B"]
    assert packs(_problem(4096, 4096, 4096)) == (1, 0)  # B row-major: nothing to gain
    assert packs(_problem(4096, 4096, 4096), cpu.info) == (0, 0)
    assert packs(_problem(4096, 2048, 4096)) == (0, 0)  # narrow
    small = dataclasses.replace(h100_info, global_mem_bytes=1 << 29)  # scratch 64 MiB > 1/16
    assert packs(_problem(4096, 4096, 4096), small) == (0, 0)
    assert packs(_problem(4096, 4096, 4096, trans_a=True)) == (0, 0)  # already k-major
    assert packs(_problem(4096, 4096, 4096), PACK_A=0) == (0, 0)
    trans_b = _problem(4096, 4096, 4096, trans_b=True)
    assert packs(trans_b) == (1, 1)
    assert packs(dataclasses.replace(trans_b, M=2048)) == (1, 0)  # short: B's pack does not pay


@pytest.mark.parametrize("last", [0, 1])
def test_split_k_with_empty_slices(cpu, last):
    # K = 9 in 8 slices of one K step each: slices past K write zeros that the sum must ignore
    # (summed by the reduction kernel, or with FINISH_LAST by each tile's last slice).
    rng = np.random.default_rng(11)
    got, want = _product(cpu, *_operands(rng, 33, 40, 9, False, False), False, False,
                         {"PRESET": 4, "KSPLIT": 8, "FINISH_LAST": last})
    assert rel_error(got, want) < 1e-5


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16])
def test_split_k_finished_in_the_last_slice_wraps_and_narrows(cpu, dtype):
    """Integers split over K and summed by each tile's last slice: NumPy's wrapped sums, kept
    narrow in C, the same as the reduction kernel's, twice in a row (the counters reset)."""
    rng = np.random.default_rng(12)
    a = rng.integers(0, 120, (3, 37, 300)).astype(dtype)
    b = rng.integers(0, 120, (3, 300, 29)).astype(dtype)
    x, y = cg.asarray(a, device=cpu), cg.asarray(b, device=cpu)
    with np.errstate(over="ignore"):
        want = np.matmul(a, b)
    for last in (1, 1, 0):
        got = cg.matmul(x, y, kernel=KERNEL, params={"PRESET": 4, "KSPLIT": 4,
                                                     "FINISH_LAST": last})
        np.testing.assert_array_equal(np.asarray(got), want)


def test_batches_and_broadcast(cpu):
    rng = np.random.default_rng(3)
    a, b = _operands(rng, 37, 52, 29, False, False, batch=(3,))
    got, want = _product(cpu, a, b, False, False)
    assert rel_error(got, want) < 1e-5
    # one A for every B (batch stride 0), transposed B
    a2 = rng.standard_normal((40, 24)).astype(np.float32)
    b2 = rng.standard_normal((4, 36, 24)).astype(np.float32)
    y = cg.asarray(b2, device=cpu).swapaxes(-1, -2)
    got = np.asarray(cg.matmul(cg.asarray(a2, device=cpu), y, kernel=KERNEL))
    assert rel_error(got, np.matmul(a2.astype(np.float64), np.swapaxes(b2, -1, -2))) < 1e-5


@pytest.mark.parametrize("shape_a,shape_b,tb,params", [
    ((3, 1, 7, 5), (1, 4, 5, 9), False, None),
    ((2, 1, 33, 17), (1, 5, 17, 31), True, None),          # B transposed (TRANS_B)
    ((8, 1, 64, 64), (1, 32, 64, 64), False, None),        # aligned: vector loads
    ((1, 6, 29, 40), (3, 1, 40, 11), False, {"KSPLIT": 2}),  # A inner, B outer; split K
    ((4, 1, 1, 13), (1, 3, 13, 1), False, None),          # vectors in a broadcast batch
])
def test_batch_dimensions_broadcast_against_each_other(cpu, monkeypatch, shape_a, shape_b, tb,
                                                       params):
    """(8, 1, m, k) @ (1, 32, k, n): one launch with two batch levels, no packed copies of
    either operand; the explanation says so."""
    from clarray_gemm.ops import matmul as matmul_op
    rng = np.random.default_rng(11)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    x = cg.asarray(a, device=cpu)
    y = (cg.asarray(np.ascontiguousarray(np.swapaxes(b, -1, -2)), device=cpu).swapaxes(-1, -2)
         if tb else cg.asarray(b, device=cpu))
    monkeypatch.setattr(matmul_op, "packed",
                        lambda *args: pytest.fail("operand packed: two levels expected"))
    got = np.asarray(cg.matmul(x, y, kernel=KERNEL, params=params))
    assert rel_error(got, np.matmul(a.astype(np.float64), b)) < 1e-5
    assert "batches: two levels" in cg.explain_matmul(x, y, kernel=KERNEL, params=params)


def test_batch_levels_that_do_not_merge_are_packed(cpu):
    """Three batch levels (no kernel addresses them), or a kernel without two levels forced:
    the operands are packed first, and the answer is NumPy's."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((2, 1, 3, 9, 5)).astype(np.float32)
    b = rng.standard_normal((1, 4, 1, 5, 7)).astype(np.float32)
    x, y = cg.asarray(a, device=cpu), cg.asarray(b, device=cpu)
    want = np.matmul(a.astype(np.float64), b)
    for kernel in (KERNEL, "naive"):
        assert rel_error(np.asarray(cg.matmul(x, y, kernel=kernel)), want) < 1e-5
        assert "two levels" not in cg.explain_matmul(x, y, kernel=kernel)
    x2 = cg.asarray(a[:, :, 0], device=cpu)  # (2, 1, 9, 5) @ (1, 4, 5, 7) forced on naive
    got = np.asarray(cg.matmul(x2, y[:, :, 0], kernel="naive"))
    assert rel_error(got, np.matmul(a[:, :, 0].astype(np.float64), b[:, :, 0])) < 1e-5
    assert "two levels" not in cg.explain_matmul(x2, y[:, :, 0], kernel="naive")


def test_offset_views(cpu):
    """Sub-matrix views: an unaligned offset takes the scalar path, an aligned one the vector
    path; both read only their own elements."""
    rng = np.random.default_rng(5)
    base_a = rng.standard_normal((70, 90)).astype(np.float32)
    base_b = rng.standard_normal((90, 100)).astype(np.float32)
    xa, xb = cg.asarray(base_a, device=cpu), cg.asarray(base_b, device=cpu)
    for ra, ca, rb, cb in ((slice(1, 66), slice(3, 84), slice(2, 83), slice(5, 97)),
                           (slice(4, 68), slice(4, 84), slice(8, 88), slice(8, 96))):
        x, y = xa[ra, ca], xb[rb, cb]
        got = np.asarray(cg.matmul(x, y, kernel=KERNEL))
        want = base_a[ra, ca].astype(np.float64) @ base_b[rb, cb]
        assert rel_error(got, want) < 1e-5


def test_float64(cpu):
    if not cpu.info.fp64:
        pytest.skip("no fp64 on this driver")
    rng = np.random.default_rng(6)
    for ta, tb in ((False, False), (True, True)):
        got, want = _product(cpu, *_operands(rng, 61, 63, 65, ta, tb, np.float64), ta, tb)
        assert rel_error(got, want) < 1e-12


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("params", [{"PRESET": 4}, {"PRESET": 7, "KSPLIT": 3}, {"PRESET": 1}])
def test_integers_exact_and_wrapping(cpu, dtype, params):
    """Exact, with products and sums that overflow wrapping as NumPy's do."""
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    for (M, N, K), ta, tb in (((33, 31, 257), False, True), ((7, 129, 65), True, False)):
        a = rng.integers(info.min, info.max, (K, M) if ta else (M, K), dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, (N, K) if tb else (K, N), dtype=dtype, endpoint=True)
        x, y = cg.asarray(a, device=cpu), cg.asarray(b, device=cpu)
        if ta:
            x, a = x.mT, a.T
        if tb:
            y, b = y.mT, b.T
        out = cg.asarray(np.full((M, N), 7, dtype), device=cpu)    # poisoned
        cg.matmul(x, y, out=out, kernel=KERNEL, params=params)
        np.testing.assert_array_equal(np.asarray(out), a @ b)


# -- selection ---------------------------------------------------------------------------------
def _problem(M, N, K, batch=1, offset=0, ld_a=None, trans_a=False, trans_b=False):
    buf = None  # resolve() and the cost model never touch buffers
    lda = ld_a or (M if trans_a else K)
    return GemmProblem(batch, M, N, K, np.dtype(np.float32),
                       GemmOperand(buf, offset, lda, M * K, trans_a),
                       GemmOperand(buf, 0, K if trans_b else N, K * N, trans_b),
                       GemmOperand(buf, 0, N, M * N))


@pytest.fixture(scope="module")
def h100_info(cpu) -> cg.DeviceInfo:
    return dataclasses.replace(cpu.info, type="GPU", compute_units=132, vendor="NVIDIA Corporation",
                               local_mem_bytes=49152, max_work_group_size=1024)


def test_vector_flags_follow_alignment(h100_info):
    d = gemm_gpu.resolve(_problem(256, 256, 256), h100_info, {})
    assert (d["VEC_A"], d["VEC_B"], d["VEC_C"]) == (1, 1, 1)
    assert gemm_gpu.resolve(_problem(256, 256, 257), h100_info, {})["VEC_A"] == 0
    assert gemm_gpu.resolve(_problem(256, 256, 256, offset=2), h100_info, {})["VEC_A"] == 0
    assert gemm_gpu.resolve(_problem(256, 254, 256), h100_info, {})["VEC_B"] == 0
    # transposed A is contiguous along M: M decides
    assert gemm_gpu.resolve(_problem(255, 256, 256, trans_a=True, ld_a=256), h100_info, {})["VEC_A"] == 0
    assert gemm_gpu.resolve(_problem(256, 256, 255, trans_a=True), h100_info, {})["VEC_A"] == 1


def test_shape_heuristic(h100_info):
    big = gemm_gpu.resolve(_problem(4096, 4096, 4096), h100_info, {})
    assert (big["PRESET"], big["KSPLIT"]) == (7, 1)
    skinny = gemm_gpu.resolve(_problem(64, 8192, 8192), h100_info, {})
    assert skinny["KSPLIT"] > 1 and skinny["BM"] == 64
    tall = gemm_gpu.resolve(_problem(8192, 64, 8192), h100_info, {})
    assert tall["KSPLIT"] > 1 and tall["BN"] == 64
    assert gemm_gpu.resolve(_problem(8192, 8192, 64), h100_info, {})["KSPLIT"] == 1
    # slices down to 128 deep (measured: 64x1024x1024 in 8, 768^3 in 6 beat 4 and 3)
    assert gemm_gpu.resolve(_problem(64, 1024, 1024), h100_info, {})["KSPLIT"] == 8
    cube = gemm_gpu.resolve(_problem(768, 768, 768), h100_info, {})
    assert (cube["PRESET"], cube["KSPLIT"]) == (7, 6)
    assert gemm_gpu.resolve(_problem(3000, 700, 5000), h100_info, {})["PRESET"] == 9  # 128 x 64
    forced = gemm_gpu.resolve(_problem(64, 8192, 8192), h100_info, {"PRESET": 1, "KSPLIT": 2})
    assert (forced["BM"], forced["KSPLIT"]) == (128, 2)


def test_edge_split_cuts_only_slivers_of_large_single_products(cpu, h100_info):
    assert gemm_gpu.edge_split(_problem(4097, 2049, 3001), h100_info, {}) == (4096, 2048)
    assert gemm_gpu.edge_split(_problem(4097, 2048, 512), h100_info, {}) == (4096, 2048)
    assert gemm_gpu.edge_split(_problem(4096, 4096, 4096), h100_info, {}) is None  # no sliver
    assert gemm_gpu.edge_split(_problem(4160, 4096, 512), h100_info, {}) is None  # half a tile
    assert gemm_gpu.edge_split(_problem(257, 257, 64), h100_info, {}) is None  # < one wave
    assert gemm_gpu.edge_split(_problem(4097, 2049, 3001), cpu.info, {}) is None  # no GPU
    batched = dataclasses.replace(_problem(4097, 2049, 301), batch=2)
    assert gemm_gpu.edge_split(batched, h100_info, {}) is None


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False)])
def test_edge_split_products_write_every_part(cpu, h100_info, ta, tb):
    """The split plan on a GPU (the CPU driver's context behind a device that reports the
    H100's capabilities, 16 units): the main block, the rows below it and the columns beside
    it (each with its own kernel), from transposed views at an offset, every element of one C
    as NumPy's."""
    gpu = object.__new__(cg.Device)
    gpu.__dict__.update(cpu.__dict__)
    gpu.info = dataclasses.replace(h100_info, compute_units=16)  # 8 x 8 tiles fill a wave
    rng = np.random.default_rng(9)
    M, N, K = 515, 513, 257   # K from gemm_gpu.EDGE_MIN_K: slivers worth their launches
    a_store = rng.standard_normal((K + 1, M) if ta else (M, K + 1)).astype(np.float32)
    b_store = rng.standard_normal((N, K + 1) if tb else (K + 1, N)).astype(np.float32)
    a = (a_store[1:] if ta else a_store[:, 1:])
    b = (b_store[:, 1:] if tb else b_store[1:])
    with cg.host_path(False):
        xs, ys = cg.asarray(a_store, device=gpu), cg.asarray(b_store, device=gpu)
        x = (xs[1:] if ta else xs[:, 1:])
        y = (ys[:, 1:] if tb else ys[1:])
        x, y = (x.T if ta else x), (y.T if tb else y)
        explained = cg.explain_matmul(x, y)
        assert "split where the last tiles would hold slivers" in explained, explained
        for _ in range(2):  # the plan's first call and a repeated one
            got = np.asarray(x @ y)
            want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b)
            assert rel_error(got, want) < 1e-5


def test_rank_and_fits(cpu, h100_info):
    variant = gemm.CATALOGUE[KERNEL]
    p = _problem(512, 512, 512)
    assert variant.rank(p, h100_info) > max(v.rank(p, h100_info) for v in gemm.CATALOGUE
                                            if v.name != KERNEL)
    assert variant.rank(p, cpu.info) == 0
    sim = dataclasses.replace(h100_info, is_simulator=True)
    assert variant.rank(p, sim) == 0
    ints = dataclasses.replace(p, dtype=np.dtype(np.int32))
    assert variant.fits(ints, h100_info, dict(variant.defaults)) is None
    assert variant.rank(ints, h100_info) == variant.rank(p, h100_info)
    int64 = dataclasses.replace(p, dtype=np.dtype(np.int64))   # measured: above vec, preset 4
    assert variant.rank(int64, h100_info) > gemm.CATALOGUE["vec"].rank(int64, h100_info)
    assert gemm_gpu.resolve(int64, h100_info, {})["PRESET"] in (1, 4)
    big = dataclasses.replace(p, M=4096, N=4096, K=4096)
    assert gemm_gpu.resolve(dataclasses.replace(big, dtype=np.dtype(np.int64)), h100_info,
                            {})["PRESET"] == 4
    assert gemm_gpu.resolve(dataclasses.replace(big, dtype=np.dtype(np.int32)), h100_info,
                            {})["PRESET"] == 1
    halves = dataclasses.replace(p, dtype=np.dtype(np.float16))
    assert "float16" in variant.fits(halves, h100_info, dict(variant.defaults))
    small = dataclasses.replace(h100_info, local_mem_bytes=8192)
    assert "local memory" in variant.fits(p, small, dict(variant.defaults))
    assert variant.fits(p, h100_info, dict(variant.defaults)) is None


# -- Oclgrind ----------------------------------------------------------------------------------
def _oclgrind_child() -> None:
    """Run in a subprocess with Oclgrind's checks on: print one line per case, exit 1 on error."""
    sim = next(d for d in cg.devices() if d.info.is_simulator and d.usable)
    rng = np.random.default_rng(0)
    cases = [((13, 9, 7), False, False, {"PRESET": 4}),
             ((70, 66, 19), True, False, {"PRESET": 4, "KSPLIT": 2}),
             ((33, 130, 21), False, True, {"PRESET": 7}),
             ((131, 20, 17), True, True, {"PRESET": 7, "EDGE_ONLY_CLAMP": 0}),
             ((64, 128, 48), False, False, {"PRESET": 2}),
             ((128, 128, 20), True, True, {"PRESET": 7, "GROUP_M": 1}),
             ((31, 37, 29), False, True, {"PRESET": 4, "DTYPE": "int32"}),
             ((17, 19, 40), True, False, {"PRESET": 4, "KSPLIT": 2, "PAD_A": 0, "DTYPE": "int64"}),
             ((37, 41, 35), False, False, {"PRESET": 7, "PACK_A": 1}),
             ((32, 20, 33), False, True, {"PRESET": 4, "PACK_A": 1, "PACK_B": 1}),
             ((29, 36, 40), True, True, {"PRESET": 7, "PACK_B": 1})]
    ok = True
    for shape, ta, tb, params in cases:
        params = dict(params)
        dtype = np.dtype(params.pop("DTYPE", "float32"))
        if dtype.kind == "i":
            shapes = [o.shape for o in _operands(rng, *shape, ta, tb)]
            ops = [rng.integers(-2**31, 2**31, sh).astype(dtype) for sh in shapes]
            got, _ = _product(sim, *ops, ta, tb, params)
            want = np.matmul(*[o.T if t else o for o, t in zip(ops, (ta, tb))])
            err = 0.0 if np.array_equal(got, want) else 1.0   # exact, wrapping
        else:
            got, want = _product(sim, *_operands(rng, *shape, ta, tb), ta, tb, params)
            err = rel_error(got, want)
        ok &= bool(err < 1e-5)
        print(shape, ta, tb, params, f"{err:.2e}", flush=True)
    for shape_a, shape_b, params in (((3, 1, 13, 9), (1, 2, 9, 7), {"PRESET": 4}),
                                     ((1, 2, 33, 20), (2, 1, 20, 9), {"PRESET": 4, "KSPLIT": 2})):
        a = rng.standard_normal(shape_a).astype(np.float32)  # two batch levels
        b = rng.standard_normal(shape_b).astype(np.float32)
        got, want = _product(sim, a, b, False, False, params)
        err = rel_error(got, want)
        ok &= bool(err < 1e-5)
        print(shape_a, shape_b, params, f"{err:.2e}", flush=True)
    sys.exit(0 if ok else 1)


@pytest.mark.slow
def test_oclgrind_clean(oclgrind):
    here = os.path.dirname(os.path.abspath(__file__))
    env = oclgrind_environment(paths=(os.path.dirname(here), here))   # conftest, this file
    env["PYOPENCL_NO_CACHE"] = "1"
    run = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env,
                         capture_output=True, text=True, timeout=1800)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    # Device discovery (device.py, pyopencl) asks Oclgrind for properties it does not know;
    # those API reports are not this kernel's. Anything else Oclgrind says is a failure.
    blocks = report.split("Oclgrind - ")
    kept = blocks[0] + "".join("Oclgrind - " + b for b in blocks[1:]
                               if "Function: clGetDeviceInfo" not in b)
    for word in ("Oclgrind -", "data race", "Invalid", "out-of-bounds", "Uninitialized"):
        assert word not in kept, report
    assert report.count("e-") >= 6, report


# -- a real GPU --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_gpu() -> cg.Device:
    return first_device(lambda info: info.is_gpu and not info.is_simulator,
                        "no OpenCL GPU on this machine (the simulator does not count)")


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (1000, 1003, 998), (64, 2048, 4096),
                                   (4096, 64, 2048), (2048, 2048, 64)])
def test_gpu_chosen_and_correct(real_gpu, shape):
    M, N, K = shape
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    x, y = cg.asarray(a, device=real_gpu), cg.asarray(b, device=real_gpu)
    assert "gpu_blocked" in cg.explain_matmul(x, y)
    got = np.asarray(x @ y)
    assert rel_error(got, a.astype(np.float64) @ b) < 1e-5


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(4097, 2049, 300), (4096, 2050, 257)])
def test_gpu_slivers_split_off(real_gpu, shape):
    """A sliver of rows or columns past the last whole tile runs as its own product (where
    the automatic choice is gpu_blocked: int32 here, float32 going to tf32x3 on Hopper)."""
    M, N, K = shape
    rng = np.random.default_rng(M + N)
    a = rng.integers(-50, 50, (M, K)).astype(np.int32)
    b = rng.integers(-50, 50, (K, N)).astype(np.int32)
    x, y = cg.asarray(a, device=real_gpu), cg.asarray(b, device=real_gpu)
    text = cg.explain_matmul(x, y)
    if "kernel: gpu_blocked" not in text:
        pytest.skip("this device's measured choice for the shape is not gpu_blocked")
    assert "split where the last tiles would hold slivers" in text
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(x @ y), a @ b)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,tb", [((4096, 4096, 512), False), ((1000, 4099, 333), False),
                                      ((4096, 4096, 300), True)])
def test_gpu_packed_operands(real_gpu, shape, tb):
    """Wide products pack a row-major A, tall ones a column-major B (automatically where M
    and N are multiples of 4)."""
    M, N, K = shape
    rng = np.random.default_rng(M + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(np.float32)
    x, y = cg.asarray(a, device=real_gpu), cg.asarray(b, device=real_gpu)
    if tb:
        y, b = y.T, b.T
    # (forced: on Hopper the widest of these go to tf32x3)
    assert "first packed with rows along K" in cg.explain_matmul(x, y, kernel="gpu_blocked")
    for _ in range(2):
        got = np.asarray(cg.matmul(x, y, kernel="gpu_blocked"))
        assert rel_error(got, a.astype(np.float64) @ b) < 1e-5


@pytest.mark.gpu
def test_gpu_batched_and_transposed(real_gpu):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 96, 80)).astype(np.float32)
    b = rng.standard_normal((64, 112, 80)).astype(np.float32)
    x, y = cg.asarray(a, device=real_gpu), cg.asarray(b, device=real_gpu)
    got = np.asarray(x @ y.swapaxes(-1, -2))
    assert rel_error(got, np.matmul(a.astype(np.float64), np.swapaxes(b, -1, -2))) < 1e-5


@pytest.mark.gpu
@pytest.mark.parametrize("shape_a,shape_b", [((8, 1, 64, 64), (1, 32, 64, 64)),
                                             ((3, 1, 129, 65), (1, 5, 65, 131))])
def test_gpu_batch_dimensions_broadcast_against_each_other(real_gpu, shape_a, shape_b):
    """The default choice on a GPU reads both operands in place in two batch levels."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    x, y = cg.asarray(a, device=real_gpu), cg.asarray(b, device=real_gpu)
    assert rel_error(np.asarray(x @ y), np.matmul(a.astype(np.float64), b)) < 1e-5
    assert "batches: two levels" in cg.explain_matmul(x, y)


if __name__ == "__main__":
    _oclgrind_child()
