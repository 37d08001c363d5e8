"""The FP64 tensor-core GEMM (``dmma``, opencl/gemm_dmma.cl) and gpu_blocked's float64 presets.

Without tensor cores (PoCL, Oclgrind) the kernel runs only when forced with ``EMULATE=1``: the
same tiling, loads, double buffering, C fragments and edges, the warp-level product in plain
OpenCL C. The inline-PTX build runs only on NVIDIA sm_80+ (skipped elsewhere) and in
benches/gpu_gemm_shapes.py; benches/ptx_offline/check_dmma_ptx.sh assembles it without a GPU.
"""
from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm_gpu
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem

from conftest import assert_clean_under_oclgrind, device_operands

EMULATE = {"EMULATE": 1}
SMALL_TILES = {"EMULATE": 1, "BM": 16, "BN": 32, "WM": 8, "WN": 16, "BK": 16}  # 4 warps
SHAPES = [(1, 1, 1), (7, 31, 33), (33, 17, 65), (1, 8, 16), (129, 77, 200), (31, 257, 7),
          (64, 64, 64)]


def _inputs(M, N, K, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    shape_a = (batch, M, K) if batch > 1 else (M, K)
    shape_b = (batch, K, N) if batch > 1 else (K, N)
    return rng.standard_normal(shape_a), rng.standard_normal(shape_b)


def _close(got, a, b):
    """Within float64 accumulation error of NumPy's product (relative norm 1e-13)."""
    expected = a @ b
    assert got.dtype == np.float64 and got.shape == expected.shape
    assert np.linalg.norm(got - expected) <= 1e-13 * max(np.linalg.norm(expected), 1e-300)


@pytest.fixture
def fp64_device(device):
    if not device.info.fp64:
        pytest.skip("the device has no float64")
    return device


@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_emulated_dmma_matches_numpy(fp64_device, M, N, K, trans):
    a, b = _inputs(M, N, K, seed=M + N + K)
    x, y = device_operands(fp64_device, a, b, *trans)
    _close(np.asarray(cg.matmul(x, y, kernel="dmma", params=EMULATE)), a, b)


@pytest.mark.parametrize("params", [SMALL_TILES, {"EMULATE": 1, "BM": 128, "BN": 64, "BK": 8},
                                    {"EMULATE": 1, "BK": 8, "GROUP_M": 1},
                                    {**SMALL_TILES, "STAGES": 2}, {**SMALL_TILES, "STAGES": 5}])
def test_emulated_dmma_batched_and_other_tiles(fp64_device, params):
    a, b = _inputs(33, 40, 50, batch=3, seed=5)
    x, y = device_operands(fp64_device, a, b, True, False)
    _close(np.asarray(cg.matmul(x, y, kernel="dmma", params=params)), a, b)


@pytest.mark.parametrize("params", [{**SMALL_TILES, "KSPLIT": 3}, {**SMALL_TILES, "KSPLIT": 16},
                                    {"EMULATE": 1, "BK": 8, "KSPLIT": 2},
                                    {**SMALL_TILES, "KSPLIT": 3, "FINISH_LAST": 1},
                                    {**SMALL_TILES, "KSPLIT": 16, "FINISH_LAST": 1}])
def test_emulated_dmma_split_k(fp64_device, params):
    """K slices as partial products summed by the reduction (or with FINISH_LAST by each tile's
    last slice), into a poisoned C: slices of unequal depth and empty ones (16 slices of 4
    steps), a batch of three, transposed A."""
    a, b = _inputs(33, 40, 61, batch=3, seed=6)
    x, y = device_operands(fp64_device, a, b, True, False)
    out = cg.asarray(np.full((3, 33, 40), np.nan), device=fp64_device)
    cg.matmul(x, y, out=out, kernel="dmma", params=params)
    _close(np.asarray(out), a, b)
    assert f"KSPLIT={params['KSPLIT']}" in cg.explain_matmul(x, y, kernel="dmma", params=params)


def test_split_k_fills_the_units(device):
    """With 132 compute units: a few 128 x 64 tiles over a long K split until two work-groups
    per unit run (at most 16 slices), slices of at least 64 of K; products of two tiles per
    unit or more, and short K, run whole."""
    from clarray_gemm.kernels import gemm_dmma
    info = dataclasses.replace(device.info, compute_units=132)
    defaults = gemm_dmma.DMMA.defaults

    def ks(M, N, K):
        op = GemmOperand(None, 0, K, 0)
        return gemm_dmma.ksplit(GemmProblem(1, M, N, K, np.dtype(np.float64), op, op, op),
                                info, defaults)
    assert ks(128, 128, 4097) == 16
    assert ks(256, 1024, 4097) == 8
    assert ks(127, 4097, 2048) == 4
    assert ks(127, 33, 1024) == 16 and ks(127, 33, 256) == 4
    assert ks(4097, 4097, 4097) == 1 and ks(128, 128, 63) == 1
    assert gemm_dmma.ksplit(GemmProblem(1, 128, 128, 4097, np.dtype(np.float64), *(
        GemmOperand(None, 0, 1, 0),) * 3), info, {**defaults, "KSPLIT": 3}) == 3


def test_emulated_dmma_unaligned_views(fp64_device):
    """Odd offsets and leading dimensions take the element loads (VEC_A/VEC_B 0)."""
    a, b = _inputs(40, 38, 45, seed=9)
    x = cg.asarray(a, device=fp64_device)[1:, 1:]
    y = cg.asarray(b, device=fp64_device)[1:, 3:]
    _close(np.asarray(cg.matmul(x, y, kernel="dmma", params=EMULATE)), a[1:, 1:], b[1:, 3:])


def test_emulated_dmma_poisoned_output_fully_written(fp64_device):
    a, b = _inputs(37, 29, 41, seed=2)
    x, y = device_operands(fp64_device, a, b, False, False)
    out = cg.asarray(np.full((37, 29), np.nan), device=fp64_device)
    cg.matmul(x, y, out=out, kernel="dmma", params=EMULATE)
    _close(np.asarray(out), a, b)


def test_emulated_dmma_specials(fp64_device):
    a = np.array([[np.inf, 1.0], [np.nan, 1.0], [1e308, 1e308]])
    b = np.array([[1.0, 2.0], [1.0, 2.0]])
    got = np.asarray(cg.matmul(cg.asarray(a, device=fp64_device),
                               cg.asarray(b, device=fp64_device), kernel="dmma", params=EMULATE))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, a @ b)   # inf, nan, and overflow to inf


def test_dmma_says_why_it_does_not_fit(fp64_device):
    x = cg.asarray(np.ones((16, 16), np.float32), device=fp64_device)
    with pytest.raises(ValueError, match="float64 only"):
        cg.matmul(x, x, kernel="dmma", params=EMULATE)
    d = cg.asarray(np.ones((16, 16)), device=fp64_device)
    with pytest.raises(ValueError, match="multiples of 8"):
        cg.matmul(d, d, kernel="dmma", params={"EMULATE": 1, "WM": 12})
    with pytest.raises(ValueError, match="KPAIR=1 needs BK a multiple of 8"):
        cg.matmul(d, d, kernel="dmma", params={"EMULATE": 1, "KPAIR": 1, "BK": 4, "BM": 32,
                                                "BN": 32, "WM": 16, "WN": 16})
    if not fp64_device.info.tensor_cores:
        with pytest.raises(ValueError, match="needs NVIDIA tensor cores"):
            cg.matmul(d, d, kernel="dmma")
        assert "kernel: dmma" not in cg.explain_matmul(d, d)
    assert "kernel: dmma" in cg.explain_matmul(d, d, kernel="dmma", params=EMULATE)


def test_dmma_ranks_first_for_float64_on_tensor_cores(device):
    nv = dataclasses.replace(device.info, vendor="NVIDIA Corporation", type="GPU",
                             compute_capability=(9, 0), is_simulator=False)
    from clarray_gemm.kernels.gemm_dmma import DMMA
    op = GemmOperand(None, 0, 512, 0)
    square = GemmProblem(1, 512, 512, 512, np.dtype(np.float64), op, op, op)
    assert DMMA.rank(square, nv) > gemm_gpu.VARIANT.rank(square, nv)
    assert DMMA.rank(dataclasses.replace(square, N=1), nv) < 60          # gemv_split keeps GEMV
    assert DMMA.rank(dataclasses.replace(square, dtype=np.dtype(np.float32)), nv) == 0
    assert DMMA.rank(square, dataclasses.replace(nv, compute_capability=(7, 5))) == 0


def test_gpu_blocked_float64_picks_a_preset_that_does_not_spill(device):
    """float64 doubles the registers of a micro-tile: the shape heuristic keeps to the 8 x 8
    and 4 x 4 presets (16 x 8 spills: 6x slower on an H100) that fit 48 KB of local memory."""
    gpu = dataclasses.replace(device.info, type="GPU", compute_units=132,
                              local_mem_bytes=49152, is_simulator=False)
    for n in (1024, 2048, 4096, 4097):
        op = GemmOperand(None, 0, n, 0)
        p = GemmProblem(1, n, n, n, np.dtype(np.float64), op, op, op)
        assert gemm_gpu.resolve(p, gpu, {})["PRESET"] in (1, 4)
        # float32: the 16 x 8 preset, but for 1024^3, which preset 9 runs unsplit (measured)
        assert gemm_gpu.resolve(dataclasses.replace(p, dtype=np.dtype(np.float32)), gpu,
                                {})["PRESET"] == (9 if n == 1024 else 7)


def test_m16_shape_only_where_it_applies(device, monkeypatch):
    """Hopper's m16n8k8 replaces m8n8k4 on sm_90+ with paired K steps and 16-row warp tiles."""
    from clarray_gemm.kernels import gemm_dmma
    op = GemmOperand(None, 0, 512, 0)
    p = GemmProblem(1, 512, 512, 512, np.dtype(np.float64), op, op, op)
    nv = dataclasses.replace(device.info, vendor="NVIDIA Corporation", type="GPU",
                             compute_capability=(9, 0), is_simulator=False)
    monkeypatch.setattr(device, "info", nv)
    defaults = dict(gemm_dmma.DMMA.defaults)
    assert gemm_dmma.defines_for(device, p, defaults)["M16"] == 1
    for change in ({"M16": 0}, {"KPAIR": 0}, {"WM": 8, "BM": 32}, {"EMULATE": 1}):
        assert gemm_dmma.defines_for(device, p, {**defaults, **change})["M16"] == 0, change
    monkeypatch.setattr(device, "info", dataclasses.replace(nv, compute_capability=(8, 0)))
    assert gemm_dmma.defines_for(device, p, defaults)["M16"] == 0


def test_copy_ring_depth_fits_the_device(device):
    """STAGES 0: as deep a ring as the local memory allows, up to 5, at least 2."""
    from clarray_gemm.kernels import gemm_dmma
    op = GemmOperand(None, 0, 512, 0)
    p = GemmProblem(1, 512, 512, 512, np.dtype(np.float64), op, op, op)
    nv = dataclasses.replace(device.info, vendor="NVIDIA Corporation", type="GPU",
                             compute_capability=(9, 0), is_simulator=False,
                             local_mem_bytes=48 * 1024)
    defaults = dict(gemm_dmma.DMMA.defaults)
    stage = (128 * (8 + 4) + 8 * (64 + 8)) * 8     # one A and one B tile of the defaults
    assert gemm_dmma._stages(p, nv, defaults) == 5                    # Hopper: 227 KiB
    ampere = dataclasses.replace(nv, compute_capability=(8, 0))
    assert gemm_dmma._stages(p, ampere, defaults) == 48 * 1024 // stage == 2
    assert gemm_dmma.DMMA.fits(p, ampere, defaults) is None
    assert "STAGES" in gemm_dmma.DMMA.fits(p, ampere, {**defaults, "STAGES": 6})
    assert "local memory" in gemm_dmma.DMMA.fits(p, ampere, {**defaults, "STAGES": 4})


@pytest.mark.skipif(not cg.default_device().info.tensor_cores,
                    reason="needs NVIDIA tensor cores (sm_80+)")
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("M,N,K", [(129, 77, 200), (256, 256, 256)])
def test_fp64_tensor_cores(device, M, N, K, trans):
    a, b = _inputs(M, N, K)
    x, y = device_operands(device, a, b, *trans)
    _close(np.asarray(cg.matmul(x, y, kernel="dmma")), a, b)
    _close(np.asarray(x @ y), a, b)   # whichever kernel the device's table chooses


@pytest.mark.skipif(not cg.default_device().info.tensor_cores,
                    reason="needs NVIDIA tensor cores (sm_80+)")
@pytest.mark.parametrize("trans", [(False, False), (True, True)])
def test_fp64_tensor_cores_split_k_by_shape(device, trans):
    """Four tiles over a K of 1500: split by shape into slices, summed into C."""
    a, b = _inputs(130, 70, 1500, seed=8)
    x, y = device_operands(device, a, b, *trans)
    assert not re.search(r"KSPLIT=1\b", cg.explain_matmul(x, y, kernel="dmma"))
    _close(np.asarray(cg.matmul(x, y, kernel="dmma")), a, b)


@pytest.mark.skipif(not cg.default_device().info.warpgroup_mma,
                    reason="needs NVIDIA Hopper (sm_90: m16n8k8 on doubles, large local tiles)")
@pytest.mark.parametrize("params", [{"M16": 0}, {"BK": 16}, {"BK": 32, "BM": 64, "WM": 32},
                                    {"BN": 128, "WN": 64, "BK": 16}, {"STAGES": 2},
                                    {"STAGES": 5, "BK": 16}, {"KSPLIT": 3},
                                    {"KSPLIT": 8, "BK": 16}])
def test_fp64_tensor_core_tiles(device, params):
    a, b = _inputs(197, 131, 333, batch=2, seed=4)
    for trans in ((False, False), (True, True)):
        x, y = device_operands(device, a, b, *trans)
        _close(np.asarray(cg.matmul(x, y, kernel="dmma", params=params)), a, b)


# -- Oclgrind ---------------------------------------------------------------------------------
OCLGRIND_SCRIPT = r"""
import json, sys
import numpy as np
import clarray_gemm as cg
M, N, K, batch, ta, tb, params = sys.argv[1:]
M, N, K, batch, ta, tb = int(M), int(N), int(K), int(batch), int(ta), int(tb)
dev = next(d for d in cg.devices() if d.info.is_simulator)
rng = np.random.default_rng(0)
a = rng.standard_normal((batch, M, K))
b = rng.standard_normal((batch, K, N))
x = (cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=dev).mT if ta
     else cg.asarray(a, device=dev))
y = (cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=dev).mT if tb
     else cg.asarray(b, device=dev))
got = np.asarray(cg.matmul(x, y, kernel="dmma", params=json.loads(params)))
exact = np.matmul(a, b)
ok = np.isfinite(got).all() and np.linalg.norm(got - exact) <= 1e-13 * np.linalg.norm(exact)
print("ok" if ok else "MISMATCH")
sys.exit(0 if ok else 3)
"""


@pytest.mark.slow
@pytest.mark.parametrize("M,N,K,batch,ta,tb,split", [
    (17, 33, 20, 1, False, False, 1), (7, 40, 13, 2, True, True, 1),
    (33, 9, 17, 1, False, True, 1), (9, 17, 70, 2, True, False, 3),
    (9, 17, 70, 2, True, False, -3),   # 3 slices finished by each tile's last (FINISH_LAST)
])
def test_emulated_dmma_is_clean_under_oclgrind(oclgrind, M, N, K, batch, ta, tb, split):
    params = {**SMALL_TILES, "KSPLIT": abs(split)}
    if split < 0:   # no race check: Oclgrind does not follow the counters' ordering
        params["FINISH_LAST"] = 1
    assert_clean_under_oclgrind(OCLGRIND_SCRIPT, str(M), str(N), str(K), str(batch),
                                str(int(ta)), str(int(tb)), json.dumps(params),
                                races=split >= 0)
