"""Users' own OpenCL C on device arrays, with CuPy's signatures: :class:`ElementwiseKernel` (a
per-element operation over broadcast, strided operands; its source assembled from
``opencl/user_elementwise.cl``), :class:`ReductionKernel` (map, reduce, post-map over axes;
``opencl/user_reduction.cl``) and :class:`RawKernel` (a whole kernel, launched as written).
Both build once per device and per argument types, in the package's program cache, and raise
:class:`clarray_gemm.KernelBuildError` with the compiler's log when the code does not compile.
"""
from __future__ import annotations

import math
import re
from typing import Any, NamedTuple, Sequence

import numpy as np
import pyopencl as cl
from numpy.lib.array_utils import normalize_axis_index

from ..array import DeviceArray, asarray, empty
from ..array.geometry import c_strides
from ..device import Device, get_device
from ..dtypes import ctype
from ..kernels.constants import constant
from ..kernels.copy import MAX_DIMS, as_long8
from ..kernels.programs import Launcher, build_text, source_text
from ..memo import Memo
from ..memory import Storage

__all__ = ["ElementwiseKernel", "ReductionKernel", "RawKernel"]

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*$")
_LOCAL = 256


class _Param(NamedTuple):
    name: str
    type: str            # a NumPy dtype name or a placeholder (``T``)
    dtype: np.dtype | None  # the fixed dtype, None for a placeholder
    raw: bool


def _parse(params: str, what: str) -> tuple[_Param, ...]:
    """``"T x, raw float32 y"`` as parameters; ValueError naming a malformed one."""
    out = []
    for item in (p.strip() for p in params.split(",")):
        if not item:
            continue
        words = item.split()
        raw = words[0] == "raw"
        if raw:
            words = words[1:]
        if len(words) != 2 or not all(_IDENTIFIER.match(w) for w in words):
            raise ValueError(f"{what}: cannot read parameter {item!r} (expected '[raw] TYPE "
                             f"NAME', TYPE a NumPy dtype name such as float32 or a placeholder "
                             f"such as T)")
        type_, name = words
        try:
            dtype = np.dtype(type_) if not type_[0].isupper() else None
        except TypeError:
            dtype = None
        out.append(_Param(name, type_, dtype, raw))
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: a parameter name appears twice in {params!r}")
    return tuple(out)


def _c_type(dtype: np.dtype) -> str:
    if dtype.kind not in "biuf" or dtype == np.float16:
        raise TypeError(f"user kernels take bool, integer, float32 and float64 data, not {dtype}")
    return ctype(dtype)


def _device_of(args: Sequence[Any], device: Any = None) -> Device:
    if device is not None:
        return get_device(device)
    for a in args:
        if type(a) is DeviceArray:
            return a.device
    return get_device(None)


def _operand(a: Any, p: _Param, device: Device) -> Any:
    """An input as the kernel takes it: a device array (NumPy arrays and sequences uploaded), or
    a scalar passed by value (a number or a 0-d NumPy array, for an element parameter)."""
    if type(a) is DeviceArray:
        return a
    if not p.raw and (isinstance(a, (bool, int, float, np.generic))
                      or (isinstance(a, np.ndarray) and a.ndim == 0)):
        return a
    return asarray(np.asarray(a), device=device)


def _element_strides(x: DeviceArray, shape: tuple) -> list[int]:
    """``x``'s element strides broadcast to ``shape`` (0 along broadcast axes)."""
    item, pad = x.itemsize, len(shape) - x.ndim
    return [0] * pad + [0 if n == 1 and m != 1 else s // item
                        for n, m, s in zip(x.shape, shape[pad:], x.strides)]


def _bind_types(name: str, in_params: tuple, out_params: tuple,
                inputs: list) -> dict[str, np.dtype]:
    """The placeholders' dtypes: from the arrays first, then from the scalars (NumPy's dtype of
    the value); TypeError for a placeholder no input binds or an array of another dtype."""
    types: dict[str, np.dtype] = {}
    for pass_arrays in (True, False):
        for a, p in zip(inputs, in_params):
            if p.dtype is not None or p.type in types:
                continue
            if (type(a) is DeviceArray) == pass_arrays:
                types[p.type] = a.dtype if pass_arrays else np.asarray(a).dtype
    for p in in_params + out_params:
        if p.dtype is None and p.type not in types:
            raise TypeError(f"{name}: the type of {p.name!r} ({p.type}) is not bound by any "
                            f"input")
    for a, p in zip(inputs, in_params):
        want = types[p.type] if p.dtype is None else p.dtype
        if type(a) is DeviceArray and a.dtype != want:
            raise TypeError(f"{name}: argument {p.name!r} is {a.dtype}, the kernel takes {want}")
    return types


def _assembled(template: str, types: dict, extra_typedefs: Sequence[str],
               pieces: dict[str, str]) -> str:
    """``opencl/<template>`` with its markers (``@NAME@``) replaced by ``pieces`` and its
    ``@TYPEDEFS@`` by the placeholders' typedefs and ``extra_typedefs``."""
    typedefs = [f"typedef {_c_type(t)} {name};" for name, t in sorted(types.items())]
    text = source_text(template).replace("@TYPEDEFS@", "\n".join([*typedefs, *extra_typedefs]))
    for marker, piece in pieces.items():
        text = text.replace(f"@{marker}@", piece)
    return text


def _layout(x: DeviceArray, shape: tuple) -> tuple[np.ndarray, bool]:
    """(element strides over ``shape`` as a long8, whether the operand is C-contiguous in it)."""
    strides = _element_strides(x, shape)
    contiguous = tuple(strides) == c_strides(shape) or math.prod(shape) <= 1
    return as_long8(strides, 0), contiguous


class ElementwiseKernel:
    """CuPy's ``ElementwiseKernel``: ``operation`` (OpenCL C) run once per element of the
    broadcast inputs.

    Args:
        in_params: ``"T x, float32 y, raw T table"``: each input's type (a NumPy dtype name or a
            placeholder bound by the arguments' dtypes) and name; ``raw`` ones are whole arrays
            (C-contiguous; ``table[j]`` in the operation), the others one element each.
        out_params: the outputs, likewise (placeholders bound by the inputs).
        operation: the code; ``i`` is the element's index, ``n`` the element count, an input
            names its value, an output its element (assignable; bool outputs start false).
        name: the kernel's name; preamble: code placed before the kernel (helper functions);
        options: build options.

    Call ``kernel(*inputs, *outputs, size=None)``: device arrays, NumPy arrays (uploaded) and
    scalars; outputs not given are allocated with the inputs' broadcast shape (``size``
    where no input is an array). Returns the output, a tuple of them, or None with
    ``no_return``."""

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel",
                 preamble: str = "", options: Sequence[str] = (), no_return: bool = False,
                 return_tuple: bool = False, **unused: Any):
        if not _IDENTIFIER.match(name):
            raise ValueError(f"ElementwiseKernel: {name!r} is not a kernel name")
        self.in_params = _parse(in_params, "in_params")
        self.out_params = _parse(out_params, "out_params")
        if not self.out_params and not no_return:
            no_return = True
        clash = {p.name for p in self.in_params} & {p.name for p in self.out_params}
        if clash or {p.name for p in self.in_params + self.out_params} & {"i", "n", "shape"}:
            raise ValueError(f"ElementwiseKernel: parameter names clash: "
                             f"{sorted(clash) or ['i', 'n', 'shape']}")
        self.operation, self.name, self.preamble = operation, name, preamble
        self.options, self.no_return, self.return_tuple = tuple(options), no_return, return_tuple
        self._launchers: Memo[Launcher] = Memo(f"user kernel {name}", capacity=64)
        self._plans: Memo[_CallPlan] = Memo(f"user kernel {name} calls", capacity=256)

    def __call__(self, *args: Any, size: int | None = None, **unused: Any) -> Any:
        key = _call_key(args, size)
        plan = self._plans.find(key) if key is not None else None
        if plan is not None:   # this call's layouts and scalar types seen before
            return self._result(plan.run(args))
        nin, nout = len(self.in_params), len(self.out_params)
        if len(args) not in (nin, nin + nout):
            raise TypeError(f"{self.name}: takes {nin} inputs (and optionally {nout} outputs), "
                            f"got {len(args)} arguments")
        device = _device_of(args)
        inputs = [_operand(a, p, device) for a, p in zip(args[:nin], self.in_params)]
        for a, p in zip(inputs, self.in_params):
            if type(a) is DeviceArray and a.device is not device:
                raise ValueError(f"{self.name}: argument {p.name!r} is on {a.device}, "
                                 f"the others on {device}")
            if p.raw and type(a) is not DeviceArray:
                raise TypeError(f"{self.name}: raw argument {p.name!r} must be an array")
        types = _bind_types(self.name, self.in_params, self.out_params, inputs)
        arrays = [a for a, p in zip(inputs, self.in_params) if type(a) is DeviceArray and not
                  p.raw]
        outs = list(args[nin:])
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays),
                                        *(o.shape for o in outs if type(o) is DeviceArray))
        except ValueError as exc:
            raise ValueError(f"{self.name}: operands could not be broadcast together: "
                             f"{exc}") from None
        if not arrays and not outs:
            if size is None:
                raise ValueError(f"{self.name}: no array argument: pass size=")
            shape = (int(size),)
        elif size is not None and math.prod(shape) != size:
            raise ValueError(f"{self.name}: size={size} does not match the arguments' "
                             f"{math.prod(shape)} elements")
        if outs:
            for o, p in zip(outs, self.out_params):
                want = types[p.type] if p.dtype is None else p.dtype
                if type(o) is not DeviceArray or o.device is not device:
                    raise TypeError(f"{self.name}: output {p.name!r} must be a device array "
                                    f"on {device}")
                if o.dtype != want or (not p.raw and o.shape != shape):
                    raise ValueError(f"{self.name}: output {p.name!r} is {o.dtype} {o.shape}, "
                                     f"the kernel writes {want} {shape}")
                if p.raw and not o.is_c_contiguous:
                    raise ValueError(f"{self.name}: raw output {p.name!r} must be C-contiguous")
        else:
            outs = [empty(shape, types[p.type] if p.dtype is None else p.dtype, device=device)
                    for p in self.out_params]
        copied = [p.raw and not a.is_c_contiguous for a, p in zip(inputs, self.in_params)]
        inputs = [a.copy() if c else a for a, c in zip(inputs, copied)]
        plan = self._plan(device, shape, types, inputs, outs, fresh=not args[nin:])
        plan.launch(inputs, outs)
        if key is not None and not any(copied):
            self._plans.get(key, lambda: plan)
        return self._result(outs)

    def _result(self, outs: list) -> Any:
        if self.no_return:
            return None
        if len(outs) == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    def _source(self, types: dict, scalars: frozenset, ndim: int, contiguous: tuple) -> str:
        """The kernel's source: the template with this signature's pieces (``scalars``: the
        inputs passed by value)."""
        def c(p: _Param) -> str:
            return _c_type(types[p.type] if p.dtype is None else p.dtype)
        params, loads, stores, undefs = [], [], [], []
        flags = iter(contiguous)
        for p in self.in_params:
            if p.raw:
                params.append(f"RAW_ARG({c(p)}, {p.name})")
                loads.append(f"    __global const {c(p)}* {p.name} = {p.name}__p + {p.name}__o;")
                continue
            if p.name in scalars:
                params.append(f"SCALAR_ARG({c(p)}, {p.name})")
                continue
            params.append(f"IN_ARG({c(p)}, {p.name})")
            at = "AT_C" if next(flags) else "AT_S"
            if at == "AT_S":
                loads.append(f"    STRIDES_OF({p.name})")
            loads.append(f"    const {c(p)} {p.name} = {p.name}__p[{at}({p.name})];")
        for p in self.out_params:
            if p.raw:
                params.append(f"RAW_ARG({c(p)}, {p.name})")
                loads.append(f"    __global {c(p)}* {p.name} = {p.name}__p + {p.name}__o;")
                continue
            params.append(f"OUT_ARG({c(p)}, {p.name})")
            at = "AT_C" if next(flags) else "AT_S"
            if at == "AT_S":
                loads.append(f"    STRIDES_OF({p.name})")
            loads.append(f"    const long {p.name}__at = {at}({p.name});")
            dtype = types[p.type] if p.dtype is None else p.dtype
            if dtype == np.bool_:   # a local: the stored byte is 0 or 1, as NumPy's bools
                loads.append(f"    bool {p.name} = false;")
                stores.append(f"    {p.name}__p[{p.name}__at] = {p.name} ? 1 : 0;")
            else:
                loads.append(f"#define {p.name} ({p.name}__p[{p.name}__at])")
                undefs.append(f"#undef {p.name}")
        text = _assembled("user_elementwise.cl", types, (), {
            "PREAMBLE": self.preamble, "NAME": self.name, "PARAMS": " ".join(params),
            "LOADS": "\n".join(loads), "OPERATION": self.operation,
            "STORES": "\n".join(stores), "UNDEFS": "\n".join(undefs)})
        return f"#define NDIM {ndim}\n" + text

    def _plan(self, device: Device, shape: tuple, types: dict, inputs: list, outs: list,
              fresh: bool) -> "_CallPlan":
        """The launch of this call's layouts and types: the kernel built for them, the fixed
        arguments, and how each call's operands become the rest (``fresh``: the outputs are
        allocated per call)."""
        n = math.prod(shape)
        ndim = max(len(shape), 1)
        if ndim > MAX_DIMS:
            raise ValueError(f"{self.name}: at most {MAX_DIMS} dimensions, not {len(shape)}")
        scalars = frozenset(p.name for a, p in zip(inputs, self.in_params)
                            if type(a) is not DeviceArray)
        slots, contiguous = [], []
        for k, (a, p) in enumerate(zip(inputs, self.in_params)):
            if type(a) is not DeviceArray:
                slots.append((k, (types[p.type] if p.dtype is None else p.dtype).type, None))
                continue
            strides, flat = (None, True) if p.raw else _layout(a, shape or (1,))
            slots.append((k, False, strides))
            if not p.raw:
                contiguous.append(flat)
        for j, (o, p) in enumerate(zip(outs, self.out_params)):
            strides, flat = (None, True) if p.raw else _layout(o, shape or (1,))
            slots.append((len(inputs) + j, True, strides))
            if not p.raw:
                contiguous.append(flat)
        out_specs = tuple((o.nbytes, o.shape, o.dtype, o.strides) for o in outs) if fresh else None
        if n == 0:
            return _CallPlan(device, None, None, None, (), (), out_specs, len(inputs))
        key = (device, tuple(sorted((k, str(v)) for k, v in types.items())), scalars, ndim,
               tuple(contiguous))
        launcher = self._launchers.find(key) or self._launchers.get(
            key, lambda: Launcher(build_text(device, self._source(types, scalars, ndim,
                                                                  tuple(contiguous)),
                                             self.name, self.options), self.name))
        local = min(_LOCAL, device.info.max_work_group_size)
        return _CallPlan(device, launcher, (-(-n // local) * local,), (local,),
                         (np.int64(n), as_long8(shape or (1,), 1)), tuple(slots), out_specs,
                         len(inputs))


_ZERO = np.int64(0)


class _CallPlan:
    """One ElementwiseKernel call form resolved: ``run(args)`` allocates the outputs (unless
    given), passes each array's buffer and offset and each scalar as its dtype, and launches."""

    __slots__ = ("device", "launcher", "gsize", "lsize", "head", "slots", "out_specs", "nin")

    def __init__(self, device, launcher, gsize, lsize, head, slots, out_specs, nin):
        self.device, self.launcher, self.gsize, self.lsize = device, launcher, gsize, lsize
        self.head, self.slots, self.out_specs, self.nin = head, slots, out_specs, nin

    def run(self, args: tuple) -> list:
        if self.out_specs is None:
            outs = list(args[self.nin:])
        else:
            outs = [DeviceArray.from_storage(Storage.for_output(self.device, nbytes), shape, dtype,
                                             strides)
                    for nbytes, shape, dtype, strides in self.out_specs]
        self.launch(args[:self.nin], outs)
        return outs

    def launch(self, inputs: Sequence[Any], outs: list) -> None:
        if self.launcher is None:   # no elements
            return
        operands = (*inputs, *outs)
        argv = list(self.head)
        for k, kind, strides in self.slots:
            x = operands[k]
            if kind is False or kind is True:   # an array (True: written)
                offset = x._offset
                argv += (x._storage.kernel_buffer(kind),
                         _ZERO if offset == 0 else np.int64(offset // x._dtype.itemsize))
                if strides is not None:
                    argv.append(strides)
            else:   # a scalar, as the parameter's dtype
                argv.append(kind(x))
        self.launcher.launch(self.device, self.gsize, self.lsize, *argv)


def _call_key(args: tuple, size: Any) -> tuple | None:
    """The call's layouts and scalar types (values do not matter), or None where an argument
    is neither a device array nor a scalar (host data: the general path uploads it)."""
    key: list = [size]
    for a in args:
        kind = type(a)
        if kind is DeviceArray:
            key += (a.layout_key, a.device)
        elif kind in (bool, int, float) or isinstance(a, np.generic):
            key.append(kind)
        else:
            return None
    return tuple(key)


class ReductionKernel:
    """CuPy's ``ReductionKernel``: ``map_expr`` of each element of the broadcast inputs, combined
    by ``reduce_expr`` (of ``a`` and ``b``) from ``identity`` over ``axis``, then
    ``post_map_expr`` (``a`` the result, the output's name its element, ``n`` the number of
    elements each output reduces).

    Args:
        in_params: the inputs, as :class:`ElementwiseKernel`'s (no ``raw`` ones);
        out_params: one output (``"T y"``); map_expr, reduce_expr, post_map_expr, identity:
            OpenCL C expressions (``post_map_expr`` a statement such as ``y = a``);
        name: the kernel's name; reduce_type: the accumulator's type (a NumPy dtype name;
            default the output's); preamble, options: as :class:`ElementwiseKernel`'s.

    Call ``kernel(*inputs, axis=None, keepdims=False)``: device arrays, NumPy arrays
    (uploaded) and scalars. Returns the reduced device array (0-d for a full reduction)."""

    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                 post_map_expr: str, identity: str, name: str = "reduce_kernel",
                 reduce_type: str | None = None, preamble: str = "",
                 options: Sequence[str] = (), **unused: Any):
        if not _IDENTIFIER.match(name):
            raise ValueError(f"ReductionKernel: {name!r} is not a kernel name")
        self.in_params = _parse(in_params, "in_params")
        self.out_params = _parse(out_params, "out_params")
        if len(self.out_params) != 1 or any(p.raw for p in self.in_params + self.out_params):
            raise ValueError("ReductionKernel: one output, and no raw parameters")
        names = [p.name for p in self.in_params + self.out_params]
        if len(set(names)) != len(names) or set(names) & {"a", "b", "i", "n", "acc"}:
            raise ValueError(f"ReductionKernel: parameter names clash ({names}; a, b, i, n and "
                             f"acc are the kernel's)")
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.preamble = identity, name, preamble
        self.reduce_type = np.dtype(reduce_type) if reduce_type is not None else None
        self.options = tuple(options)
        self._launchers: Memo[Launcher] = Memo(f"user reduction {name}", capacity=64)
        self._plans: Memo[_ReductionPlan] = Memo(f"user reduction {name} calls", capacity=256)

    def __call__(self, *args: Any, axis: Any = None, keepdims: bool = False,
                 **unused: Any) -> DeviceArray:
        key = _call_key(args, (axis, bool(keepdims)))
        plan = self._plans.find(key) if key is not None else None
        if plan is None:
            plan = self._plan(args, axis, keepdims)
            if key is not None:
                self._plans.get(key, lambda: plan)
        return plan.run(args)

    def _plan(self, args: tuple, axis: Any, keepdims: bool) -> "_ReductionPlan":
        """The reduction of these arguments' layouts and types over ``axis``, resolved."""
        nin = len(self.in_params)
        if len(args) != nin:
            raise TypeError(f"{self.name}: takes {nin} inputs, got {len(args)} arguments")
        device = _device_of(args)
        inputs = [_operand(a, p, device) for a, p in zip(args, self.in_params)]
        for a, p in zip(inputs, self.in_params):
            if type(a) is DeviceArray and a.device is not device:
                raise ValueError(f"{self.name}: argument {p.name!r} is on {a.device}, "
                                 f"the others on {device}")
        types = _bind_types(self.name, self.in_params, self.out_params, inputs)
        arrays = [a for a in inputs if type(a) is DeviceArray]
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError as exc:
            raise ValueError(f"{self.name}: operands could not be broadcast together: "
                             f"{exc}") from None
        ndim = len(shape)
        axes = tuple(range(ndim)) if axis is None else tuple(
            normalize_axis_index(ax, ndim) for ax in (axis if isinstance(axis, tuple)
                                                      else (axis,)))
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        kept = [d for d in range(ndim) if d not in axes]
        order = kept + sorted(axes)
        permuted = tuple(shape[d] for d in order) or (1,)
        rows = math.prod(shape[d] for d in kept)
        cols = math.prod(shape[d] for d in axes)
        out_p = self.out_params[0]
        out_dtype = types[out_p.type] if out_p.dtype is None else out_p.dtype
        out_shape = tuple(1 if d in axes else shape[d] for d in range(ndim)) if keepdims else \
            tuple(shape[d] for d in kept)
        if len(permuted) > MAX_DIMS:
            raise ValueError(f"{self.name}: at most {MAX_DIMS} dimensions, not {ndim}")
        scalars = frozenset(p.name for a, p in zip(inputs, self.in_params)
                            if type(a) is not DeviceArray)
        slots, contiguous = [], []
        for k, (a, p) in enumerate(zip(inputs, self.in_params)):
            dtype = types[p.type] if p.dtype is None else p.dtype
            if type(a) is not DeviceArray:
                slots.append((k, dtype.type, None))
                continue
            strides = [_element_strides(a, shape)[d] for d in order] or [0]
            contiguous.append(tuple(strides) == c_strides(permuted) or cols * rows <= 1)
            slots.append((k, False, as_long8(strides, 0)))
        wg = 1 << (min(256, device.info.max_work_group_size).bit_length() - 1)
        # enough work-groups to fill the device: a row split into chunks when there are few
        # rows (a second launch combines the chunks), but on GPUs only rows longer than one
        # group walks in the time of a second launch (``reduce.per_lane_gpu`` elements a lane)
        groups = 1
        per_lane = 8 if device.info.is_cpu else constant("reduce.per_lane_gpu")
        if rows and cols > per_lane * wg:
            groups = max(1, min(-(-cols // (8 * wg)), -(-4 * device.info.compute_units // rows)))
        chunk = -(-cols // groups) if cols else 0
        build = (device, tuple(sorted((k, str(v)) for k, v in types.items())), scalars,
                 len(permuted), wg, tuple(contiguous), groups > 1)

        def program():
            return build_text(device, self._source(types, scalars, len(permuted), wg,
                                                   out_dtype, tuple(contiguous), groups > 1),
                              self.name, self.options)
        main = self._launchers.find(build) or self._launchers.get(
            build, lambda: Launcher(program(), self.name))
        finish = None
        if groups > 1:
            fkey = build + ("finish",)
            finish = self._launchers.find(fkey) or self._launchers.get(
                fkey, lambda: Launcher(program(), self.name + "_finish"))
        reduce_dtype = self.reduce_type if self.reduce_type is not None else out_dtype
        return _ReductionPlan(device, main, finish, wg, rows, groups, reduce_dtype,
                              (np.int64(rows), np.int64(cols), np.int64(chunk),
                               as_long8(permuted, 1)), tuple(slots), out_shape, out_dtype)

    def _source(self, types: dict, scalars: frozenset, ndim: int, wg: int,
                out_dtype: np.dtype, contiguous: tuple, split: bool) -> str:
        reduce_dtype = self.reduce_type if self.reduce_type is not None else out_dtype
        params, loads, strides = [], [], []
        flags = iter(contiguous)
        for p in self.in_params:
            c = _c_type(types[p.type] if p.dtype is None else p.dtype)
            if p.name in scalars:
                params.append(f"SCALAR_ARG({c}, {p.name})")
                continue
            params.append(f"IN_ARG({c}, {p.name})")
            at = "AT_C" if next(flags) else "AT_S"
            if at == "AT_S":
                strides.append(f"    STRIDES_OF({p.name})")
            loads.append(f"        const {c} {p.name} = {p.name}__p[{at}({p.name})];")
        text = _assembled("user_reduction.cl", types,
                          (f"typedef {_c_type(reduce_dtype)} _type_reduce;",), {
            "PREAMBLE": self.preamble, "NAME": self.name, "PARAMS": " ".join(params),
            "STRIDES": "\n".join(strides), "LOADS": "\n".join(loads), "MAP": self.map_expr,
            "REDUCE": self.reduce_expr, "IDENTITY": self.identity, "POST": self.post_map_expr,
            "OUT_TYPE": _c_type(out_dtype), "OUT": self.out_params[0].name})
        return f"#define NDIM {ndim}\n#define WG {wg}\n#define SPLIT {int(split)}\n" + text


class _ReductionPlan:
    """One ReductionKernel call form resolved: ``run(args)`` allocates the output (and the
    partial results of a split row), passes the operands, and launches once or twice."""

    __slots__ = ("device", "main", "finish", "wg", "rows", "groups", "reduce_dtype", "head",
                 "slots", "out_shape", "out_dtype")

    def __init__(self, device, main, finish, wg, rows, groups, reduce_dtype, head, slots,
                 out_shape, out_dtype):
        self.device, self.main, self.finish, self.wg = device, main, finish, wg
        self.rows, self.groups, self.reduce_dtype = rows, groups, reduce_dtype
        self.head, self.slots = head, slots
        self.out_shape, self.out_dtype = out_shape, out_dtype

    def run(self, args: tuple) -> DeviceArray:
        device = self.device
        out = empty(self.out_shape, self.out_dtype, device=device)
        if self.rows == 0:
            return out
        argv = list(self.head)
        for k, kind, strides in self.slots:
            x = args[k]
            if kind is False:
                if type(x) is not DeviceArray:   # host data: uploaded
                    x = asarray(np.asarray(x), device=device)
                argv += (x._storage.kernel_buffer(False),
                         np.int64(x._offset // x._dtype.itemsize), strides)
            else:
                argv.append(kind(x))
        out_buffer = out._storage.kernel_buffer(True)
        partial = (empty((self.rows * self.groups,), self.reduce_dtype, device=device)
                   if self.groups > 1 else out)
        argv += (out_buffer, _ZERO, partial._storage.kernel_buffer(True))
        wg = self.wg
        self.main.launch(device, (self.groups * wg, self.rows), (wg, 1), *argv)
        if self.finish is not None:
            self.finish.launch(device, (self.rows * wg,), (wg,), np.int64(self.groups),
                               partial._storage.kernel_buffer(False), out_buffer, _ZERO,
                               self.head[1])
        return out


class RawKernel:
    """CuPy's ``RawKernel`` for OpenCL C: ``code`` holding ``__kernel void name(...)``.

    Args:
        code: the OpenCL C source; name: the kernel to run; options: build options.

    Call ``kernel(global_size, local_size, args)`` (sizes as ints or tuples; ``local_size``
    None lets the driver choose): each argument a device array (its buffer; it must start at
    its buffer: pass the offset yourself for views, see ``DeviceArray.offset``), a NumPy array
    (uploaded to a device array the kernel may read), a NumPy scalar (its type), or a Python
    number (int as a 32-bit ``int``, float as ``float``). The launch does not wait."""

    def __init__(self, code: str, name: str, options: Sequence[str] = ()):
        if not _IDENTIFIER.match(name):
            raise ValueError(f"RawKernel: {name!r} is not a kernel name")
        self.code, self.name, self.options = code, name, tuple(options)
        self._launchers: Memo[Launcher] = Memo(f"raw kernel {name}", capacity=16)

    def kernel_for(self, device: Any = None) -> Launcher:
        """The built kernel for ``device`` (the default device by default)."""
        device = get_device(device) if type(device) is not Device else device
        return self._launchers.find(device) or self._launchers.get(
            device, lambda: Launcher(build_text(device, self.code, self.name, self.options),
                                     self.name))

    def __call__(self, global_size: Any, local_size: Any, args: Sequence[Any], *,
                 device: Any = None) -> None:
        if device is None:   # the first device array's device (the per-call path: no search)
            device = next((a.device for a in args if type(a) is DeviceArray), None)
        device = get_device(device) if type(device) is not Device else device
        values = []
        for k, a in enumerate(args):
            kind = type(a)
            if kind is DeviceArray:
                if a._offset:
                    raise ValueError(f"{self.name}: argument {k} starts {a._offset} bytes into "
                                     f"its buffer; pass a.copy(), or its base array and the "
                                     f"offset as an argument")
                if a.device is not device:
                    raise ValueError(f"{self.name}: argument {k} is on {a.device}, the kernel "
                                     f"runs on {device}")
                values.append(a._storage.kernel_buffer(True))
            elif kind in _SCALARS or isinstance(a, np.generic):
                values.append(_SCALARS.get(kind, _same)(a))
            elif isinstance(a, np.ndarray):
                values.append(asarray(a, device=device)._storage.kernel_buffer(True))
            else:
                raise TypeError(f"{self.name}: argument {k} ({kind.__name__}) is not a "
                                f"device array, NumPy array or scalar")
        gsize = tuple(global_size) if isinstance(global_size, (tuple, list)) else (global_size,)
        lsize = (None if local_size is None else tuple(local_size)
                 if isinstance(local_size, (tuple, list)) else (local_size,))
        try:
            self.kernel_for(device).launch(device, gsize, lsize, *values)
        except cl.LogicError as exc:
            raise TypeError(f"{self.name}: the driver refused the arguments or sizes ({exc}); "
                            f"check each argument's type against the kernel's parameters") \
                from None


# Python numbers as RawKernel arguments: int and bool as a 32-bit int, float as a float
_SCALARS = {bool: np.int32, int: np.int32, float: np.float32}


def _same(value: Any) -> Any:
    return value
