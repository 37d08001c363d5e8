"""Elementwise plans: one NumPy ufunc loop (or ``np.where`` / ``np.clip``) over device arrays.

NumPy's ufunc machinery decides the loop dtypes (``ufunc.resolve_dtypes``, NEP 50 scalar rules,
``dtype=`` and ``casting=`` included). A call's key (operation, device, operand kinds, dtypes,
shapes, strides, ``out=``, ``where=``) maps to a cached :class:`ElementwisePlan`: either the host
path (NumPy's own ufunc on the buffers' mapping, on devices whose memory is the host's, below the
measured crossover), or one kernel of ``opencl/elementwise.cl`` built for (operation, dtypes,
layout class) with its merged dimensions and stride vectors fixed. float16 operands are stored
as they are and computed in float, each result rounded once, as NumPy's float16 loops do. Loops
a kernel cannot run exactly (complex, object, mixed-type loops, float16 ``nextafter``) leave
``supported`` False: the caller then returns ``NotImplemented`` so the host fallback gives
NumPy's exact answer or error.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._dispatch import register_elementwise_plans
from ..array import DeviceArray, asarray, result_adopter, result_maker
from ..array.geometry import c_strides
from ..device import Device
from ..memo import Memo
from ..dtypes import PYTHON_SCALARS, storage_ctype
from ..kernels.copy import MAX_DIMS, as_long8, merge_dims, row_layout, tile_layout
from ..kernels.crossover import prefer_host
from ..kernels.constants import constant
from ..kernels.plans import PlanCache
from ..kernels.programs import ctype, get_kernel
from ..memory import Storage

__all__ = ["OpSpec", "ElementwisePlan", "plan_for", "binary_plan", "scalar_plan", "keyed_plan",
           "run_op", "run_plan", "kernel_dtype", "held_dtype"]

# Elements per work-item on GPUs (opencl/elementwise.cl, PER_ITEM): one 4-byte load a work-item
# leaves too few bytes in flight to fill the memory. CPU drivers keep one.
_PER_ITEM_GPU = constant("elementwise.per_item_gpu")


@dataclass(frozen=True, eq=False)  # one object per operation (ufuncs.SPECS): identity keys plans
class OpSpec:
    """One elementwise operation: its ``OP_<name>`` in ``opencl/ufunc_ops.h``, operand counts,
    and the NumPy ufunc whose dtype resolution and host loop it shares."""

    name: str
    ufunc: np.ufunc
    nin: int
    nout: int = 1
    cond_first: bool = False  # np.where: operand 0 is a bool condition

    def resolve(self, described: tuple, out_dtypes: tuple, dtype: Any, casting: str) -> tuple:
        """The loop dtypes (inputs then outputs), NumPy's ``resolve_dtypes``."""
        if self.cond_first:
            weak = {bool: False, int: 0, float: 0.0}  # NEP 50: Python scalars by value
            result = (np.result_type(*(weak.get(d, d) for d in described[1:])) if dtype is None
                      else np.dtype(dtype))
            return (np.dtype(np.bool_), result, result, result)
        dtypes = tuple(described) + out_dtypes
        if dtype is None:
            return self.ufunc.resolve_dtypes(dtypes, casting=casting)
        signature = (None,) * self.nin + (np.dtype(dtype),) * self.nout
        return self.ufunc.resolve_dtypes(dtypes, signature=signature, casting=casting)

    def host(self, inputs: list, outs: tuple, mask: Any, casting: str) -> None:
        """NumPy's loop on host views, written into ``outs`` (host views)."""
        if self.cond_first:
            np.copyto(outs[0], np.where(*inputs), where=True if mask is None else mask)
            return
        kwargs = {} if mask is None else {"where": mask}
        self.ufunc(*inputs, out=outs, casting=casting, **kwargs)


def kernel_dtype(dt: np.dtype, device: Device) -> bool:
    """Whether kernels load, store and compute ``dt`` exactly on ``device``."""
    if not dt.isnative or dt.kind not in "biuf" or dt == np.float16:
        return False
    return dt != np.float64 or device.info.fp64


_HALF = np.dtype(np.float16)
_NO_HALF_LOOP = frozenset({"NEXTAFTER"})
"""Operations whose float16 loop is not the float loop rounded once (NumPy steps one float16)."""


def held_dtype(dt: np.dtype, device: Device) -> bool:
    """Whether the elementwise, copy, gather and compaction kernels hold ``dt``:
    :func:`kernel_dtype`'s, and float16 (as its bits; computed in float)."""
    return kernel_dtype(dt, device) or dt == _HALF


def _describe(x: Any) -> tuple | None:
    """The key part of one operand; None for operands the device path does not take."""
    t = type(x)
    if t is DeviceArray:
        return x.layout_key  # (dtype, shape, strides)
    if t in PYTHON_SCALARS:
        return (1, t)  # a "weak" Python scalar (NEP 50): its value is an argument, not a key
    if isinstance(x, (np.ndarray, np.generic)):
        return (2, x.dtype, x.shape)
    return None


def _unsigned(c: str) -> str:
    return c if c.startswith("u") else "u" + c


class ElementwisePlan:
    """Everything about one elementwise call that its key decides."""

    def __init__(self, spec: OpSpec, inputs: tuple, outs: tuple | None, mask: Any, casting: str,
                 dtype: Any, device: Device):
        self.spec, self.device, self.casting = spec, device, casting
        self.supported = False
        self.fresh_kernel = False  # run_fresh() may run it
        self.fresh_host = False  # host_run() may run it
        self.short = None  # see _short_call
        described = tuple(np.dtype(np.bool_) if type(x) is bool else type(x)
                          if type(x) in PYTHON_SCALARS else x.dtype for x in inputs)
        out_dtypes = (None,) * spec.nout if outs is None else tuple(o.dtype for o in outs)
        try:
            loop = tuple(np.dtype(d) for d in spec.resolve(described, out_dtypes, dtype, casting))
            shapes = [np.shape(x) for x in inputs] + ([] if mask is None else [np.shape(mask)])
            shape = np.broadcast_shapes(*shapes)
        except (TypeError, ValueError, OverflowError):
            return
        ins, res = loop[:spec.nin], loop[spec.nin:]
        compute = ins[1] if spec.cond_first else ins[0]
        if len(set(ins[1:] if spec.cond_first else ins)) != 1 or len(set(res)) != 1:
            return  # mixed loops (int64 vs uint64 comparisons, ldexp): NumPy's own
        if not all(held_dtype(d, device) for d in loop):
            return
        if compute == _HALF and spec.name in _NO_HALF_LOOP:
            return
        for k, x in enumerate(inputs):
            # float16 operands only into float loops (a bool or integer loop would read the
            # bits, and -0.0 is not zero bits)
            if type(x) is DeviceArray and (not held_dtype(x.dtype, device) or (
                    x.dtype == _HALF and (loop[k].kind != "f" or (spec.cond_first and k == 0)))):
                return
        if outs is not None:
            for o in outs:
                if (np.broadcast_shapes(shape, o.shape) != o.shape
                        or not held_dtype(o.dtype, device)
                        or (o.dtype == _HALF and res[0].kind != "f")
                        or not np.can_cast(res[0], o.dtype, casting)):
                    return
            shape = outs[0].shape
        self.supported = True
        self.loop, self.compute, self.result, self.shape = loop, compute, res[0], shape
        self.int_scalars = tuple(k for k, x in enumerate(inputs)
                                 if type(x) is int and loop[k].kind in "iu")
        self.out_strides = c_strides(shape, res[0].itemsize)
        self.size = math.prod(shape)
        self.out_nbytes = self.size * res[0].itemsize
        self.host_reason = prefer_host(device, "elementwise", res[0], self.size)
        self.fresh_host = self.host_reason is not None and spec.nout == 1 and self.size > 0
        if self.fresh_host and spec.cond_first:  # np.where has no out=: its result adopted
            self.host_run = result_adopter(device, self.shape, self.result, self.out_strides,
                                           np.where)
        elif self.fresh_host:  # host_run(*operands): NumPy's loop into a fresh host-born result
            self.host_run = result_maker(device, self.out_nbytes, self.shape, self.result,
                                         self.out_strides, fill=spec.ufunc)
        self.launcher = None
        if self.host_reason is None and self.size:
            self._plan_kernel(inputs, outs, mask)
        if outs is None and mask is None and casting == "same_kind" and dtype is None:
            self.short = self._short_call(inputs)

    def _short_call(self, inputs: tuple) -> Callable[..., Any] | None:
        """``short(*operands)``: this keyword-free call's result on operands of the planned
        layouts and scalar types (device arrays on this plan's device: the caller checks), with
        nothing decided per call but a Python int's range where an integer loop takes one
        (NotImplemented outside it: NumPy's error or rule answers); None where each call needs
        the general route (a result that is empty or not one array, ``np.where``, powers,
        whose integer exponents NumPy checks per call)."""
        if not self.supported or self.spec.cond_first or self.spec.name == "POWER":
            return None
        scalars = [k for k, x in enumerate(inputs) if type(x) is not DeviceArray]
        if self.fresh_host:
            run = self.host_run
        elif not self.fresh_kernel:
            return None
        elif not scalars:
            run = self.run_fresh
        elif len(inputs) != 2 or len(scalars) != 1:
            return None
        else:
            fresh, device = self.run_fresh, self.device
            at, loop_dtype = scalars[0], self.loop[scalars[0]]
            if at == 1:
                def run(a: Any, b: Any) -> Any:
                    return fresh(a, constant(b, loop_dtype, device))
            else:
                def run(a: Any, b: Any) -> Any:
                    return fresh(constant(a, loop_dtype, device), b)
        if not self.int_scalars:
            return run
        if len(inputs) != 2 or len(self.int_scalars) != 1:
            return None
        at = self.int_scalars[0]
        info = np.iinfo(self.loop[at])
        low, high = info.min, info.max

        def in_range(a: Any, b: Any) -> Any:  # (NumPy's OverflowError or rule outside it)
            return run(a, b) if low <= (b if at else a) <= high else NotImplemented
        return in_range

    def _plan_kernel(self, inputs: tuple, outs: tuple | None, mask: Any) -> None:
        spec, shape = self.spec, self.shape
        in_dtypes, strides = [], []
        for x, d in zip(inputs, self.loop):
            dt = x.dtype if type(x) is DeviceArray else d
            in_dtypes.append(dt)
            if type(x) is DeviceArray:
                strides.append(_broadcast_elem_strides(x.shape, x.strides, dt.itemsize, shape))
            else:  # uploaded contiguous in the loop dtype (a scalar: one element, stride 0)
                strides.append(_broadcast_elem_strides(np.shape(x), c_strides(
                    np.shape(x), dt.itemsize), dt.itemsize, shape))
        out_dtypes = [o.dtype for o in outs] if outs is not None else [self.result] * spec.nout
        out_strides = ([_broadcast_elem_strides(o.shape, o.strides, o.itemsize, shape) for o in outs]
                       if outs is not None else [c_strides(shape)] * spec.nout)
        mask_strides = (_broadcast_elem_strides(np.shape(mask), c_strides(np.shape(mask), 1),
                                                1, shape) if mask is not None else strides[0])
        if type(mask) is DeviceArray:
            mask_strides = _broadcast_elem_strides(mask.shape, mask.strides, 1, shape)
        all_strides = (strides + [strides[0]] * (3 - spec.nin) + out_strides
                       + [out_strides[0]] * (2 - spec.nout) + [mask_strides])
        dims, merged = merge_dims(shape, *all_strides)
        if len(dims) > MAX_DIMS:
            self.supported = False  # more than 8 non-contiguous dimensions: NumPy's loop
            return
        # a float16 loop runs in float (NumPy's float16 loops compute in float32)
        compute, result = self.compute, self.result
        if compute == _HALF:
            compute = np.dtype(np.float32)
        ct = ctype(compute)
        defines = {"OP": f"OP_{spec.name}", "NIN": spec.nin, "NOUT": spec.nout, "NDIM": len(dims),
                   "CT": ct, "RT": "float" if result == _HALF else ctype(result),
                   "UT": _unsigned(ct) if compute.kind in "iub" else ct,
                   "IS_FLOAT": int(compute.kind == "f"), "IS_SIGNED": int(compute.kind == "i"),
                   "IS_BOOL": int(compute.kind == "b"), "BITS": 8 * compute.itemsize,
                   "RES_BOOL": int(result.kind == "b"), "MASKED": int(mask is not None),
                   "IDX32": int(self.size < 2 ** 31)}
        if result == _HALF:
            defines["RES_HALF"] = 1
        for k, dt in enumerate(in_dtypes):
            defines[f"IN{k}_T"] = storage_ctype(dt)
            if dt == _HALF and not (spec.cond_first and k == 0):
                defines[f"IN{k}_HALF"] = 1
            elif self.loop[k].kind == "b" and dt.kind != "b" and not (spec.cond_first and k == 0):
                defines[f"IN{k}_TO_BOOL"] = 1
        for k, dt in enumerate(out_dtypes):
            defines[f"OUT{k}_T"] = storage_ctype(dt)
            if dt == _HALF:
                defines[f"OUT{k}_HALF"] = 1
            elif dt.kind == "b" and result.kind != "b":
                defines[f"OUT{k}_TO_BOOL"] = 1
        if spec.name == "RECIPROCAL" and compute.kind in "iu":
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                defines["RECIP_ZERO"] = int(np.reciprocal(np.zeros(1, compute))[0])
        if np.dtype(np.float64) in (*in_dtypes, *out_dtypes, compute, result):
            defines["IS_FP64"] = 1
        local = min(256, self.device.info.max_work_group_size)
        per_item = _PER_ITEM_GPU if self.device.info.is_gpu else 1
        if per_item > 1:
            defines["PER_ITEM"] = per_item
        self.geometry = ((-(-self.size // (local * per_item)) * local,), (local,))
        self.n_arg = np.int64(self.size)
        tiling = None if mask is not None else (
            tile_layout(self.device, dims, merged[:spec.nin], merged[3:3 + spec.nout])
            or row_layout(self.device, dims, merged[:spec.nin], merged[3:3 + spec.nout]))
        # The operands in the kernels' argument order: absent inputs repeat the first input,
        # an absent second output the first output, an absent mask the first input.
        nin, nout = spec.nin, spec.nout
        slots = list(range(nin)) + [0] * (3 - nin) + [nin + k for k in range(nout)] + \
            [nin] * (2 - nout)
        if tiling is not None:  # an input transposed against the outputs, or rows x columns
            (rows, cols, _), staged, strides, self.geometry = tiling
            for k in staged:
                defines[f"TILED{k}"] = 1
            launcher = get_kernel(self.device, "elementwise.cl", "elementwise_tiled",
                                  defines, self.device.info.rounding_options)
            operand_strides = (strides[:nin] + [strides[0]] * (3 - nin) + strides[nin:]
                               + [strides[nin]] * (2 - nout))
            self._bind(launcher, (np.int64(rows), np.int64(cols)), slots, operand_strides)
            return
        in_steps = [s[0] if dims else 0 for s in merged[:nin]]
        out_steps = [s[0] if dims else 1 for s in merged[3:3 + nout]]
        if mask is None and len(dims) <= 1 and set(in_steps) <= {0, 1} and set(out_steps) == {1}:
            for k, step in enumerate(in_steps):
                defines[f"FLAT_ST{k}"] = step
            launcher = get_kernel(self.device, "elementwise.cl", "elementwise_flat",
                                  defines, self.device.info.rounding_options)
            self._bind(launcher, (self.n_arg,), list(range(nin + nout)), None)
            return
        launcher = get_kernel(self.device, "elementwise.cl", "elementwise", defines,
                              self.device.info.rounding_options)
        self._bind(launcher, (self.n_arg, as_long8(dims, 1)), slots + [nin + nout],
                   [as_long8(s, 0) for s in merged])

    def _bind(self, launcher, head: tuple, slots: list, strides: list | None) -> None:
        """The launch with ``head`` and the operands' strides fixed: per call, each slot's
        buffer and element offset (slots number the inputs, then the outputs, then the mask;
        ``strides`` None: the flat kernel, which takes none)."""
        args, per_call = list(head), []
        for k in range(len(slots)):
            per_call += [len(args), len(args) + 1]
            args += [None, None] if strides is None else [None, None, strides[k]]
        self.launcher = launcher
        self.bound = launcher.bind(self.device, *self.geometry, args, per_call)
        self.slots = tuple(slots)
        self.fresh_kernel = self.spec.nout == 1 and self.size > 0
        nin = self.spec.nin
        # run_fresh: the operands are (a, b, out), or (a, out); the mask repeats a
        self.fresh_slots = tuple(k if k <= nin else 0 for k in slots)

    # -- running ---------------------------------------------------------------------------------
    def run(self, inputs: tuple, outs: tuple | None, mask: Any) -> tuple:
        """The outputs (``outs`` when given) after running the loop."""
        device, spec = self.device, self.spec
        if outs is not None:
            targets = list(outs)
        else:
            host_resident, nbytes = self.host_reason is not None, self.out_nbytes
            targets = [DeviceArray.from_storage(Storage(device, nbytes, host_resident),
                                                self.shape, self.result, self.out_strides)
                       for _ in range(spec.nout)]
        if self.size == 0:
            pass
        elif self.host_reason is not None:
            hosts = [x.host_view() if type(x) is DeviceArray else x for x in inputs]
            host_mask = mask.host_view() if type(mask) is DeviceArray else mask
            spec.host(hosts, tuple(t.host_view(write=True) for t in targets), host_mask,
                      self.casting)
        else:
            self._launch(inputs, targets, mask)
        return tuple(targets)

    def _launch(self, inputs: tuple, targets: list, mask: Any) -> None:
        """Enqueue the kernel on ``inputs`` (constants uploaded), ``targets`` and ``mask``."""
        device, nin = self.device, len(inputs)
        ops = [x if type(x) is DeviceArray else constant(x, d, device)
               for x, d in zip(inputs, self.loop)]
        ops += targets
        if mask is not None and type(mask) is not DeviceArray:
            mask = constant(mask, np.dtype(np.bool_), device)
        ops.append(ops[0] if mask is None else mask)
        end, args = nin + len(targets), []
        for k in self.slots:
            x = ops[k]
            args += (x.storage.kernel_buffer(write=nin <= k < end), _offset_arg(x))
        self.bound(*args)

    def run_fresh(self, *inputs: DeviceArray) -> DeviceArray:
        """``run(inputs, None, None)[0]`` for a one-output kernel plan (``fresh_kernel``) on
        device arrays: the operators' path, with nothing decided per call but the result's
        allocation, the buffers and the offsets."""
        storage = Storage.for_output(self.device, self.out_nbytes)
        nin, args = len(inputs), []
        for k in self.fresh_slots:
            if k == nin:
                args += (storage.kernel_buffer(True), _ZERO)
                continue
            x = inputs[k]
            offset = x._offset  # _offset_arg(x) written out: this loop runs on every operator
            args += (x._storage.kernel_buffer(False),
                     _ZERO if offset == 0 else np.int64(offset // x._dtype.itemsize))
        self.bound(*args)
        # the result's object after the enqueue: its making overlaps the device's work
        return DeviceArray.from_storage(storage, self.shape, self.result, self.out_strides)

    def run_into(self, inputs: tuple, out: DeviceArray) -> None:
        """``run(inputs, (out,), None)`` for a one-output kernel plan (``fresh_kernel``) on
        device arrays: ``ufunc(a, b, out=c)``'s path, nothing decided per call but the buffers
        and the offsets."""
        nin, args = len(inputs), []
        for k in self.fresh_slots:
            x = out if k == nin else inputs[k]
            offset = x._offset
            args += (x._storage.kernel_buffer(k == nin),
                     _ZERO if offset == 0 else np.int64(offset // x._dtype.itemsize))
        self.bound(*args)

    def describe(self) -> str:
        name = self.spec.ufunc.__name__ if self.spec.ufunc is not None else self.spec.name.lower()
        if not self.supported:
            return f"{name}: NumPy's ufunc on host views (no device loop)"
        if self.host_reason is not None:
            return f"{name} {self.shape}: {self.host_reason}"
        return f"{name} {self.shape}: kernel {self.launcher.name} (opencl/elementwise.cl)"





def _broadcast_elem_strides(shape: tuple, strides: tuple, itemsize: int, target: tuple) -> tuple:
    """Element strides of an operand broadcast to ``target`` (0 along broadcast axes)."""
    pad = len(target) - len(shape)
    return (0,) * pad + tuple(0 if n == 1 else s // itemsize for n, s in zip(shape, strides))


_ZERO = np.int64(0)


def _offset_arg(x: DeviceArray) -> np.int64:
    """An operand's element offset as a kernel argument (one shared object for 0)."""
    return _ZERO if x.offset == 0 else np.int64(x.offset // x.itemsize)


# Scalars and NumPy operands of kernel calls, uploaded once per (device, dtype, bytes): a loop
# that adds the same constant pays no upload after its first call.
_constants: Memo[DeviceArray] = Memo("elementwise constants", capacity=1024)


def constant(x: Any, dtype: np.dtype, device: Device) -> DeviceArray:
    """``x`` (a scalar or a small NumPy operand) as a device array of ``dtype``, uploaded once
    per value."""
    host = np.asarray(x, dtype=dtype)
    if host.size > 64:
        return asarray(host, device=device)
    key = (device, dtype, host.shape, host.tobytes())
    found = _constants.find(key)  # (not ``or``: an array's truth value is its elements')
    return found if found is not None else _constants.get(key, lambda: asarray(host,
                                                                              device=device))


def _overlaps_differently(out: DeviceArray, x: DeviceArray) -> bool:
    """True when ``x`` shares ``out``'s buffer with another layout (NumPy copies then)."""
    return (x.storage is out.storage
            and (x.offset, x.strides, x.shape) != (out.offset, out.strides, out.shape))


_PLANS: PlanCache[ElementwisePlan] = PlanCache("elementwise")
find_plan = _PLANS.find
"""A cached plan by its key, or None (the short keys of :func:`binary_plan` and friends)."""
register_elementwise_plans(find_plan)  # the operators' lookup on the short keys


def plan_for(spec: OpSpec, inputs: tuple, outs: tuple | None, mask: Any, casting: str,
             dtype: Any, device: Device) -> ElementwisePlan | None:
    """The cached plan of one call, or None for operands it cannot key."""
    descs = tuple(_describe(x) for x in inputs)
    if None in descs:
        return None
    out_desc = None if outs is None else tuple((o.dtype, o.shape, o.strides) for o in outs)
    mask_desc = None if mask is None else _describe(mask)
    key = (spec, device, descs, out_desc, mask_desc, casting, dtype)
    return _PLANS.get(key, lambda: ElementwisePlan(spec, inputs, outs, mask, casting, dtype,
                                                    device))


def unary_plan(spec: OpSpec, a: DeviceArray, device: Device) -> ElementwisePlan:
    """The plan of ``spec(a)`` for a device array and no keywords: one dict hit on a short key."""
    key = (spec.ufunc, device, a.layout_key)
    return _PLANS.find(key) or _PLANS.get(
        key, lambda: plan_for(spec, (a,), None, None, "same_kind", None, device))


def binary_plan(spec: OpSpec, a: DeviceArray, b: DeviceArray, device: Device) -> ElementwisePlan:
    """The plan of ``spec(a, b)`` for two device arrays and no keywords (the operators' call):
    one dict hit on a short key."""
    key = (spec.ufunc, device, a.layout_key, b.layout_key)
    return _PLANS.find(key) or _PLANS.get(
        key, lambda: plan_for(spec, (a, b), None, None, "same_kind", None, device))


def scalar_plan(spec: OpSpec, a: Any, b: Any, device: Device) -> ElementwisePlan | None:
    """The plan of ``spec(a, b)`` for a device array and a scalar of ``TYPED_SCALARS`` (either
    order) and no keywords: one dict hit on a short key (the plan depends on the scalar's type
    only)."""
    key = (spec.ufunc, device, a.layout_key if type(a) is DeviceArray else type(a),
           b.layout_key if type(b) is DeviceArray else type(b))
    return _PLANS.find(key) or _PLANS.get(
        key, lambda: plan_for(spec, (a, b), None, None, "same_kind", None, device))


def keyed_plan(key: tuple, spec: OpSpec, inputs: tuple, device: Device) -> ElementwisePlan | None:
    """The plan of ``spec(*inputs)`` without keywords, cached under a short ``key`` the caller
    built (``(spec, device, *each operand's layout_key or scalar type)``, as
    :func:`scalar_plan`'s): one dict hit on a repeated call."""
    return _PLANS.find(key) or _PLANS.get(
        key, lambda: plan_for(spec, inputs, None, None, "same_kind", None, device))


def keyed_out_plan(key: tuple, spec: OpSpec, inputs: tuple, outs: tuple, device: Device
                   ) -> ElementwisePlan | None:
    """The plan of ``spec(*inputs, out=outs)`` without other keywords, cached under a short
    ``key`` the caller built (the operands' and outputs' layout keys)."""
    return _PLANS.find(key) or _PLANS.get(
        key, lambda: plan_for(spec, inputs, outs, None, "same_kind", None, device))


def run_op(spec: OpSpec, inputs: tuple, outs: tuple | None = None, mask: Any = None,
           casting: str = "same_kind", dtype: Any = None, device: Device | None = None) -> Any:
    """``spec`` on the device: the output (a tuple for two outputs), or NotImplemented where
    only NumPy's loop can answer (the caller falls back to the host)."""
    if device is None:
        device = next(x.device for x in (*inputs, *(outs or ())) if type(x) is DeviceArray)
    if outs is not None:  # NumPy reads overlapping operands as they were before the call
        inputs = tuple(x.copy() if type(x) is DeviceArray and any(
            _overlaps_differently(o, x) for o in outs) else x for x in inputs)
        if type(mask) is DeviceArray and any(_overlaps_differently(o, mask) for o in outs):
            mask = mask.copy()
    return run_plan(plan_for(spec, inputs, outs, mask, casting, dtype, device), inputs, outs,
                    mask)


def run_plan(plan: ElementwisePlan | None, inputs: tuple, outs: tuple | None = None,
             mask: Any = None) -> Any:
    """The output of ``plan`` (the call's cached plan, found by any key) on these operands,
    or NotImplemented where only NumPy's loop can answer."""
    if plan is None or not plan.supported:
        return NotImplemented
    for k in plan.int_scalars:
        if not _fits(inputs[k], plan.loop[k]):
            return NotImplemented  # NumPy's OverflowError, or its out-of-range comparison rule
    result = plan.run(inputs, outs, mask)
    return result[0] if plan.spec.nout == 1 else result


def _fits(x: Any, dtype: np.dtype) -> bool:
    if dtype.kind in "iu" and type(x) is int:
        info = np.iinfo(dtype)
        return info.min <= x <= info.max
    return True
