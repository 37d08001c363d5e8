"""NumPy-parity checks of the copy (astype) and elementwise kernels, shared by the fast tests
(default device) and the Oclgrind tests (run in a child process with the simulator's checks
on). Each returns a list of mismatch descriptions, empty when every value is NumPy's."""
from __future__ import annotations

import itertools
import platform
import warnings

import numpy as np

import clarray_gemm as cg

TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float32", "float64"]

# Specials, rounding ties, and values just inside and outside every integer range.
FLOATS = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.5,
          -2.5, 127.9, 128.0, -128.5, -129.0, 255.7, 256.0, 32767.5, 32768.0, -32769.0,
          65535.9, 65536.5, 2.0 ** 31 - 1, 2.0 ** 31, -2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 32 - 1,
          2.0 ** 32, 2.0 ** 32 + 5, -3e9, 5e9, 2.0 ** 53 + 2, 2.0 ** 63 - 1024, 2.0 ** 63,
          -2.0 ** 63, -2.0 ** 63 - 4096, 1e19, 2.0 ** 64, -1e19, 1e30, -1e30, 3.4028235e38,
          3.5e38, 1e-40, 5e-324, 1.0000000596046448, 16777217.0, 0.1]
INTS = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536,
        2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 32 - 1, 2 ** 32 + 1, 2 ** 53 + 1,
        2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 2 ** 63 + 2 ** 11 + 1]

# NumPy's float -> integer results outside the target's range are what the host's conversion
# instructions give; the kernels reproduce x86-64's (opencl/numpy_cast.h).
X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def values(dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflow of 3.5e38
            return np.array(FLOATS, dt)
    if dt.kind == "b":
        return np.array([True, False, True, False])
    info = np.iinfo(dt)
    return np.array([v for v in INTS if info.min <= v <= info.max], dt)


def numpy_scalar_cast(x: np.ndarray, dtype) -> np.ndarray:
    """NumPy's cast of each element on its own (NumPy's vectorised float64 -> uint32 loop
    disagrees with its scalar loop outside [-2^31, 2^32), by position in the array)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.stack([np.asarray(v).astype(dtype) for v in x]) if x.size else x.astype(dtype)


def in_range(x: np.ndarray, dtype) -> np.ndarray:
    """Which float values convert to ``dtype`` without C's undefined behaviour."""
    dt = np.dtype(dtype)
    if x.dtype.kind != "f" or dt.kind not in "iu":
        return np.ones(x.shape, bool)
    info = np.iinfo(dt)
    t = np.trunc(x.astype(np.float64))
    return np.isfinite(t) & (t >= info.min) & (t <= info.max)


def same_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN (NumPy's NaN payloads are not specified)."""
    if want.dtype.kind == "f":
        bits = f"u{want.itemsize}"
        return (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
    return got == want


def _describe(what: str, x, got, want, ok) -> list[str]:
    bad = np.flatnonzero(~ok)
    if not bad.size:
        return []
    shown = ", ".join(f"{x[i]!r} -> {got[i]!r} (NumPy {want[i]!r})" for i in bad[:4])
    return [f"{what}: {bad.size} wrong: {shown}"]


def cast_mismatches(device) -> list[str]:
    """astype between every pair of the 11 device dtypes, special and out-of-range values."""
    problems = []
    for src, dst in itertools.product(TYPES, TYPES):
        x = values(src)
        want = numpy_scalar_cast(x, dst)
        # Strided source (a reversed view): the kernel path, not a plain buffer copy.
        dev = cg.asarray(np.ascontiguousarray(x[::-1]), device=device)[::-1]
        got = np.asarray(dev.astype(dst))
        ok = same_values(got, want) | (~in_range(x, dst) & (not X86_64))
        problems += _describe(f"astype {src} -> {dst}", x, got, want, ok)
    return problems


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "true_divide": np.true_divide, "maximum": np.maximum, "minimum": np.minimum}
FLOAT_SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 3.0, 1e-310, 1e300,
                  3.4e38, 1e-45, 0.1, -7.5]


def elementwise_mismatches(device) -> list[str]:
    """Every pair of float specials through + - * / maximum minimum and unary -, bit for bit;
    integer wrap-around of every integer dtype; out= casts."""
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dt in (np.float32, np.float64):
            pairs = list(itertools.product(FLOAT_SPECIALS, repeat=2))
            a = np.array([p for p, _ in pairs], dt)
            b = np.array([q for _, q in pairs], dt)
            da, db = cg.asarray(a, device=device), cg.asarray(b, device=device)
            for name, f in BINARY.items():
                want, got = f(a, b), np.asarray(f(da, db))
                problems += _describe(f"{name} {np.dtype(dt)}", list(zip(a, b)), got, want,
                                      same_values(got, want))
            want, got = -a, np.asarray(-da)
            problems += _describe(f"negative {np.dtype(dt)}", a, got, want,
                                  same_values(got, want))
            # A Python scalar operand (NEP 50: it takes the array's dtype).
            want, got = np.maximum(a, -0.0), np.asarray(np.maximum(da, -0.0))
            problems += _describe(f"maximum {np.dtype(dt)}, -0.0", a, got, want,
                                  same_values(got, want))
        for dt in TYPES[1:9]:
            info = np.iinfo(dt)
            a = np.array([info.min, info.max, 0, 1, -1 if info.min else 2, info.max // 2 + 3, 7],
                         dt)
            b = a[::-1].copy()
            da, db = cg.asarray(a, device=device), cg.asarray(b, device=device)
            for name, f in BINARY.items():
                want, got = f(a, b), np.asarray(f(da, db))
                problems += _describe(f"{name} {dt}", list(zip(a, b)), got, want,
                                      same_values(got, want))
            want, got = -a, np.asarray(-da)
            problems += _describe(f"negative {dt}", a, got, want, same_values(got, want))
        # out= of another dtype (casting="unsafe"): the kernel's store is NumPy's cast.
        x = np.array(FLOATS, np.float64)
        dx = cg.asarray(x, device=device)
        for od in TYPES[1:]:
            out = cg.empty(x.shape, od, device=device)
            np.multiply(dx, 3.0, out=out, casting="unsafe")
            want = numpy_scalar_cast(x * 3.0, od)
            ok = same_values(np.asarray(out), want) | (~in_range(x * 3.0, od) & (not X86_64))
            problems += _describe(f"multiply float64 out={od}", x, np.asarray(out), want, ok)
    return problems
