"""Every convolution kernel on the Oclgrind simulator with its memory, data-race and
uninitialised-value checks on: the run must be silent and match the formula.

The checks are switched on by environment variables that Oclgrind reads when it is loaded, so
each kernel runs in a fresh Python process. The kernels are launched through the catalogue
directly (``kernels.conv.run``) on every mode's (pad, length): the NumPy-level paths also pack
reversed masks with ``copy.cl``, which is not what this file checks."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clarray_gemm as cg

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ("invalid read", "invalid write", "data race", "uninitialized", "error")
# pyopencl itself (creating a Kernel object, and its binary cache) asks the device for a
# parameter Oclgrind does not implement; the API checker reports exactly this, which is no
# call of ours. Every other report counts.
PYOPENCL_QUERY = re.compile(r"Oclgrind - OpenCL runtime error detected\n\tFunction: "
                            r"clGetDeviceInfo\n\tError: +CL_INVALID_VALUE\n\t"
                            r"For argument 'param_name'\n")

SCRIPT = textwrap.dedent("""
    import json
    import sys
    import numpy as np
    import clarray_gemm as cg
    from clarray_gemm.kernels import conv
    from clarray_gemm.kernels.conv import ConvProblem

    kernel = sys.argv[1]
    shapes = [tuple(map(int, c.split(":"))) for c in sys.argv[2].split(",")]
    params = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
    specials = len(sys.argv) > 4 and sys.argv[4] == "specials"   # NaN in x, inf in w (floats)
    dev = next(d for d in cg.devices() if d.info.is_simulator)
    rng = np.random.default_rng(0)
    checked = 0
    dtypes = (np.float32,) if kernel.startswith("fft") else (np.float32, np.int32)
    for dtype in dtypes:
        for n, m in shapes:
            for pad, length in ((m - 1, n + m - 1), (m // 2, n), (0, n - m + 1)):
                off = 3 if n > 7 else 0          # a signal not at the start of its buffer
                xh = (rng.standard_normal(n + off) * 8).astype(dtype)
                wh = (rng.standard_normal(m) * 8).astype(dtype)
                if specials and dtype != np.int32:
                    xh[off + n // 2] = np.nan
                    wh[m // 3] = np.inf
                x, w = cg.asarray(xh, device=dev), cg.asarray(wh, device=dev)
                out = cg.empty(length, dtype, device=dev)
                problem = ConvProblem(n, m, pad, length, np.dtype(dtype), x.storage.buffer,
                                      off, w.storage.buffer, out.storage.buffer)
                conv.run(dev, problem, kernel, params)
                xs = np.asarray(x)[off:].astype(np.float64)
                ws = np.asarray(w).astype(np.float64)
                with np.errstate(all="ignore"):   # NumPy's sums: ghost cells never multiplied
                    want = np.array([xs[max(0, k - pad):max(0, min(n, k - pad + m))]
                                     @ ws[max(0, pad - k):max(0, min(m, n - k + pad))]
                                     for k in range(length)])
                got = np.asarray(out)
                if dtype == np.int32:
                    assert np.array_equal(got, want.astype(np.int64)), (n, m, pad)
                elif specials:
                    for test in (np.isnan, np.isposinf, np.isneginf):
                        assert np.array_equal(test(got), test(want)), (n, m, pad, test)
                    fin = np.isfinite(want)
                    assert np.allclose(got[fin], want[fin], rtol=1e-4, atol=1e-3), (n, m, pad)
                else:
                    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
                    assert err < 1e-5, (n, m, pad, err)
                checked += 1
    print("checked", checked)
""")



SHAPES = ((1, 1), (7, 1), (7, 4), (7, 7), (37, 9), (37, 36), (150, 20), (300, 140))


def _run_clean(kernel: str, shapes, env, params: str = "null", values: str = "random") -> None:
    cases = ",".join(f"{n}:{m}" for n, m in shapes)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, kernel, cases, params, values], env=env,
                          capture_output=True, text=True, timeout=170, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stderr = PYOPENCL_QUERY.sub("", proc.stderr)
    found = [p for p in PROBLEMS if p in stderr.lower()]
    assert not found, f"Oclgrind reported {found}:\n{stderr[-3000:]}"
    assert "checked" in proc.stdout


# fft_block has its own Oclgrind test (test_convolve_fft_block.py): blocks of a few points.
@pytest.mark.parametrize("kernel", [k for k in cg.kernels("convolve")
                                    if not k.startswith("fft")])
def test_direct_kernel_is_clean_under_oclgrind(kernel, oclgrind_env):
    _run_clean(kernel, SHAPES, oclgrind_env)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fft_is_clean_under_oclgrind(shape, oclgrind_env):
    # One process per transform length. Oclgrind's uninitialised-value checker misreports a
    # buffer that reuses the slot of a released smaller one: a kernel fills it with scalar
    # stores and the next kernel's float2 loads past the old size are called uninitialised
    # (reproduced with two four-line pyopencl kernels, nothing of ours). The FFT reallocates
    # its scratch buffers when the length changes, so each length gets a fresh simulator.
    _run_clean("fft", [shape], oclgrind_env)


def test_gpu_tile_walk_and_chunks_are_clean_under_oclgrind(oclgrind_env):
    # Small tiles walked by one group per compute unit (the next tile prefetched while one
    # computes) and masks longer than a chunk (several chunks per tile).
    _run_clean("gpu", SHAPES, oclgrind_env, '{"WG": 16, "R": 4, "JU": 4, "MC": 8, "GPC": 1}')


@pytest.mark.parametrize("kernel", ["tiled", "gpu", "fft"])
def test_nan_and_inf_paths_are_clean_under_oclgrind(kernel, oclgrind_env):
    # NaN in the signal, inf in the mask: the edge tiles' exact path (gpu, also with walking
    # groups and chunks), the clamped tap ranges (tiled), the FFT's status buffer and direct
    # outputs (fft, one length per process as above).
    shapes = ((37, 9),) if kernel == "fft" else ((37, 9), (150, 20), (300, 140))
    _run_clean(kernel, shapes, oclgrind_env, values="specials")
    if kernel == "gpu":
        _run_clean(kernel, shapes, oclgrind_env,
                   '{"WG": 16, "R": 4, "JU": 4, "MC": 8, "GPC": 1}', "specials")
