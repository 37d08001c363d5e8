"""float32 products as three TF32 tensor-core products (``tf32x3``, kernels/gemm_tf32x3.py): the
split packs (opencl/operand_pack.cl, SPLIT), the promoted sums of gemm_wgmma.cl (PROMOTE), the
gate word and the gated float32 fallback (gemm_gpu.cl, GATE), and where the variant is chosen.

Off Hopper the warpgroup product runs only as its emulation (``EMULATE=1``): the layouts, packs,
segments, promotion and gate are the same; the tensor cores' truncated sums are not, so the
accuracy they bring is measured on the H100 (benches/probes/split_tf32.py, test_hopper_* here).
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import flags, gemm_tf32x3
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
from conftest import assert_clean_under_oclgrind

HOPPER = cg.default_device().info.warpgroup_mma
# One warpgroup, 64 x 64 tiles: the emulation's cost stays small.
SMALL = {"EMULATE": 1, "BM": 64, "BN": 64, "BK": 16, "WGS": 1, "STAGES": 2, "WG_INFLIGHT": 0,
         "PROMOTE": 2}
SHAPES = [(1, 1, 1), (7, 33, 31), (65, 17, 33), (1, 200, 17), (31, 257, 7)]
ORIENTATIONS = [(False, False), (True, False), (False, True), (True, True)]


def _operand(device, a, trans):
    if not trans:
        return cg.asarray(a, device=device)
    return cg.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT


def _relative_error(got, a, b):
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    return np.linalg.norm(got.astype(np.float64) - exact) / max(np.linalg.norm(exact), 1e-300)


@pytest.mark.parametrize("ta,tb", ORIENTATIONS)
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_emulated_split_every_orientation(device, M, N, K, ta, tb):
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    out = cg.asarray(np.full((M, N), np.nan, np.float32), device=device)
    got = np.asarray(cg.matmul(_operand(device, a, ta), _operand(device, b, tb), out=out,
                               kernel="tf32x3", params=SMALL))
    assert got.shape == (M, N) and not np.isnan(got).any()
    assert _relative_error(got, a, b) < 1e-5


@pytest.mark.parametrize("view", ["offsets", "strided", "k1", "transposed"])
@pytest.mark.parametrize("ksplit", [0, 2])
def test_emulated_split_of_views(device, view, ksplit):
    """Views at odd offsets and strides (the packs' element path, VEC=0), K = 1, and operands
    transposed as views."""
    rng = np.random.default_rng(13)
    a = rng.standard_normal((50, 61)).astype(np.float32)
    b = rng.standard_normal((61, 47)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    pick = {"offsets": lambda u, v: (u[1:, 3:], v[3:, 2:]),
            "strided": lambda u, v: (u[:, ::2], v[::2, :]),
            "k1": lambda u, v: (u[:, :1], v[:1, :]),
            "transposed": lambda u, v: (v.T, u.T)}[view]
    xs, ys = pick(x, y)
    an, bn = pick(a, b)
    got = np.asarray(cg.matmul(xs, ys, kernel="tf32x3", params={**SMALL, "KSPLIT": ksplit}))
    assert got.shape == (an.shape[0], bn.shape[1])
    assert _relative_error(got, an, bn) < 1e-5


@pytest.mark.parametrize("params", [
    SMALL,
    {**SMALL, "PROMOTE": 1},                               # every step promoted
    {**SMALL, "PROMOTE": 0},                               # one accumulation
    {**SMALL, "BK": 32, "STAGES": 3, "WG_INFLIGHT": 1},    # 128-byte K rows of TF32
    {**SMALL, "KSPLIT": 3},                                # partial sums, then their reduction
    {**SMALL, "KSPLIT": 16},                               # slices past the last K step
])
@pytest.mark.parametrize("batch_a,batch_b", [(3, 3), (3, 1), (1, 3)])
def test_emulated_split_batches_and_promotion(device, params, batch_a, batch_b):
    rng = np.random.default_rng(7)
    a = rng.random((batch_a, 33, 70)).astype(np.float32)   # all-positive sums
    b = rng.random((batch_b, 70, 17)).astype(np.float32)
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                               kernel="tf32x3", params=params))
    assert got.shape == (3, 33, 17)
    assert _relative_error(got, a, b) < 1e-5


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, 2.0 ** 41, -3e38, 1e-13, -2e-40])
@pytest.mark.parametrize("where", ["a", "b"])
def test_values_the_split_cannot_carry_rerun_float32(device, value, where):
    """A NaN, an infinity, or a magnitude outside [2^-40, 2^40] sends the product to the gated
    gpu_blocked launch: its result, bit for bit, with NumPy's NaN and infinity pattern."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 29)).astype(np.float32)
    b = rng.standard_normal((29, 41)).astype(np.float32)
    (a if where == "a" else b)[5, 6] = value
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = np.asarray(cg.matmul(x, y, kernel="tf32x3", params={**SMALL, "KSPLIT": 2}))
    plain = np.asarray(cg.matmul(x, y, kernel="gpu_blocked",
                                 params={"KSPLIT": 1, "PACK_A": 0, "PACK_B": 0}))
    np.testing.assert_array_equal(got.view(np.uint32), plain.view(np.uint32))
    with np.errstate(all="ignore"):
        expected = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected))


def test_in_range_values_leave_the_gate_alone(device):
    """Only a value the split cannot carry stores the call's epoch in the gate word: after a
    call with an infinity, a call with ordinary values leaves the word as it was, so its gated
    fallback (comparing the word with a new epoch) does nothing."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20, 30)).astype(np.float32)
    b = rng.standard_normal((30, 10)).astype(np.float32)
    bad = a.copy()
    bad[0, 0] = np.inf

    def gate_word() -> int:
        word = np.zeros(1, np.int32)
        import pyopencl as cl
        cl.enqueue_copy(device.queue, word, flags.flag_word(device))
        return int(word[0])
    cg.matmul(cg.asarray(bad, device=device), cg.asarray(b, device=device), kernel="tf32x3",
              params=SMALL)
    flagged = gate_word()
    assert flagged > 0
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                               kernel="tf32x3", params=SMALL))
    assert gate_word() == flagged
    assert _relative_error(got, a, b) < 1e-5


def test_threads_keep_their_own_gate(device):
    """Threads interleave their packs, products and gated fallbacks on one queue: a thread whose
    operands hold an infinity must not send another thread's product to the fallback, nor
    lose its own."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(9)
    cases = []
    for i in range(16):
        a = rng.standard_normal((24, 40)).astype(np.float32)
        b = rng.standard_normal((40, 12)).astype(np.float32)
        if i % 3 == 0:
            a[i % 24, 1] = np.inf
        cases.append((a, b))

    def run(case):
        a, b = case
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        return [np.asarray(cg.matmul(x, y, kernel="tf32x3", params=SMALL)) for _ in range(3)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, cases))
    for (a, b), got in zip(cases, results):
        with np.errstate(all="ignore"):
            expected = a @ b
        for g in got:
            np.testing.assert_array_equal(np.isnan(g), np.isnan(expected))
            np.testing.assert_array_equal(np.isinf(g), np.isinf(expected))
            fin = np.isfinite(expected)
            exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
            assert (np.linalg.norm(g[fin] - exact[fin])
                    <= 1e-5 * np.linalg.norm(exact[fin]))


def test_catalogue_launch_path(device):
    """``gemm.run`` (tuning, the seed000 bench) launches without a prepared plan."""
    from clarray_gemm.kernels import gemm
    from clarray_gemm.kernels.samples import bench_problem
    bench = bench_problem(device, 33, 40, 57)
    bench.poison()
    gemm.run(device, bench.problem, "tf32x3", SMALL)
    device.synchronize()  # (the launch may make no event: clarray_gemm/drivers/eventless.py)
    bench.check()


def test_split_packed_layout():
    op = GemmOperand(None, 0, 10, 70)
    p = GemmProblem(5, 7, 3, 10, np.dtype(np.float32), op, dataclasses.replace(
        op, batch_stride=0), op)
    packed, nbytes = gemm_tf32x3.split_packed(p)
    assert packed.K == 96 and packed.precision == "tf32"        # three segments of 32
    assert packed.a == GemmOperand(None, 0, 96, 7 * 96, False)   # A per batch, K-major
    assert packed.b == GemmOperand(None, 5 * 7 * 96, 96, 0, True)  # B once, K-major
    assert nbytes == 4 * (5 * 7 + 3) * 96
    after_sums, nbytes = gemm_tf32x3.split_packed(p, 128)     # partial sums first
    assert after_sums.a.offset == 128 and after_sums.b.offset == 128 + 5 * 7 * 96
    assert nbytes == 4 * (128 + (5 * 7 + 3) * 96)
    for k in (1, 31, 32, 33, 5000):  # every segment and row starts on a 128-byte line
        wide = dataclasses.replace(p, K=k)
        segment = gemm_tf32x3.split_packed(wide)[0].K // 3
        assert segment >= k and segment % 32 == 0 and segment - k < 32


def test_packs_after_partial_sums_stay_aligned(device):
    """With split-K the packed operands follow the partial sums: they must start on a 16-byte
    boundary whatever M * N is, or the product falls back to element-by-element copies."""
    from clarray_gemm.kernels import gemm_wgmma
    op = GemmOperand(None, 0, 1, 0)
    p = GemmProblem(1, 33, 17, 21, np.dtype(np.float32), op, op, op)   # M * N odd
    packed, _ = gemm_tf32x3.split_packed(p, gemm_tf32x3._sums_elements(p, 3))
    assert packed.a.offset >= 3 * 33 * 17 and packed.a.aligned(4) and packed.b.aligned(4)
    d = gemm_wgmma.defines_for(device, packed, {**gemm_wgmma.WGMMA.defaults, "EMULATE": 1})
    assert d["VEC_A"] == 1 and d["VEC_B"] == 1


def test_ksplit_fills_the_device():
    from clarray_gemm.kernels.gemm_tf32x3 import TF32X3, ksplit
    op = GemmOperand(None, 0, 1, 0)
    hopper = _hopper(cg.default_device().info)

    def split(M, N, K, **params):
        p = GemmProblem(1, M, N, K, np.dtype(np.float32), op, op, op)
        return ksplit(p, hopper, {**TF32X3.defaults, **params})
    assert split(4096, 4096, 4096) == 1 and split(2048, 2048, 2048) == 1
    assert split(8192, 8192, 8192) == 1 and split(8192, 8192, 1024) == 1   # full waves
    assert split(4097, 2049, 3001) == 3 and split(3072, 3072, 3072) == 3   # a last wave 1/4 full
    assert split(1024, 1024, 65536) > 2 and split(1024, 1024, 4096) > 2
    assert split(1024, 1024, 4096, KSPLIT=5) == 5


def _hopper(info):
    return dataclasses.replace(info, vendor="NVIDIA Corporation", type="GPU",
                               compute_capability=(9, 0), is_simulator=False,
                               compute_units=132)


@pytest.mark.parametrize("M,N,K,chosen", [
    (4096, 4096, 4096, True), (2048, 2048, 2048, True), (3072, 3072, 3072, True),
    (4097, 2049, 3001, True),
    (1536, 1536, 1536, True),      # 72 tiles, split along K
    (1024, 1024, 65536, True),
    (1024, 1024, 1024, False),     # 32 tiles of 128 x 256 for 132 compute units, K too short
    (3000, 700, 5000, False),      # 72 tiles; gpu_blocked's 128 x 64 ones fill two waves
    (4608, 704, 5000, False),      # 108 tiles, 82% of a wave; gpu_blocked's fill three per unit
    (65536, 256, 256, False),      # K too short for the packs to pay
    (64, 8192, 8192, False),       # M below a tile
])
def test_chosen_for_large_float32_products_on_hopper_only(device, M, N, K, chosen):
    op = GemmOperand(None, 0, 1, 0)
    p = GemmProblem(1, M, N, K, np.dtype(np.float32), op, op, op)
    hopper = _hopper(device.info)
    assert (gemm_tf32x3.TF32X3.rank(p, hopper) > 100) == chosen
    assert gemm_tf32x3.TF32X3.rank(dataclasses.replace(p, precision="tf32"), hopper) == 0
    assert gemm_tf32x3.TF32X3.rank(dataclasses.replace(p, dtype=np.dtype(np.float64)),
                                   hopper) == 0
    ampere = dataclasses.replace(hopper, compute_capability=(8, 0))
    assert gemm_tf32x3.TF32X3.rank(p, ampere) == 0


def test_refusals_say_why(device):
    a = cg.asarray(np.ones((4, 4), np.float64), device=device)
    with pytest.raises(ValueError, match="float32 at precision 'highest'"):
        cg.matmul(a, a, kernel="tf32x3", params={"EMULATE": 1})
    x = cg.asarray(np.ones((4, 4), np.float32), device=device)
    if not HOPPER:
        with pytest.raises(ValueError, match="Hopper"):
            cg.matmul(x, x, kernel="tf32x3")
    text = cg.explain_matmul(x, x, kernel="tf32x3", params={"EMULATE": 1})
    assert "tf32x3" in text and "three TF32 products" in text


# -- Hopper -----------------------------------------------------------------------------------
@pytest.mark.skipif(not HOPPER, reason="needs NVIDIA Hopper (wgmma) as the default device")
@pytest.mark.parametrize("draw", ["standard_normal", "random"])
@pytest.mark.parametrize("M,N,K", [(1024, 768, 2048), (257, 1031, 4099)])
def test_hopper_split_is_as_accurate_as_float32(device, draw, M, N, K):
    rng = np.random.default_rng(11)
    a = getattr(rng, draw)((M, K)).astype(np.float32)
    b = getattr(rng, draw)((K, N)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = np.asarray(cg.matmul(x, y, kernel="tf32x3"))
    ffma = np.asarray(cg.matmul(x, y, kernel="gpu_blocked"))
    # A few float32 roundings: all-positive sums (uniform data) keep the tensor cores'
    # truncation of the PROMOTE steps between promotions (6e-7 on the H100, where gpu_blocked
    # gives 1e-7); normal data 3-4e-7. Unpromoted, uniform data at these K: 1e-5 and above.
    assert _relative_error(got, a, b) <= max(2 * _relative_error(ffma, a, b), 1e-6)


# -- Oclgrind ---------------------------------------------------------------------------------
OCLGRIND_SCRIPT = r"""
import json, sys
import numpy as np
import clarray_gemm as cg
M, N, K, batch, ta, special = (int(v) for v in sys.argv[1:7])
params = json.loads(sys.argv[7])
dev = next(d for d in cg.devices() if d.info.is_simulator)
rng = np.random.default_rng(0)
a = rng.standard_normal((batch, M, K)).astype(np.float32)
b = rng.standard_normal((batch, K, N)).astype(np.float32)
if special:
    a[0, 0, 0] = np.inf
x = (cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=dev).mT if ta
     else cg.asarray(a, device=dev))
got = np.asarray(cg.matmul(x, cg.asarray(b, device=dev), kernel="tf32x3", params=params))
with np.errstate(all="ignore"):
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
fin = np.isfinite(exact)
ok = (np.array_equal(np.isfinite(got), fin)
      and np.linalg.norm((got - exact)[fin]) <= 1e-5 * np.linalg.norm(exact[fin]))
print("ok" if ok else "MISMATCH")
sys.exit(0 if ok else 3)
"""


@pytest.mark.slow
@pytest.mark.parametrize("M,N,K,batch,ta,special,params", [
    (33, 17, 21, 1, 0, 0, SMALL), (9, 20, 13, 2, 1, 0, SMALL), (17, 9, 11, 1, 0, 1, SMALL),
    (12, 9, 40, 2, 0, 0, {**SMALL, "KSPLIT": 3})])
def test_split_is_clean_under_oclgrind(oclgrind, M, N, K, batch, ta, special, params):
    assert_clean_under_oclgrind(OCLGRIND_SCRIPT, str(M), str(N), str(K), str(batch), str(ta),
                                str(special), json.dumps(params))
