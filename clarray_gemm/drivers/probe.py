"""The driver probe, run in a child process: ``python -m clarray_gemm.drivers.probe SPEC``.

SPEC (JSON) names one device: ``{"platform": i, "device": j, "platform_name": ..., "device_name":
...}``. The child builds and runs ``opencl/driver_probe.cl`` (vector fma/mad of every width,
double, 64-bit integers, images), builds the CPU catalogue kernels (``gemm_cpu.cl``,
``conv_vec.cl``) with their defaults for float32 and float64 on CPU devices, then runs the library's own matrix
product, convolution and integer arithmetic on the device against NumPy, timing the float32
product and convolution. It prints one line ``RESULT_PREFIX + json`` and exits 0; a compiler
that aborts kills only this process. Each step is announced on stderr (``stage: ...``) so that the
parent can say where a crash happened.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np

__all__ = ["RESULT_PREFIX", "main"]

from .vetting import RESULT_PREFIX


def _stage(name: str) -> None:
    print(f"stage: {name}", file=sys.stderr, flush=True)


def _rel_error(got: Any, ref: np.ndarray) -> float:
    got = np.asarray(got, dtype=np.float64)
    denom = float(np.linalg.norm(ref))
    return float(np.linalg.norm(got - ref) / denom) if denom else float(np.linalg.norm(got))


def _check(name: str, error: float, limit: float) -> None:
    if not error < limit:
        raise AssertionError(f"{name}: wrong result (relative error {error:.2e}, limit {limit:g})")


def _best_ms(fn: Callable[[], Any], repeats: int = 3) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _language_features(device: Any) -> None:
    """Build and run driver_probe.cl."""
    import pyopencl as cl
    from ..kernels.programs import build_program
    info = device.info
    _stage("build driver_probe.cl")
    prog = build_program(device, "driver_probe.cl",
                         {"HAS_FP64": int(info.fp64), "HAS_IMAGES": int(info.image_support)})
    ctx, queue = device.context, device.queue
    mf = cl.mem_flags
    rng = np.random.default_rng(7)
    kinds = [(np.float32, w) for w in (4, 8, 16)]
    if info.fp64:
        kinds += [(np.float64, 4), (np.float64, 8)]
    for dtype, width in kinds:
        name = f"fma_{'float' if dtype == np.float32 else 'double'}{width}"
        _stage(f"run {name}")
        a, b, c = (rng.standard_normal(16 * width).astype(dtype) for _ in range(3))
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h) for h in (a, b, c)]
        out = np.empty_like(a)
        out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        getattr(prog, name)(queue, (16,), None, *bufs, out_buf)
        cl.enqueue_copy(queue, out, out_buf)
        a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
        _check(name, _rel_error(out, a64 * b64 + c64 + b64 * c64 + a64), 1e-5)
    _stage("run int64_ops")
    a = rng.integers(-2**62, 2**62, 64, dtype=np.int64)
    b = rng.integers(-2**62, 2**62, 64, dtype=np.int64)
    out = np.empty_like(a)
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h) for h in (a, b)]
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prog.int64_ops(queue, (64,), None, *bufs, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    with np.errstate(over="ignore"):
        expected = (a.view(np.uint64) * b.view(np.uint64) + ((a >> 3) ^ b).view(np.uint64))
    if not np.array_equal(out.view(np.uint64), expected):
        raise AssertionError("int64_ops: wrong result")
    if info.image_support:
        _stage("run image_read")
        pixels = rng.standard_normal((8, 16, 4)).astype(np.float32)
        fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            img = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape=(16, 8),
                           hostbuf=pixels)
        out = np.empty((8, 16), np.float32)
        out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        prog.image_read(queue, (16, 8), None, img, out_buf)
        cl.enqueue_copy(queue, out, out_buf)
        if not np.array_equal(out, pixels[:, :, 0]):
            raise AssertionError("image_read: wrong result")


def _catalogue_builds(device: Any) -> None:
    """Build the CPU catalogue kernels with their source defaults, float32 and float64 (on CPU
    devices: a GPU is tested through the kernels dispatch chooses for it, in _library_runs)."""
    from ..kernels.programs import build_program, dtype_defines
    if not device.info.is_cpu:
        return
    dtypes = [np.float32] + ([np.float64] if device.info.fp64 else [])
    for source in ("gemm_cpu.cl", "conv_vec.cl"):
        for dtype in dtypes:
            _stage(f"build {source} {np.dtype(dtype).name}")
            build_program(device, source, dtype_defines(dtype))


def _library_runs(device: Any) -> dict[str, float]:
    """The library's matmul, convolve and integer arithmetic against NumPy; float32 timed."""
    import clarray_gemm as cg
    sim = device.info.is_simulator
    rng = np.random.default_rng(3)
    n = 24 if sim else 512
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    _stage(f"matmul {n}^3 float32")
    _check("matmul float32", _rel_error(x @ y, a.astype(np.float64) @ b), 1e-5)
    timings = {"matmul_ms": _best_ms(lambda: np.asarray(x @ y))} if not sim else {}
    signal_len, taps = (300, 7) if sim else (2**20, 31)
    s = rng.standard_normal(signal_len).astype(np.float32)
    w = rng.standard_normal(taps).astype(np.float32)
    xs, xw = cg.asarray(s, device=device), cg.asarray(w, device=device)
    _stage(f"convolve {signal_len} x {taps} float32")
    _check("convolve float32", _rel_error(np.convolve(xs, xw),
                                          np.convolve(s.astype(np.float64), w)), 1e-5)
    if not sim:
        timings["convolve_ms"] = _best_ms(lambda: np.asarray(np.convolve(xs, xw)))
    if device.info.fp64:
        _stage("matmul and convolve float64")
        a64 = rng.standard_normal((33, 17))
        b64 = rng.standard_normal((17, 45))
        _check("matmul float64", _rel_error(cg.asarray(a64, device=device) @ b64, a64 @ b64), 1e-12)
        s64, w64 = rng.standard_normal(257), rng.standard_normal(9)
        _check("convolve float64", _rel_error(np.convolve(cg.asarray(s64, device=device), w64),
                                              np.convolve(s64, w64)), 1e-12)
    _stage("int64 arithmetic")
    i = rng.integers(-2**40, 2**40, (7, 13), dtype=np.int64)
    j = rng.integers(-2**20, 2**20, (13, 5), dtype=np.int64)
    xi = cg.asarray(i, device=device)
    if not np.array_equal(np.asarray(xi @ j), i @ j):
        raise AssertionError("matmul int64: wrong result")
    if not np.array_equal(np.asarray(xi * i + xi), i * i + i):
        raise AssertionError("elementwise int64: wrong result")
    return timings


def _find_device(spec: dict[str, Any]) -> Any:
    import pyopencl as cl
    import clarray_gemm as cg
    platform = cl.get_platforms()[spec["platform"]]
    cl_device = platform.get_devices()[spec["device"]]
    if (platform.name.strip(), cl_device.name.strip()) != (spec["platform_name"],
                                                          spec["device_name"]):
        raise LookupError(f"device {spec} not found (got {platform.name!r}, {cl_device.name!r})")
    return cg.get_device(cl_device)


def _inject_fault(spec: dict[str, Any]) -> None:
    from .. import settings
    fault = settings.probe_fault()
    if fault and any(t in spec["platform_name"] or t in spec["device_name"] for t in fault[1]):
        print(f"LLVM ERROR: injected by CLARRAY_GEMM_PROBE_FAULT={fault[0]}:{','.join(fault[1])}",
              file=sys.stderr, flush=True)
        if fault[0] == "abort":
            os.abort()
        time.sleep(3600)


def main(argv: list[str]) -> int:
    """Probe the device named by ``argv[0]``; print the result line."""
    spec = json.loads(argv[0])
    _stage("find the device")
    device = _find_device(spec)
    _inject_fault(spec)
    t0 = time.perf_counter()
    try:
        _language_features(device)
        _catalogue_builds(device)
        timings = _library_runs(device)
        result: dict[str, Any] = {"passed": True, "cause": "", **timings}
    except Exception as exc:  # a failed build or a wrong result: the verdict says which
        text = str(exc).strip().splitlines()
        result = {"passed": False, "cause": f"{type(exc).__name__}: "
                                             f"{text[0] if text else ''}"[:400]}
    result["probe_s"] = time.perf_counter() - t0
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main(sys.argv[1:]))
