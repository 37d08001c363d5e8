"""The tuning store dispatch reads: damaged or odd files and unwritable folders give a warning
and the defaults, never an error; writes are atomic."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm import settings
from clarray_gemm.kernels import gemm, samples, tuned

from conftest import assert_matches, random_array

KEY = "matmul/naive/float32/small"


@pytest.fixture(autouse=True)
def cache(isolated_cache):
    return isolated_cache


def _write(device, text: str) -> None:
    path = tuned.store_path(device)
    path.write_text(text)
    tuned.forget(path)


def _good(params=None, crossover=None) -> dict:
    return {"format": tuned.FORMAT, "device": "x",
            "entries": {KEY: {"params": params or {"WG_X": 8, "WG_Y": 4}}},
            "searched": {}, "crossover": crossover or {}}


def _dispatch_still_works(device) -> None:
    a, b = random_array((20, 12), np.float32), random_array((12, 9), np.float32, seed=1)
    assert_matches(cg.matmul(cg.asarray(a, device=device), b, kernel="naive"),
                   a.astype(np.float64) @ b)


def _tuned(device) -> bool:
    return gemm.choose(device, samples.bench_problem(device, 32, 32, 32).problem, "naive").tuned


def test_a_good_file_reaches_dispatch(device):
    _write(device, json.dumps(_good()))
    assert _tuned(device)


@pytest.mark.parametrize("text", [
    '{"format": 1, "entries": {"matmul/naive/float32/sm',   # truncated
    "\x00\x01garbage",                                     # not JSON
    "[1, 2, 3]",                                           # not an object
    '{"format": 99, "entries": {}}',                        # another format
])
def test_a_damaged_file_warns_and_gives_the_defaults(device, text):
    _write(device, text)
    with pytest.warns(RuntimeWarning, match="tuning file"):
        assert not _tuned(device)
    _dispatch_still_works(device)


@pytest.mark.parametrize("entry", [{"seconds": 1.0}, {"params": [8, 4]}, {"params": {"WG_X": "8"}},
                                   "not a dict", None])
def test_a_malformed_entry_is_dropped_with_a_warning(device, entry):
    data = _good()
    data["entries"][KEY] = entry
    data["entries"]["matmul/naive/float32/medium"] = {"params": {"WG_X": 8}}
    _write(device, json.dumps(data))
    with pytest.warns(RuntimeWarning, match="malformed entries"):
        store = tuned.store_for(device)
    assert list(store.entries) == ["matmul/naive/float32/medium"]
    assert not _tuned(device)
    _dispatch_still_works(device)


def test_a_malformed_section_is_ignored(device):
    data = _good()
    data["entries"] = ["not", "a", "dict"]
    _write(device, json.dumps(data))
    with pytest.warns(RuntimeWarning, match="malformed 'entries' section"):
        assert tuned.store_for(device).entries == {}


def test_unknown_parameters_in_an_entry_are_not_passed_to_the_kernel(device):
    _write(device, json.dumps(_good({"WG_X": 8, "NOT_A_PARAMETER": 3})))
    choice = gemm.choose(device, samples.bench_problem(device, 32, 32, 32).problem, "naive")
    assert choice.tuned and "NOT_A_PARAMETER" not in choice.params


def test_a_missing_cache_folder_gives_the_defaults(device, tmp_path, monkeypatch):
    monkeypatch.setenv(settings.CACHE_ENV, str(tmp_path / "does" / "not" / "exist"))
    settings.reload()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not _tuned(device)
        assert tuned.crossover(device, "matmul", np.float32) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_cache_folder_warns_when_tuning(device, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    monkeypatch.setenv(settings.CACHE_ENV, str(ro))
    settings.reload()
    from clarray_gemm import tuning
    with pytest.warns(RuntimeWarning, match="cannot write"):
        tuning.tune(device, sizes=[32], kernels=["naive"], progress=False,
                    measure=lambda *a: 1.0)


@pytest.mark.filterwarnings("ignore:cannot read the tuning file")
def test_an_unwritable_store_path_warns_when_tuning(device):
    from clarray_gemm import tuning
    path = tuned.store_path(device)
    path.mkdir()  # a folder where the file should be: os.replace fails
    with pytest.warns(RuntimeWarning, match="cannot write"):
        tuning.tune(device, sizes=[32], kernels=["naive"], progress=False,
                    measure=lambda *a: 1.0)
    assert not list(path.parent.glob("*.tmp"))


def test_save_is_atomic_and_leaves_no_temporary_file(device, cache):
    store = tuned.TuningStore(tuned.store_path(device), "dev")
    store.entries[KEY] = {"params": {"WG_X": 8}}
    store.crossover["matmul/float32"] = {"size": "never"}
    store.save()
    assert [p.name for p in cache.iterdir()] == [store.path.name]
    loaded = tuned.TuningStore.load(store.path)
    assert loaded.entries == store.entries and loaded.crossover == store.crossover


def test_crossover_reads_sizes_never_and_not_measured(device):
    _write(device, json.dumps(_good(crossover={
        "matmul/float32": {"size": 2.5e6, "unit": "flops"},
        "convolve/float32": {"size": "never"},
        "elementwise/float32": {"size": "soon"}})))
    with pytest.warns(RuntimeWarning, match="malformed crossover"):
        assert tuned.crossover(device, "matmul", "float32") == 2.5e6
    assert tuned.crossover(device, "convolve", np.float32) == float("inf")
    assert tuned.crossover(device, "elementwise", np.float32) is None  # dropped: malformed
    assert tuned.crossover(device, "matmul", np.float64) is None


def test_nv_verbose_setting(monkeypatch):
    monkeypatch.setenv(settings.NV_VERBOSE_ENV, "1")
    assert settings.reload().nv_verbose and settings.nv_verbose()
    monkeypatch.delenv(settings.NV_VERBOSE_ENV)
    assert not settings.reload().nv_verbose
