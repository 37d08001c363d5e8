"""Whole programs written for NumPy, run on device arrays with no host fallback (counted by
``cg.on_host_calls``): the six programs of the latency bench and a wider MLP (the least squares
program's 40 x 40 solve included). Each runs with the kernels (the suite's default) and with the
host path on, and matches NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.bench.programs import kmeans_step, mlp_classifier_step
from conftest import random_array


def least_squares(a, b):
    """Normal equations and a solve."""
    coef = np.linalg.solve(a.T @ a, a.T @ b)
    return coef, np.linalg.norm(a @ coef - b)


def fir(signal, taps):
    filtered = np.convolve(signal, taps, mode="same")
    return filtered[::2], np.abs(filtered).max()


def attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    w = np.exp(s - np.max(s, axis=-1, keepdims=True))
    w /= np.sum(w, axis=-1, keepdims=True)
    return w @ v


def power_iteration(a, v, steps=8):
    for _ in range(steps):
        w = a @ v
        v = w / np.sqrt(np.sum(w * w))
    return v, v @ (a @ v), np.linalg.norm(a @ v - (v @ (a @ v)) * v)


def inputs(name):
    r = lambda shape, seed: random_array(shape, np.float64, seed)  # noqa: E731
    if name == "mlp":
        onehot = np.eye(10)[np.arange(64) % 10]
        return r((64, 32), 1), r((32, 48), 2), r((48,), 3), r((48, 10), 4), onehot
    if name == "mlp_wide":
        onehot = np.eye(16)[np.arange(32) % 16]
        return (r((32, 4096), 1), r((4096, 64), 2) / 64, r((64,), 3), r((64, 16), 4), onehot)
    if name == "lstsq":
        return r((50, 5), 5), r((50,), 6)
    if name == "fir":
        return r((1001,), 7), r((31,), 8)
    if name == "attention":
        return r((33, 16), 9), r((31, 16), 10), r((31, 8), 11)
    if name == "power":
        m = r((40, 40), 12)
        return m @ m.T, r((40,), 13)
    return r((257, 4), 14), r((5, 4), 15)


PROGRAMS = {"mlp": mlp_classifier_step, "mlp_wide": mlp_classifier_step, "lstsq": least_squares, "fir": fir,
            "attention": attention, "power": power_iteration, "kmeans": kmeans_step}
ALLOWED: dict = {}
HOST_RESULTS: dict = {}


def flatten(result):
    return list(result) if isinstance(result, tuple) else [result]


def run_and_compare(name, device):
    host_args = inputs(name)
    want = flatten(PROGRAMS[name](*host_args))
    device_args = [cg.asarray(a, device=device) for a in host_args]
    cg.reset_host_calls()
    got = flatten(PROGRAMS[name](*device_args))
    assert cg.on_host_calls() == ALLOWED.get(name, {}), cg.on_host_calls()
    for i, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, cg.DeviceArray) or i in HOST_RESULTS.get(name, ()), type(g)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_stays_on_the_device(device, name):
    run_and_compare(name, device)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_on_the_host_path(device, host_path, name):
    run_and_compare(name, device)
