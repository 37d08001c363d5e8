"""``clarray_gemm.fuse``: a Python function of ufuncs over device arrays traced once per argument
types into one :class:`~clarray_gemm.ElementwiseKernel` (as ``cupy.fuse``): one pass over
memory, no temporaries (below the ``fuse`` host-path crossover of unified-memory devices, the
function runs as written: NumPy's loops on the mapping). The trace follows NumPy's own loop resolution (``ufunc.resolve_dtypes``,
NEP 50's weak Python scalars), so the fused kernel computes in the dtypes NumPy would; a
function using anything the trace does not cover (reductions, indexing, other ufuncs,
float16, integer division) runs unfused, as written.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..array import DeviceArray
from ..dtypes import ctype
from ..kernels.crossover import host_wins
from ..memo import Memo
from .user_kernels import ElementwiseKernel

__all__ = ["fuse"]


class _Unfusable(Exception):
    """The traced function leaves what one elementwise kernel can compute."""


_FLOAT_FUNCS = {np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh", np.sin: "sin",
                np.cos: "cos", np.tan: "tan", np.exp2: "exp2", np.log2: "log2",
                np.log10: "log10", np.expm1: "expm1", np.log1p: "log1p", np.arctan: "atan",
                np.sinh: "sinh", np.cosh: "cosh"}
_ARITHMETIC = {np.add: "+", np.subtract: "-", np.multiply: "*"}
_COMPARE = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
            np.equal: "==", np.not_equal: "!="}
_UNSIGNED = {"char": "uchar", "short": "ushort", "int": "uint", "long": "ulong"}


def _ctype(dtype: np.dtype) -> str:
    if dtype.kind not in "biuf" or dtype == np.float16:
        raise _Unfusable(dtype)
    return "bool" if dtype == np.bool_ else ctype(dtype)


class _Var:
    """A traced value: an OpenCL C expression and its NumPy dtype (``weak``: a Python scalar's
    type, not yet bound to a dtype)."""

    __slots__ = ("trace", "expr", "dtype", "weak", "scalar")
    __array_priority__ = 1000

    def __init__(self, trace: "_Trace", expr: str, dtype: np.dtype | None,
                 weak: type | None = None, scalar: int | None = None):
        self.trace, self.expr, self.dtype, self.weak, self.scalar = trace, expr, dtype, weak, scalar

    def _key(self) -> Any:
        return self.weak if self.dtype is None else self.dtype

    def cast_to(self, dtype: np.dtype) -> str:
        """This value as ``dtype`` in C (an argument scalar is passed as that dtype)."""
        if self.scalar is not None:
            self.trace.bind_scalar(self.scalar, dtype)
            return self.expr
        if self.weak is int and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= int(self.expr) <= info.max:   # NumPy raises OverflowError
                raise _Unfusable("a Python int out of the loop's range")
        return self.expr if self.dtype == dtype else f"(({_ctype(dtype)})({self.expr}))"

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise _Unfusable(ufunc)
        return self.trace.ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and not kwargs and len(args) == 3:
            return self.trace.where(*args)
        raise _Unfusable(func)

    def __bool__(self):
        raise _Unfusable("a traced value's truth")

    def __getattr__(self, name: str):   # methods and attributes (x.sum(), x.T): not fused
        raise _Unfusable(name)

    def _binary(ufunc):
        def forward(self, other):
            return self.trace.ufunc(ufunc, (self, other))

        def reverse(self, other):
            return self.trace.ufunc(ufunc, (other, self))
        return forward, reverse

    __add__, __radd__ = _binary(np.add)
    __sub__, __rsub__ = _binary(np.subtract)
    __mul__, __rmul__ = _binary(np.multiply)
    __truediv__, __rtruediv__ = _binary(np.true_divide)
    __pow__, __rpow__ = _binary(np.power)
    __lt__, _ = _binary(np.less)
    __le__, _ = _binary(np.less_equal)
    __gt__, _ = _binary(np.greater)
    __ge__, _ = _binary(np.greater_equal)
    __eq__, _ = _binary(np.equal)
    __ne__, _ = _binary(np.not_equal)
    __hash__ = None

    def __neg__(self):
        return self.trace.ufunc(np.negative, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.trace.ufunc(np.absolute, (self,))


class _Trace:
    """The expressions of one traced call, and its scalars' dtypes."""

    def __init__(self):
        self.scalar_dtypes: dict[int, np.dtype] = {}

    def bind_scalar(self, index: int, dtype: np.dtype) -> None:
        # a Python scalar passed as one dtype: used at two, the kernel could not match NumPy
        if self.scalar_dtypes.setdefault(index, dtype) != dtype:
            raise _Unfusable("a scalar used at two dtypes")

    def const(self, value: Any) -> _Var:
        if isinstance(value, _Var):
            return value
        kind = type(value)
        if kind is bool or kind is int:
            return _Var(self, str(int(value)), None, kind)
        if kind is float:   # exact in C: a hexadecimal literal
            if value != value:
                text = "NAN"
            elif value in (float("inf"), float("-inf")):
                text = "INFINITY" if value > 0 else "(-INFINITY)"
            else:
                text = value.hex()
            return _Var(self, text, None, kind)
        raise _Unfusable(kind)

    def ufunc(self, ufunc: np.ufunc, inputs: tuple) -> _Var:
        ops = [self.const(x) for x in inputs]
        try:
            loop = ufunc.resolve_dtypes(tuple(o._key() for o in ops) + (None,) * ufunc.nout)
        except (TypeError, np.exceptions.DTypePromotionError):
            raise _Unfusable(ufunc) from None
        ins, out = loop[:ufunc.nin], loop[ufunc.nin]
        args = [o.cast_to(d) for o, d in zip(ops, ins)]
        c = _ctype(out)
        kind = ins[0].kind
        if ufunc in _ARITHMETIC and kind in "iuf":
            if kind == "i":   # wrap as NumPy does: the unsigned operation, cast back
                u = _UNSIGNED[c]
                return _Var(self, f"(({c})(({u}){args[0]} {_ARITHMETIC[ufunc]} ({u}){args[1]}))",
                            out)
            if kind == "u":   # C promotes narrow operands to int: back to the loop's type
                return _Var(self, f"(({c})({args[0]} {_ARITHMETIC[ufunc]} {args[1]}))", out)
            return _Var(self, f"({args[0]} {_ARITHMETIC[ufunc]} {args[1]})", out)
        if ufunc is np.true_divide and kind == "f":
            return _Var(self, f"({args[0]} / {args[1]})", out)
        if ufunc in _COMPARE and kind in "biuf":
            return _Var(self, f"({args[0]} {_COMPARE[ufunc]} {args[1]})", out)
        if ufunc in _FLOAT_FUNCS and kind == "f":
            return _Var(self, f"{_FLOAT_FUNCS[ufunc]}({args[0]})", out)
        if ufunc is np.power and kind == "f":
            return _Var(self, f"pow({args[0]}, {args[1]})", out)
        if ufunc is np.negative and kind in "f":
            return _Var(self, f"(-{args[0]})", out)
        if ufunc is np.negative and kind == "i":
            return _Var(self, f"(({c})(-({_UNSIGNED[c]}){args[0]}))", out)
        if ufunc is np.absolute and kind == "f":
            return _Var(self, f"fabs({args[0]})", out)
        if ufunc is np.absolute and kind == "i":
            return _Var(self, f"(({c})({args[0]} < 0 ? -({_UNSIGNED[c]}){args[0]} : "
                              f"({_UNSIGNED[c]}){args[0]}))", out)
        if ufunc is np.square and kind == "f":
            return _Var(self, f"({args[0]} * {args[0]})", out)
        if ufunc is np.square and kind in "iu":
            u = _UNSIGNED.get(c, c)
            return _Var(self, f"(({c})(({u}){args[0]} * ({u}){args[0]}))", out)
        if ufunc is np.negative and kind == "u":
            return _Var(self, f"(({c})(-{args[0]}))", out)
        if ufunc is np.absolute and kind == "u":
            return _Var(self, args[0], out)
        if ufunc in (np.maximum, np.minimum) and kind in "iuf":
            a, b = args
            op = ">" if ufunc is np.maximum else "<"
            if kind == "f":   # NumPy's: a NaN on either side is the result
                return _Var(self, f"(isnan({a}) ? {a} : (isnan({b}) ? {b} : "
                                  f"({a} {op}= {b} ? {a} : {b})))", out)
            return _Var(self, f"({a} {op}= {b} ? {a} : {b})", out)
        raise _Unfusable(ufunc)

    def where(self, cond: Any, x: Any, y: Any) -> _Var:
        c, a, b = self.const(cond), self.const(x), self.const(y)
        if c.dtype != np.bool_:
            raise _Unfusable("np.where on a non-bool condition")
        keys = [v._key() for v in (a, b)]
        examples = [k if isinstance(k, np.dtype) else k(0) for k in keys]
        out = np.result_type(*examples)
        return _Var(self, f"({c.expr} ? {a.cast_to(out)} : {b.cast_to(out)})", out)


class _Fused:
    """A fused function: its traces by argument types, each an ElementwiseKernel or None (the
    function runs unfused for those types)."""

    def __init__(self, func: Callable[..., Any], name: str):
        self.func, self.name = func, name
        self._kernels: Memo[Any] = Memo(f"fused {name}", capacity=256)
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        if not any(type(a) is DeviceArray for a in args) or \
                not all(type(a) is DeviceArray or type(a) in (bool, int, float) for a in args):
            return self.func(*args)
        key = tuple(a.dtype if type(a) is DeviceArray else type(a) for a in args)
        found = self._kernels.find(key)
        if found is None:
            found = self._kernels.get(key, lambda: self._compile(args) or False)
        if found is False:   # these types do not fuse: the function as written
            return self.func(*args)
        first = max((a for a in args if type(a) is DeviceArray), key=lambda a: a.size)
        if host_wins(first.device, "fuse", first.dtype, first.size):
            return self.func(*args)   # small work on unified memory: NumPy's loops on the host
        kernel, scalar_dtypes, single = found
        values = [a if type(a) is DeviceArray else scalar_dtypes[k].type(a)
                  for k, a in enumerate(args)]
        out = kernel(*values)
        return out[0] if single else out

    def kernel_for(self, *args: Any) -> ElementwiseKernel | None:
        """The elementwise kernel a call with ``args`` runs (traced now if new), or None where
        such a call runs unfused."""
        if not any(type(a) is DeviceArray for a in args) or \
                not all(type(a) is DeviceArray or type(a) in (bool, int, float) for a in args):
            return None
        key = tuple(a.dtype if type(a) is DeviceArray else type(a) for a in args)
        found = self._kernels.find(key)
        if found is None:
            found = self._kernels.get(key, lambda: self._compile(args) or False)
        return found[0] if found else None

    def _compile(self, args: tuple):
        """(ElementwiseKernel, the scalars' dtypes, one output) for these argument types, or
        None where the function does not fuse."""
        trace = _Trace()
        traced = []
        for k, a in enumerate(args):
            if type(a) is DeviceArray:
                traced.append(_Var(trace, f"in{k}", a.dtype))
            else:
                traced.append(_Var(trace, f"in{k}", None, type(a), scalar=k))
        try:
            result = self.func(*traced)
            results = result if isinstance(result, tuple) else (result,)
            if not results or not all(isinstance(r, _Var) and r.dtype is not None
                                      for r in results):
                return None
            for k, a in enumerate(args):   # a scalar the trace never combined: NumPy's dtype
                if type(a) is not DeviceArray and k not in trace.scalar_dtypes:
                    trace.scalar_dtypes[k] = np.asarray(a).dtype
            dtypes = [a.dtype if type(a) is DeviceArray else trace.scalar_dtypes[k]
                      for k, a in enumerate(args)]
            ins = ", ".join(f"{d.name} in{k}" for k, d in enumerate(dtypes))
            outs = ", ".join(f"{r.dtype.name} out{j}" for j, r in enumerate(results))
            body = " ".join(f"out{j} = {r.expr};" for j, r in enumerate(results))
            for r in results:
                _ctype(r.dtype)
            device = next(a.device for a in args if type(a) is DeviceArray)
            if not device.info.fp64 and ("double" in body or np.float64 in dtypes
                                         or any(r.dtype == np.float64 for r in results)):
                return None   # NumPy's float64 loops, on a device without doubles
        except Exception:  # noqa: BLE001 - _Unfusable, or the function's own error: the
            return None    # unfused call gives NumPy's answer or raises that error itself
        kernel = ElementwiseKernel(ins, outs, body, self.name, return_tuple=True)
        return kernel, trace.scalar_dtypes, not isinstance(result, tuple)


def fuse(func: Callable[..., Any] | None = None, *, kernel_name: str | None = None) -> Any:
    """``cupy.fuse``: decorate a function of ufuncs (``+ - * /``, comparisons, ``np.exp``,
    ``np.tanh``, ``np.maximum``, ``np.where``, ...) so that, called with device arrays and
    Python scalars, it runs as one elementwise kernel per argument types; called otherwise, or
    using anything else, it runs as written.

    Args:
        func: the function; kernel_name: the kernel's name (the function's by default).

    Returns the fused function (a decorator when ``func`` is omitted)."""
    def wrap(f: Callable[..., Any]) -> _Fused:
        name = kernel_name or f.__name__
        return _Fused(f, "fused_" + (name if name.isidentifier() else "function"))
    return wrap(func) if func is not None else wrap
