"""The warpgroup tensor-core GEMM (``wgmma``, opencl/gemm_wgmma.cl), its TF32 operand packing
(opencl/operand_pack.cl) and the sm_90a rebuild.

Off Hopper (PoCL, Oclgrind) the kernel runs only when forced with ``EMULATE=1``: the same tiles,
swizzled layouts (K-major at 32, 64 and 128-byte rows, MN-major panels), copy ring, edges and
C stores, with the warpgroup product computed in plain OpenCL C from the layouts the instruction
reads. The inline-PTX build runs only on NVIDIA sm_90 (skipped elsewhere) and in
benches/gpu_tensor_cores.py.
"""
from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.dtypes import bfloat16_dtype
from clarray_gemm.kernels import gemm_wgmma
from clarray_gemm.kernels.constants import constant
from conftest import assert_clean_under_oclgrind

BF16 = bfloat16_dtype()
HOPPER = cg.default_device().info.warpgroup_mma
# One warpgroup, 64 x 64 tiles: the emulation's cost stays small.
SMALL = {"EMULATE": 1, "BM": 64, "BN": 64, "BK": 16, "WGS": 1, "STAGES": 2, "WG_INFLIGHT": 0}
SHAPES = [(1, 1, 1), (7, 33, 31), (65, 17, 33), (1, 200, 17), (129, 70, 257)]
ORIENTATIONS = [(False, False), (True, False), (False, True), (True, True)]


def _inputs(dtype, M, N, K, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    shape_a = (batch, M, K) if batch > 1 else (M, K)
    shape_b = (batch, K, N) if batch > 1 else (K, N)
    return (rng.standard_normal(shape_a).astype(np.float32).astype(dtype),
            rng.standard_normal(shape_b).astype(np.float32).astype(dtype))


def _operand(device, a, trans):
    """``a`` on the device, stored transposed (a column-major view) when ``trans``."""
    if not trans:
        return cg.asarray(a, device=device)
    return cg.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT


def _within_one_rounding(got, a, b):
    """Every element within one rounding of the result dtype of the float64 product, plus the
    float32 accumulation's own bound (K * 2^-24 * |A|@|B|)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    slack = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    slack += a.shape[-1] * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    return np.abs(got.astype(np.float64) - exact) <= slack


def _poisoned_out(device, shape, dtype):
    return cg.asarray(np.full(shape, np.nan, dtype), device=device)


@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_emulated_float16_every_orientation(device, M, N, K, ta, tb):
    a, b = _inputs(np.float16, M, N, K, seed=M + N + K)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    out = _poisoned_out(device, (M, N), np.float16)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params=SMALL))
    assert got.dtype == np.float16 and got.shape == (M, N)
    assert _within_one_rounding(got, a, b).all()


@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("params", [
    {"BK": 32, "STAGES": 3, "WG_INFLIGHT": 1},            # 64-byte K-major rows
    {"BK": 64, "STAGES": 2},                              # 128-byte K-major rows
    {"BM": 128, "BN": 128, "STAGES": 4, "WG_INFLIGHT": 1},  # two m64 products per warpgroup
    {"BM": 128, "WGS": 2, "BN": 256, "BK": 16},           # two warpgroups, one n256 product
])
def test_emulated_tile_shapes_and_rings(device, params, ta, tb):
    # Many K steps through each ring; N and M past one tile; a batch of two.
    a, b = _inputs(np.float16, 70, 260, 203, batch=2, seed=len(params))
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    call = lambda: np.asarray(cg.matmul(x, y, kernel="wgmma", params={**SMALL, **params}))  # noqa: E731
    got = call()
    assert got.shape == (2, 70, 260)
    assert _within_one_rounding(got, a, b).all()
    np.testing.assert_array_equal(call(), got)   # the prepared launch gives the same bits


@pytest.mark.parametrize("dtype", [np.float16, pytest.param(BF16, marks=pytest.mark.skipif(
    BF16 is None, reason="needs ml_dtypes (bfloat16)"))], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
@pytest.mark.parametrize("params", [
    {"BK": 32, "STAGES": 3},                                # 64 x 64 tiles
    {"BM": 128, "WGS": 2, "BN": 64, "BK": 64, "STAGES": 2},  # two warpgroups stage one tile
])
def test_emulated_staged_c_matches_the_fragment_stores(device, dtype, params, ta, tb):
    """C through local memory (STAGE_C=1) writes the same bits as the per-fragment stores, over
    partial tiles, rows of an odd length (no row starts on a pair) and a batch of two."""
    a, b = _inputs(dtype, 70, 131, 45, batch=2, seed=7)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    both = {**SMALL, **params}
    # the tile of C fits in this ring: the explanation says it is staged
    assert "STAGE_C=1" in cg.explain_matmul(x, y, kernel="wgmma", params=both)
    assert "STAGE_C=0" in cg.explain_matmul(x, y, kernel="wgmma", params={**both, "STAGE_C": 0})
    runs = {}
    for stage in (0, 1):
        out = _poisoned_out(device, (2, 70, 131), np.float16 if dtype == np.float16 else np.float32)
        runs[stage] = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma",
                                           params={**both, "STAGE_C": stage}))
    assert _within_one_rounding(runs[1], a, b).all()
    np.testing.assert_array_equal(runs[1], runs[0])


def test_emulated_float16_specials(device):
    a = np.ones((9, 20), np.float16)
    b = np.ones((20, 11), np.float16)
    a[2, 3], a[4, 0], b[5, 7] = np.nan, np.inf, -np.inf
    a[6] = -0.0
    b[:, 9] = 0.0
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                               kernel="wgmma", params=SMALL))
    with np.errstate(invalid="ignore"):
        want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got[finite].view(np.uint16), want[finite].view(np.uint16))


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes (bfloat16)")
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_emulated_bfloat16(device, ta, tb):
    a, b = _inputs(BF16, 33, 65, 47)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    got = np.asarray(cg.matmul(x, y, kernel="wgmma", params=SMALL))
    assert got.dtype == np.float32   # NumPy's result type with ml_dtypes
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 47 * 2.0 ** -24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert (np.abs(got - exact) <= bound + 1e-30).all()


def test_forced_wgmma_off_hopper_says_why(device):
    if device.info.warpgroup_mma:
        pytest.skip("this device runs wgmma")
    x = cg.asarray(np.ones((4, 4), np.float16), device=device)
    with pytest.raises(ValueError, match="needs NVIDIA Hopper"):
        cg.matmul(x, x, kernel="wgmma")


@pytest.mark.parametrize("params,why", [
    ({"BN": 96}, "BN in"), ({"BM": 192, "WGS": 1}, "BM = 64"), ({"STAGES": 6}, "STAGES"),
    ({"STAGES": 2, "WG_INFLIGHT": 1}, "STAGES - 1 - WG_INFLIGHT"),
])
def test_wgmma_rejects_bad_tiles(device, params, why):
    x = cg.asarray(np.ones((4, 4), np.float16), device=device)
    with pytest.raises(ValueError, match=why):
        cg.matmul(x, x, kernel="wgmma", params={**SMALL, **params})


def test_wgmma_takes_only_16_bit_floats_and_tf32(device):
    x = cg.asarray(np.ones((4, 4), np.float32), device=device)
    with pytest.raises(ValueError, match="float16 or bfloat16 operands, or float32 with"):
        cg.matmul(x, x, kernel="wgmma", params=SMALL)   # float32 at precision "highest"


U_TF32 = 2.0 ** -11


def _tf32_bound_holds(got, a, b, near=1e-6):
    """ops/precision.py's bound, and proof that the inputs were rounded to TF32 (nearest): the
    result within ``near`` (relative) of the exact product of the rounded inputs. Tensor cores
    add in their own order and precision, so on the GPU ``near`` is looser (still ~3x below
    the distance to the exact product, and to the product of truncated inputs)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    K = a.shape[-1]
    gamma = K * 2.0 ** -24 / (1 - K * 2.0 ** -24)
    bound = (2 * U_TF32 + U_TF32 ** 2 + gamma) * (np.abs(a64) @ np.abs(b64))
    rounded = [np.frombuffer(((v.view(np.uint32) + 0x1000) & 0xFFFFE000).astype(np.uint32)
                             .tobytes(), np.float32).reshape(v.shape) for v in (a, b)]
    product = rounded[0].astype(np.float64) @ rounded[1].astype(np.float64)
    scale = np.linalg.norm(exact)
    assert (np.abs(got - exact) <= bound).all(), "outside the TF32 bound"
    assert np.linalg.norm(got - product) <= near * scale, (
        "not the product of rounded inputs", np.linalg.norm(got - product) / scale)
    assert np.linalg.norm(got - exact) > 1e-5 * scale, "inputs not rounded to TF32"
    return True


@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("M,N,K", [(7, 31, 33), (65, 70, 130), (1, 8, 16), (33, 1, 7)])
def test_emulated_tf32_packs_every_orientation(device, M, N, K, ta, tb):
    a, b = _inputs(np.float32, M, N, K, seed=3)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    out = _poisoned_out(device, (M, N), np.float32)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params=SMALL, precision="tf32"))
    assert got.dtype == np.float32
    assert _tf32_bound_holds(got, a, b)
    text = cg.explain_matmul(x, y, kernel="wgmma", params=SMALL, precision="tf32")
    assert "precision: tf32 (emulated (EMULATE=1); A and B first packed K-major" in text


@pytest.mark.parametrize("params", [{"BK": 8}, {"BK": 32, "STAGES": 3, "WG_INFLIGHT": 1}])
def test_emulated_tf32_batches_and_row_widths(device, params):
    # 32- and 128-byte K-major rows; A shared by every batch (packed once).
    a, b = _inputs(np.float32, 40, 70, 101, batch=3, seed=5)
    a = a[0]
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = np.asarray(cg.matmul(x, y, kernel="wgmma", params={**SMALL, **params},
                               precision="tf32"))
    assert got.shape == (3, 40, 70)
    assert all(_tf32_bound_holds(got[i], a, b[i]) for i in range(3))


def test_tf32_packed_layout():
    from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
    op = GemmOperand(None, 0, 10, 0, False)
    p = GemmProblem(3, 5, 7, 10, np.dtype(np.float32), op, GemmOperand(None, 0, 7, 70, True),
                    op, precision="tf32")
    packed, nbytes = gemm_wgmma.tf32_packed(p)
    assert packed.a == GemmOperand(None, 0, 12, 0, False)            # shared A packed once
    assert packed.b == GemmOperand(None, 5 * 12, 12, 7 * 12, True)    # then B, per batch
    assert nbytes == 4 * (5 + 3 * 7) * 12


def _nvidia(info, cc):
    return dataclasses.replace(info, vendor="NVIDIA Corporation", type="GPU",
                               compute_capability=cc, is_simulator=False)


def test_wgmma_ranks_first_on_hopper_only(device):
    from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
    from clarray_gemm.kernels.gemm_mma import MMA
    op = GemmOperand(None, 0, 512, 0)
    half = GemmProblem(1, 512, 512, 512, np.dtype(np.float16), op, op, op)
    tf32 = dataclasses.replace(half, dtype=np.dtype(np.float32), precision="tf32")
    hopper = _nvidia(device.info, (9, 0))
    for problem in (half, tf32):
        assert gemm_wgmma.WGMMA.rank(problem, hopper) > MMA.rank(problem, hopper) > 0
        for cc in ((8, 0), (10, 0)):   # Ampere has no wgmma; Blackwell dropped it
            assert gemm_wgmma.WGMMA.rank(problem, _nvidia(device.info, cc)) == 0
            assert MMA.rank(problem, _nvidia(device.info, cc)) > 0
    plain = dataclasses.replace(tf32, precision="highest")
    assert gemm_wgmma.WGMMA.rank(plain, hopper) == 0


def test_a_failed_sm90a_rebuild_moves_the_choice_on(device, monkeypatch):
    # A Hopper whose driver refuses the rebuild: the first product records why and runs the
    # next kernel (mma, made to emulate: PoCL builds no PTX); later choices skip wgmma.
    from clarray_gemm.drivers import KernelBuildError
    from clarray_gemm.kernels import gemm_mma, measured
    from clarray_gemm.kernels.plans import PlanCache
    from clarray_gemm.ops import matmul as matmul_ops
    monkeypatch.setattr(device, "info", _nvidia(device.info, (9, 0)))
    monkeypatch.setattr(gemm_wgmma, "_rebuild_failed", {})
    # Rank order, not a shipped table (which may measure mma faster at this small shape).
    monkeypatch.setattr(measured, "ranking", lambda *args: None)
    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise KernelBuildError("gemm_wgmma.cl", "test driver", "sm_90a rebuild: refused")
    monkeypatch.setattr(gemm_wgmma, "get_kernel", refuse)
    monkeypatch.setitem(gemm_mma.MMA.defaults, "EMULATE", 1)
    monkeypatch.setattr(matmul_ops, "_PLANS", PlanCache("matmul test"))
    a, b = _inputs(np.float16, 33, 40, 50)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = np.asarray(x @ y)
    assert calls and _within_one_rounding(got, a, b).all()
    assert "refused" in gemm_wgmma._rebuild_failed[device.info]
    text = cg.explain_matmul(x, y)
    assert "kernel: mma" in text
    with pytest.raises(ValueError, match="could not build its sm_90a rebuild .*refused"):
        cg.matmul(x, y, kernel="wgmma")          # forced, it says why


def test_sm90a_ptx_turns_marks_into_instructions():
    from clarray_gemm.drivers.build import SM90A_MARK, sm90a_ptx
    ptx = (".version 9.0\n.target sm_90, texmode_independent\n"
           f"\t{SM90A_MARK}wgmma.fence.sync.aligned;\n// a comment stays\n")
    out = sm90a_ptx(ptx)
    assert ".target sm_90a, texmode_independent" in out
    assert "\twgmma.fence.sync.aligned;" in out and "SM90A" not in out
    assert "// a comment stays" in out
    assert sm90a_ptx(out) == out   # a compiler that already targets sm_90a
    with pytest.raises(ValueError, match="targets no sm_90"):
        sm90a_ptx(".target sm_80\n")


def test_default_tiles_take_hoppers_static_local_allowance(device):
    from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
    largest = {**gemm_wgmma.WGMMA.defaults, "BM": 128, "BN": 256, "WGS": 2}
    assert gemm_wgmma.TILE_SHAPES[0] == (128, 256, 2)
    nbytes = gemm_wgmma._tile_bytes(largest)
    assert nbytes == 4 * (128 + 256) * 64 * 2   # 128-byte tile rows, for TF32 too
    assert gemm_wgmma._tile_bytes(largest, 3) == nbytes
    hopper = _nvidia(device.info, (9, 0))
    hopper = dataclasses.replace(hopper, local_mem_bytes=48 * 1024)   # as NVIDIA reports it
    assert 48 * 1024 < nbytes <= hopper.static_local_bytes
    op = GemmOperand(None, 0, 512, 0)
    half = GemmProblem(1, 512, 512, 512, np.dtype(np.float16), op, op, op)
    assert gemm_wgmma.WGMMA.fits(half, hopper, largest) is None
    ampere = dataclasses.replace(hopper, compute_capability=(8, 0))
    assert ampere.static_local_bytes == 48 * 1024


# -- Hopper ---------------------------------------------------------------------------------
@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (sm_90)")
@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("M,N,K", [(129, 77, 200), (1, 8, 16), (256, 512, 256), (300, 257, 1000)])
def test_hopper_float16_every_orientation(device, M, N, K, ta, tb):
    a, b = _inputs(np.float16, M, N, K)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    # a tensor-core kernel by default beyond the smallest products (which one is the measured
    # choice); wgmma forced too
    if M * N * K > 4096:
        assert re.search(r"kernel: (wgmma|mma) ", cg.explain_matmul(x, y))
    for kernel in (None, "wgmma"):
        out = _poisoned_out(device, (M, N), np.float16)
        got = np.asarray(cg.matmul(x, y, out=out, kernel=kernel))
        assert _within_one_rounding(got, a, b).all()


@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (sm_90)")
@pytest.mark.parametrize("ks", [0, 5])
def test_hopper_float16_split_k(device, ks):
    """Small outputs over a long K: the sliced products (by shape, or forced) and their
    float32 reduction rounded once to float16."""
    a, b = _inputs(np.float16, 37, 100, 4097, batch=2)
    x, y = _operand(device, a, False), _operand(device, b, True)
    explained = cg.explain_matmul(x, y, kernel="wgmma", params={"KSPLIT": ks})
    assert ("KSPLIT=" + str(ks or gemm_wgmma.MAX_KSPLIT)) in explained, explained
    out = _poisoned_out(device, (2, 37, 100), np.float16)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params={"KSPLIT": ks}))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 4097 * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert (np.abs(got.astype(np.float64) - exact) <= bound + np.abs(exact) * 2.0 ** -11).all()


@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (sm_90)")
@pytest.mark.parametrize("params", [
    {"BM": 128, "BN": 128, "BK": 64, "WGS": 2, "STAGES": 3},
    {"BM": 128, "BN": 64, "BK": 32, "WGS": 1, "STAGES": 4},
    {"BM": 64, "BN": 128, "BK": 16, "WGS": 1, "STAGES": 2, "WG_INFLIGHT": 0},
])
def test_hopper_forced_tiles(device, params):
    a, b = _inputs(np.float16, 333, 300, 517, batch=2)
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                               kernel="wgmma", params=params))
    assert _within_one_rounding(got, a, b).all()


@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (sm_90)")
@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
def test_hopper_tf32(device, ta, tb):
    a, b = _inputs(np.float32, 300, 257, 517, seed=7)
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    assert "kernel: wgmma" in cg.explain_matmul(x, y, precision="tf32")
    assert _tf32_bound_holds(np.asarray(cg.matmul(x, y, precision="tf32")), a, b, near=1e-4)


@pytest.mark.skipif(not HOPPER or BF16 is None, reason="needs NVIDIA Hopper and ml_dtypes")
def test_hopper_bfloat16(device):
    a, b = _inputs(BF16, 257, 300, 129)
    got = np.asarray(cg.asarray(a, device=device) @ cg.asarray(b, device=device))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(got - exact) <= 1e-5 * np.linalg.norm(exact)


# -- Oclgrind ---------------------------------------------------------------------------------
OCLGRIND_SCRIPT = r"""
import json, sys
import numpy as np
import clarray_gemm as cg
kind, M, N, K, batch, ta, tb, params = sys.argv[1:]
M, N, K, batch, ta, tb = int(M), int(N), int(K), int(batch), int(ta), int(tb)
dev = next(d for d in cg.devices() if d.info.is_simulator)
rng = np.random.default_rng(0)
dtype = np.float32 if kind == "tf32" else np.float16
a = rng.standard_normal((batch, M, K)).astype(dtype)
b = rng.standard_normal((batch, K, N)).astype(dtype)
def put(v, t):
    return cg.asarray(np.ascontiguousarray(v.swapaxes(1, 2)), device=dev).mT if t else cg.asarray(v, device=dev)
got = np.asarray(cg.matmul(put(a, ta), put(b, tb), kernel="wgmma", params=json.loads(params),
                          precision="tf32" if kind == "tf32" else None))
exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
ok = np.isfinite(got).all() and np.linalg.norm(got - exact) <= 2e-3 * np.linalg.norm(exact)
print("ok" if ok else "MISMATCH")
sys.exit(0 if ok else 3)
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind,M,N,K,batch,ta,tb,params", [
    ("float16", 33, 70, 40, 1, 0, 0, SMALL), ("float16", 7, 65, 33, 2, 1, 1, SMALL),
    # C staged through the ring (STAGE_C, the default), then the fragment stores
    ("float16", 65, 9, 50, 1, 1, 0, {**SMALL, "BK": 32, "STAGES": 3, "WG_INFLIGHT": 1}),
    ("float16", 65, 9, 50, 1, 1, 0, {**SMALL, "BK": 32, "STAGES": 3, "STAGE_C": 0}),
    ("tf32", 70, 33, 40, 1, 0, 0, {**SMALL, "BK": 16, "STAGES": 3}),
    ("tf32", 33, 40, 37, 2, 1, 0, SMALL), ("tf32", 9, 35, 70, 1, 0, 1, SMALL),
    # split-K finished by each tile's last slice: no race check (Oclgrind does not follow the
    # order a global fence and an atomic counter make between work-groups)
    ("float16", 33, 70, 100, 2, 0, 1, {**SMALL, "KSPLIT": 3, "FINISH_LAST": 1}),
    ("float16", 33, 70, 100, 1, 0, 1, {**SMALL, "BK": 32, "STAGES": 3, "KSPLIT": 3,
                                       "FINISH_LAST": 1}),
])
def test_emulated_wgmma_is_clean_under_oclgrind(oclgrind, kind, M, N, K, batch, ta, tb,
                                                params):
    assert_clean_under_oclgrind(OCLGRIND_SCRIPT, kind, str(M), str(N), str(K), str(batch),
                                str(ta), str(tb), json.dumps(params),
                                races=not params.get("FINISH_LAST"))


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("ks,last", [(2, 0), (3, 0), (3, 1)])
def test_emulated_split_k_sums_float32_partials_then_rounds_once(device, dtype, ks, last):
    """K sliced over work-groups: the slices write float32 partial products, the reduction (or
    with FINISH_LAST each tile's last slice) sums them and rounds a float16 C once (bfloat16
    products give float32, as NumPy's)."""
    if dtype is None:
        pytest.skip("needs ml_dtypes (bfloat16)")
    a, b = _inputs(dtype, 37, 70, 301, batch=2, seed=ks)
    x, y = _operand(device, a, False), _operand(device, b, True)
    params = {**SMALL, "KSPLIT": ks, "FINISH_LAST": last}
    out_dtype = np.float16 if dtype == np.float16 else np.float32
    out = _poisoned_out(device, (2, 37, 70), out_dtype)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params=params))
    assert got.dtype == out_dtype and got.shape == (2, 37, 70)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 301 * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    if dtype == np.float16:   # one rounding to float16 on top of float32 sums
        bound = bound + np.abs(exact) * 2.0 ** -11
    assert (np.abs(got.astype(np.float64) - exact) <= bound + 1e-30).all()
    assert "KSPLIT=" + str(ks) in cg.explain_matmul(x, y, kernel="wgmma", params=params)
    # the other way of summing: the same sums in the same order, the same bits
    again = cg.matmul(x, y, kernel="wgmma", params={**params, "FINISH_LAST": 1 - last})
    np.testing.assert_array_equal(np.asarray(again), got)


@pytest.mark.parametrize("M,N,K,batch", [(37, 70, 33, 1), (65, 33, 47, 3), (7, 64, 64, 2)])
def test_emulated_tiles_and_k_steps_by_shape(device, M, N, K, batch):
    """The tiles and K steps tile_shape chooses on its own (K <= 64: steps of 32; tiles no
    wider than M or N need; rows of odd lengths read element by element) compute NumPy's
    product within one rounding, over a poisoned output, at odd sizes and in batches."""
    a, b = _inputs(np.float16, M, N, K, batch=batch, seed=M * N + K)
    x, y = _operand(device, a, False), _operand(device, b, False)
    out = _poisoned_out(device, a.shape[:-1] + (N,), np.float16)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params={"EMULATE": 1}))
    assert _within_one_rounding(got, a, b).all()
    assert "BK=32" in cg.explain_matmul(x, y, kernel="wgmma", params={"EMULATE": 1})


def test_tiles_by_shape(device):
    from conftest import fake_device
    from test_gemm_kernels import problem
    hopper = fake_device(device, compute_units=132).info
    defaults = gemm_wgmma.WGMMA.defaults
    shape = lambda *mnk: tuple(gemm_wgmma.tile_shape(problem(*mnk, np.float16), hopper,  # noqa: E731
                                                     defaults)[k] for k in ("BM", "BN", "WGS"))
    assert shape(4096, 4096, 4096) == (128, 256, 2)
    assert shape(1024, 1024, 1024) == (128, 64, 2)     # 32 large tiles would leave 100 units idle
    assert shape(128, 128, 4096) == (64, 64, 1)
    # a long K over an operand read element by element: large tiles, split-K
    assert shape(127, 4097, 4097) == (128, 256, 2)
    assert shape(127, 127, 1000) == (64, 64, 1)
    # no tile reaches a 64-element step past M or N: 64 x 64 matrices in 64 x 64 tiles
    assert shape(160000, 64, 64) == (128, 64, 2)
    batched = gemm_wgmma.tile_shape(problem(64, 64, 64, np.float16, batch=10000), hopper, defaults)
    assert (batched["BM"], batched["BN"], batched["WGS"]) == (64, 64, 1)
    # K <= SMALL_TILES_MAX_K over an operand read element by element (rows of 4097 halves):
    # the tuned largest tile at most; past that K the largest tile that does not pad
    most = tuple(constant("wgmma.short_k_16bit")["unaligned_tile"])
    short = gemm_wgmma.SMALL_TILES_MAX_K
    assert shape(4097, 4097, short)[:2] == most
    assert shape(4097, 4097, short + 1) == (128, 256, 2)
    assert shape(256, 33, 4097) == (128, 64, 2)         # N = 33: no 128- or 256-wide tile
    assert shape(4096, 4096, short) == (128, 256, 2)   # aligned rows: the large tile stays
    # K steps of 32 over a short K (two copies in flight), else 64; TF32's own
    bk = lambda m, n, k: gemm_wgmma.tile_shape(problem(m, n, k, np.float16), hopper,  # noqa: E731
                                               defaults)["BK"]
    bk32 = constant("wgmma.short_k_16bit")["bk32_max_k"]
    assert (bk(4096, 4096, bk32), bk(4096, 4096, bk32 + 1)) == (32, 64)
    forced = {**defaults, "BM": 64, "BN": 128, "WGS": 1, "BK": 64}
    assert gemm_wgmma.tile_shape(problem(8, 8, 8, np.float16), hopper, forced) == forced
    assert gemm_wgmma.tile_shape(problem(8, 8, 8, np.float16), hopper,
                                 {**forced, "BK": 0}) == forced | {"BK": 32}
    f32 = dataclasses.replace(problem(64, 64, 64), precision="tf32")
    assert tuple(gemm_wgmma.tile_shape(f32, hopper, defaults)[k] for k in ("BM", "BN")) == (
        128, 256)


def test_split_k_by_shape_only_where_tiles_leave_units_idle(device):
    from conftest import fake_device
    from test_gemm_kernels import problem
    hopper = fake_device(device, compute_units=132).info
    defaults = gemm_wgmma.WGMMA.defaults
    assert gemm_wgmma.ksplit(problem(7, 127, 4097, np.float16), hopper, defaults) == 16
    assert gemm_wgmma.ksplit(problem(4096, 4096, 4096, np.float16), hopper, defaults) == 1
    assert gemm_wgmma.ksplit(problem(7, 127, 200, np.float16), hopper, defaults) == 1
    # 65 tiles of 64 x 64, two a unit (wgmma.split_slots): 264 work-groups in 4 slices each
    slots = constant("wgmma.split_slots")["small_per_unit"]
    assert gemm_wgmma.ksplit(problem(33, 4097, 4097, np.float16), hopper, defaults) == \
        132 * slots // 65
    with pytest.raises(ValueError, match="KSPLIT must be"):
        x = cg.asarray(np.ones((8, 8), np.float16), device=device)
        cg.matmul(x, x, kernel="wgmma", params={**SMALL, "KSPLIT": 99})


@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("ks", [1, 2])
def test_emulated_packed_operands_give_the_same_bits(device, ta, tb, ks):
    """Operands whose rows do not start on 16 bytes (K = 203, N = 61, an offset view), copied
    to padded rows first: the product reads other addresses but adds the same terms in the
    same order, so every bit matches the element-wise reads; a batch with B shared too."""
    a, b = _inputs(np.float16, 70, 61, 203, batch=3, seed=ks)
    b = b[0]
    x, y = _operand(device, a, ta), _operand(device, b, tb)
    plain = {**SMALL, "KSPLIT": ks, "PACK_A": 0, "PACK_B": 0}
    packed = {**plain, "PACK_A": 1, "PACK_B": 1}
    assert "PACK_A=1 PACK_B=1" in cg.explain_matmul(x, y, kernel="wgmma", params=packed)
    want = np.asarray(cg.matmul(x, y, kernel="wgmma", params=plain))
    out = _poisoned_out(device, (3, 70, 61), np.float16)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params=packed))
    assert _within_one_rounding(got, a, b).all()
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    # an offset view: its first element is not on 16 bytes either
    big = cg.asarray(np.concatenate([np.zeros((70, 1), np.float16), a[0]], axis=1), device=device)
    view = big[:, 1:]
    got = np.asarray(cg.matmul(view, y, kernel="wgmma", params=packed))
    np.testing.assert_array_equal(got.view(np.uint16), want[0].view(np.uint16))


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes (bfloat16)")
def test_emulated_packed_bfloat16(device):
    a, b = _inputs(BF16, 33, 45, 77)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    params = {**SMALL, "PACK_A": 1, "PACK_B": 1}
    got = np.asarray(cg.matmul(x, y, kernel="wgmma", params=params))
    want = np.asarray(cg.matmul(x, y, kernel="wgmma", params={**SMALL, "PACK_A": 0,
                                                                "PACK_B": 0}))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_packing_by_size_only_unaligned_operands(device):
    from test_gemm_kernels import problem
    defaults = gemm_wgmma.WGMMA.defaults
    big = gemm_wgmma.PACK_MIN_MACS
    assert gemm_wgmma.packs(problem(1024, 4097, 4097, np.float16), defaults) == (True, True)
    assert gemm_wgmma.packs(problem(1024, 4096, 4097, np.float16), defaults) == (True, False)
    assert gemm_wgmma.packs(problem(4096, 4096, 4096, np.float16), defaults) == (False, False)
    assert gemm_wgmma.packs(problem(33, 45, 77, np.float16), defaults) == (False, False)
    # a 4097^2 B read by a single row of tiles: its copy would cost more than it saves
    assert gemm_wgmma.packs(problem(300, 4097, 4097, np.float16), defaults) == (True, False)
    assert big > 33 * 45 * 77 and 300 < gemm_wgmma.PACK_MIN_REUSE
    forced = {**defaults, "PACK_A": 1, "PACK_B": 0}
    assert gemm_wgmma.packs(problem(33, 45, 77, np.float16), forced) == (True, False)
    with pytest.raises(ValueError, match="PACK_A and PACK_B must be"):
        x = cg.asarray(np.ones((8, 8), np.float16), device=device)
        cg.matmul(x, x, kernel="wgmma", params={**SMALL, "PACK_A": 2})


@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (sm_90)")
@pytest.mark.parametrize("tb", [False, True])
def test_hopper_packed_odd_sizes(device, tb):
    a, b = _inputs(np.float16, 300, 1001, 1027, batch=2)
    x, y = _operand(device, a, False), _operand(device, b, tb)
    for pack in (0, 1):
        params = {"PACK_A": pack, "PACK_B": pack}
        assert f"PACK_A={pack} PACK_B={pack}" in cg.explain_matmul(x, y, kernel="wgmma",
                                                                   params=params)
        out = _poisoned_out(device, (2, 300, 1001), np.float16)
        got = np.asarray(cg.matmul(x, y, out=out, kernel="wgmma", params=params))
        assert _within_one_rounding(got, a, b).all()
