"""The dtype rules of clarray_gemm.dtypes, against NumPy's dtypes and a device without fp64."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from clarray_gemm import dtypes

FP64 = SimpleNamespace(fp64=True)
NO_FP64 = SimpleNamespace(fp64=False)


@pytest.mark.parametrize("dt,c", [(np.float32, "float"), (np.float64, "double"), (np.int8, "char"),
                                  (np.uint64, "ulong"), (np.bool_, "uchar"), (">i4", "int")])
def test_ctype(dt, c):
    assert dtypes.ctype(dt) == c


def test_ctype_rejects_complex():
    with pytest.raises(TypeError, match="no OpenCL type"):
        dtypes.ctype(np.complex64)


def test_dtype_defines_accumulate_integers_unsigned():
    assert dtypes.dtype_defines(np.int32) == {"T": "int", "ACC": "uint", "IS_FP64": 0, "IS_INT": 1}
    assert dtypes.dtype_defines(np.float64, "A_")["A_IS_FP64"] == 1


@pytest.mark.parametrize("result,expected", [
    (np.bool_, np.uint64), (np.int8, np.int64), (np.uint16, np.uint64), (np.float16, np.float32),
    (np.int32, np.int32), (np.float64, np.float64), (np.complex64, None)])
def test_compute_dtype_widens_narrow_results(result, expected):
    got = dtypes.compute_dtype(result, FP64)
    assert got == (None if expected is None else np.dtype(expected))


def test_compute_dtype_without_fp64():
    assert dtypes.compute_dtype(np.float64, NO_FP64) is None
    assert dtypes.compute_dtype(np.float32, NO_FP64) == np.float32


def test_unsupported_dtype_reasons():
    assert dtypes.unsupported_dtype(np.float32, NO_FP64) is None
    assert "fp64" in dtypes.unsupported_dtype(np.float64, NO_FP64)
    assert dtypes.unsupported_dtype(np.float16, FP64) == "dtype float16 has no kernel"
    assert dtypes.unsupported_dtype(np.int16, FP64) is None
    assert dtypes.unsupported_dtype(np.int16, FP64, min_itemsize=4) == "dtype int16 has no kernel"
    assert (dtypes.unsupported_dtype(np.int32, FP64, only=dtypes.FLOATING)
            == "float32 and float64 only (not int32)")
    assert dtypes.unsupported_dtype(np.float64, FP64, only=dtypes.FLOATING) is None


def test_kernel_supports_needs_native_byte_order():
    assert dtypes.kernel_supports(np.dtype("<f4"), FP64)
    assert not dtypes.kernel_supports(np.dtype(">f4"), FP64)
    assert not dtypes.kernel_supports(np.float16, FP64)


@pytest.mark.parametrize("src,dst,ok", [
    (np.float32, np.int64, True), (np.bool_, np.float64, True), (np.float16, np.float16, True),
    (np.float16, np.float32, True), (np.float32, np.float16, True), (">f4", np.float32, False),
    (np.complex64, np.float32, False), (np.float32, np.complex128, False)])
def test_device_copy_supported(src, dst, ok):
    assert dtypes.device_copy_supported(np.dtype(src), np.dtype(dst)) is ok
