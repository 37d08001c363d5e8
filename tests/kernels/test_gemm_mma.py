"""The tensor-core GEMM (``mma``, opencl/gemm_mma.cl) and the float32 precision setting.

Without tensor cores (PoCL, Oclgrind) the kernel runs only when forced with ``EMULATE=1``: the
same tiling, loads, double buffering, C fragments and edges, the warp-level product in plain
OpenCL C. The inline-PTX build is tested only on NVIDIA sm_80+ (skipped elsewhere) and by
benches/gpu_tensor_cores.py.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm import settings
from clarray_gemm.dtypes import bfloat16_dtype, mma_operand_dtype
from conftest import assert_clean_under_oclgrind

BF16 = bfloat16_dtype()
EMULATE = {"EMULATE": 1}
SMALL_TILES = {"EMULATE": 1, "BM": 32, "BN": 32, "WM": 16, "WN": 16}   # 4 warps, 128 items
U_TF32 = 2.0 ** -11

SHAPES = [(1, 1, 1), (7, 31, 33), (33, 17, 65), (1, 8, 16), (129, 77, 200), (31, 257, 7)]


def _inputs(dtype, M, N, K, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    shape_a = (batch, M, K) if batch > 1 else (M, K)
    shape_b = (batch, K, N) if batch > 1 else (K, N)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


def _device_operands(device, a, b, trans):
    if not trans:
        return cg.asarray(a, device=device), cg.asarray(b, device=device)
    x = cg.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT
    y = cg.asarray(np.ascontiguousarray(np.swapaxes(b, -1, -2)), device=device).mT
    return x, y


def _float16_within_one_rounding(got, a, b):
    """Every element within one float16 rounding of the float64 product, plus the float32
    accumulation's own bound (K * 2^-24 * |A|@|B|)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    slack = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    slack += a.shape[-1] * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    return np.abs(got.astype(np.float64) - exact) <= slack


# -- the precision setting ------------------------------------------------------------------
def test_precision_defaults_to_highest_and_nests():
    assert cg.get_precision() == "highest"
    with cg.precision("tf32"):
        assert cg.get_precision() == "tf32"
        with cg.precision("highest"):
            assert cg.get_precision() == "highest"
        assert cg.get_precision() == "tf32"
    assert cg.get_precision() == "highest"


def test_set_precision_is_global_and_checked():
    try:
        cg.set_precision("TF32")
        assert cg.get_precision() == "tf32"
    finally:
        cg.set_precision("highest")
    with pytest.raises(ValueError, match="precision must be one of"):
        cg.set_precision("fast")
    with pytest.raises(ValueError, match="precision must be one of"):
        cg.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), precision="half")


def test_precision_environment_variable_is_read_once(monkeypatch):
    monkeypatch.setenv("CLARRAY_GEMM_MATMUL_PRECISION", "tf32")
    try:
        assert settings.reload().matmul_precision == "tf32"
        monkeypatch.setenv("CLARRAY_GEMM_MATMUL_PRECISION", "bogus")
        assert settings.matmul_precision() == "tf32"          # not read again until reload
        assert settings.reload().matmul_precision == "highest"
    finally:
        monkeypatch.undo()
        settings.reload()


# -- capability detection ---------------------------------------------------------------------
def test_tensor_cores_need_nvidia_sm80(device):
    info = device.info
    if not info.is_nvidia:
        assert info.compute_capability is None and not info.tensor_cores
    nv = dataclasses.replace(info, vendor="NVIDIA Corporation", type="GPU")
    assert dataclasses.replace(nv, compute_capability=(9, 0)).tensor_cores
    assert dataclasses.replace(nv, compute_capability=(8, 0)).tensor_cores
    assert not dataclasses.replace(nv, compute_capability=(7, 5)).tensor_cores
    assert not dataclasses.replace(nv, compute_capability=None).tensor_cores
    amd = dataclasses.replace(info, vendor="AMD", type="GPU", compute_capability=(9, 0))
    assert not amd.tensor_cores


def test_mma_operand_dtypes():
    f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
    assert mma_operand_dtype(f16, f16, f16) == f16
    assert mma_operand_dtype(f16, f16, f32) is None      # dtype=float32 asked: not NumPy's f16
    assert mma_operand_dtype(f16, f32, f32) is None
    assert mma_operand_dtype(f32, f32, f32) is None      # TF32 is a precision, not a dtype
    if BF16 is not None:
        assert mma_operand_dtype(BF16, BF16, f32) == BF16


# -- fallbacks where there are no tensor cores -------------------------------------------------
needs_no_tensor_cores = pytest.mark.skipif(
    cg.default_device().info.tensor_cores, reason="the device has tensor cores")


@needs_no_tensor_cores
def test_forced_mma_without_tensor_cores_says_why(device):
    x = cg.asarray(np.ones((16, 16), np.float16), device=device)
    with pytest.raises(ValueError, match="needs NVIDIA tensor cores"):
        cg.matmul(x, x, kernel="mma")


@needs_no_tensor_cores
@pytest.mark.parametrize("M,N,K", [(7, 31, 33), (33, 17, 65)])
def test_float16_fallback_is_numpys(device, M, N, K):
    a, b = _inputs(np.float16, M, N, K)
    x, y = _device_operands(device, a, b, False)
    got = np.asarray(x @ y)
    assert got.dtype == np.float16
    assert _float16_within_one_rounding(got, a, b).all()
    assert "kernel: mma" not in cg.explain_matmul(x, y)


@needs_no_tensor_cores
@pytest.mark.skipif(BF16 is None, reason="ml_dtypes is not installed")
def test_bfloat16_fallback_is_numpys(device):
    a, b = _inputs(BF16, 9, 13, 17)
    x, y = _device_operands(device, a, b, False)
    got = np.asarray(cg.matmul(x, y))
    expected = a @ b
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@needs_no_tensor_cores
def test_tf32_request_runs_float32_and_explain_says_so(device):
    a, b = _inputs(np.float32, 33, 17, 65)
    x, y = _device_operands(device, a, b, False)
    text = cg.explain_matmul(x, y, precision="tf32")
    assert "precision: tf32 requested, float32 arithmetic ran" in text
    assert "needs NVIDIA tensor cores" in text
    got = np.asarray(cg.matmul(x, y, precision="tf32"))
    exact = a.astype(np.float64) @ b
    assert np.linalg.norm(got - exact) <= 1e-5 * np.linalg.norm(exact)
    assert "precision" not in cg.explain_matmul(x, y)   # "highest": nothing to say


# -- the emulated kernel (same tiling as the PTX one) -------------------------------------------
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_emulated_float16_rounds_once_as_numpy(device, M, N, K, trans):
    a, b = _inputs(np.float16, M, N, K, seed=M + N + K)
    x, y = _device_operands(device, a, b, trans)
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=EMULATE))
    assert got.dtype == np.float16 and got.shape == (M, N)
    assert _float16_within_one_rounding(got, a, b).all()
    assert _float16_within_one_rounding(a @ b, a, b).all()   # NumPy's own result passes too


def test_emulated_batched_small_tiles(device):
    a, b = _inputs(np.float16, 33, 40, 50, batch=3)
    x, y = _device_operands(device, a, b, True)
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=SMALL_TILES))
    assert got.shape == (3, 33, 40)
    assert _float16_within_one_rounding(got, a, b).all()


def test_tiles_by_shape(device):
    """Batches of products of 64 rows and columns or less take 64 x 64 tiles (warps of 32 x 32),
    larger ones 128 x 128; a forced BM keeps its warps at half of it."""
    from clarray_gemm.kernels import gemm_mma
    from test_gemm_kernels import problem
    geometry = gemm_mma._geometry
    defaults = gemm_mma.MMA.defaults
    small = geometry(problem(33, 64, 33, np.float16, batch=10000), defaults)
    assert (small["BM"], small["BN"], small["WM"], small["WN"]) == (64, 64, 32, 32)
    large = geometry(problem(65, 64, 33, np.float16), defaults)
    assert (large["BM"], large["BN"], large["WM"], large["WN"]) == (128, 128, 64, 64)
    forced = geometry(problem(65, 64, 33, np.float16), {**defaults, "BM": 64})
    assert (forced["BM"], forced["WM"], forced["BN"]) == (64, 32, 128)
    a, b = _inputs(np.float16, 33, 33, 33, batch=5)   # the emulated kernel with those tiles
    x, y = _device_operands(device, a, b, False)
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=EMULATE))
    assert _float16_within_one_rounding(got, a, b).all()


@pytest.mark.parametrize("stages,dyn_local", [(2, 0), (4, 0), (3, 1)])
@pytest.mark.parametrize("trans", [False, True])
def test_emulated_copy_ring_depths(device, stages, dyn_local, trans):
    # Many K steps through rings of 2 to 4 slots (static, or a __local argument); BK=16 gives
    # tile rows of 2 chunks (swizzle).
    a, b = _inputs(np.float16, 37, 40, 203, batch=2)
    x, y = _device_operands(device, a, b, trans)
    params = {**SMALL_TILES, "WM": 32, "STAGES": stages, "BK": 16, "DYN_LOCAL": dyn_local}
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=params))
    assert _float16_within_one_rounding(got, a, b).all()
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=params))   # the prepared launch
    assert got.shape == (2, 37, 40)
    assert _float16_within_one_rounding(got, a, b).all()


def test_mma_rejects_unswizzlable_tiles(device):
    a, b = _inputs(np.float16, 8, 8, 8)
    x, y = _device_operands(device, a, b, False)
    with pytest.raises(ValueError, match="swizzled"):
        cg.matmul(x, y, kernel="mma", params={**SMALL_TILES, "BM": 48, "WM": 16})


def test_emulated_float16_specials(device):
    a = np.array([[np.inf, 1], [np.nan, 1], [60000, 60000]], np.float16)
    b = np.array([[1, 2], [1, 2]], np.float16)
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                               kernel="mma", params=EMULATE))
    with np.errstate(all="ignore"):
        expected = a @ b
    np.testing.assert_array_equal(got, expected)   # inf, nan, and overflow to inf


@pytest.mark.skipif(BF16 is None, reason="ml_dtypes is not installed")
@pytest.mark.parametrize("M,N,K", [(1, 8, 16), (33, 17, 65), (129, 77, 200)])
def test_emulated_bfloat16(device, M, N, K):
    a, b = _inputs(BF16, M, N, K)
    x, y = _device_operands(device, a, b, M == 33)
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=EMULATE))
    assert got.dtype == np.float32
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(got - exact) <= 1e-6 * np.linalg.norm(exact)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("M,N,K", [(7, 31, 33), (129, 77, 200), (1, 8, 16)])
def test_emulated_tf32_meets_its_bound(device, M, N, K, trans):
    a, b = _inputs(np.float32, M, N, K, seed=3)
    x, y = _device_operands(device, a, b, trans)
    got = np.asarray(cg.matmul(x, y, kernel="mma", params=EMULATE, precision="tf32"))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    gamma = K * 2.0 ** -24 / (1 - K * 2.0 ** -24)
    bound = (2 * U_TF32 + U_TF32 ** 2 + gamma) * (np.abs(a64) @ np.abs(b64))
    assert (np.abs(got - exact) <= bound).all()
    # The inputs really were rounded to TF32: float32 products are ~1000x closer.
    assert np.linalg.norm(got - exact) > 1e-5 * np.linalg.norm(exact)
    rounded = [np.frombuffer(((v.view(np.uint32) + 0x1000) & 0xFFFFE000).astype(np.uint32)
                             .tobytes(), np.float32).reshape(v.shape) for v in (a, b)]
    near = rounded[0].astype(np.float64) @ rounded[1].astype(np.float64)
    assert np.linalg.norm(got - near) <= 1e-6 * np.linalg.norm(exact)


def test_explain_names_tf32_and_its_bound(device):
    x = cg.asarray(np.ones((33, 17), np.float32), device=device)
    y = cg.asarray(np.ones((17, 9), np.float32), device=device)
    text = cg.explain_matmul(x, y, kernel="mma", precision="tf32", params=EMULATE)
    assert "kernel: mma" in text and "precision: tf32" in text and "u = 2^-11" in text
    with cg.precision("tf32"):
        assert "precision: tf32" in cg.explain_matmul(x, y, kernel="mma", params=EMULATE)
    h = cg.asarray(np.ones((33, 17), np.float16), device=device)
    text = cg.explain_matmul(h, h.T, kernel="mma", params=EMULATE)
    assert "float16 operands, float32 accumulation, C rounded once to float16" in text


def test_mma_rejects_other_dtypes(device):
    x = cg.asarray(np.ones((16, 16), np.float32), device=device)
    with pytest.raises(ValueError, match="float16 or bfloat16 operands"):
        cg.matmul(x, x, kernel="mma", params=EMULATE)   # float32 at precision "highest"


# -- the real tensor cores ------------------------------------------------------------------
@pytest.mark.skipif(not cg.default_device().info.tensor_cores,
                    reason="needs NVIDIA tensor cores (sm_80+)")
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("M,N,K", [(129, 77, 200), (1, 8, 16), (256, 256, 256)])
def test_tensor_cores_float16_and_tf32(device, M, N, K, trans):
    a, b = _inputs(np.float16, M, N, K)
    x, y = _device_operands(device, a, b, trans)
    # Hopper runs float16 on wgmma (tests/kernels/test_gemm_wgmma.py); mma is forced there
    forced = {"kernel": "mma"} if device.info.warpgroup_mma else {}
    assert "kernel: mma" in cg.explain_matmul(x, y, **forced)
    got = np.asarray(cg.matmul(x, y, **forced))
    assert got.dtype == np.float16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(got - exact) <= 2e-3 * np.linalg.norm(exact)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    x, y = _device_operands(device, a32, b32, trans)
    got = np.asarray(cg.matmul(x, y, precision="tf32"))
    assert np.linalg.norm(got - exact) <= 2e-3 * np.linalg.norm(exact)


# -- Oclgrind ---------------------------------------------------------------------------------
OCLGRIND_SCRIPT = r"""
import json, sys
import numpy as np
import clarray_gemm as cg
kind, M, N, K, batch, trans, params = sys.argv[1:]
M, N, K, batch, trans = int(M), int(N), int(K), int(batch), int(trans)
dev = next(d for d in cg.devices() if d.info.is_simulator)
rng = np.random.default_rng(0)
dtype = np.float16 if kind == "float16" else np.float32
a = rng.standard_normal((batch, M, K)).astype(dtype)
b = rng.standard_normal((batch, K, N)).astype(dtype)
if trans:
    x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=dev).mT
    y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=dev).mT
else:
    x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
prec = "tf32" if kind == "tf32" else None
got = np.asarray(cg.matmul(x, y, kernel="mma", params=json.loads(params), precision=prec))
exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
ok = np.isfinite(got).all() and np.linalg.norm(got - exact) <= 2e-3 * np.linalg.norm(exact)
print("ok" if ok else "MISMATCH")
sys.exit(0 if ok else 3)
"""


RING_2_DYNAMIC = {**SMALL_TILES, "STAGES": 2, "DYN_LOCAL": 1}
TF32_NPERM = {"EMULATE": 1, "BM": 32, "BN": 64, "WM": 16, "WN": 32, "NPERM": 1}   # B columns dealt round-robin


@pytest.mark.slow
@pytest.mark.parametrize("kind,M,N,K,batch,trans,params", [
    ("float16", 33, 17, 40, 1, False, SMALL_TILES), ("float16", 7, 40, 33, 2, True, SMALL_TILES),
    ("tf32", 33, 17, 20, 1, True, SMALL_TILES), ("tf32", 9, 35, 17, 2, False, SMALL_TILES),
    ("float16", 9, 33, 100, 1, False, RING_2_DYNAMIC), ("tf32", 17, 70, 40, 2, False, TF32_NPERM),
])
def test_emulated_mma_is_clean_under_oclgrind(oclgrind, kind, M, N, K, batch, trans, params):
    assert_clean_under_oclgrind(OCLGRIND_SCRIPT, kind, str(M), str(N), str(K), str(batch),
                                str(int(trans)), json.dumps(params))
