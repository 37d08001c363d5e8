"""Host/OpenCL crossovers: the rule, what ``tune`` stores, and what dispatch can read."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from clarray_gemm import tuning
from clarray_gemm.cli import main
from clarray_gemm.kernels import tuned
from clarray_gemm.tuning.crossover import Point, crossover_size


@pytest.fixture(autouse=True)
def cache(isolated_cache):
    return isolated_cache


def _points(*wins: bool) -> list[Point]:
    return [Point(10.0 ** i, 1.0, 0.5 if w else 2.0) for i, w in enumerate(wins)]


def test_the_crossover_is_where_the_kernel_starts_to_win_for_good():
    assert crossover_size(_points(False, False, True, True)) == 100.0
    assert crossover_size(_points(True, True, True)) == 1.0
    assert crossover_size(_points(False, True, False, True)) == 1000.0  # not consistent below
    assert math.isinf(crossover_size(_points(True, True, False)))       # loses at the top
    assert math.isinf(crossover_size([]))



def test_measured_crossovers_are_stored_and_read_back(device, cache, monkeypatch):
    from clarray_gemm.tuning import crossover as xo
    sizes = {"matmul": (4, 8, 16), "elementwise": (64, 256, 1024), "convolve": (64, 256),
             "convolve_fft": (300, 1023), "convolve_fft_short": (700, 900),
             "convolve_host_fft": (500, 650)}
    # which op is timed: NumPy's first and third call of each size, the kernel's second
    calls = []

    def timer(op, budget_s):
        calls.append(op)
        size = timer.size
        is_numpy = len(calls) % 3 != 2
        return size * 1e-9 if is_numpy else 600.0 * 1e-9
    real = xo.CASES

    def counting(family):
        def case(device, n, dt):
            size, numpy_op, kernel_op, name = real[family](device, n, dt)
            timer.size = size
            return size, numpy_op, kernel_op, name
        return case
    monkeypatch.setattr(xo, "CASES", {f: counting(f) for f in real})
    assert tuned.crossover(device, "matmul", np.float32) is None
    results = tuning.measure_crossovers(device, dtypes=["float32"], sizes=sizes, timer=timer,
                                        progress=False)
    assert [(r.family, r.dtype) for r in results] == [
        ("matmul", "float32"), ("elementwise", "float32"), ("convolve", "float32"),
        ("convolve_fft", "float32"), ("convolve_fft_short", "float32"),
        ("convolve_host_fft", "float32")]
    # matmul: 128, 1024, 8192 flops -> the kernel (600) wins from 1024 on
    assert tuned.crossover(device, "matmul", np.float32) == 1024.0
    assert tuned.crossover(device, "elementwise", np.float32) == 1024.0
    assert tuned.crossover(device, "convolve", np.float32) == 64 * 31
    # convolve_fft (size: the mask length): the host FFT (600) wins at 1023 taps only
    assert tuned.crossover(device, "convolve_fft", np.float32) == 1023.0
    assert tuned.crossover(device, "convolve_fft_short", np.float32) == 700.0
    # convolve_host_fft: the host FFT (600) against np.convolve: from 650 taps
    assert tuned.crossover(device, "convolve_host_fft", np.float32) == 650.0
    data = json.loads(tuned.store_path(device).read_text())
    entry = data["crossover"]["matmul/float32"]
    assert entry["unit"] == "flops" and len(entry["points"]) == 3 and entry["kernel"]


def test_never_is_stored_as_never_and_read_as_infinity(device):
    tuning.measure_crossovers(device, families=["elementwise"], dtypes=["float32"],
                              sizes={"elementwise": (64, 128)}, progress=False,
                              timer=lambda op, budget: (op(), 1.0)[1])
    data = json.loads(tuned.store_path(device).read_text())
    assert data["crossover"]["elementwise/float32"]["size"] == "never"
    assert tuned.crossover(device, "elementwise", "float32") == math.inf


def test_a_real_quick_measurement(device):
    out = tuning.measure_crossovers(device, families=["matmul", "convolve"], dtypes=["float32"],
                                    sizes={"matmul": (8, 32), "convolve": (256,)},
                                    budget_s=0.005, progress=False)
    for r in out:
        assert all(p.numpy_s > 0 and p.kernel_s > 0 for p in r.points)
        assert tuned.crossover(device, r.family, "float32") == r.size


def test_cli_crossover_only(capsys, device, cache):
    assert main(["tune", "--crossover-only", "--quick", "--dtype", "float32", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| family | dtype | kernel | kernel faster from |" in out
    for family in ("matmul", "elementwise", "convolve"):
        assert f"| {family} | float32 |" in out
        assert tuned.crossover(device, family, "float32") is not None
    data = json.loads(tuned.store_path(device).read_text())
    assert data["entries"] == {} and data["searched"] == {}


@pytest.mark.parametrize("platform, cheap", [("Intel(R) OpenCL", True),
                                             ("Portable Computing Language", False)])
def test_cpu_drivers_with_cheap_launches_keep_the_direct_kernel_for_longer_masks(
        device, monkeypatch, platform, cheap):
    """Untuned defaults: on Intel's CPU runtime (launches of microseconds) the direct kernel
    runs short signals up to 48 taps before the host FFT takes over; on PoCL from 16."""
    import dataclasses
    from clarray_gemm.kernels import crossover as xo
    from clarray_gemm.kernels.plans import clear_all
    info = dataclasses.replace(device.info, platform=platform, type="CPU",
                               host_unified_memory=True, is_simulator=False)
    monkeypatch.setattr(device, "info", info)
    monkeypatch.setattr(xo, "_tuned_lookup", lambda d, f, t: None)
    clear_all()
    try:
        assert info.cheap_launches is cheap
        with xo.host_path(True):
            m, measured = xo.crossover(device, "convolve_fft_short", np.dtype(np.float32))
            assert (m, measured) == ((48.0 if cheap else 16.0), False)
            assert xo.crossover(device, "convolve_fft", np.dtype(np.float32))[0] == 96.0
    finally:
        monkeypatch.undo()
        clear_all()
