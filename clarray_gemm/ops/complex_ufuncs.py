"""NumPy's complex ufunc loops on device arrays (``opencl/complex.cl``): ``add``, ``subtract``,
``multiply``, ``divide``, ``equal``, ``not_equal``, ``negative``, ``positive``, ``conjugate``,
``absolute``, ``square``, ``isnan``, ``isinf`` and ``isfinite`` with a complex64/complex128
operand (the other one complex, float32/float64 or a Python or NumPy scalar), broadcast and
strided, in one launch; NumPy's result dtypes (NEP 50), its formulas uncontracted (its bits;
division by its Smith algorithm) and, for float32 magnitudes, glibc's hypotf.

``a @ b`` of complex arrays is four products of their real and imaginary parts on the GEMM
kernels (:func:`complex_matmul`); ``np.real``, ``np.imag`` (views), ``np.angle``,
``np.iscomplex`` and ``np.isreal`` are device operations on the parts.

Where it runs: every device without a host path (discrete GPUs); on the others NumPy's loop on
the mapping (a device result). Keywords (``out=``, ``where=``, ``dtype=``), integer or float16
arrays beside complex ones and other ufuncs take the host fallback.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pyopencl.cltypes as cltypes

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, host_function
from ..array.geometry import c_strides
from ..device import Device
from ..dtypes import part_dtype
from ..kernels.copy import as_long8
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from ..memory import Storage
from ..memo import Memo

__all__ = ["complex_ufunc", "complex_matmul", "OPS", "real", "imag", "angle", "iscomplex", "isreal"]

SOURCE = "complex.cl"
OPS = {np.add: "ADD", np.subtract: "SUB", np.multiply: "MUL", np.divide: "DIV",
       np.equal: "EQ", np.not_equal: "NE", np.negative: "NEG", np.positive: "POS",
       np.conjugate: "CONJ", np.absolute: "ABS", np.square: "SQUARE", np.isnan: "ISNAN",
       np.isinf: "ISINF", np.isfinite: "ISFINITE"}
_ARRAY_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                np.complex128))
_STORAGE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
            np.dtype(np.complex64): "float2", np.dtype(np.complex128): "double2"}
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
    fallback answers then). A plan per (ufunc, operand layouts and scalar types) holds the
    bound launch: a repeated call allocates its result and passes buffers, offsets and
    scalars."""
    if kwargs or len(inputs) != ufunc.nin:
        return NotImplemented
    device = next((x.device for x in inputs if type(x) is DeviceArray), None)
    if device is None:
        return NotImplemented
    key = (ufunc, has_host_path(device)) + tuple(
        (x.device, x.layout_key) if type(x) is DeviceArray else type(x) for x in inputs)
    plan = _plans.find(key)
    if plan is None:
        plan = _plans.get(key, lambda: _plan(ufunc, inputs))
    return plan(inputs) if plan else NotImplemented


_plans: Memo[Any] = Memo("complex ufunc plans", capacity=4096)


def _plan(ufunc: np.ufunc, inputs: tuple) -> Any:
    """The runner of :func:`complex_ufunc` for these operands' layouts, or False (the host
    fallback's call)."""
    op = OPS.get(ufunc)
    arrays = [x for x in inputs if type(x) is DeviceArray]
    if op is None or not arrays:
        return False
    device = arrays[0].device
    for x in inputs:
        if type(x) is DeviceArray:
            if x.device is not device or x.dtype not in _ARRAY_DTYPES:
                return False
        elif not isinstance(x, (numbers.Number, np.number)) or isinstance(x, (bool, np.bool_)):
            return False
    found = _result(ufunc, inputs)
    if found is None:
        return False
    result, computed = found
    if computed == np.complex128 and not device.info.fp64:
        return False
    if has_host_path(device):
        def on_host(operands: tuple) -> DeviceArray:   # (NumPy's warnings as NumPy gives them)
            hosts = [x.host_view() if type(x) is DeviceArray else x for x in operands]
            return adopt_host(np.ascontiguousarray(ufunc(*hosts)), device)
        return on_host
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or len(shape) > 8:
        return False
    return _bind(device, op, inputs, shape, n, result, computed)


def _bind(device: Device, op: str, inputs: tuple, shape: tuple, n: int, result: np.dtype,
          computed: np.dtype):
    """The runner for one layout: the kernel bound with the geometry and strides; per call the
    operands' buffers and offsets (or the scalar's value) and the result's buffer."""
    real = part_dtype(computed)
    ndim = max(len(shape), 1)
    defines = {"T": "double" if real == np.float64 else "float", "IS_FP64": int(real == np.float64),
               "NIN": len(inputs), "OP": op, "NDIM": ndim,
               "OUT_T": "uchar" if result == np.bool_ else _STORAGE[result],
               "ABS_DOUBLE": int(op == "ABS" and real == np.float32 and bool(device.info.fp64))}
    operands = inputs + (inputs[0],) * (2 - len(inputs))
    spare = Storage.for_output(device, 16)   # the buffer of a scalar's slot (never read)
    placeholder = spare.kernel_buffer(write=True)
    fixed, per_call = [np.int64(n)], []
    for slot, (name, x) in enumerate(zip("AB", operands)):
        base = 1 + 3 * slot
        if type(x) is DeviceArray:
            offset_strides = _operand(x, shape, ndim)
            if offset_strides is None:
                return False
            defines[f"{name}_T"] = _STORAGE[x.dtype]
            defines[f"{name}_COMPLEX"] = int(x.dtype.kind == "c")
            defines[f"{name}_SCALAR"] = 0
            unused = _scalar(0, part_dtype(x.dtype)) if x.dtype.kind == "c" else x.dtype.type(0)
            fixed += [None, None, unused]
            per_call += [base, base + 1]
        else:
            defines[f"{name}_T"] = _STORAGE[np.result_type(real, np.complex64)]
            defines[f"{name}_COMPLEX"] = 1
            defines[f"{name}_SCALAR"] = 1
            fixed += [placeholder, np.int64(0), None]
            per_call += [base + 2]
    strides = [_operand(x, shape, ndim)[1] if type(x) is DeviceArray else as_long8([], 0)
               for x in operands]
    fixed += [None, as_long8(shape, 1), *strides]
    per_call.append(7)
    kernel = get_kernel(device, SOURCE, "complex_op", defines, device.info.rounding_options)
    launch = kernel.bind(device, (-(-n // _LOCAL) * _LOCAL,), (_LOCAL,), fixed, per_call)
    out_strides = c_strides(shape, result.itemsize)
    nbytes = n * result.itemsize

    def run(values: tuple, keep=spare) -> DeviceArray:   # (keep: the placeholder stays alive)
        out = DeviceArray.from_storage(Storage.for_output(device, nbytes), shape, result,
                                       out_strides)
        args = []
        for x in values + (values[0],) * (2 - len(values)):
            if type(x) is DeviceArray:
                offset, rem = divmod(x.offset, x.itemsize)
                if rem:   # (a view at a byte offset between elements: NumPy's loop)
                    return NotImplemented
                args += (x.storage.kernel_buffer(), np.int64(offset))
            else:
                args.append(_scalar(x, real))
        args.append(out.storage.kernel_buffer(write=True))
        launch(*args)
        return out
    return run


def complex_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with a complex device array as four (or two) real products of the parts,
    ``(ar br - ai bi) + i (ar bi + ai br)``, on the GEMM kernels, written into the parts of a
    complex result; NotImplemented (NumPy's answer through the host) for other operands."""
    if not (type(a) is DeviceArray and type(b) is DeviceArray and a.device is b.device
            and a.dtype in _ARRAY_DTYPES and b.dtype in _ARRAY_DTYPES
            and a.ndim >= 2 and b.ndim >= 2 and a.size and b.size):
        return NotImplemented
    result = np.result_type(a.dtype, b.dtype)
    if result.kind != "c" or (result == np.complex128 and not a.device.info.fp64):
        return NotImplemented
    real = part_dtype(result)

    def parts(x: DeviceArray) -> tuple:
        if x.dtype.kind != "c":
            return x.astype(real, copy=False), None
        return x.real.astype(real, copy=False), x.imag.astype(real, copy=False)
    (ar, ai), (br, bi) = parts(a), parts(b)
    re = ar @ br
    im = ar @ bi if bi is not None else None
    if ai is not None:
        re = re - ai @ bi if bi is not None else re
        im = ai @ br if im is None else im + ai @ br
    out = DeviceArray.from_storage(Storage.for_output(a.device, re.size * result.itemsize),
                                   re.shape, result, c_strides(re.shape, result.itemsize))
    out.real[...] = re
    out.imag[...] = im if im is not None else 0
    return out


@implements(np.real)
def real(val: Any) -> Any:
    """``np.real``: the real parts as a device view (the array itself for real dtypes)."""
    return val.real if type(val) is DeviceArray else host_function(np.real, (val,), {})


@implements(np.imag)
def imag(val: Any) -> Any:
    """``np.imag``: the imaginary parts as a device view (NumPy's zeros for real dtypes)."""
    return val.imag if type(val) is DeviceArray else host_function(np.imag, (val,), {})


@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """``np.angle``: arctan2 of the imaginary and real parts on the device (NumPy's steps: 0
    for the imaginary parts of real numbers, degrees by ``* 180 / pi``)."""
    if type(z) is not DeviceArray or z.dtype.kind not in "biufc":
        return host_function(np.angle, (z,), {"deg": deg})
    if z.dtype.kind == "c":
        a = np.arctan2(z.imag, z.real)
    else:
        a = np.arctan2(0, z)
    if deg:
        a *= 180 / np.pi
    return a


@implements(np.iscomplex)
def iscomplex(x: Any) -> Any:
    """``np.iscomplex``: imaginary part nonzero, on the device (all False for real dtypes)."""
    if type(x) is not DeviceArray:
        return host_function(np.iscomplex, (x,), {})
    if x.dtype.kind == "c":
        return np.not_equal(x.imag, 0)
    return host_function(np.iscomplex, (x,), {}) if x.ndim == 0 else \
        np.zeros_like(x, dtype=np.bool_)


@implements(np.isreal)
def isreal(x: Any) -> Any:
    """``np.isreal``: imaginary part zero, on the device (all True for real dtypes)."""
    if type(x) is not DeviceArray:
        return host_function(np.isreal, (x,), {})
    if x.dtype.kind == "c":
        return np.equal(x.imag, 0)
    return host_function(np.isreal, (x,), {}) if x.ndim == 0 else \
        np.ones_like(x, dtype=np.bool_)
