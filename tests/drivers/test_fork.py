"""Child processes: ``fork()`` after the parent used OpenCL fails at once with a clear
``RuntimeError`` (OpenCL drivers do not survive fork: PoCL's child would hang); ``spawn``
children, and children forked before OpenCL was loaded, compute normally.

Every child runs in a ``multiprocessing`` pool with a timeout, so a hang fails the test instead
of stalling the suite."""
from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import clarray_gemm as cg

ROOT = Path(__file__).resolve().parents[2]
HOST = np.arange(12.0).reshape(3, 4)
INHERITED: "cg.DeviceArray | None" = None  # a device array the parent made before forking


def _timed(call) -> tuple[str, object, float]:
    start = time.perf_counter()
    try:
        result = ("ok", call())
    except RuntimeError as exc:
        result = ("RuntimeError", str(exc))
    return result + (time.perf_counter() - start,)


def square_new_array(host: np.ndarray):
    """In the child: a new device array and its product, back to the host."""
    return _timed(lambda: np.asarray(cg.asarray(host) @ cg.asarray(host).T))


def read_inherited(_: object):
    return _timed(lambda: np.asarray(INHERITED))


def square_inherited(_: object):
    return _timed(lambda: np.asarray(INHERITED @ INHERITED.T))


def test_forked_child_fails_clearly_at_once(device):
    global INHERITED
    INHERITED = cg.asarray(HOST, device=device)
    np.asarray(INHERITED @ INHERITED.T)  # the parent has used the device
    with mp.get_context("fork").Pool(1) as pool:
        for task, arg in ((square_new_array, HOST), (read_inherited, None),
                          (square_inherited, None)):
            status, detail, seconds = pool.apply_async(task, (arg,)).get(timeout=30)
            assert status == "RuntimeError", (task.__name__, detail)
            assert "fork" in detail and "spawn" in detail, detail
            assert seconds < 1.0, (task.__name__, seconds)
    # The parent is unaffected.
    np.testing.assert_array_equal(np.asarray(INHERITED @ INHERITED.T), HOST @ HOST.T)


def test_spawned_child_computes():
    with mp.get_context("spawn").Pool(1) as pool:
        status, detail, seconds = pool.apply_async(square_new_array, (HOST,)).get(timeout=120)
    assert status == "ok", detail
    np.testing.assert_array_equal(detail, HOST @ HOST.T)


CHILD_BEFORE_USE = textwrap.dedent("""
    import multiprocessing as mp
    import numpy as np
    import clarray_gemm as cg
    from test_fork import HOST, square_new_array

    if __name__ == "__main__":
        # The parent imported the package but never touched a device: the child starts clean.
        with mp.get_context("fork").Pool(1) as pool:
            status, detail, _ = pool.apply_async(square_new_array, (HOST,)).get(timeout=120)
        assert status == "ok", detail
        np.testing.assert_array_equal(detail, HOST @ HOST.T)
        print("ok")
""")


def test_child_forked_before_any_device_use_computes():
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", CHILD_BEFORE_USE],
                          cwd=Path(__file__).resolve().parent, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
