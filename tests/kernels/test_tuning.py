"""The auto-tuner: what it searches, when it stores, how dispatch uses it, and reset."""
from __future__ import annotations

import json

import numpy as np
import pyopencl as cl
import pytest

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from clarray_gemm import tuning
from clarray_gemm.kernels import gemm, samples
from clarray_gemm.kernels.variant import Variant

from conftest import assert_matches, random_array


@pytest.fixture(autouse=True)
def cache(isolated_cache):
    return isolated_cache


def _fake(times: dict[tuple, float], default: float = 1.0):
    """A measurement that returns fixed seconds per parameter set (no device work)."""
    calls = []

    def measure(device, problem, variant, params):
        calls.append(dict(params))
        return times.get(tuple(sorted(params.items())), default)
    measure.calls = calls
    return measure


def _key(**params) -> tuple:
    return tuple(sorted({**gemm.CATALOGUE["naive"].defaults, **params}.items()))


def test_candidates_start_with_defaults_and_respect_the_limit():
    naive = gemm.CATALOGUE["naive"]
    every = tuning.candidates(naive)
    assert every[0] == dict(naive.defaults)
    grid = 1
    for values in naive.tunable.values():
        grid *= len(values)
    assert len(every) == grid  # the defaults are one point of the grid, listed once
    assert len({tuple(sorted(c.items())) for c in every}) == len(every)
    few = tuning.candidates(naive, limit=3)
    assert len(few) == 3 and few[0] == dict(naive.defaults)


def test_size_classes():
    assert tuning.size_class(64, 64, 64) == "small"
    assert tuning.size_class(512, 512, 512) == "medium"
    assert tuning.size_class(2048, 2048, 2048) == "large"
    assert tuning.size_class(4096, 4096, 4096) == "huge"
    assert tuning.conv_size_class(1000, 31) == "short-narrow"
    assert tuning.conv_size_class(2**20, 2047) == "long-huge"


def test_store_path_honours_the_environment(device, cache):
    assert tuning.cache_dir() == cache
    assert tuning.store_path(device).parent == cache


def test_faster_parameters_are_stored_and_dispatch_uses_them(device, cache):
    fast = {"WG_X": 8, "WG_Y": 4}
    measure = _fake({_key(**fast): 0.5})
    out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=measure, progress=False)
    assert [o.stored for o in out] == [True]
    data = json.loads(tuning.store_path(device).read_text())
    entry = data["entries"]["matmul/naive/float32/small"]
    assert entry["params"] == {**gemm.CATALOGUE["naive"].defaults, **fast}
    assert entry["seconds"] < entry["default_seconds"]

    a, b = random_array((40, 24), np.float32), random_array((24, 36), np.float32, seed=1)
    x = cg.asarray(a, device=device)
    text = cg.explain_matmul(x, b, kernel="naive")
    assert "WG_X=8, WG_Y=4 (tuned)" in text
    bench = samples.bench_problem(device, 40, 36, 24)
    choice = gemm.choose(device, bench.problem, "naive")
    assert choice.tuned and choice.params["WG_X"] == 8
    assert_matches(cg.matmul(x, b, kernel="naive"), a.astype(np.float64) @ b)
    # another size class has no tuning
    big = samples.bench_problem(device, 256, 256, 256)
    assert not gemm.choose(device, big.problem, "naive").tuned


def test_slower_parameters_are_not_stored(device):
    measure = _fake({}, default=1.0)
    measure_slow = _fake({_key(WG_X=8, WG_Y=4): 2.0, _key(WG_X=32, WG_Y=16): 3.0})
    for m in (measure, measure_slow):
        out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=m, progress=False)
        assert [o.stored for o in out] == [False]
    store = tuning.store_for(device)
    assert store.entries == {}
    assert store.searched["matmul/naive/float32/small"]["stored"] is False
    bench = samples.bench_problem(device, 32, 32, 32)
    assert not gemm.choose(device, bench.problem, "naive").tuned


def test_a_gain_within_the_noise_margin_is_not_stored(device):
    measure = _fake({_key(WG_X=8, WG_Y=4): 0.99})
    out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=measure, progress=False,
                      margin=0.03)
    assert not out[0].stored and "not 3% faster" in out[0].note


def test_a_gain_within_the_measured_noise_is_not_stored(device):
    # the defaults measure 1.0, 0.8, 1.2, 1.0 (spread 40%); the candidate 0.75 (25% faster)
    defaults = iter([1.0, 0.8, 1.2, 1.0])
    fast = _key(WG_X=8, WG_Y=4)

    def measure(dev, problem, variant, params):
        if tuple(sorted(params.items())) == fast:
            return 0.75
        if dict(params) == dict(gemm.CATALOGUE["naive"].defaults):
            return next(defaults)
        return 2.0
    out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=measure, progress=False,
                      margin=0.03, confirm=3)
    assert not out[0].stored
    assert out[0].noise == pytest.approx(0.4)
    assert "noise (40%)" in out[0].note
    assert "matmul/naive/float32/small" not in tuning.store_for(device).entries


def test_a_gain_beyond_the_measured_noise_is_stored(device):
    defaults = iter([1.0, 0.95, 1.05, 1.0])   # spread 10%
    fast = _key(WG_X=8, WG_Y=4)

    def measure(dev, problem, variant, params):
        if tuple(sorted(params.items())) == fast:
            return 0.8
        if dict(params) == dict(gemm.CATALOGUE["naive"].defaults):
            return next(defaults)
        return 2.0
    out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=measure, progress=False)
    assert out[0].stored and out[0].noise == pytest.approx(0.1)


def test_a_search_that_no_longer_wins_removes_the_stored_entry(device):
    key = "matmul/naive/float32/small"
    tuning.tune(device, sizes=[32], kernels=["naive"], progress=False,
                measure=_fake({_key(WG_X=8, WG_Y=4): 0.5}))
    assert key in tuning.store_for(device).entries
    tuning.tune(device, sizes=[32], kernels=["naive"], progress=False, measure=_fake({}))
    assert key not in tuning.store_for(device).entries


def test_failing_configurations_are_skipped(device):
    bad = _key(WG_X=32, WG_Y=16)

    def measure(dev, problem, variant, params):
        if tuple(sorted(params.items())) == bad:
            raise cl.RuntimeError("clBuildProgram failed: OUT_OF_RESOURCES")
        return 0.5 if params["WG_X"] == 8 else 1.0
    out = tuning.tune(device, sizes=[32], kernels=["naive"], measure=measure, progress=False,
                      limit=None)
    errors = [t for t in out[0].trials if t.error]
    assert [t.params for t in errors] == [dict(bad)]
    assert "OUT_OF_RESOURCES" in errors[0].error
    assert out[0].stored and out[0].best_params["WG_X"] == 8


def test_a_kernel_with_a_wrong_result_is_caught(device):
    noop = Variant("noop", "gemm_naive.cl", "gemm_naive", "writes nothing", {"WG_X": 8},
                   fits=lambda p, info, params: None, rank=lambda p, info: 1.0,
                   launch=lambda device, problem, params: None)
    bench = samples.bench_problem(device, 16, 16, 16)
    measure = tuning.measure_on_device(bench, 0.01)
    with pytest.raises(samples.WrongResult):
        measure(device, bench.problem, noop, {"WG_X": 8})
    real = measure(device, bench.problem, gemm.CATALOGUE["naive"],
                   dict(gemm.CATALOGUE["naive"].defaults))
    assert real > 0


def test_real_quick_tune_stores_only_winners(device):
    out = tuning.tune(device, sizes=[32], kernels=["naive"], limit=3, budget_s=0.01,
                      progress=False)
    assert len(out) == 1 and out[0].default_s and out[0].default_s > 0
    for entry in tuning.store_for(device).entries.values():
        assert entry["seconds"] < entry["default_seconds"]


def test_reset_removes_the_file_and_dispatch_returns_to_defaults(device):
    tuning.tune(device, sizes=[32], kernels=["naive"], progress=False,
                measure=_fake({_key(WG_X=8, WG_Y=4): 0.5}))
    path = tuning.store_path(device)
    assert path.exists()
    assert tuning.reset(device) == [path]
    assert not path.exists()
    bench = samples.bench_problem(device, 32, 32, 32)
    assert not gemm.choose(device, bench.problem, "naive").tuned


def test_convolution_tuning_reaches_dispatch(device):
    conv = pytest.importorskip("clarray_gemm.kernels.conv")
    from clarray_gemm.ops.convolve import explain_convolve
    basic = conv.CATALOGUE["basic"]
    fast = {**basic.defaults, "WG": 32}

    def measure(dev, problem, variant, params):
        return 0.5 if dict(params) == fast else 1.0
    out = tuning.tune(device, family="convolve", sizes=[(1000, 7)], kernels=["basic"],
                      measure=measure, progress=False)
    assert [o.stored for o in out] == [True]
    x = cg.asarray(random_array(1000, np.float32), device=device)
    assert "WG=32 (tuned)" in explain_convolve(x, np.ones(7, np.float32), kernel="basic")


def test_device_time_excludes_the_first_run(device):
    bench = samples.bench_problem(device, 64, 64, 64)
    calls = []

    def op():
        calls.append(1)
        return gemm.run(device, bench.problem, "naive")
    t = device_seconds(device, op, reps=3)
    assert t.kind == "device" and t.reps == 3 and len(calls) == 4  # 1 warm-up + 3 timed
    assert 0 < t.best <= t.seconds < 10


def test_by_default_the_kernel_dispatch_chooses_is_tuned(device):
    bench = samples.bench_problem(device, 32, 32, 32)
    chosen = gemm.choose(device, bench.problem).variant
    out = tuning.tune(device, sizes=[32], measure=_fake({}), progress=False)
    assert [o.key.split("/")[1] for o in out] == ([chosen.name] if chosen.tunable else [])
    every = tuning.tune(device, sizes=[32], kernels=["all"], measure=_fake({}), progress=False)
    assert len(every) > len(out)
