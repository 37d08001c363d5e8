"""NumPy's complex ufunc loops on device arrays (``opencl/complex.cl``): ``add``, ``subtract``,
``multiply``, ``divide``, ``equal``, ``not_equal``, ``negative``, ``positive``, ``conjugate``,
``absolute``, ``square``, ``isnan``, ``isinf`` and ``isfinite`` with a complex64/complex128
operand (the other one complex, float32/float64 or a Python or NumPy scalar), broadcast and
strided, in one launch; NumPy's result dtypes (NEP 50), its formulas uncontracted (its bits;
division by its Smith algorithm) and, for float32 magnitudes, glibc's hypotf.

Where it runs: every device without a host path (discrete GPUs); on the others NumPy's loop on
the mapping (a device result). Keywords (``out=``, ``where=``, ``dtype=``), integer or float16
arrays beside complex ones and other ufuncs take the host fallback.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pyopencl.cltypes as cltypes

from ..array import DeviceArray, adopt_host
from ..array.geometry import c_strides
from ..device import Device
from ..kernels.copy import as_long8
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from ..memory import Storage
from ..memo import Memo

__all__ = ["complex_ufunc", "OPS"]

SOURCE = "complex.cl"
OPS = {np.add: "ADD", np.subtract: "SUB", np.multiply: "MUL", np.divide: "DIV",
       np.equal: "EQ", np.not_equal: "NE", np.negative: "NEG", np.positive: "POS",
       np.conjugate: "CONJ", np.absolute: "ABS", np.square: "SQUARE", np.isnan: "ISNAN",
       np.isinf: "ISINF", np.isfinite: "ISFINITE"}
_ARRAY_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                np.complex128))
_STORAGE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
            np.dtype(np.complex64): "float2", np.dtype(np.complex128): "double2"}
_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
_LOCAL = 256
_results: Memo[Any] = Memo("complex ufunc results", capacity=1024)


def _result(ufunc: np.ufunc, inputs: tuple) -> tuple[np.dtype, np.dtype] | None:
    """(NumPy's result dtype, the complex dtype it computes in) for these operands, found on
    stand-ins once per (ufunc, operand types); None where NumPy refuses them."""
    key = (ufunc,) + tuple(x.dtype if type(x) is DeviceArray else type(x) for x in inputs)
    found = _results.find(key)
    if found is not None:
        return found or None

    def build():
        stand_ins = [np.zeros(1, x.dtype) if type(x) is DeviceArray else x for x in inputs]
        try:
            with np.errstate(all="ignore"):
                result = np.asarray(ufunc(*stand_ins)).dtype
            computed = np.result_type(*stand_ins)
        except Exception:   # noqa: BLE001 - NumPy's own error comes from its own call
            return False
        if computed.kind != "c":
            return False
        return result, computed
    found = _results.get(key, build)
    return found or None


def _operand(x: Any, out_shape: tuple, ndim: int):
    """(element offset, long8 strides) of a device array broadcast to ``out_shape``, or None
    where its strides are not whole elements."""
    item = x.itemsize
    if x.offset % item or any(s % item for s in x.strides):
        return None
    pad = ndim - x.ndim
    strides = [0] * pad + [0 if n == 1 else s // item for n, s in zip(x.shape, x.strides)]
    return x.offset // item, as_long8(strides, 0)


def _scalar(value: Any, real: np.dtype) -> np.ndarray:
    """A complex scalar as the kernel's float2/double2 argument."""
    z = complex(value)
    cl_type = cltypes.double2 if real == np.float64 else cltypes.float2
    return np.array((z.real, z.imag), dtype=cl_type)


def complex_ufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(*inputs)`` with a complex operand on the device, or NotImplemented (the host
    fallback answers then)."""
    op = OPS.get(ufunc)
    if op is None or kwargs or len(inputs) != ufunc.nin:
        return NotImplemented
    arrays = [x for x in inputs if type(x) is DeviceArray]
    if not arrays:
        return NotImplemented
    device = arrays[0].device
    for x in inputs:
        if type(x) is DeviceArray:
            if x.device is not device or x.dtype not in _ARRAY_DTYPES:
                return NotImplemented
        elif not isinstance(x, (numbers.Number, np.number)) or isinstance(x, (bool, np.bool_)):
            return NotImplemented
    found = _result(ufunc, inputs)
    if found is None:
        return NotImplemented
    result, computed = found
    if computed == np.complex128 and not device.info.fp64:
        return NotImplemented
    if has_host_path(device):
        hosts = [x.host_view() if type(x) is DeviceArray else x for x in inputs]
        with np.errstate(all="ignore"):
            return adopt_host(np.ascontiguousarray(ufunc(*hosts)), device)
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or len(shape) > 8:
        return NotImplemented
    return _launch(device, op, inputs, shape, n, result, computed)


def _launch(device: Device, op: str, inputs: tuple, shape: tuple, n: int, result: np.dtype,
            computed: np.dtype) -> DeviceArray:
    real = np.dtype(np.float64) if computed == np.complex128 else np.dtype(np.float32)
    ndim = max(len(shape), 1)
    defines = {"T": "double" if real == np.float64 else "float", "IS_FP64": int(real == np.float64),
               "NIN": len(inputs), "OP": op, "NDIM": ndim,
               "OUT_T": "uchar" if result == np.bool_ else _STORAGE[result],
               "ABS_DOUBLE": int(op == "ABS" and real == np.float32 and bool(device.info.fp64))}
    args = []
    for name, x in zip("AB", inputs + (inputs[0],) * (2 - len(inputs))):
        if type(x) is DeviceArray:
            placed = _operand(x, shape, ndim)
            if placed is None:
                x = x.copy()
                placed = _operand(x, shape, ndim)
            defines[f"{name}_T"] = _STORAGE[x.dtype]
            defines[f"{name}_COMPLEX"] = int(x.dtype.kind == "c")
            defines[f"{name}_SCALAR"] = 0
            offset, strides = placed
            unused = _scalar(0, _REAL[x.dtype]) if x.dtype.kind == "c" else x.dtype.type(0)
            args.append((x.storage.kernel_buffer(), np.int64(offset), unused, strides))
        else:
            defines[f"{name}_T"] = _STORAGE[np.result_type(real, np.complex64)]
            defines[f"{name}_COMPLEX"] = 1
            defines[f"{name}_SCALAR"] = 1
            args.append((None, np.int64(0), _scalar(x, real), as_long8([], 0)))
    out = DeviceArray.from_storage(Storage.for_output(device, n * result.itemsize), shape,
                                   result, c_strides(shape, result.itemsize))
    out_buf = out.storage.kernel_buffer(write=True)
    (a_buf, a_off, a_val, a_st), (b_buf, b_off, b_val, b_st) = args
    a_buf = a_buf if a_buf is not None else (b_buf if b_buf is not None else out_buf)
    b_buf = b_buf if b_buf is not None else a_buf
    kernel = get_kernel(device, SOURCE, "complex_op", defines, device.info.rounding_options)
    kernel(device.queue, (-(-n // _LOCAL) * _LOCAL,), (_LOCAL,), np.int64(n), a_buf, a_off,
           a_val, b_buf, b_off, b_val, out_buf, as_long8(shape, 1), a_st, b_st)
    return out
