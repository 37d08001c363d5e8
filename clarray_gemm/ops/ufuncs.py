"""NumPy's ufuncs (and ``np.where``, ``np.clip``) on device arrays.

Every ufunc below runs one kernel of ``opencl/elementwise.cl`` (through
:mod:`clarray_gemm.ops.elementwise`) with NumPy's dtype resolution, broadcasting, ``out=``,
``where=``, ``dtype=`` and ``casting=``. Loops a kernel cannot run exactly (float16, complex,
object, datetime, mixed-type loops), ``signature=``/``order=``/``subok=`` arguments and operands
it cannot key return ``NotImplemented``: NumPy's ufunc then runs on host views (counted by
:func:`clarray_gemm.on_host_calls`). Floating-point warnings (divide by zero, overflow) are not
raised for device loops; the values are NumPy's.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy._core import umath

from .._dispatch import NumPyDecides, implements, implements_ufunc
from ..array import DeviceArray, host_function
from ..dtypes import PYTHON_SCALARS, TYPED_SCALARS
from .complex_ufuncs import OPS as COMPLEX_OPS, complex_ufunc
from .elementwise import (OpSpec, binary_plan, find_plan, keyed_out_plan, keyed_plan, run_op,
                          run_plan, scalar_plan, unary_plan)

__all__ = ["SPECS", "WHERE", "CLIP", "device_ufunc"]

_UFUNCS = {
    # arithmetic
    np.add: "ADD", np.subtract: "SUBTRACT", np.multiply: "MULTIPLY",
    np.true_divide: "TRUE_DIVIDE", np.floor_divide: "FLOOR_DIVIDE", np.remainder: "REMAINDER",
    np.fmod: "FMOD", np.divmod: "DIVMOD", np.power: "POWER", np.float_power: "POWER",
    np.negative: "NEGATIVE", np.positive: "POSITIVE", np.conjugate: "POSITIVE",
    np.absolute: "ABSOLUTE", np.fabs: "FABS", np.sign: "SIGN", np.reciprocal: "RECIPROCAL",
    np.square: "SQUARE", np.sqrt: "SQRT", np.cbrt: "CBRT",
    # comparison and logic
    np.equal: "EQUAL", np.not_equal: "NOT_EQUAL", np.less: "LESS", np.less_equal: "LESS_EQUAL",
    np.greater: "GREATER", np.greater_equal: "GREATER_EQUAL",
    np.logical_and: "LOGICAL_AND", np.logical_or: "LOGICAL_OR", np.logical_xor: "LOGICAL_XOR",
    np.logical_not: "LOGICAL_NOT",
    np.bitwise_and: "BITWISE_AND", np.bitwise_or: "BITWISE_OR", np.bitwise_xor: "BITWISE_XOR",
    np.invert: "INVERT", np.left_shift: "LEFT_SHIFT", np.right_shift: "RIGHT_SHIFT",
    # exponential, logarithmic, trigonometric, hyperbolic
    np.exp: "EXP", np.exp2: "EXP2", np.expm1: "EXPM1", np.log: "LOG", np.log2: "LOG2",
    np.log10: "LOG10", np.log1p: "LOG1P",
    np.sin: "SIN", np.cos: "COS", np.tan: "TAN", np.arcsin: "ARCSIN", np.arccos: "ARCCOS",
    np.arctan: "ARCTAN", np.arctan2: "ARCTAN2", np.hypot: "HYPOT",
    np.sinh: "SINH", np.cosh: "COSH", np.tanh: "TANH", np.arcsinh: "ARCSINH",
    np.arccosh: "ARCCOSH", np.arctanh: "ARCTANH",
    # rounding and floating-point classification
    np.floor: "FLOOR", np.ceil: "CEIL", np.trunc: "TRUNC", np.rint: "RINT",
    np.isnan: "ISNAN", np.isinf: "ISINF", np.isfinite: "ISFINITE", np.signbit: "SIGNBIT",
    np.copysign: "COPYSIGN", np.nextafter: "NEXTAFTER",
    np.maximum: "MAXIMUM", np.minimum: "MINIMUM", np.fmax: "FMAX", np.fmin: "FMIN",
    umath.clip: "CLIP",
}

SPECS: dict[np.ufunc, OpSpec] = {u: OpSpec(name, u, u.nin, u.nout) for u, name in _UFUNCS.items()}
WHERE = OpSpec("WHERE", np.where, 3, 1, cond_first=True)  # type: ignore[arg-type]


def _on_one_device_array(spec: OpSpec, a: DeviceArray) -> Any:
    """``spec(a)`` for a device array without keywords, by the plan on its short key;
    NotImplemented where no device loop runs it."""
    plan = unary_plan(spec, a, a.device)
    if plan.short is not None:
        return plan.short(a)
    if plan.supported:
        result = plan.run((a,), None, None)
        return result[0] if len(result) == 1 else result
    if a.dtype.kind == "c" and spec.ufunc in COMPLEX_OPS:
        return complex_ufunc(spec.ufunc, (a,), {})
    return NotImplemented


def _on_two_device_arrays(spec: OpSpec, a: DeviceArray, b: DeviceArray) -> Any:
    """``spec(a, b)`` for two device arrays without keywords, by the plan on its short key;
    NotImplemented where they are on two devices or no device loop runs it."""
    device = a.device
    if device is not b.device:
        return NotImplemented
    plan = binary_plan(spec, a, b, device)
    if plan.short is not None:
        return plan.short(a, b)
    if plan.supported:
        result = plan.run((a, b), None, None)
        return result[0] if len(result) == 1 else result
    if (a.dtype.kind == "c" or b.dtype.kind == "c") and spec.ufunc in COMPLEX_OPS:
        return complex_ufunc(spec.ufunc, (a, b), {})
    return NotImplemented


def _on_device_array_and_scalar(spec: OpSpec, a: Any, b: Any) -> Any:
    """``spec(a, b)`` for a device array and a scalar of ``TYPED_SCALARS`` (either order) without
    keywords, by the plan on its short key (the scalar's type: its value is an argument);
    NotImplemented where only NumPy's loop answers (a Python int out of the loop's range)."""
    plan = scalar_plan(spec, a, b, (a if type(a) is DeviceArray else b)._storage.device)
    if plan is not None and plan.short is not None:
        return plan.short(a, b)
    return run_plan(plan, (a, b))  # (a Python int's range is checked per call)


CLIP = SPECS[umath.clip]

_KWARGS = {"out", "casting", "where", "dtype"}
_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def _outs(out: Any, nout: int) -> tuple | None | Any:
    """``out=`` as a tuple of device arrays, None, or NotImplemented (host outputs)."""
    if out is None:
        return None
    if not isinstance(out, tuple):
        out = (out,)
    if len(out) != nout or all(o is None for o in out):
        return NotImplemented if any(o is not None for o in out) else None
    if not all(type(o) is DeviceArray for o in out):
        return NotImplemented
    return out


def _mask(where: Any) -> Any:
    """``where=`` as a mask operand: None for True, NotImplemented for what NumPy must check."""
    if where is True:
        return None
    if type(where) is DeviceArray:
        return where if where.dtype == np.bool_ else NotImplemented
    if where is False or (isinstance(where, (np.ndarray, np.generic)) and where.dtype == np.bool_):
        return np.asarray(where)
    return NotImplemented


@implements_ufunc(*SPECS)
def device_ufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(*inputs, **kwargs)`` on the device, or NotImplemented for the host fallback:
    the real loops, then (only where they decline) the complex ones."""
    try:
        result = _real_ufunc(ufunc, inputs, kwargs)
    except NumPyDecides:
        if ufunc not in COMPLEX_OPS or not _has_complex(inputs):
            raise
        result = NotImplemented
    if result is NotImplemented and ufunc in COMPLEX_OPS and _has_complex(inputs):
        return complex_ufunc(ufunc, inputs, kwargs)
    return result


def _has_complex(inputs: tuple) -> bool:
    return any((type(x) is DeviceArray and x.dtype.kind == "c") or type(x) is complex
               or isinstance(x, np.complexfloating) for x in inputs)


def _real_ufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """The real loops of :func:`device_ufunc`."""
    if not kwargs and len(inputs) == 1 and type(inputs[0]) is DeviceArray and ufunc.nin == 1:
        return _on_one_device_array(SPECS[ufunc], inputs[0])  # np.exp(x), -x: a short key
    if ufunc is np.power and len(inputs) == 2:
        fast = _scalar_power(*inputs)
        if fast is not None:
            ufunc, inputs = fast, inputs[:1]
    if not kwargs and ufunc is not np.power and len(inputs) == ufunc.nin:  # the common call
        if len(inputs) == 1 and type(inputs[0]) is DeviceArray:  # np.power(x, 2): np.square
            return _on_one_device_array(SPECS[ufunc], inputs[0])
        if len(inputs) == 2:  # the operators: two device arrays, a plan on a short key
            a, b = inputs
            if type(a) is DeviceArray and type(b) is DeviceArray:
                result = _on_two_device_arrays(SPECS[ufunc], a, b)
                if result is not NotImplemented:
                    return result
            elif ((type(a) is DeviceArray and type(b) in TYPED_SCALARS)
                  or (type(b) is DeviceArray and type(a) in TYPED_SCALARS)):
                result = _on_device_array_and_scalar(SPECS[ufunc], a, b)
                if result is not NotImplemented:
                    return result
        device = None
        for x in inputs:
            if type(x) is DeviceArray:
                if device is None:
                    device = x.device
                elif x.device is not device and x.device != device:
                    return NotImplemented
        return run_op(SPECS[ufunc], inputs, None, None, "same_kind", None, device)
    if len(inputs) != ufunc.nin or (kwargs and set(kwargs) - _KWARGS):
        return NotImplemented
    if len(kwargs) == 1 and len(inputs) == 2 and ufunc.nout == 1 and ufunc is not np.power:
        result = _into_out(SPECS[ufunc], *inputs, kwargs.get("out"))  # np.add(a, b, out=c)
        if result is not NotImplemented:
            return result
    outs = _outs(kwargs.get("out"), ufunc.nout)
    mask = _mask(kwargs.get("where", True))
    if outs is NotImplemented or mask is NotImplemented:
        return NotImplemented
    devices = {x.device for x in (*inputs, *(outs or ()), mask) if type(x) is DeviceArray}
    if len(devices) != 1:
        return NotImplemented
    if ufunc is np.power and not _exponents_allowed(inputs):
        raise ValueError(_NEGATIVE_POWER)
    dtype = kwargs.get("dtype")
    return run_op(SPECS[ufunc], inputs, outs, mask, kwargs.get("casting", "same_kind"),
                  None if dtype is None else np.dtype(dtype), devices.pop())


def _into_out(spec: OpSpec, a: Any, b: Any, out: Any) -> Any:
    """``spec(a, b, out=out)`` for three device arrays of one device where ``out`` shares no
    buffer with an operand, by the plan on a short key; NotImplemented for the general path."""
    if type(out) is tuple and len(out) == 1:
        out = out[0]
    if type(a) is not DeviceArray or type(b) is not DeviceArray or type(out) is not DeviceArray:
        return NotImplemented
    device = a.device
    if b.device is not device or out.device is not device or \
            a.storage is out.storage or b.storage is out.storage:
        return NotImplemented
    key = (spec, device, a.layout_key, b.layout_key, "out", out.layout_key)
    plan = find_plan(key) or keyed_out_plan(key, spec, (a, b), (out,), device)
    if plan is None or not plan.supported:
        return NotImplemented
    if plan.fresh_kernel:
        plan.run_into((a, b), out)
    else:
        plan.run((a, b), (out,), None)
    return out


def _scalar_power(base: Any, exponent: Any) -> np.ufunc | None:
    """The ufunc NumPy computes ``base ** exponent`` with for a Python scalar exponent, as its
    operator does (``fast_scalar_power``) and ``np.power`` with a scalar exponent gives: ``x ** 2``
    is ``square`` (for integers too: the same values as the power loop), ``x ** -1``
    ``reciprocal`` and ``x ** 0.5`` ``sqrt`` for real floats (``np.power`` of float16 keeps
    pow semantics; the ``**`` operator's ``sqrt`` is ``DeviceArray.__pow__``'s). Not only faster (NumPy's own
    ``np.power(a, 2, out=...)`` is 4x slower than ``square``): ``sqrt`` keeps ``-0.0`` and gives
    NaN at ``-inf``, where ``pow(x, 0.5)`` gives ``+0.0`` and ``+inf``. None: the power loop."""
    if type(base) is not DeviceArray:
        return None
    kind = base.dtype.kind
    if type(exponent) is int:
        if exponent == 2 and kind in "iuf":
            return np.square
        if exponent == -1 and kind == "f":
            return np.reciprocal
    elif type(exponent) is float and kind == "f":
        if exponent == 2.0:
            return np.square
        if exponent == -1.0:  # 1/x, as a correctly rounded pow(x, -1) gives
            return np.reciprocal
        # NumPy's float16 power loop has no scalar fast path: pow semantics there
        if exponent == 0.5 and base.dtype.itemsize >= 4:
            return np.sqrt
    return None


def _exponents_allowed(inputs: tuple) -> bool:
    """False where NumPy raises for integer powers: a signed integer loop with an exponent < 0."""
    base, exponent = inputs
    kinds = {np.asarray(x).dtype.kind if type(x) is not DeviceArray else x.dtype.kind
             for x in inputs if type(x) not in PYTHON_SCALARS}
    if not kinds <= set("iub") or "i" not in kinds and not (type(exponent) is int):
        return True
    if type(base) in PYTHON_SCALARS and type(base) is not int:
        return True
    if type(exponent) in PYTHON_SCALARS:
        return not (type(exponent) is int and exponent < 0)
    if type(exponent) is DeviceArray:
        if exponent.dtype.kind != "i" or exponent.size == 0:
            return True
        return not bool(np.any(np.less(exponent, 0)))
    host = np.asarray(exponent)
    return host.dtype.kind != "i" or not bool((host < 0).any())


@implements(np.where)
def where(condition: Any, *x_y: Any) -> Any:
    """``np.where(condition, x, y)`` on the device (one kernel); ``np.where(condition)`` is
    ``np.nonzero(condition)`` (ops/composed.py for a device array). (``x``/``y`` may be None:
    NumPy's object values.)"""
    if not x_y:
        if type(condition) is DeviceArray:
            return np.nonzero(condition)
        return host_function(np.where, (condition,), {})
    if len(x_y) != 2:
        raise ValueError("either both or neither of x and y should be given")
    result = _where_by_short_key(condition, *x_y)
    if result is not NotImplemented:
        return result
    inputs = (condition, *x_y)
    result = run_op(WHERE, inputs) if _keyable(inputs) else NotImplemented
    if result is NotImplemented:
        return host_function(np.where, inputs, {})
    return result


def _where_by_short_key(condition: Any, x: Any, y: Any) -> Any:
    """``np.where(condition, x, y)`` of device arrays on one device and scalars of
    ``TYPED_SCALARS``, by the plan on its short key (layouts and scalar types): on the host
    path NumPy's own ``np.where`` on the host views (so a Python int out of the result's range
    gives NumPy's answer too), else the plan's kernel. NotImplemented for the general route."""
    device, key = None, [WHERE, None]
    for v in (condition, x, y):
        if type(v) is DeviceArray:
            if device is None:
                device = key[1] = v.device
            elif v.device is not device:
                return NotImplemented
            key.append(v.layout_key)
        elif type(v) in TYPED_SCALARS:
            key.append(type(v))
        else:
            return NotImplemented
    if device is None:
        return NotImplemented
    plan = keyed_plan(tuple(key), WHERE, (condition, x, y), device)
    if plan is not None and plan.fresh_host:
        return plan.host_run(condition, x, y)
    return run_plan(plan, (condition, x, y))


@implements(np.clip)
def clip(a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None, *,
         min: Any = np._NoValue, max: Any = np._NoValue, **kwargs: Any) -> Any:
    """``np.clip`` on the device: one ``clip`` kernel (or ``maximum``/``minimum`` with one bound)."""
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if lo is None and hi is None or set(kwargs) - {"casting", "dtype"}:
        return host_function(np.clip, (a, a_min, a_max, out), dict(kwargs, min=min, max=max))
    if hi is None:
        return np.maximum(a, lo, out=out, **kwargs)
    if lo is None:
        return np.minimum(a, hi, out=out, **kwargs)
    return umath.clip(a, lo, hi, out=out, **kwargs)


def _keyable(inputs: tuple) -> bool:
    return any(type(x) is DeviceArray for x in inputs) and all(
        type(x) in PYTHON_SCALARS or isinstance(x, (DeviceArray, np.ndarray, np.generic))
        for x in inputs)
