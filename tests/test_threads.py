"""Many threads calling at once get NumPy's answers: 8 threads of mixed operations (integer and
float elementwise compared exactly, matmul and convolve of float32 against float64 references,
int32 matmul and convolve exactly, device arrays shared by every thread), with the host path on
and off. The full target (8 threads x 1,000 mixed ops, 0 wrong results in 3 runs) is the slow
test; a shorter run is in the default suite."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clarray_gemm as cg

THREADS = 8
KINDS = ("int32 *", "int32 + -", "float32 * +", "float32 @", "int32 @", "float32 convolve",
         "int32 convolve", "shared @")


def _rel_error(got: np.ndarray, exact: np.ndarray) -> float:
    scale = np.linalg.norm(exact)
    return float(np.linalg.norm(got - exact) / scale) if scale else float(np.abs(got).max(initial=0))


def _one_op(device, rng, kind: str, shared) -> tuple[np.ndarray, np.ndarray, bool]:
    """(device result on the host, NumPy's result, exact?) of one operation of ``kind``."""
    m, n, k = (int(v) for v in rng.integers(1, 25, 3))
    if kind == "int32 *":
        a = rng.integers(-2 ** 20, 2 ** 20, (m, n)).astype(np.int32)
        b = rng.integers(-2 ** 11, 2 ** 11, n).astype(np.int32)   # wraps like NumPy's int32
        return np.asarray(cg.asarray(a, device=device) * b), a * b, True
    if kind == "int32 + -":
        a, b, c = (rng.integers(-2 ** 30, 2 ** 30, (m, n)).astype(np.int32) for _ in range(3))
        x, y, z = (cg.asarray(v, device=device) for v in (a, b, c))
        return np.asarray(x + y - z), a + b - c, True
    if kind == "float32 * +":
        a, b = (rng.standard_normal((m, n)).astype(np.float32) for _ in range(2))
        return np.asarray(cg.asarray(a, device=device) * b + np.float32(1.5)), a * b + np.float32(1.5), True
    if kind == "float32 @":
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        got = np.asarray(cg.asarray(a, device=device) @ cg.asarray(b, device=device))
        return got, a.astype(np.float64) @ b, False
    if kind == "int32 @":
        a = rng.integers(-1000, 1000, (m, k)).astype(np.int32)
        b = rng.integers(-1000, 1000, (k, n)).astype(np.int32)
        return np.asarray(cg.asarray(a, device=device) @ b), a @ b, True
    mode = ("full", "same", "valid")[int(rng.integers(3))]
    signal_len, mask_len = int(rng.integers(1, 65)), int(rng.integers(1, 10))
    if kind == "float32 convolve":
        s, v = rng.standard_normal(signal_len).astype(np.float32), rng.standard_normal(mask_len).astype(np.float32)
        got = np.asarray(np.convolve(cg.asarray(s, device=device), v, mode))
        return got, np.convolve(s.astype(np.float64), v.astype(np.float64), mode), False
    if kind == "int32 convolve":
        s = rng.integers(-1000, 1000, signal_len).astype(np.int32)
        v = rng.integers(-1000, 1000, mask_len).astype(np.int32)
        return np.asarray(np.convolve(cg.asarray(s, device=device), v, mode)), np.convolve(s, v, mode), True
    x, y, expected = shared  # the same device arrays read by every thread at once
    return np.asarray(x @ y), expected, False


def _mixed_ops(device, seed: int, count: int, shared) -> list[str]:
    """``count`` operations cycling through KINDS; the wrong ones, described."""
    rng = np.random.default_rng(seed)
    wrong = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        got, want, exact = _one_op(device, rng, kind, shared)
        if got.shape != want.shape:
            ok = False
        elif exact:
            ok = got.dtype == want.dtype and np.array_equal(got, want)
        else:
            ok = got.dtype == np.float32 and _rel_error(got.astype(np.float64), want) < 1e-5
        if not ok:
            wrong.append(f"op {i} ({kind}) seed {seed}")
    return wrong


def run_threads(device, ops_per_thread: int, seed: int) -> list[str]:
    """THREADS threads of ``ops_per_thread`` mixed operations each; every wrong result and
    every exception, described."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((19, 23)).astype(np.float32), rng.standard_normal((23, 11)).astype(np.float32)
    shared = (cg.asarray(a, device=device), cg.asarray(b, device=device), a.astype(np.float64) @ b)
    failures: list[str] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        try:
            wrong = _mixed_ops(device, seed * 100 + t, ops_per_thread, shared)
        except Exception as exc:  # noqa: BLE001 - reported with the wrong results
            wrong = [f"thread {t}: {type(exc).__name__}: {exc}"]
        with lock:
            failures.extend(wrong)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return failures


def _host_path_modes(device):
    return [True, False] if device.info.host_unified_memory else [False]


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
def test_eight_threads_of_mixed_ops_get_numpys_answers(device, host):
    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    with cg.host_path(host):
        failures = run_threads(device, 100, seed=1)
    assert not failures, failures[:20]


@pytest.mark.slow
def test_eight_threads_of_a_thousand_mixed_ops_three_runs(device):
    """The full target: 8 threads x 1,000 mixed ops, 0 wrong results in 3 runs, with the
    host path on and off."""
    failures = []
    for host in _host_path_modes(device):
        with cg.host_path(host):
            for run in range(3):
                failures += [f"host path {host}, run {run}: {f}"
                             for f in run_threads(device, 1000, seed=10 + run)]
    assert not failures, failures[:20]


def test_split_k_scratch_is_per_thread(device):
    """A split product's partial sums live in a buffer of the calling thread: another thread's
    product enqueued between the slices and their sum must not overwrite them."""
    import threading
    from clarray_gemm.kernels.gemm import split_workspace
    mine = split_workspace(device, 1024)
    assert split_workspace(device, 512) is mine  # grown on demand, reused otherwise
    theirs = []
    worker = threading.Thread(target=lambda: theirs.append(split_workspace(device, 1024)))
    worker.start()
    worker.join()
    assert theirs[0].int_ptr != mine.int_ptr
