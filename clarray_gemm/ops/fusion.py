"""``clarray_gemm.fuse``: a Python function of ufuncs over device arrays traced once per argument
types into one :class:`~clarray_gemm.ElementwiseKernel` (as ``cupy.fuse``): one pass over
memory, no temporaries (below the ``fuse`` host-path crossover of unified-memory devices, the
function runs as written: NumPy's loops on the mapping). A function with reductions
(``sum``, ``mean``, ``max``, ``min``, ``prod`` over one set of axes, as softmax's) is traced
again per argument shapes into one kernel with a work-group per reduced row
(:mod:`.fused_rows`). The trace follows NumPy's own loop resolution (``ufunc.resolve_dtypes``,
NEP 50's weak Python scalars), so the fused kernel computes in the dtypes NumPy would; a
function using anything the trace does not cover (indexing, methods, other ufuncs, float16,
integer division, reductions over two different sets of axes) runs unfused, as written.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..array import DeviceArray
from ..dtypes import ctype
from ..kernels.crossover import host_wins
from ..memo import Memo
from .fused_rows import UNSIGNED, Reduction, RowPlan, extremum
from .user_kernels import ElementwiseKernel

__all__ = ["fuse"]


class _Unfusable(Exception):
    """The traced function leaves what one fused kernel can compute."""


class _NeedsShapes(Exception):
    """A reduction met by a trace without shapes: the function is traced again per shapes."""


_FLOAT_FUNCS = {np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh", np.sin: "sin",
                np.cos: "cos", np.tan: "tan", np.exp2: "exp2", np.log2: "log2",
                np.log10: "log10", np.expm1: "expm1", np.log1p: "log1p", np.arctan: "atan",
                np.sinh: "sinh", np.cosh: "cosh"}
_ARITHMETIC = {np.add: "+", np.subtract: "-", np.multiply: "*"}
_COMPARE = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
            np.equal: "==", np.not_equal: "!="}
# NumPy's reducing functions and the ufuncs whose ``reduce`` they are
_REDUCING_FUNCS = {np.sum: "sum", np.prod: "prod", np.max: "max", np.amax: "max",
                   np.min: "min", np.amin: "min", np.mean: "mean"}
_REDUCING_UFUNCS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}


def _ctype(dtype: np.dtype) -> str:
    if dtype.kind not in "biuf" or dtype == np.float16:
        raise _Unfusable(dtype)
    return "bool" if dtype == np.bool_ else ctype(dtype)


def _reduction_arguments(args: tuple, kwargs: dict, default_axis: Any = None) -> tuple:
    """(array, axis, keepdims) of ``np.sum(a, axis=None, dtype=None, out=None,
    keepdims=False)``-style arguments; anything else (dtype=, out=, initial=, where=) does not
    fuse."""
    names = ("a", "axis", "dtype", "out", "keepdims")
    bound = dict(zip(names, args))
    if len(args) > len(names) or set(bound) & set(kwargs):
        raise _Unfusable("reduction arguments")
    bound.update(kwargs)
    if set(bound) - set(names) or bound.get("dtype") is not None \
            or bound.get("out") is not None:
        raise _Unfusable("reduction arguments")
    return bound["a"], bound.get("axis", default_axis), bool(bound.get("keepdims", False))


class _Var:
    """A traced value: an OpenCL C expression and its NumPy dtype (``weak``: a Python scalar's
    type, not yet bound to a dtype). A trace with shapes also gives its shape, whether it reads
    array elements (``elem``) or reduced values (``row``), and whether a per-row value lines up
    with the reduced shape's rows when broadcast (``aligned``)."""

    __slots__ = ("trace", "expr", "dtype", "weak", "scalar", "dims", "elem", "row", "aligned")
    __array_priority__ = 1000

    def __init__(self, trace: "_Trace", expr: str, dtype: np.dtype | None,
                 weak: type | None = None, scalar: int | None = None, shape: tuple = (),
                 elem: bool = False, row: bool = False, aligned: bool = True):
        self.trace, self.expr, self.dtype, self.weak, self.scalar = trace, expr, dtype, weak, scalar
        self.dims, self.elem, self.row, self.aligned = shape, elem, row, aligned
        trace.made.append(self)

    @property
    def shape(self) -> tuple:
        """The value's shape (NumPy's), known to a trace per argument shapes only."""
        if not self.trace.shapes:
            raise _NeedsShapes("shape")
        return self.dims

    @property
    def ndim(self) -> int:
        return len(self.shape)

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
        if method == "reduce" and ufunc in _REDUCING_UFUNCS:
            a, axis, keepdims = _reduction_arguments(inputs, kwargs, default_axis=0)
            return self.trace.reduce(_REDUCING_UFUNCS[ufunc], a, axis, keepdims)
        if method != "__call__" or kwargs:
            raise _Unfusable(ufunc)
        return self.trace.ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and not kwargs and len(args) == 3:
            return self.trace.where(*args)
        if func in _REDUCING_FUNCS:
            a, axis, keepdims = _reduction_arguments(args, kwargs)
            return self.trace.reduce(_REDUCING_FUNCS[func], a, axis, keepdims)
        raise _Unfusable(func)

    def _method(op):
        def reduce(self, *args, **kwargs):
            _, axis, keepdims = _reduction_arguments((self, *args), kwargs)
            return self.trace.reduce(op, self, axis, keepdims)
        reduce.__name__ = op
        return reduce

    sum, prod, max, min, mean = (_method("sum"), _method("prod"), _method("max"),
                                 _method("min"), _method("mean"))

    def __bool__(self):
        raise _Unfusable("a traced value's truth")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getattr__(self, name: str):   # other methods and attributes (x.T, x.var()): not fused
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
    """The expressions of one traced call, and its scalars' dtypes. With ``shapes`` (a trace
    per argument shapes) it also follows NumPy's broadcasting and records the reductions: all
    over ``axes`` of operands of the one shape ``full``."""

    def __init__(self, shapes: bool = False):
        self.scalar_dtypes: dict[int, np.dtype] = {}
        self.shapes = shapes
        self.made: list[_Var] = []
        self.reductions: list[Reduction] = []
        self.full: tuple | None = None
        self.axes: tuple | None = None

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

    def _var(self, expr: str, dtype: np.dtype, ops: list) -> _Var:
        """The result of an operation on ``ops``: its shape by NumPy's broadcasting. A per-row
        value that does not line up with the rows (a reduction without keepdims over trailing
        axes) meets only scalars and per-row values of its own shape."""
        if not self.shapes:
            return _Var(self, expr, dtype)
        try:
            shape = np.broadcast_shapes(*(o.dims for o in ops))
        except ValueError:
            raise _Unfusable("shapes that do not broadcast") from None
        elem, row = any(o.elem for o in ops), any(o.row for o in ops)
        unaligned = [o for o in ops if o.row and not o.elem and not o.aligned]
        if unaligned and (elem or any(o.dims != unaligned[0].dims for o in ops if o.row)):
            raise _Unfusable("a reduced value that does not broadcast along its rows")
        return _Var(self, expr, dtype, shape=shape, elem=elem, row=row, aligned=not unaligned)

    def ufunc(self, ufunc: np.ufunc, inputs: tuple) -> _Var:
        ops = [self.const(x) for x in inputs]
        try:
            loop = ufunc.resolve_dtypes(tuple(o._key() for o in ops) + (None,) * ufunc.nout)
        except (TypeError, np.exceptions.DTypePromotionError):
            raise _Unfusable(ufunc) from None
        ins, out = loop[:ufunc.nin], loop[ufunc.nin]
        args = [o.cast_to(d) for o, d in zip(ops, ins)]
        return self._var(self._expression(ufunc, ins[0].kind, _ctype(out), args), out, ops)

    @staticmethod
    def _expression(ufunc: np.ufunc, kind: str, c: str, args: list) -> str:
        """``ufunc``'s loop of ``kind`` (its first input's) on the C expressions ``args``, its
        result of C type ``c``."""
        if ufunc in _ARITHMETIC and kind in "iuf":
            if kind == "i":   # wrap as NumPy does: the unsigned operation, cast back
                u = UNSIGNED[c]
                return f"(({c})(({u}){args[0]} {_ARITHMETIC[ufunc]} ({u}){args[1]}))"
            if kind == "u":   # C promotes narrow operands to int: back to the loop's type
                return f"(({c})({args[0]} {_ARITHMETIC[ufunc]} {args[1]}))"
            return f"({args[0]} {_ARITHMETIC[ufunc]} {args[1]})"
        if ufunc is np.true_divide and kind == "f":
            return f"({args[0]} / {args[1]})"
        if ufunc in _COMPARE and kind in "biuf":
            return f"({args[0]} {_COMPARE[ufunc]} {args[1]})"
        if ufunc in _FLOAT_FUNCS and kind == "f":
            return f"{_FLOAT_FUNCS[ufunc]}({args[0]})"
        if ufunc is np.power and kind == "f":
            return f"pow({args[0]}, {args[1]})"
        if ufunc is np.negative and kind in "f":
            return f"(-{args[0]})"
        if ufunc is np.negative and kind == "i":
            return f"(({c})(-({UNSIGNED[c]}){args[0]}))"
        if ufunc is np.absolute and kind == "f":
            return f"fabs({args[0]})"
        if ufunc is np.absolute and kind == "i":
            return (f"(({c})({args[0]} < 0 ? -({UNSIGNED[c]}){args[0]} : "
                    f"({UNSIGNED[c]}){args[0]}))")
        if ufunc is np.square and kind == "f":
            return f"({args[0]} * {args[0]})"
        if ufunc is np.square and kind in "iu":
            u = UNSIGNED.get(c, c)
            return f"(({c})(({u}){args[0]} * ({u}){args[0]}))"
        if ufunc is np.negative and kind == "u":
            return f"(({c})(-{args[0]}))"
        if ufunc is np.absolute and kind == "u":
            return args[0]
        if ufunc in (np.maximum, np.minimum) and kind in "iuf":
            return extremum(">" if ufunc is np.maximum else "<", kind, *args)
        raise _Unfusable(ufunc)

    def where(self, cond: Any, x: Any, y: Any) -> _Var:
        c, a, b = self.const(cond), self.const(x), self.const(y)
        if c.dtype != np.bool_:
            raise _Unfusable("np.where on a non-bool condition")
        keys = [v._key() for v in (a, b)]
        examples = [k if isinstance(k, np.dtype) else k(0) for k in keys]
        out = np.result_type(*examples)
        return self._var(f"({c.expr} ? {a.cast_to(out)} : {b.cast_to(out)})", out, [c, a, b])

    def reduce(self, op: str, value: Any, axis: Any, keepdims: bool) -> _Var:
        """NumPy's ``op`` (sum, prod, max, min, mean) of a traced array value over ``axis``:
        a stage of the fused row kernel, in NumPy's result dtype."""
        if not self.shapes:
            raise _NeedsShapes(op)
        v = self.const(value)
        if not v.elem or not v.dims:
            raise _Unfusable("a reduction of a scalar or of reduced values")
        ndim = len(v.dims)
        try:
            axes = tuple(range(ndim)) if axis is None else tuple(sorted(
                normalize_axis_index(operator.index(a), ndim)
                for a in (axis if isinstance(axis, tuple) else (axis,))))
        except (TypeError, ValueError, np.exceptions.AxisError):
            raise _Unfusable("a reduction axis") from None   # NumPy's error, unfused
        if len(set(axes)) != len(axes):
            raise _Unfusable("a repeated axis")
        if self.full is None:
            self.full, self.axes = v.dims, axes
        elif (v.dims, axes) != (self.full, self.axes):
            raise _Unfusable("reductions of two shapes or over two sets of axes")
        if v.dtype is None or v.dtype.kind not in "biuf" or v.dtype == np.float16 \
                or (op in ("max", "min") and v.dtype.kind == "b"):
            raise _Unfusable(f"{op} of {v.dtype}")
        probe = np.zeros(1, v.dtype)
        result = {"sum": np.sum, "prod": np.prod, "mean": np.mean}.get(op, np.max)(probe).dtype
        acc = result
        index = len(self.reductions)
        self.reductions.append(Reduction.of(op, acc, v.cast_to(acc)))
        expr = f"red{index}" if op != "mean" else f"(red{index} / ({_ctype(acc)})cols)"
        shape = (tuple(1 if d in axes else n for d, n in enumerate(v.dims)) if keepdims
                 else tuple(n for d, n in enumerate(v.dims) if d not in axes))
        aligned = keepdims or axes == tuple(range(len(axes)))
        return _Var(self, expr, result, shape=shape, row=True, aligned=aligned)


_ROWS = "rows"   # a memo entry: these types' trace met a reduction (plans per layouts)


def _fusable(args: tuple) -> bool:
    """Device arrays (at least one) and Python scalars: the calls a fused kernel takes."""
    return any(type(a) is DeviceArray for a in args) and \
        all(type(a) is DeviceArray or type(a) in (bool, int, float) for a in args)


class _Fused:
    """A fused function: its traces by argument types, each an ElementwiseKernel, None (the
    function runs unfused for those types) or, for a function with reductions, row plans by
    argument layouts (:class:`~.fused_rows.RowPlan`)."""

    def __init__(self, func: Callable[..., Any], name: str):
        self.func, self.name = func, name
        self._kernels: Memo[Any] = Memo(f"fused {name}", capacity=256)
        self._row_plans: Memo[Any] = Memo(f"fused {name} rows", capacity=256)
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        if not _fusable(args):
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
        if found is _ROWS:
            plan = self._row_plan(args)
            if plan is False:
                return self.func(*args)
            row_plan, single = plan
            out = row_plan.run(args)
            return out[0] if single else out
        kernel, scalar_dtypes, single = found
        values = [a if type(a) is DeviceArray else scalar_dtypes[k].type(a)
                  for k, a in enumerate(args)]
        out = kernel(*values)
        return out[0] if single else out

    def kernel_for(self, *args: Any) -> Any:
        """What a call with ``args`` runs (traced now if new): an :class:`ElementwiseKernel`,
        a :class:`~.fused_rows.RowPlan` (a function with reductions), or None where such a
        call runs unfused."""
        if not _fusable(args):
            return None
        key = tuple(a.dtype if type(a) is DeviceArray else type(a) for a in args)
        found = self._kernels.find(key)
        if found is None:
            found = self._kernels.get(key, lambda: self._compile(args) or False)
        if found is _ROWS:
            plan = self._row_plan(args)
            return plan[0] if plan else None
        return found[0] if found else None

    def _row_plan(self, args: tuple) -> Any:
        """(RowPlan, one output) for these arguments' layouts, or False (they run unfused)."""
        key = tuple((a.layout_key, a.device) if type(a) is DeviceArray else type(a)
                    for a in args)
        found = self._row_plans.find(key)
        if found is None:
            found = self._row_plans.get(key, lambda: self._compile_rows(args) or False)
        return found

    def _traced(self, trace: _Trace, args: tuple) -> tuple:
        """The function called on tracing values for ``args``: (its results, one output)."""
        traced = []
        for k, a in enumerate(args):
            if type(a) is DeviceArray:
                traced.append(_Var(trace, f"in{k}", a.dtype, shape=a.shape, elem=True))
            else:
                traced.append(_Var(trace, f"in{k}", None, type(a), scalar=k))
        result = self.func(*traced)
        results = result if isinstance(result, tuple) else (result,)
        if not results or not all(isinstance(r, _Var) and r.dtype is not None
                                  for r in results):
            raise _Unfusable("a result that is not a traced array")
        for r in results:
            _ctype(r.dtype)
        for k, a in enumerate(args):   # a scalar the trace never combined: NumPy's dtype
            if type(a) is not DeviceArray and k not in trace.scalar_dtypes:
                trace.scalar_dtypes[k] = np.asarray(a).dtype
        return results, not isinstance(result, tuple)

    @staticmethod
    def _doubles_missing(args: tuple, dtypes: list, text: str, results: tuple) -> bool:
        """True for NumPy's float64 loops on a device without doubles."""
        device = next(a.device for a in args if type(a) is DeviceArray)
        return not device.info.fp64 and ("double" in text or np.float64 in dtypes
                                          or any(r.dtype == np.float64 for r in results))

    def _compile(self, args: tuple):
        """(ElementwiseKernel, the scalars' dtypes, one output) for these argument types,
        ``_ROWS`` for a function with reductions, or None where the function does not fuse."""
        trace = _Trace()
        try:
            results, single = self._traced(trace, args)
            dtypes = [a.dtype if type(a) is DeviceArray else trace.scalar_dtypes[k]
                      for k, a in enumerate(args)]
            ins = ", ".join(f"{d.name} in{k}" for k, d in enumerate(dtypes))
            outs = ", ".join(f"{r.dtype.name} out{j}" for j, r in enumerate(results))
            body = " ".join(f"out{j} = {r.expr};" for j, r in enumerate(results))
            if self._doubles_missing(args, dtypes, body, results):
                return None
        except _NeedsShapes:
            return _ROWS
        except Exception:  # noqa: BLE001 - _Unfusable, or the function's own error: the
            return None    # unfused call gives NumPy's answer or raises that error itself
        kernel = ElementwiseKernel(ins, outs, body, self.name, return_tuple=True)
        return kernel, trace.scalar_dtypes, single

    def _compile_rows(self, args: tuple):
        """(RowPlan, one output) for these argument layouts, or None where the function does
        not fuse at these shapes: its reductions over one set of axes of one shape, its outputs
        of that shape or of the reduced shape."""
        trace = _Trace(shapes=True)
        try:
            results, single = self._traced(trace, args)
            full, axes = trace.full, trace.axes
            if full is None:
                return None
            for v in trace.made:   # every value read at the full shape's positions
                if (v.elem or v.aligned) and np.broadcast_shapes(v.dims, full) != full:
                    return None
            reduced = {tuple(1 if d in axes else n for d, n in enumerate(full)),
                       tuple(n for d, n in enumerate(full) if d not in axes)}
            outputs = []
            for r in results:
                if r.elem and r.dims == full:
                    outputs.append((r.expr, r.dtype, None))
                elif not r.elem and r.row and r.dims in reduced:
                    outputs.append((r.expr, r.dtype, r.dims))
                else:
                    return None
            dtypes = [a.dtype if type(a) is DeviceArray else trace.scalar_dtypes[k]
                      for k, a in enumerate(args)]
            # (a float64 accumulator casts its operand: "double" is in the map expression)
            text = " ".join([r.expr for r in results] + [s.map for s in trace.reductions])
            if self._doubles_missing(args, dtypes, text, results):
                return None
            devices = {a.device for a in args if type(a) is DeviceArray}
        except Exception:  # noqa: BLE001 - as in _compile: the unfused call answers
            return None
        if len(devices) != 1:
            return None
        plan = RowPlan.build(devices.pop(), self.name, args, dtypes, full, axes,
                             trace.reductions, outputs)
        return None if plan is None else (plan, single)


def fuse(func: Callable[..., Any] | None = None, *, kernel_name: str | None = None) -> Any:
    """``cupy.fuse``: decorate a function of ufuncs (``+ - * /``, comparisons, ``np.exp``,
    ``np.tanh``, ``np.maximum``, ``np.where``, ...) and reductions (``sum``, ``mean``,
    ``max``, ``min``, ``prod`` with ``axis`` and ``keepdims``, over one set of axes) so that,
    called with device arrays and Python scalars, it runs as one kernel; called otherwise, or
    using anything else, it runs as written.

    Args:
        func: the function; kernel_name: the kernel's name (the function's by default).

    Returns the fused function (a decorator when ``func`` is omitted)."""
    def wrap(f: Callable[..., Any]) -> _Fused:
        name = kernel_name or f.__name__
        return _Fused(f, "fused_" + (name if name.isidentifier() else "function"))
    return wrap(func) if func is not None else wrap
