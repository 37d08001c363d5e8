"""Kernel choice by measurement: the nearest measured point ranks the kernels, kernels that do
not fit are skipped, ranks only order what no measurement covers; the shipped tables are
well formed and followed; ``tune --choices`` fills the store that dispatch then reads."""
import json

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.dtypes import bfloat16_dtype
from clarray_gemm.kernels import gemm, measured, tuned
from clarray_gemm.kernels.gemm import GemmProblem
from conftest import assert_matches, fake_device

from test_gemm_kernels import ADRENO, GPU, NVIDIA, problem


def _points(*rows):
    return measured._points([list(r) for r in rows])


def test_nearest_point_is_nearest_in_log_sizes():
    pts = _points((1, 4097, 10, 10, {"a": 1.0}), (1, 2048, 33, 33, {"b": 1.0}),
                  (1, 1, 1, 1, {"c": 1.0}), (64, 16, 16, 16, {"d": 1.0}))
    assert measured.nearest(pts, 1, 4000, 16, 16).seconds[0][0] == "a"
    assert measured.nearest(pts, 1, 1, 2, 1).seconds[0][0] == "c"
    # a batched product takes a batched point even where a single one is nearer in M, N, K
    assert measured.nearest(pts, 8, 1, 1, 1).seconds[0][0] == "d"
    # and a single product a single point
    assert measured.nearest(pts, 1, 16, 16, 16).seconds[0][0] != "d"


def test_a_batch_of_large_products_is_ranked_as_one_product_of_its_rows():
    """Past the batched points' largest matrices by LARGE_BATCHED (a factor of 4) in M, N or K,
    a batch ranks by the single point nearest to batch * M rows; within it, by the batched."""
    pts = _points((1, 4097, 512, 512, {"big": 1.0}), (1, 64, 64, 64, {"small": 1.0}),
                  (16, 64, 64, 64, {"batched": 1.0}))
    assert measured.nearest(pts, 8, 512, 512, 512).seconds[0][0] == "big"
    assert measured.nearest(pts, 8, 128, 64, 64).seconds[0][0] == "batched"
    assert measured.nearest(pts, 10000, 33, 33, 33).seconds[0][0] == "batched"
    assert measured.ranked(pts, 8, 512, 512, 512)[0][0] == "big"


def test_a_product_between_points_is_ranked_by_both():
    # K = 1024 lies as far from 512 as from 2048: "tc" wins by a little at 512 and loses by 4x
    # at 2048, so the general kernel ranks first; at 512 itself "tc" does.
    pts = _points((1, 8, 8, 512, {"tc": 80e-6, "general": 90e-6}),
                  (1, 8, 8, 2048, {"tc": 230e-6, "general": 50e-6}),
                  (1, 512, 512, 512, {"tc": 10e-6}))
    names, point, count = measured.ranked(pts, 1, 7, 7, 1024)
    assert names[0] == "general" and count == 2
    assert measured.ranked(pts, 1, 8, 8, 512)[0][0] == "tc"
    # a kernel a point did not time counts as twice that point's slowest
    names, _, _ = measured.ranked(_points((1, 8, 8, 512, {"a": 1.0, "b": 1.5}),
                                          (1, 8, 8, 2048, {"b": 1.0})), 1, 8, 8, 1024)
    assert names == ("b", "a")


def test_points_are_ranked_fastest_first():
    (p,) = _points((1, 8, 8, 8, {"slow": 3e-5, "fast": 1e-5, "mid": 2e-5})).points
    assert [n for n, _ in p.seconds] == ["fast", "mid", "slow"]


@pytest.mark.parametrize("bad", [
    [[1, 8, 8, {"k": 1.0}]],                 # a size missing
    [[0, 8, 8, 8, {"k": 1.0}]],              # a size below 1
    [[1, 8, 8, 8, {}]],                      # no kernel timed
    [[1, 8, 8, 8, {"k": float("nan")}]],     # not a time
    [[1, 8, 8, 8, {"k": -1.0}]],
    [[1, 8.5, 8, 8, {"k": 1.0}]],
    {"1": 2},
])
def test_malformed_points_are_refused(bad):
    assert not measured.valid_points(bad)


def _store_with(device, key, points):
    store = tuned.store_for(device)
    store.measured[key] = {"points": points, "date": "2026-11-27"}
    store.save()
    tuned.forget(store.path)


def test_choice_follows_the_measurement_and_skips_what_does_not_fit(device, isolated_cache):
    # A table of this device that puts naive first for small products and a kernel that cannot
    # take 8-bit-wide work-groups... : gemv first (fits only M == 1 or N == 1), then tiled.
    _store_with(device, "matmul/float32", [
        [1, 64, 64, 64, {"gemv": 1e-6, "tiled": 2e-6, "naive": 3e-6}],
        [1, 1, 4096, 4096, {"naive": 1e-6, "gemv": 5e-6}],
    ])
    choice = gemm.choose(device, problem(60, 70, 50))
    assert choice.variant.name == "tiled", choice.describe()
    assert "measured fastest that fits: tiled" in choice.reason
    assert "64 x 64 x 64" in choice.reason
    assert ("gemv", "neither M nor N is 1") in choice.rejected
    assert gemm.choose(device, problem(1, 3000, 5000)).variant.name == "naive"
    # the call runs what the choice says, and computes the right answer
    rng = np.random.default_rng(0)
    a = rng.standard_normal((60, 50)).astype(np.float32)
    b = rng.standard_normal((50, 70)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    assert "kernel: tiled" in cg.explain_matmul(x, y)
    assert_matches(x @ y, a.astype(np.float64) @ b)


def test_a_large_batch_runs_the_single_products_choice(device, isolated_cache):
    """A batch of products 4x past the table's batched points runs the kernel its single point
    at batch * M rows names (here naive, against the batched point's tiled), NumPy's answer
    on odd sizes; a batch of small squares keeps the batched point's kernel."""
    with cg.host_path(False):
        _store_with(device, "matmul/float32", [
            [16, 8, 8, 8, {"tiled": 1e-6, "naive": 2e-6}],
            [1, 1024, 37, 33, {"naive": 1e-6, "tiled": 2e-6}],
        ])
        rng = np.random.default_rng(3)
        a = rng.standard_normal((3, 257, 33)).astype(np.float32)
        b = rng.standard_normal((3, 33, 37)).astype(np.float32)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        assert "kernel: naive" in cg.explain_matmul(x, y)
        assert_matches(x @ y, np.matmul(a.astype(np.float64), b))
        small = cg.asarray(a[:, :7, :7].copy(), device=device)
        assert "kernel: tiled" in cg.explain_matmul(small, small)


def test_no_table_for_a_dtype_keeps_the_ranks(device, isolated_cache):
    unmeasured = fake_device(device, name="a device no table names")
    _store_with(unmeasured, "matmul/float64", [[1, 64, 64, 64, {"naive": 1e-6}]])
    choice = gemm.choose(unmeasured, problem(60, 70, 50, np.float32))
    assert "measured" not in choice.reason
    if device.info.fp64:
        assert gemm.choose(unmeasured, problem(60, 70, 50, np.float64)).variant.name == "naive"


def test_tf32_products_are_not_ranked_by_the_float32_table(device, isolated_cache):
    _store_with(device, "matmul/float32", [[1, 64, 64, 64, {"naive": 1e-6}]])
    p = problem(60, 70, 50)
    tf32 = GemmProblem(p.batch, p.M, p.N, p.K, p.dtype, p.a, p.b, p.c, precision="tf32")
    assert "measured" not in gemm.choose(device, tf32).reason


def test_a_forced_kernel_ignores_the_table(device, isolated_cache):
    _store_with(device, "matmul/float32", [[1, 64, 64, 64, {"naive": 1e-6}]])
    assert gemm.choose(device, problem(64, 64, 64), kernel="tiled").variant.name == "tiled"


@pytest.mark.parametrize("info", [GPU, NVIDIA], ids=["AMD-like", "NVIDIA-like"])
@pytest.mark.parametrize("shape", [(10, 4097, 2048), (4097, 10, 2048), (512, 10, 128),
                                   (33, 33, 4097), (2048, 2048, 2048)])
def test_the_image_kernel_needs_an_adreno_or_a_measurement(info, shape, device, isolated_cache):
    # On GPUs with images but no texture-pipe advantage, image never outranks the general
    # kernels (an H200 ran it at 0.04x cuBLAS where it did).
    fake = fake_device(device, **dict(info, name=info["name"] + " (unmeasured)"))
    assert gemm.choose(fake, problem(*shape)).variant.name != "image"


def test_adreno_keeps_the_image_kernel(device, isolated_cache):
    assert gemm.choose(fake_device(device, **ADRENO), problem(1024, 1024, 1024)).variant.name \
        == "image"


def test_shipped_tables_are_well_formed_and_name_real_kernels():
    paths = sorted(measured.TABLE_DIR.glob("*.json"))
    assert paths, "no kernel-choice table shipped"
    for path in paths:
        data = json.loads(path.read_text())
        assert data["devices"] and data["measured_on"] and data["date"] and data["command"]
        for key, pts in data["points"].items():
            assert measured.valid_points(pts), (path.name, key)
    assert measured.measured_names(measured.shipped_tables()) <= set(gemm.CATALOGUE.names())


def test_shipped_table_is_followed_on_its_devices(device, isolated_cache):
    """At every point of a shipped table, a device of that name runs the measured fastest of
    the kernels that fit it (the fake device has none of Hopper's tensor-core features, so those
    kernels are skipped with their reasons)."""
    table = measured.shipped_tables()[0]
    fake = fake_device(device, **dict(NVIDIA, name=f"NVIDIA {table.devices[0]} test"))
    checked = 0
    for key, pts in table.points.items():
        name = key.split("/")[1]
        dtype = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
        if dtype is None or (dtype == np.float64 and not device.info.fp64):
            continue
        for p in pts.points[::7]:
            prob = problem(p.M, p.N, p.K, dtype, batch=p.batch)
            try:
                choice = gemm.choose(fake, prob)
            except RuntimeError:  # nothing fits this dtype on the fake device (float16)
                continue
            fitting = [n for n, _ in p.seconds
                       if gemm.CATALOGUE[n].fits(prob, fake.info, gemm.CATALOGUE[n].defaults)
                       is None]
            if fitting:
                assert choice.variant.name == fitting[0], (key, p, choice.describe())
                checked += 1
    assert checked > 10


def test_tune_choices_fills_the_store_dispatch_reads(device, isolated_cache, capsys):
    from clarray_gemm.cli import main
    out = isolated_cache / "table.json"
    assert main(["tune", "--choices", "--quick", "--sizes", "1", "9", "--dtype", "float32",
                 "--quiet", "--budget", "0.001", "--export", str(out)]) == 0
    store = tuned.TuningStore.load(tuned.store_path(device))
    pts = store.measured["matmul/float32"]["points"]
    assert [p[:4] for p in pts] == [[1, m, n, k] for m in (1, 9) for n in (1, 9) for k in (1, 9)]
    exported = json.loads(out.read_text())
    assert exported["points"]["matmul/float32"] == pts
    assert "tune --choices" in exported["command"]
    # dispatch follows it: at 9 x 9 x 9 the stored fastest kernel runs
    best = min(pts[-1][4].items(), key=lambda kv: kv[1])[0]
    choice = gemm.choose(device, problem(9, 9, 9))
    assert choice.variant.name == best and "measured" in choice.reason


def test_merge_adds_a_kernel_and_retimes_its_contestants():
    """A kernel added to a table is timed again beside the kernels within CONTESTED of each
    point's best (times from another run would differ by its floor), not where it already
    measured HOPELESS times slower; merging keeps the other kernels' times."""
    from clarray_gemm.tuning import choices
    base = {"matmul/float32": [[1, 8, 8, 8, {"a": 10e-6, "b": 12e-6, "c": 40e-6}],
                               [1, 4, 4, 4, {"a": 10e-6, "b": 30e-6, "new": 50e-6}]]}
    plan = choices.merge_plan(base, ["new"])
    f32 = np.dtype(np.float32)
    assert plan(f32, (1, 8, 8, 8)) == ["new", "a", "b"]     # c: 4x the best, not contesting
    assert plan(f32, (1, 4, 4, 4)) is None                  # new measured 5x slower before
    assert plan(f32, (1, 2, 2, 2)) == ["new"]               # a point the table lacks
    # the added kernel changed since (``tune --merge --changed``): timed again everywhere
    again = choices.merge_plan(base, ["new"], changed=True)
    assert again(f32, (1, 4, 4, 4)) == ["new", "a"]
    assert again(f32, (1, 8, 8, 8)) == ["new", "a", "b"]
    merged = choices.merge(base, {"matmul/float32": [[1, 8, 8, 8, {"new": 9e-6, "a": 11e-6}],
                                                     [1, 2, 2, 2, {"new": 5e-6}]]})
    points = {tuple(p[:4]): p[4] for p in merged["matmul/float32"]}
    assert points[(1, 8, 8, 8)] == {"a": 11e-6, "b": 12e-6, "c": 40e-6, "new": 9e-6}
    assert points[(1, 4, 4, 4)] == base["matmul/float32"][1][4]
    assert points[(1, 2, 2, 2)] == {"new": 5e-6}
    assert measured.valid_points(merged["matmul/float32"])


def test_merge_times_nothing_where_the_added_kernel_does_not_fit(device):
    """A point where none of the kernels being added runs is not timed again (its contestants'
    times stay as the table has them): gemv takes matrix-vector products only."""
    from clarray_gemm.tuning import choices
    rng = np.random.default_rng(1)
    square = rng.standard_normal((9, 9)).astype(np.float32)
    column = rng.standard_normal((9, 1)).astype(np.float32)
    names = ["naive", "gemv"]
    assert choices.measure_point(device, square, square, names, 0.001, needed=["gemv"]) == {}
    times = choices.measure_point(device, square, column, names, 0.001, needed=["gemv"])
    assert set(times) == {"naive", "gemv"}
    assert set(choices.measure_point(device, square, square, names, 0.001)) == {"naive"}


def test_tune_choices_merge_updates_a_table(device, isolated_cache):
    from clarray_gemm.cli import main
    table = isolated_cache / "table.json"
    assert main(["tune", "--choices", "--quick", "--sizes", "1", "9", "--dtype", "float32",
                 "--quiet", "--budget", "0.001", "--kernels", "naive", "--export",
                 str(table)]) == 0
    assert main(["tune", "--choices", "--quick", "--sizes", "1", "9", "--dtype", "float32",
                 "--quiet", "--budget", "0.001", "--kernels", "gemv", "--merge",
                 str(table)]) == 0
    data = json.loads(table.read_text())
    assert "then python -m clarray_gemm tune --choices" in data["command"]
    pts = data["points"]["matmul/float32"]
    assert all("naive" in p[4] for p in pts) and any("gemv" in p[4] for p in pts)
    store = tuned.TuningStore.load(tuned.store_path(device))
    assert store.measured["matmul/float32"]["points"] == pts
