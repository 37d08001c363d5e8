"""``explain_*`` reports the plan the call runs: for several shapes, dtypes, forced kernels and
parameters, the kernel and parameters that ``explain_matmul`` / ``explain_convolve`` name are
the ones the call then launches (recorded at the catalogue's variants, where every launch,
prepared or not, passes), and a host-path explanation means that no kernel launched."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import conv, gemm, plans
from conftest import assert_matches, random_array


@pytest.fixture
def launches(monkeypatch):
    """Every variant of both catalogues wrapped so that each launch appends
    ``(variant name, params)`` to the returned list; plans are rebuilt around the wrappers."""
    log: list[tuple[str, dict]] = []

    def recorded(variant):
        def launch(device, problem, params, *args, **kwargs):
            log.append((variant.name, dict(params)))
            return variant.launch(device, problem, params, *args, **kwargs)

        prepare = None
        if variant.prepare is not None:
            def prepare(device, problem, params):
                run = variant.prepare(device, problem, params)
                if run is None:
                    return None

                def prepared(*args, **kwargs):
                    log.append((variant.name, dict(params)))
                    return run(*args, **kwargs)
                return prepared
        return dataclasses.replace(variant, launch=launch, prepare=prepare)

    for catalogue in (gemm.CATALOGUE, conv.CATALOGUE):
        wrapped = {name: recorded(v) for name, v in catalogue._variants.items()}
        monkeypatch.setattr(catalogue, "_variants", wrapped)
    plans.clear_all()
    yield log
    plans.clear_all()


def _reference(func, a: np.ndarray, b: np.ndarray, *args) -> np.ndarray:
    """NumPy's answer, in float64 for floating operands (integers exactly)."""
    if a.dtype.kind == "f":
        a, b = a.astype(np.float64), b.astype(np.float64)
    return func(a, b, *args)


def _explained(text: str) -> tuple[str, dict] | None:
    """(kernel name, parameters) an explanation names, or None for the host path."""
    kernel = re.search(r"^kernel: (\w+)", text, re.M)
    if kernel is None:
        assert "host" in text, text
        return None
    params = re.search(r"^parameters: (.*?) \((?:tuned|defaults)\)$", text, re.M).group(1)
    pairs = [] if params == "none" else [p.split("=") for p in params.split(", ")]
    return kernel.group(1), {k: int(v) for k, v in pairs}


MATMUL_CASES = [  # (shape of a, shape of b, dtype, kernel, params)
    ((7, 5), (5, 3), np.float32, None, None),
    ((64, 64), (64, 64), np.float32, None, None),
    ((31, 33), (33,), np.float32, None, None),
    ((2, 33, 17), (17, 257), np.float64, None, None),
    ((33, 17), (17, 31), np.int32, None, None),
    ((33, 17), (17, 31), np.float32, "naive", None),
    ((33, 17), (17, 31), np.float32, "tiled", {"TS": 8}),
    ((33, 17), (17, 31), np.float32, "regtile", None),
    ((33, 17), (17, 31), np.float32, "vec", None),
    ((33, 17), (17, 31), np.float32, "gpu_blocked", None),
    ((33, 17), (17, 31), np.float32, "cpu", None),
    ((33, 17), (17, 1), np.float32, "gemv", None),
    ((257, 7), (7, 5), np.float32, "const_b", None),
]


@pytest.mark.parametrize("a_shape, b_shape, dtype, kernel, params", MATMUL_CASES)
@pytest.mark.parametrize("b_on_device", [True, False])
def test_explain_matmul_names_what_the_call_launches(launches, device, a_shape, b_shape, dtype,
                                                      kernel, params, b_on_device):
    a, b = random_array(a_shape, dtype, 1), random_array(b_shape, dtype, 2)
    x = cg.asarray(a, device=device)
    y = cg.asarray(b, device=device) if b_on_device else b
    text = cg.explain_matmul(x, y, kernel, params=params)
    expected = _explained(text)
    assert expected is not None, text  # the suite runs with the host path off
    for _ in range(2):  # the first call builds the plan, the second runs the cached one
        launches.clear()
        assert_matches(cg.matmul(x, y, kernel=kernel, params=params),
                       _reference(np.matmul, a, b))
        assert launches == [expected], text
    assert cg.explain_matmul(x, y, kernel, params=params) == text


def test_explain_matmul_host_path_launches_nothing(launches, device, host_path):
    a, b = random_array((7, 5), np.float32, 1), random_array((5, 3), np.float32, 2)
    x = cg.asarray(a, device=device)
    assert _explained(cg.explain_matmul(x, b)) is None
    assert_matches(x @ b, _reference(np.matmul, a, b))
    assert launches == []
    forced = _explained(cg.explain_matmul(x, b, "naive"))  # kernel= leaves the host path
    assert forced is not None and forced[0] == "naive"
    cg.matmul(x, b, kernel="naive")
    assert launches == [forced]


CONVOLVE_CASES = [  # (n, m, dtype, mode, op, kernel, params)
    (257, 7, np.float32, "full", "convolve", None, None),
    (4096, 33, np.float32, "same", "convolve", None, None),
    (31, 257, np.float64, "valid", "correlate", None, None),
    (4096, 1031, np.float32, "full", "convolve", None, None),
    (1000, 31, np.int32, "same", "convolve", None, None),
    (257, 7, np.float32, "full", "convolve", "basic", {"WG": 32}),
    (257, 7, np.float32, "same", "correlate", "const", None),
    (257, 33, np.float32, "full", "convolve", "tiled", None),
    (257, 33, np.float32, "valid", "convolve", "cached", None),
    (257, 7, np.float32, "full", "convolve", "vec", None),
    (2000, 31, np.float32, "same", "convolve", "gpu", None),
    (257, 33, np.float32, "full", "convolve", "fft", None),
]


@pytest.mark.parametrize("n, m, dtype, mode, op, kernel, params", CONVOLVE_CASES)
def test_explain_convolve_names_what_the_call_launches(launches, device, n, m, dtype, mode, op,
                                                        kernel, params):
    a, v = random_array((n,), dtype, 3), random_array((m,), dtype, 4)
    x = cg.asarray(a, device=device)
    text = cg.explain_convolve(x, v, mode, kernel, op=op, params=params)
    expected = _explained(text)
    assert expected is not None, text
    func = cg.convolve if op == "convolve" else cg.correlate
    assert_matches(func(x, v, mode, kernel=kernel, params=params),
                   _reference(getattr(np, op), a, v, mode))
    assert launches == [expected], text


def test_explain_convolve_host_path_launches_nothing(launches, device, host_path):
    a, v = random_array((31,), np.float32, 3), random_array((7,), np.float32, 4)
    x = cg.asarray(a, device=device)
    assert _explained(cg.explain_convolve(x, v)) is None
    assert_matches(np.convolve(x, v), _reference(np.convolve, a, v))
    assert launches == []


@pytest.mark.parametrize("kernel", ["host", "host_fft", "host_taps"])
def test_explain_convolve_forced_host_strategy_launches_nothing(launches, device, kernel):
    a, v = random_array((257,), np.float32, 3), random_array((33,), np.float32, 4)
    x = cg.asarray(a, device=device)
    text = cg.explain_convolve(x, v, "same", kernel)
    assert _explained(text) is None and f"\n{kernel}: forced" in text, text
    assert_matches(cg.convolve(x, v, "same", kernel=kernel),
                   _reference(np.convolve, a, v, "same"))
    assert launches == []


def test_explain_convolve_names_the_host_fft_the_call_runs(launches, device, host_path,
                                                            monkeypatch):
    from clarray_gemm.ops import convolve as convolve_module
    transforms = []

    def counted(x, h):
        transforms.append(len(h))
        return fft_convolve_full(x, h)
    fft_convolve_full = convolve_module.fft_convolve_full
    monkeypatch.setattr(convolve_module, "fft_convolve_full", counted)
    a, v = random_array((2**16,), np.float32, 8), random_array((1023,), np.float32, 9)
    x = cg.asarray(a, device=device)
    text = cg.explain_convolve(x, v)
    assert _explained(text) is None and "\nhost_fft: " in text, text
    assert_matches(np.convolve(x, v), _reference(np.convolve, a, v))
    assert launches == [] and transforms == [1023]
