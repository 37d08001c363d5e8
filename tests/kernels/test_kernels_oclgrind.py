"""Every kernel under Oclgrind with all of its checks on — out-of-bounds accesses, data races
(``OCLGRIND_DATA_RACES``), uninitialized values (``OCLGRIND_UNINITIALIZED``) and API misuse
(``OCLGRIND_CHECK_API``) — for every element width and sign among the dtypes it takes
(``WIDTHS``), at small odd sizes: every GEMM variant
(forced with ``matmul(kernel=...)``, plain and batched-transposed), every convolution variant
(all modes of convolve and correlate, operands at an offset), and the copy (every cast) and
elementwise kernels (tests/parity_cases.py). 0 reports and 0 wrong results. (One exception,
the ``image`` GEMM kernel runs without the uninitialized-value check, whose verdict on image
reads Oclgrind draws from unrelated memory: NO_UNINITIALIZED_CHECK in test_gemm_oclgrind.py.)

Each run is a child process (tests/oclgrind_child.py), because Oclgrind reads its settings
when it is loaded, with one simulator thread, and one dtype per process (one per core at a
time, for speed). Oclgrind 19.10's uninitialized-value checker sizes a buffer's shadow memory by
the region of the last host write, so a pooled buffer written for a smaller array hid later
kernel writes beyond it (an int8 1 x 1 operand's 4 bytes, then an int64 result in the same
buffer); ``DeviceInfo.host_writes_whole_buffer`` makes host writes on Oclgrind cover the whole
buffer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import clarray_gemm as cg

from conftest import oclgrind_environment, oclgrind_problems
from oclgrind_child import DTYPES
from test_gemm_oclgrind import NO_UNINITIALIZED_CHECK

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]  # tests/: oclgrind_child.py, conftest.py

# Refusals the catalogue gives on Oclgrind (32 KiB of local memory, images of float only);
# any other refusal fails the test.
EXPECTED_REFUSALS = {
    "image": "float32 only",
    "gpu_blocked": ("float32 and float64 only", "bytes of local memory"),
    # the tensor-core kernels run only on NVIDIA sm_80+ / sm_90 (their EMULATE=1 paths run
    # under Oclgrind, every dtype they take, in tests/kernels/test_gemm_mma.py, test_gemm_wgmma.py and
    # test_gemm_dmma.py)
    "mma": ("float16 or bfloat16 operands", "needs NVIDIA tensor cores"),
    "wgmma": ("float16 or bfloat16 operands", "needs NVIDIA Hopper"),
    "dmma": ("float64 only", "needs NVIDIA tensor cores"),
    # (its EMULATE=1 path runs under Oclgrind in tests/kernels/test_gemm_tf32x3.py)
    "tf32x3": ("float32 at precision 'highest' only", "needs NVIDIA Hopper"),
}
TENSOR_CORE_KERNELS = ("mma", "wgmma", "dmma", "tf32x3")


def run_child(*args: str, uninitialized: bool = True, races: bool = True) -> dict:
    """One child run; raises AssertionError with Oclgrind's reports or the wrong cases."""
    env = oclgrind_environment(races=races, uninitialized=uninitialized, paths=(TESTS,))
    env.pop("PYOPENCL_CTX", None)
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning",
                           str(TESTS / "oclgrind_child.py"), *args],
                          env=env, capture_output=True, text=True, timeout=600, cwd=TESTS)
    problems = oclgrind_problems(proc.stderr)
    assert not problems, "\n\n".join(problems[:5])
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not report["wrong"], report["wrong"][:10]
    return report


def run_per_dtype(family: str, kernel: str, dtypes: list[str], **kw) -> dict[str, dict]:
    """One child per dtype, as many at a time as there are cores (CI has 2); every dtype's
    failure is reported, not only the first."""
    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        futures = {dt: pool.submit(run_child, family, kernel, dt, **kw) for dt in dtypes}
    reports, failures = {}, []
    for dt, future in futures.items():
        try:
            reports[dt] = future.result()
        except AssertionError as exc:
            failures.append(f"{kernel} {dt}:\n{exc}")
    assert not failures, "\n\n".join(failures)
    return reports


# Every element width once for each sign, and both floats: a kernel's memory accesses differ
# by its element's width and its arithmetic by sign, and uint8, int16 and uint32 bring no
# width or sign these lack. Kept short for the suite's time budget.
WIDTHS = ["float32", "float64", "int8", "uint16", "int32", "int64", "uint64"]
assert set(WIDTHS) <= set(DTYPES)


@pytest.fixture(scope="module", autouse=True)
def _needs_oclgrind(oclgrind):
    return oclgrind


@pytest.mark.parametrize("kernel", cg.kernels("matmul"))
def test_gemm_kernel_is_clean_for_every_dtype(kernel):
    reports = run_per_dtype("matmul", kernel, WIDTHS,
                            uninitialized=kernel not in NO_UNINITIALIZED_CHECK)
    allowed = EXPECTED_REFUSALS.get(kernel, ())
    allowed = (allowed,) if isinstance(allowed, str) else allowed
    unexpected = {case: why for report in reports.values()
                  for case, why in report["refused"].items()
                  if not any(a in why for a in allowed)}
    assert not unexpected, unexpected
    if kernel not in TENSOR_CORE_KERNELS:
        assert reports["float32"]["ran"], "every GEMM kernel takes float32"


@pytest.mark.parametrize("kernel", ["gemv_split", "thin", "gpu_blocked"])
def test_split_kernels_finished_by_their_last_group_are_clean(kernel):
    """FINISH_LAST (opencl/last_group.h): no out-of-bounds access or uninitialized value, and
    NumPy's products. Without the race check: Oclgrind does not follow the order that a global
    fence and an atomic counter make between work-groups, and reports the last group's reads of
    the others' partials as races."""
    # (gpu_blocked's float64 tiles of that preset need more local memory than Oclgrind has)
    dtypes = ["float32", "int32"] + (["int8"] if kernel == "gpu_blocked" else ["float64"])
    for dtype, report in run_per_dtype("last_group", kernel, dtypes, races=False).items():
        assert report["ran"] and not report["refused"], (dtype, report["refused"])


@pytest.mark.parametrize("kernel", cg.kernels("convolve"))
def test_convolution_kernel_is_clean_for_every_dtype(kernel):
    dtypes = ["float32", "float64"] if kernel.startswith("fft") else WIDTHS
    for dtype, report in run_per_dtype("convolve", kernel, dtypes).items():
        assert report["ran"] and not report["refused"], (dtype, report["refused"])


def test_copy_and_elementwise_kernels_are_clean_and_numpys():
    assert run_child("parity")["ran"]
