"""Run in a child process by test_kernels_oclgrind.py, with Oclgrind's checks switched on in
the environment: exercise one kernel (or the copy/elementwise parity checks) on the Oclgrind
device for the dtypes given (every dtype by default), at small odd sizes, and print one JSON
line:
``{"ran": [...], "refused": {...}, "wrong": [...]}``.

    python oclgrind_child.py matmul <kernel> [dtype,dtype,...]
    python oclgrind_child.py last_group <kernel> [dtype,dtype,...]
    python oclgrind_child.py convolve <kernel> [dtype,dtype,...]
    python oclgrind_child.py parity
"""
from __future__ import annotations

import json
import sys

import numpy as np

import clarray_gemm as cg

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
          "uint64"]


def simulator() -> cg.Device:
    return next(d for d in cg.devices() if d.info.is_simulator)


def operand(rng, shape, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 8).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -9), min(info.max, 9), size=shape, endpoint=True).astype(dt)


def matmul_cases(kernel: str):
    """(name, M, N, K, batch, transposed); gemv gets matrix-vector shapes."""
    if kernel in ("gemv", "gemv_split"):
        return [("7x1x5", 7, 1, 5, 1, False), ("1x9x13/2T", 1, 9, 13, 2, True)]
    cases = [("13x29x7", 13, 29, 7, 1, False), ("7x9x5/2T", 7, 9, 5, 2, True)]
    # A K of several steps: gpu_blocked's unclamped K steps in edge tiles, small's staging
    # loops past one pass of its work-items.
    if kernel in ("gpu_blocked", "small"):
        cases.append(("13x29x37", 13, 29, 37, 1, False))
    return cases


# Launch variants beyond the defaults, run for float32: split-K and other tile presets.
EXTRA_PARAMS = {"gpu_blocked": [{"KSPLIT": 3}, {"PRESET": 1, "KSPLIT": 2}, {"PRESET": 9}],
                "cpu": [{"KC": 4, "VW": 4, "MR": 5}],
                "gemv": [{"WG": 1, "VW": 4, "NVEC": 3}],
                "gemv_split": [{"KSPLIT": 3, "WG": 32, "LANES": 8, "RT": 8},
                               {"VW": 1, "KSPLIT": 2, "WG": 16, "LANES": 4, "RT": 4}]}


# gpu_blocked reads 8- and 16-bit integers as they are (GemmProblem.storage): split-K's
# narrowing reduction and another preset too.
EXTRA_NARROW = {"gpu_blocked": [("uint8", {"KSPLIT": 3}), ("int16", {"PRESET": 1, "KSPLIT": 2}),
                                ("int8", {"PRESET": 3})]}


# Split kernels finished by their last work-group (opencl/last_group.h), K deep enough for
# several slices; run without the race check (see test_kernels_oclgrind.py).
LAST_GROUP_PARAMS = {"gemv_split": [{"KSPLIT": 3, "WG": 32, "LANES": 8, "RT": 8, "FINISH_LAST": 1}],
                     "thin": [{"KSPLIT": 3, "KCH": 16, "FINISH_LAST": 1}],
                     "gpu_blocked": [{"PRESET": 4, "KSPLIT": 3, "FINISH_LAST": 1}]}
LAST_GROUP_CASES = {"gemv_split": [("7x1x50", 7, 1, 50, 1, False), ("1x9x50/2T", 1, 9, 50, 2, True)],
                    "thin": [("13x29x70", 13, 29, 70, 1, False), ("7x9x50/2T", 7, 9, 50, 2, True)],
                    "gpu_blocked": [("13x29x37", 13, 29, 37, 1, False),
                                    ("7x9x50/2T", 7, 9, 50, 2, True)]}


def run_matmul(kernel: str, dev: cg.Device, report: dict, dtypes: list[str],
               last_group: bool = False) -> None:
    rng = np.random.default_rng(0)
    runs = [(dtype, {}) for dtype in dtypes]
    if "float32" in dtypes:
        runs += [("float32", params) for params in EXTRA_PARAMS.get(kernel, [])]
    runs += [(dtype, params) for dtype, params in EXTRA_NARROW.get(kernel, []) if dtype in dtypes]
    cases = matmul_cases(kernel)
    if last_group:
        runs = [(dtype, params) for dtype in dtypes for params in LAST_GROUP_PARAMS[kernel]]
        cases = LAST_GROUP_CASES[kernel]
    for dtype, params in runs:
        for name, M, N, K, batch, trans in cases:
            a, b = operand(rng, (batch, M, K), dtype), operand(rng, (batch, K, N), dtype)
            if trans:  # Fortran-order matrices: TRANS_A / TRANS_B views
                x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=dev).mT
                y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=dev).mT
            else:
                x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
            case = f"{kernel} {dtype} {name} {params or ''}"
            got = forced(case, lambda: cg.matmul(x, y, kernel=kernel, params=params), report)
            if got is not None:
                check(case, got, a, b, report)


def forced(case: str, call, report: dict) -> np.ndarray | None:
    """``call()`` (a call forcing a kernel) read back, recorded as run; None, recorded as
    refused, when the kernel does not fit."""
    try:
        got = np.asarray(call())
    except ValueError as exc:
        if "does not fit" not in str(exc):
            raise
        report["refused"][case] = str(exc).split(": ", 1)[-1]
        return None
    report["ran"].append(case)
    return got


def check(case: str, got: np.ndarray, a: np.ndarray, b: np.ndarray, report: dict) -> None:
    if a.dtype.kind in "iu":
        with np.errstate(over="ignore"):
            ok = np.array_equal(got, np.matmul(a, b))
    else:
        exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
        ok = bool(np.isfinite(got).all()
                  and np.linalg.norm(got - exact) <= 1e-5 * np.linalg.norm(exact))
    if not ok:
        report["wrong"].append(case)


def run_convolve(kernel: str, dev: cg.Device, report: dict, dtypes: list[str]) -> None:
    """Every mode of convolve and correlate, operands at an offset in their buffers."""
    rng = np.random.default_rng(1)
    for dtype in dtypes:
        for n, m in ((1, 1), (7, 4), (37, 9), (29, 29)):
            big = operand(rng, n + 3, dtype)
            x = cg.asarray(big, device=dev)[3:]
            v = operand(rng, m, dtype)
            for op in ("convolve", "correlate"):
                for mode in ("full", "same", "valid"):
                    case = f"{kernel} {dtype} {op} {n}x{m} {mode}"
                    got = forced(case, lambda: getattr(cg, op)(x, v, mode, kernel=kernel),
                                 report)
                    if got is None:
                        continue
                    want = getattr(np, op)(big[3:], v, mode)
                    if np.dtype(dtype).kind in "iu":
                        ok = np.array_equal(got, want)
                    else:
                        err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
                        ok = bool(np.isfinite(got).all() and err < 1e-5)
                    if not ok:
                        report["wrong"].append(case)


def run_parity(dev: cg.Device, report: dict) -> None:
    from parity_cases import cast_mismatches, elementwise_mismatches
    report["ran"] += ["copy: every cast", "elementwise: every operator"]
    report["wrong"] += cast_mismatches(dev) + elementwise_mismatches(dev)


def main(argv: list[str]) -> None:
    report: dict = {"ran": [], "refused": {}, "wrong": []}
    dev = simulator()
    if argv[0] in ("matmul", "last_group"):
        run_matmul(argv[1], dev, report, argv[2].split(",") if len(argv) > 2 else DTYPES,
                   last_group=argv[0] == "last_group")
    elif argv[0] == "convolve":
        run_convolve(argv[1], dev, report, argv[2].split(",") if len(argv) > 2 else DTYPES)
    else:
        run_parity(dev, report)
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
