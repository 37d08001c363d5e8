"""Every GEMM kernel, forced with ``matmul(kernel=...)``, against NumPy on the default device
(odd sizes, transposed operands, batches, every dtype it supports), and the catalogue's choice
for each kind of problem, including devices that are not present (``DeviceInfo`` replaced)."""
from __future__ import annotations


import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem

from conftest import assert_matches, fake_device, random_array, run_or_refusal

GENERAL = ["naive", "tiled", "regtile", "vec", "image", "const_b", "cpu"]
# Drawn from {1, 7, 31, 33, 64, 100, 257, 1000}: odd edges in every dimension, K = 1, and a
# row count (1000) that is no multiple of any tile.
SIZES = [(1000, 257, 33), (33, 100, 257), (7, 31, 1), (64, 64, 64), (31, 7, 1000)]
GEMV_SIZES = [(1000, 1, 257), (1, 257, 1000), (1, 1, 33), (7, 1, 100), (1, 31, 7)]
FLOAT_INT = [np.float64, np.int32, np.int64]


def check_every_element(result, a, b) -> None:
    """Each element within rounding of the float64 product (integers exactly), so an element
    the kernel never wrote (NaN, garbage or a stale zero) fails."""
    if result is None:  # the device refused the forced kernel (run_or_refusal)
        return
    got = np.asarray(result)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    if np.dtype(a.dtype).kind in "iu":
        np.testing.assert_array_equal(got, np.matmul(a, b))
        return
    scale = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    eps = np.finfo(a.dtype).eps
    bound = 4 * eps * a.shape[-1] * scale + np.finfo(a.dtype).tiny
    bad = ~(np.abs(got - exact) <= bound)
    assert not bad.any(), f"{bad.sum()} wrong elements, first at {np.argwhere(bad)[0]}"
    assert_matches(got, exact)


def run_into_poison(a, b, kernel, device, **kw):
    """``matmul(kernel=...)`` into an ``out=`` array pre-filled with NaN (-1 for integers)."""
    x = cg.asarray(a, device=device) if isinstance(a, np.ndarray) else a
    y = cg.asarray(b, device=device) if isinstance(b, np.ndarray) else b
    shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) + (x.shape[-2], y.shape[-1])
    poison = np.nan if np.dtype(x.dtype).kind == "f" else -1
    out = cg.full(shape, poison, dtype=x.dtype, device=device)
    # const_b keeps B (one matrix if broadcast over the batch, else all of them) in __constant.
    b_count = 1 if y.ndim == 2 or y.strides[0] == 0 else int(np.prod(y.shape[:-2]))
    b_bytes = b_count * y.shape[-2] * y.shape[-1] * y.dtype.itemsize
    if run_or_refusal(lambda: cg.matmul(x, y, out=out, kernel=kernel, **kw), kernel, b_bytes,
                      device) is None:
        return None
    return out


@pytest.mark.parametrize("kernel", GENERAL)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_float32_sizes(kernel, M, N, K, device):
    a = random_array((M, K), np.float32, seed=M + K)
    b = random_array((K, N), np.float32, seed=N)
    check_every_element(run_into_poison(a, b, kernel, device), a, b)


@pytest.mark.parametrize("M,N,K", GEMV_SIZES)
def test_gemv_sizes(M, N, K, device):
    a = random_array((M, K), np.float32, seed=1)
    b = random_array((K, N), np.float32, seed=2)
    check_every_element(run_into_poison(a, b, "gemv", device), a, b)


@pytest.mark.parametrize("kernel", GENERAL + ["gemv"])
@pytest.mark.parametrize("trans_a,trans_b", [(True, False), (False, True), (True, True)])
def test_transposed_batched(kernel, trans_a, trans_b, device):
    batch, M, N, K = 3, 33, 1 if kernel == "gemv" else 100, 31
    a = random_array((batch, M, K), np.float32, seed=3)
    b = random_array((batch, K, N), np.float32, seed=4)
    # Fortran-order matrices: views whose last two axes are swapped (TRANS_A / TRANS_B).
    x = (cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=device).mT if trans_a
         else cg.asarray(a, device=device))
    y = (cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT if trans_b
         else cg.asarray(b, device=device))
    check_every_element(run_into_poison(x, y, kernel, device), a, b)


@pytest.mark.parametrize("kernel", GENERAL + ["gemv"])
def test_broadcast_batch_and_offset_views(kernel, device):
    """B shared by every matrix of A's batch (batch stride 0), A a sliced view (offset)."""
    N = 1 if kernel == "gemv" else 33
    big = random_array((2, 40, 70), np.float32, seed=5)
    a = big[:, 3:36, 1:65]
    b = random_array((64, N), np.float32, seed=6)
    x = cg.asarray(big, device=device)[:, 3:36, 1:65]
    check_every_element(run_into_poison(x, b, kernel, device), a, b)


@pytest.mark.parametrize("kernel", [k for k in GENERAL if k != "image"] + ["gemv"])
@pytest.mark.parametrize("dtype", FLOAT_INT)
def test_other_dtypes(kernel, dtype, device):
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    M, N, K = (33, 1, 100) if kernel == "gemv" else (33, 31, 100)
    a = random_array((2, M, K), dtype, seed=7)
    b = random_array((2, K, N), dtype, seed=8)
    check_every_element(run_into_poison(a, b, kernel, device), a, b)


@pytest.mark.parametrize("dtype", [np.float32] + FLOAT_INT)
def test_cpu_k_blocks_accumulate(dtype, device):
    """K split into blocks of KC (one launch each, later ones adding to C), the last partial."""
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    a = random_array((2, 37, 100), dtype, seed=11)
    b = random_array((2, 100, 45), dtype, seed=12)
    check_every_element(run_into_poison(a, b, "cpu", device, params={"KC": 7}), a, b)


def test_cpu_prepared_launch_takes_each_calls_operands(device):
    """The cpu kernel's prepared launch (every call of a plan after it is built): each call's
    buffers and offsets (views at three offsets, one plan), a batch, a transposed B and K in
    blocks of KC."""
    from clarray_gemm.ops.matmul import plan_for

    big = random_array((3, 40, 70), np.float32, seed=13)
    b_t = random_array((3, 45, 64), np.float32, seed=14)  # B stored transposed
    x = cg.asarray(big, device=device)
    y = cg.asarray(b_t, device=device).mT
    plan = plan_for(x[:, 0:33, 2:66], y, None, device, "cpu", {"KC": 7})
    assert plan.kind == "kernel" and plan.prepared is not None, plan.describe()
    for r0 in (0, 1, 3):
        got = cg.matmul(x[:, r0:r0 + 33, 2:66], y, kernel="cpu", params={"KC": 7})
        check_every_element(got, big[:, r0:r0 + 33, 2:66], b_t.swapaxes(1, 2))


def test_integer_overflow_wraps_like_numpy(device):
    a = np.full((5, 40), 2 ** 20, np.int32)
    b = np.full((40, 9), 2 ** 15, np.int32)
    for kernel in ["cpu", "vec", "regtile", "const_b"]:
        np.testing.assert_array_equal(np.asarray(cg.matmul(cg.asarray(a, device=device), b,
                                                           kernel=kernel)), a @ b)


@pytest.mark.parametrize("kernel,params", [
    ("tiled", {"TS": 8}), ("regtile", {"TSM": 32, "TSN": 64, "TSK": 8, "WPTM": 2, "WPTN": 8}),
    ("vec", {"VW": 8, "TSM": 32, "TSN": 64, "WPTM": 4}), ("vec", {"VW": 2}),
    ("cpu", {"MR": 4, "VW": 8, "NV": 3, "WG": 4}), ("cpu", {"VW": 4, "NV": 1}),
    ("image", {"WG_X": 8, "WG_Y": 2}), ("const_b", {"NB": 3, "WG": 32}),
])
def test_params_override(kernel, params, device):
    a = random_array((2, 100, 33), np.float32, seed=9)
    b = random_array((2, 33, 31), np.float32, seed=10)
    check_every_element(run_into_poison(a, b, kernel, device, params=params), a, b)


@pytest.mark.parametrize("params", [{"WG": 64, "VW": 4}, {"WG": 16, "VW": 1}, {"NVEC": 1},
                                    {"WG": 1, "VW": 8, "NVEC": 3}])
@pytest.mark.parametrize("M,N,K,trans", [(257, 1, 100, False), (257, 1, 100, True),
                                         (1, 257, 100, False), (1, 257, 100, True)])
def test_gemv_params(params, M, N, K, trans, device):
    a = random_array((2, M, K), np.float32, seed=13)
    b = random_array((2, K, N), np.float32, seed=14)
    if trans:
        x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=device).mT
        y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT
    else:
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    check_every_element(run_into_poison(x, y, "gemv", device, params=params), a, b)


@pytest.mark.parametrize("kernel,params,dtype,shape,why", [
    ("image", {}, np.int32, (8, 8, 8), "float32 only"),
    ("gemv", {}, np.float32, (8, 8, 8), "neither M nor N is 1"),
    ("vec", {"VW": 3}, np.float32, (8, 8, 8), "VW must be"),
    ("regtile", {"TSM": 64, "WPTM": 5}, np.float32, (8, 8, 8), "multiple of WPTM"),
    ("tiled", {"TS": 128}, np.float32, (8, 8, 8), "work-group"),
    ("const_b", {}, np.float32, (4, 4096, 4096), "constant memory"),
])
def test_forced_kernel_that_does_not_fit(kernel, params, dtype, shape, why, device):
    M, N, K = shape
    if kernel == "tiled" and 128 * 128 <= device.info.max_work_group_size:
        pytest.skip("the device allows 128 x 128 work-groups")
    x = cg.zeros((M, K), dtype, device=device)
    y = cg.zeros((K, N), dtype, device=device)
    with pytest.raises(ValueError, match=why):
        cg.matmul(x, y, kernel=kernel, params=params)


@pytest.mark.parametrize("kernel,params,why", [
    ("gpu_blocked", {"BM": 32}, "has no parameter BM; its parameters: BK, "),
    ("tiled", {"TS": 8, "WPT": 2, "XYZ": 1}, "has no parameter WPT, XYZ"),
    (None, {"TS": 8}, r"parameters \(TS\) belong to a kernel"),
])
def test_parameters_a_kernel_does_not_have_are_refused(kernel, params, why, device):
    """A misspelt or foreign parameter is an error naming it, never silently ignored (a forced
    BM once left gpu_blocked on its preset's tile while a probe reported 32 x 32 tiles)."""
    x = cg.ones((16, 16), np.float32, device=device)
    with pytest.raises(ValueError, match=why):
        cg.matmul(x, x, kernel=kernel, params=params)
    with pytest.raises(ValueError, match=why):
        cg.explain_matmul(x, x, kernel=kernel, params=params)
    np.testing.assert_array_equal(np.asarray(cg.matmul(x, x, params={})), np.full((16, 16), 16))


def test_parameters_without_a_kernel_are_refused_on_every_path(device):
    """Also where the call would not reach a kernel at all (a 2 x 2 product, a short
    convolution: host paths on a CPU device)."""
    tiny, signal = cg.ones((2, 2), np.float32, device=device), cg.ones(100, np.float32, device=device)
    for call in (lambda: cg.matmul(tiny, tiny, params={"TS": 2}),
                 lambda: cg.convolve(signal, np.ones(5, np.float32), params={"WG": 1}),
                 lambda: cg.explain_convolve(signal, np.ones(5, np.float32), params={"WG": 1})):
        with pytest.raises(ValueError, match="belong to a kernel"):
            call()


def test_kernels_listed():
    names = cg.kernels("matmul")
    for k in GENERAL + ["gemv"]:
        assert k in names


# -- dispatch ----------------------------------------------------------------------------------
def problem(M, N, K, dtype=np.float32, batch=1) -> GemmProblem:
    """A contiguous row-major problem description (selection never touches the buffers)."""
    return GemmProblem(batch, M, N, K, np.dtype(dtype), GemmOperand(None, 0, K, M * K),
                       GemmOperand(None, 0, N, K * N), GemmOperand(None, 0, N, M * N))


GPU = dict(type="GPU", is_simulator=False, image_support=True, vendor="Advanced Micro Devices",
           name="gfx1100", max_work_group_size=1024, local_mem_bytes=65536,
           local_mem_is_global=False, constant_mem_bytes=65536, compute_units=48)
ADRENO = dict(GPU, vendor="QUALCOMM", name="QUALCOMM Adreno(TM) 740", compute_units=6)
# (named after no measured device: these rows check the ranks, which order only what no
# shipped measurement covers; tests/kernels/test_measured_choice.py checks the measured choice)
NVIDIA = dict(GPU, vendor="NVIDIA Corporation", name="NVIDIA GPU", compute_units=132)
CPU = dict(type="CPU", is_simulator=False, vendor="AuthenticAMD", name="pthread-test-cpu",
           max_work_group_size=4096, local_mem_bytes=1 << 20, constant_mem_bytes=1 << 20,
           preferred_vector_width_float=16)


@pytest.mark.parametrize("info,shape,dtype,expected", [
    (CPU, (8, 8, 8), np.float32, "naive"),             # tiny: one launch, nothing to pack
    (CPU, (1024, 1024, 1024), np.float32, "cpu"),
    (CPU, (1000, 1000, 1000), np.int64, "cpu"),
    (CPU, (1 << 19, 32, 32), np.float32, "const_b"),   # many vectors times a small matrix
    (CPU, (1000, 1, 1000), np.float32, "gemv"),
    (CPU, (1, 1000, 1000), np.float64, "gemv"),
    (ADRENO, (1024, 1024, 1024), np.float32, "image"),
    (ADRENO, (1024, 1024, 1024), np.float64, "gpu_blocked"),
    (NVIDIA, (1024, 1024, 1024), np.float32, "gpu_blocked"),
    (NVIDIA, (1 << 19, 32, 32), np.float32, "const_b"),
    (NVIDIA, (4096, 1, 4096), np.float32, "gemv_split"),
    (NVIDIA, (1, 4096, 4096), np.float64, "gemv_split"),
    (GPU, (1 << 19, 32, 32), np.int32, "const_b"),
])
def test_selection(info, shape, dtype, expected, device):
    choice = gemm.choose(fake_device(device, **info), problem(*shape, dtype))
    assert choice.variant.name == expected, choice.describe()


def test_selection_falls_back_when_better_kernels_do_not_fit(device):
    # A simulator-like GPU (gpu_blocked is not ranked there): vec; an Adreno-like simulator
    # with images -> image, without -> vec.
    sim = dict(GPU, is_simulator=True)
    assert gemm.choose(fake_device(device, **sim), problem(512, 512, 512)).variant.name == "vec"
    adreno_sim = dict(ADRENO, is_simulator=True)
    assert gemm.choose(fake_device(device, **adreno_sim),
                       problem(512, 512, 512)).variant.name == "image"
    no_images = dict(adreno_sim, image_support=False)
    assert gemm.choose(fake_device(device, **no_images),
                       problem(512, 512, 512)).variant.name == "vec"
    # B too big for constant memory: the small-B kernel is skipped with its reason.
    small_const = dict(CPU, constant_mem_bytes=1024)
    choice = gemm.choose(fake_device(device, **small_const), problem(1 << 19, 32, 32))
    assert choice.variant.name == "cpu"
    assert any(name == "const_b" and "constant memory" in why for name, why in choice.rejected)


def test_explain_names_the_choice(device):
    x = cg.zeros((300, 200), np.float32, device=device)
    text = cg.explain_matmul(x, cg.zeros((200, 100), np.float32, device=device))
    expected = gemm.choose(device, problem(300, 100, 200)).variant.name
    assert f"kernel: {expected}" in text


def test_image_kernel_fills_its_image_from_host_b_through_map_image(monkeypatch):
    """A NumPy B goes straight into the image (clEnqueueMapImage at the returned row pitch);
    a device B is packed into it on the device."""
    from clarray_gemm.kernels import gemm_variants

    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 33, 17)).astype(np.float32)
    b = rng.standard_normal((17, 31)).astype(np.float32)
    mapped = []
    real_map = gemm_variants.cl.enqueue_map_image

    def spy(*args, **kwargs):
        mapped.append(args[1])
        return real_map(*args, **kwargs)
    monkeypatch.setattr(gemm_variants.cl, "enqueue_map_image", spy)
    monkeypatch.setattr(gemm_variants, "_b_image", lambda *a: pytest.fail("packed on the device"))
    assert_matches(cg.matmul(cg.asarray(a), b, kernel="image"), a.astype(np.float64) @ b)
    assert len(mapped) == 1
    monkeypatch.undo()
    monkeypatch.setattr(gemm_variants, "_b_image_from_host",
                        lambda *a: pytest.fail("a device B must not go through the host"))
    assert_matches(cg.matmul(cg.asarray(a), cg.asarray(b), kernel="image"), a.astype(np.float64) @ b)


def test_host_b_is_uploaded_once_for_buffer_kernels():
    rng = np.random.default_rng(4)
    a = cg.asarray(rng.standard_normal((64, 48)).astype(np.float32))
    b = rng.standard_normal((48, 40)).astype(np.float32)
    before = cg.transfer_stats()
    y = cg.matmul(a, b, kernel="tiled")
    if cg.default_device().info.host_unified_memory:
        assert (cg.transfer_stats() - before).host_to_device == b.nbytes
    assert_matches(y, np.asarray(a).astype(np.float64) @ b)


def test_built_programs_lists_each_program_once_with_its_defines(device):
    """built_programs() names what was built (device, source, defines, options), which
    build_program then returns from its cache rather than building again."""
    from clarray_gemm.kernels import programs
    defines = {"KSPLIT": 1, "T": "float", "IS_FP64": 0}
    programs.get_kernel(device, "gemm_gpu.cl", "gemm_gpu", defines)
    keys = [k for k in programs.built_programs()
            if k[0] is device and k[1] == "gemm_gpu.cl" and dict(k[2]) == defines]
    assert len(keys) == 1
    builds = programs.build_count()
    programs.build_program(device, "gemm_gpu.cl", dict(keys[0][2]), keys[0][3])
    assert programs.build_count() == builds


def test_a_define_no_source_mentions_is_refused(device):
    """A misspelt -D parameter is an error naming it, not a build with the default."""
    from clarray_gemm.kernels import programs
    with pytest.raises(ValueError, match=r"opencl/gemm_gpu.cl has no parameter KSPLT"):
        programs.get_kernel(device, "gemm_gpu.cl", "gemm_gpu", {"KSPLT": 2, "KSPLIT": 1})
    programs.check_defines("gemm_gpu.cl", {"KSPLIT": 2, "T": "float", "IS_FP64": 0})
