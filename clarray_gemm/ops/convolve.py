"""``np.convolve`` / ``np.correlate`` with NumPy's semantics, run by the convolution catalogue.

NumPy's rules, in NumPy's order: ``convolve`` refuses empty operands, swaps them when ``v`` is
the longer one and correlates ``a`` with ``v`` reversed; ``correlate`` conjugates ``v`` and, when ``v`` is the
longer one, correlates ``v`` with ``a`` and reverses the result. Modes, their parsing and every
error message are NumPy's. The result dtype is ``np.result_type`` of the operands; bool and
small integers are computed exactly in 64 bits (overflow wraps modulo 2**64, so the low bits are
NumPy's) and float16 in float32, then cast back on the device. Complex dtypes, and float64 on a
device without fp64, run NumPy's own function on host views; the result comes back as a device
array either way. Inputs are never written: the mask is packed into a fresh buffer, and the
signal is used in place when it is contiguous (else packed on the device).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Mapping

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, empty, host_result, result_adopter
from ..device import Device
from ..dtypes import FLOATING, HOST_TAPS_DTYPES
from ..kernels import conv
from ..kernels.conv import ConvProblem
from ..kernels.constants import int_keyed
from ..kernels.copy import prepare_strided_copy
from ..kernels.crossover import (FFT_LONG_SIGNAL, HOST_FFT_MIN_SIGNAL, crossover,
                                 has_host_path, prefer_host)
from ..kernels.plans import PlanCache
from ..kernels.variant import Choice, check_params_have_kernel
from ..memory import Storage
from ._common import compute_dtype, device_of, numpy_answers, take_operands
from .convolve_host import block_length, fft_convolve_full
from .convolve_taps import correlate_taps

__all__ = ["convolve", "correlate", "explain_convolve", "HOST_STRATEGIES"]

HOST_STRATEGIES = ("host", "host_fft", "host_taps")
"""The ``kernel=`` names that run on the host: NumPy's own function on the mapped buffers, the
overlap-add FFT of ``ops/convolve_host.py`` (real floating results only), and one vectorised
multiply-add pass a tap of ``ops/convolve_taps.py`` (real results of one dtype with the
signal)."""

_MODES = {"valid": 0, "same": 1, "full": 2}


def _parse_mode(mode: Any) -> int:
    """NumPy's ``PyArray_CorrelatemodeConverter``: the same accepted values and errors."""
    if isinstance(mode, str):
        if mode in _MODES:
            return _MODES[mode]
        if mode[:1].lower() in ("v", "s", "f"):
            raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if isinstance(mode, (bool, np.bool_)):
        raise TypeError("convolve/correlate mode not understood")
    try:
        number = operator.index(mode)
    except TypeError:
        raise TypeError("convolve/correlate mode not understood") from None
    if number not in (0, 1, 2):
        raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
    return number


def _as_operand(x: Any) -> DeviceArray | np.ndarray:
    """A device array as is; anything else as NumPy sees it (``np.asarray``)."""
    return x if isinstance(x, DeviceArray) else np.asarray(x)


def _ndmin1(x: DeviceArray | np.ndarray) -> DeviceArray | np.ndarray:
    return x.reshape(1) if x.ndim == 0 else x


def _check_1d(*xs: DeviceArray | np.ndarray) -> None:
    for x in xs:
        if x.ndim > 1:
            raise ValueError("object too deep for desired array")
        if x.ndim < 1:
            raise ValueError("object of too small depth for desired array")


def _core_shape(n: int, m: int, mode: int) -> tuple[int, int]:
    """(pad, length) of NumPy's ``_pyarray_correlate`` for a signal of n >= m elements."""
    if mode == 0:
        return 0, n - m + 1
    if mode == 1:
        return m // 2, n
    return m - 1, n + m - 1


class _Plan:
    """What one call computes: correlate ``signal`` with ``mask`` (reversed if ``flip_mask``)
    in NumPy's ``mode``, reversing the output if ``flip_out``; or run ``host`` on the host."""

    def __init__(self, op: str, a: Any, v: Any, mode: Any):
        a, v = _as_operand(a), _as_operand(v)
        take_operands(a, v)
        self.device = device_of(a, v)
        self.a, self.v = a, v
        if op == "convolve":
            a, v = _ndmin1(a), _ndmin1(v)
            if len(a) == 0:
                raise ValueError("a cannot be empty")
            if len(v) == 0:
                raise ValueError("v cannot be empty")
            if len(v) > len(a):
                a, v = v, a
            self.mode = _parse_mode(mode)
            _check_1d(a, v)
            self.signal, self.mask, self.flip_mask, self.flip_out = a, v, True, False
        else:
            self.mode = _parse_mode(mode)
            _check_1d(a, v)
            if len(a) == 0:
                raise ValueError("first array argument cannot be empty")
            if len(v) == 0:
                raise ValueError("second array argument cannot be empty")
            inverted = len(a) < len(v)
            self.signal, self.mask = (v, a) if inverted else (a, v)
            self.flip_mask, self.flip_out = False, inverted
        self.op = op
        self.result_dtype = np.result_type(a.dtype, v.dtype)
        self.compute = compute_dtype(self.result_dtype, self.device)
        self.n, self.m = len(self.signal), len(self.mask)
        self.pad, self.length = _core_shape(self.n, self.m, self.mode)

    def describe(self) -> str:
        mode = ("valid", "same", "full")[self.mode]
        return (f"{self.op} mode={mode}: signal of {self.n}, mask of {self.m} -> "
                f"{self.length} x {self.result_dtype} on {self.device.name}"
                f" ({'computed in ' + str(self.compute) + ', ' if self.compute else ''}"
                f"pad={self.pad}"
                f"{', mask reversed' if self.flip_mask else ''}"
                f"{', output reversed' if self.flip_out else ''})")


def _host_operand(x: DeviceArray | np.ndarray) -> np.ndarray:
    return x.__array__() if isinstance(x, DeviceArray) else x


def _fft_dtype_ok(plan: "_Plan") -> bool:
    return (plan.result_dtype in (np.float32, np.float64) and plan.signal.dtype.kind in "biuf"
            and plan.mask.dtype.kind in "biuf")


def _host_choice(plan: "_Plan", kernel: str | None, explain: bool = False
                 ) -> tuple[str, str] | None:
    """(host strategy, why) when this call runs on the host, or None when a kernel does; the
    why is built only when ``explain`` (a call does not pay for the text)."""
    if kernel in HOST_STRATEGIES:
        if kernel == "host_fft" and not _fft_dtype_ok(plan):
            raise ValueError(f"convolve kernel 'host_fft' does not fit this call: the FFT path "
                             f"is for float32 and float64 results, not {plan.result_dtype}")
        if kernel == "host_taps" and not _taps_dtype_ok(plan):
            raise ValueError(f"convolve kernel 'host_taps' does not fit this call: the passes "
                             f"take a signal of the result dtype, one of "
                             f"{sorted(str(t) for t in HOST_TAPS_DTYPES)} (signal "
                             f"{plan.signal.dtype}, result {plan.result_dtype})")
        return kernel, f"forced (kernel={kernel!r})"
    if kernel is not None or plan.compute is None:
        return None
    work = _host_work(plan)
    limit, _ = crossover(plan.device, "convolve", plan.compute)
    if plan.n >= HOST_TAPS_MIN_SIGNAL.get(plan.m, math.inf) and (
            work < limit or type(plan.signal) is not DeviceArray) and (
            has_host_path(plan.device) and _taps_dtype_ok(plan)):
        # in place of NumPy's loop, and of a kernel that would first upload a NumPy signal
        return "host_taps", (f"one multiply-add pass a tap on the mapped buffers: mask of "
                             f"{plan.m} taps, signal of {plan.n} >= "
                             f"{HOST_TAPS_MIN_SIGNAL[plan.m]}" if explain else "")
    if work < limit:  # the host path: NumPy's direct loop, or the FFT for long enough masks
        if plan.n >= HOST_FFT_MIN_SIGNAL:
            fft = _fft_from_mask(plan, "convolve_host_fft", "not NumPy's direct loop", explain)
            if fft is not None:
                return fft
        if not explain:
            return "host", ""
        why = prefer_host(plan.device, "convolve", plan.compute, work) or ""
        if work != float(plan.n) * plan.m:
            why += (f"; N*m counted at {SMALL_CORRELATE_COST} (NumPy's loop for masks of up to "
                    f"{SMALL_CORRELATE_TAPS} taps, a NumPy signal a kernel would upload first)")
        return "host", why
    if has_host_path(plan.device):  # where a kernel would run, the FFT from its crossover on
        family = "convolve_fft" if plan.n >= FFT_LONG_SIGNAL else "convolve_fft_short"
        return _fft_from_mask(plan, family, "not the direct kernel", explain)
    return None


# NumPy's direct loop takes float32 and float64 masks of up to 11 taps through its unrolled
# small_correlate, at about a third of its general loop's cost per multiply-add (2-core Xeon,
# NumPy 2.4, float32, 2**20 samples: 0.28 ns per tap at m = 3, 0.19 at m = 11, 0.79 at m = 12
# and beyond). From a NumPy signal a kernel must first upload it, which costs about as much as
# that loop: the crossover (in the general loop's multiply-adds) is compared with the loop's
# cost there, where a device signal keeps the full count (PoCL, ms, signal from NumPy / from the
# device: 2**20 m = 3 host 0.91 / 0.96, vec kernel 1.19 / 0.58; m = 7 host 1.62, vec 1.52 /
# 0.90; 2**18 m = 11 host 0.52, vec 0.76 / 0.39).
SMALL_CORRELATE_TAPS = 11
SMALL_CORRELATE_COST = 0.3


# The shortest signal host_taps runs, by mask length: where its two ufunc passes a tap beat
# NumPy's loop, and for a NumPy signal a kernel that must upload it first.
HOST_TAPS_MIN_SIGNAL = int_keyed("convolve.host_taps_min_signal")


def _taps_dtype_ok(plan: "_Plan") -> bool:
    return (plan.result_dtype in HOST_TAPS_DTYPES and plan.signal.dtype == plan.result_dtype
            and plan.mask.dtype.kind in "biuf")


def _host_work(plan: "_Plan") -> float:
    """The call's size in the ``convolve`` crossover's unit (see SMALL_CORRELATE_COST)."""
    work = float(plan.n) * plan.m
    if (plan.m <= SMALL_CORRELATE_TAPS and type(plan.signal) is not DeviceArray
            and plan.result_dtype in FLOATING):  # NumPy's small_correlate types
        return work * SMALL_CORRELATE_COST
    return work


def _fft_from_mask(plan: "_Plan", family: str, instead: str, explain: bool
                   ) -> tuple[str, str] | None:
    """("host_fft", why) when the call's mask reaches ``family``'s crossover (float results
    only), else None; the why says what the FFT replaces."""
    if not _fft_dtype_ok(plan):
        return None
    m_fft, measured = crossover(plan.device, family, plan.compute)
    if plan.m < m_fft:
        return None
    if not explain:
        return "host_fft", ""
    source = "measured on this device" if measured else "default estimate"
    return "host_fft", (f"host overlap-add FFT on the mapped buffers, {instead}: mask of "
                        f"{plan.m} >= {m_fft:.0f} taps ({source}), transforms of "
                        f"{block_length(plan.n, plan.m)} points")


def _host_fft(signal: Any, mask: Any, flip_mask: bool, flip_out: bool, pad: int, length: int,
              dtype: np.dtype) -> np.ndarray:
    """The call's result by the overlap-add FFT: the full convolution of the signal with the
    mask (reversed for a correlation), the mode's slice, reversed when NumPy reverses it."""
    x = np.asarray(_host_view(signal), dtype=dtype)
    h = np.asarray(_host_view(mask), dtype=dtype)
    if not flip_mask:
        h = h[::-1]
    full = fft_convolve_full(x, h)
    start = len(h) - 1 - pad
    out = full[start:start + length]
    return out[::-1] if flip_out else out


def _host_view(x: DeviceArray | np.ndarray) -> np.ndarray:
    """The operand's host mapping (unified memory), a host copy (discrete), or the ndarray."""
    if not isinstance(x, DeviceArray):
        return x
    return x.host_view() if x.device.info.host_unified_memory else x.__array__()


def _run_on_host(plan: "_Plan", strategy: str) -> DeviceArray:
    """The host strategy on the operands' host mappings: NumPy's own function (its result kept
    as a host-resident device array), or the FFT or tap passes as a repeated call's entry runs
    them."""
    if strategy in ("host_fft", "host_taps"):  # what a repeated call's entry runs
        return _HostStrategyPlan(plan, strategy).run(plan.a, plan.v)
    func = np.convolve if plan.op == "convolve" else np.correlate
    return _wrap_host(func(_host_view(plan.a), _host_view(plan.v), plan.mode), plan.device)


def _host_taps(device: Device, signal: Any, mask: Any, flip_mask: bool, flip_out: bool,
               pad: int, length: int, dtype: np.dtype) -> DeviceArray:
    """The call by :func:`correlate_taps` on the operands' host mappings, into a fresh
    host-resident result (:func:`host_result`: host-born or a pooled, paged-in buffer) on
    unified memory, else a host array uploaded once."""
    x = _host_view(signal)
    w = _host_view(mask)
    w = np.asarray(w[::-1] if flip_mask else w, dtype=dtype)
    unified = device.info.host_unified_memory
    if unified:
        out, view = host_result(device, length * dtype.itemsize, (length,), dtype,
                                (dtype.itemsize,))
    else:
        view = np.empty(length, dtype)
    correlate_taps(view[::-1] if flip_out else view, x, w, pad)
    return out if unified else asarray(view, device=device)


def _wrap_host(host: np.ndarray, device: Device) -> DeviceArray | np.ndarray:
    """A host result as a device array: kept, or copied, as host memory on unified memory."""
    if not device.info.host_unified_memory or host.dtype.hasobject:
        return host if host.dtype.hasobject else asarray(host, device=device)
    return adopt_host(np.ascontiguousarray(host), device)  # at most one copy


def _signal_on_device(x: DeviceArray | np.ndarray, compute: np.dtype, device: Device
                      ) -> DeviceArray:
    if isinstance(x, DeviceArray):
        if x.dtype == compute and (x.strides == (x.itemsize,) or x.size <= 1):
            return x
        return x.astype(compute)
    return asarray(x, dtype=compute, device=device)


def _mask_on_device(x: DeviceArray | np.ndarray, compute: np.dtype, flip: bool,
                    device: Device) -> DeviceArray:
    """A fresh contiguous copy of the mask in the compute dtype, reversed if ``flip``."""
    if isinstance(x, DeviceArray):
        return (x[::-1] if flip else x).astype(compute)
    return asarray(np.ascontiguousarray(x[::-1] if flip else x), dtype=compute, device=device)


def _choose(plan: _Plan, kernel: str | None, params: Mapping[str, int] | None,
            explain: bool = False) -> Choice[ConvProblem] | tuple[str, str]:
    """What the call runs: the kernel's :class:`Choice`, or ``(host strategy, why)`` for the
    host (``"host"``: NumPy's own function; ``"host_fft"``: the overlap-add FFT; the why built
    only when ``explain``). The call and :func:`explain_convolve` both ask this function."""
    if kernel is not None and kernel not in HOST_STRATEGIES:
        conv.CATALOGUE[kernel]  # ValueError for an unknown name
    host = _host_choice(plan, kernel, explain)
    if host is not None:
        return host
    if plan.compute is None:
        if kernel is not None:
            raise ValueError(f"convolve kernel {kernel!r} does not fit this call: no "
                             f"{plan.result_dtype} kernel on {plan.device.name}")
        return "host", (f"NumPy's {plan.op} through mapped views (no {plan.result_dtype} "
                        f"kernel on {plan.device.name})")
    return conv.choose(plan.device, _problem(plan), kernel, params)


def _problem(plan: _Plan, x: DeviceArray | None = None, w: DeviceArray | None = None,
             out: DeviceArray | None = None) -> ConvProblem:
    """The call as a :class:`ConvProblem`; without buffers, what selection looks at (lengths,
    padding, dtype)."""
    return ConvProblem(plan.n, plan.m, plan.pad, plan.length, plan.compute,
                       None if x is None else x.storage.kernel_buffer(),
                       0 if x is None else x.element_offset,
                       None if w is None else w.storage.kernel_buffer(),
                       None if out is None else out.storage.kernel_buffer(write=True))


def _run(plan: _Plan, kernel: str | None, params: Mapping[str, int] | None,
         choice: Choice[ConvProblem] | tuple[str, str] | None = None) -> DeviceArray:
    device = plan.device
    if choice is None:
        choice = _choose(plan, kernel, params)
    if isinstance(choice, tuple):
        if plan.compute is not None or kernel in HOST_STRATEGIES:
            return _run_on_host(plan, choice[0])
        func = np.convolve if plan.op == "convolve" else np.correlate
        host = func(_host_operand(plan.a), _host_operand(plan.v), plan.mode)
        return host if host.dtype.hasobject else asarray(host, device=device)
    x = _signal_on_device(plan.signal, plan.compute, device)
    w = _mask_on_device(plan.mask, plan.compute, plan.flip_mask, device)
    out = empty(plan.length, plan.compute, device=device)
    conv.launch(device, _problem(plan, x, w, out), choice)
    if plan.flip_out:
        out = out[::-1]
    if out.dtype != plan.result_dtype:
        if plan.result_dtype == np.float16:
            return asarray(np.asarray(out).astype(np.float16), device=device)
        return out.astype(plan.result_dtype)
    return out.copy() if plan.flip_out else out


class _DevicePlan:
    """A repeated device call with its kernel chosen, its launch prepared and the mask's
    reversed copy prepared: per call, the buffers, the output's allocation and two enqueues;
    one where a contiguous mask at offset 0 is read in place (``np.correlate``'s, or a
    convolution's by a kernel that reads it backwards).
    For calls whose signal is a contiguous device array of the compute dtype (used in place),
    whose mask is a device array of that dtype, and whose result needs no cast or reversal."""

    __slots__ = ("device", "swap", "m", "length", "dtype", "out_nbytes", "out_strides",
                 "mask_shift", "copy_mask", "launch", "variant_launch", "problem_fields",
                 "params", "launch_flipped", "call")

    def __init__(self, plan: _Plan, choice: Choice[ConvProblem], copy_mask, prepared,
                 prepared_flipped=None):
        isz = plan.compute.itemsize
        self.device, self.swap = plan.device, plan.signal is not plan.a
        self.m, self.length, self.dtype = plan.m, plan.length, plan.compute
        self.out_nbytes, self.out_strides = plan.length * isz, (isz,)
        step = plan.mask.strides[0] // isz
        self.mask_shift = (plan.m - 1) * step if plan.flip_mask else 0
        self.copy_mask, self.launch = copy_mask, prepared
        # a kernel that reads a contiguous, reversed mask in place: no reversed copy (a launch)
        self.launch_flipped = prepared_flipped
        self.variant_launch, self.params = choice.variant.launch, choice.params
        self.problem_fields = (plan.n, plan.m, plan.pad, plan.length, plan.compute)
        self.call = (plan.op, plan.mode)  # for the general path

    @classmethod
    def build(cls, plan: _Plan, choice: Choice[ConvProblem] | tuple) -> "_DevicePlan | None":
        """The plan of this call's kernel path, or None where a call needs the general one."""
        signal, mask, compute = plan.signal, plan.mask, plan.compute
        if (isinstance(choice, tuple) or plan.flip_out or plan.result_dtype != compute
                or type(signal) is not DeviceArray or signal.dtype != compute
                or signal.strides != (signal.itemsize,) or type(mask) is not DeviceArray
                or mask.dtype != compute or mask.strides[0] % compute.itemsize):
            return None
        step = mask.strides[0] // compute.itemsize
        # None: one tap, or a contiguous mask not reversed (np.correlate's): read in place
        copy_mask = prepare_strided_copy(plan.device, (plan.m,), compute,
                                         (-step if plan.flip_mask else step,), compute, (1,))
        variant = choice.variant
        prepared = (variant.prepare(plan.device, _problem(plan), choice.params)
                    if variant.prepare is not None else None)
        flipped = conv.FLIPPED_MASK_PREPARES.get(variant.name) if (
            plan.flip_mask and step == 1) else None
        return cls(plan, choice, copy_mask, prepared, flipped and flipped(
            plan.device, _problem(plan), choice.params))

    def run(self, a: DeviceArray, v: DeviceArray) -> DeviceArray:
        signal, mask = (v, a) if self.swap else (a, v)
        device = self.device
        launch = self.launch
        if self.copy_mask is None or (self.launch_flipped is not None
                                      and mask.element_offset == 0):
            # the kernels read w from element 0: the mask in place, as it is or backwards
            if mask.element_offset:
                op, mode = self.call
                return _run(_Plan(op, a, v, mode), None, None)
            w_buffer = mask.storage.kernel_buffer()
            if self.copy_mask is not None:
                launch = self.launch_flipped
        else:
            w = Storage(device, self.m * self.dtype.itemsize)  # the mask, reversed: kept to the end
            w_buffer = w.kernel_buffer(write=True)
            self.copy_mask(mask.storage.kernel_buffer(), mask.element_offset + self.mask_shift,
                           w_buffer, 0)
        out = DeviceArray.from_storage(Storage.for_output(device, self.out_nbytes), (self.length,),
                                       self.dtype, self.out_strides)
        x_buffer, x_offset = signal.storage.kernel_buffer(), signal.element_offset
        out_buffer = out.storage.kernel_buffer(write=True)
        if launch is not None:
            launch(x_buffer, x_offset, w_buffer, out_buffer)
        else:
            self.variant_launch(device, ConvProblem(*self.problem_fields, x_buffer, x_offset,
                                                    w_buffer, out_buffer), self.params)
        return out


# (op, mode, operands' layouts, device) -> what a repeated call without kernel= or params= runs:
# a _NumPyLoopPlan (NumPy's own loops on the host; the plan's checks passed when the entry was
# made), a _HostStrategyPlan, a _DevicePlan, or _GENERAL (the full path, each call).
_CALL_PLANS: PlanCache[object] = PlanCache("convolve-call")
_GENERAL = "general"


# NumPy's own correlation loops (numpy._core.multiarray: correlate, correlate2), where this
# NumPy has them under that name; elsewhere the plans call np.convolve / np.correlate.
_NUMPY_CORE = getattr(getattr(np, "_core", None), "multiarray", None)
if not (hasattr(_NUMPY_CORE, "correlate") and hasattr(_NUMPY_CORE, "correlate2")):
    _NUMPY_CORE = None


class _NumPyLoopPlan:
    """A repeated call that NumPy's own loop answers (``host``): for two non-empty 1-D operands,
    the core call np.convolve / np.correlate make (``multiarray.correlate`` with the longer
    operand first and the mask reversed, ``correlate2`` as it is), without their conversions and
    checks, which the entry's plan made once; anything else through the NumPy function."""

    __slots__ = ("run",)

    def __init__(self, plan: "_Plan", op: str, a: Any, v: Any, mode: Any):
        func = np.convolve if op == "convolve" else np.correlate
        call = lambda x, w: func(x, w, mode)   # noqa: E731
        core = _NUMPY_CORE
        if (core is not None and a.ndim == 1 and v.ndim == 1 and a.size and v.size
                and isinstance(mode, str)):
            if op == "correlate":
                call = lambda x, w: core.correlate2(x, w, mode)   # noqa: E731
            elif v.size > a.size:
                call = lambda x, w: core.correlate(w, x[::-1], mode)   # noqa: E731
            else:
                call = lambda x, w: core.correlate(x, w[::-1], mode)   # noqa: E731
        dtype, device = plan.result_dtype, plan.device
        if device.info.host_unified_memory:
            # NumPy's result taken over as a device array (result_adopter's checks of a fresh
            # result of this geometry made once)
            self.run = result_adopter(device, (plan.length,), dtype, (dtype.itemsize,), call)
        else:   # operands read into host copies, the result uploaded
            self.run = lambda x, w: _wrap_host(call(_host_view(x), _host_view(w)), device)


class _HostStrategyPlan:
    """A repeated ``host_taps`` or ``host_fft`` call: the plan's geometry kept (the checks and
    the choice were made with the entry; a repeated ``host_fft`` call at N = 4096, m = 1023 on
    PoCL went from 79.7 to ~60 us without them)."""

    __slots__ = ("device", "swap", "flip_mask", "flip_out", "pad", "length", "dtype", "taps")

    def __init__(self, plan: _Plan, strategy: str):
        self.device, self.swap = plan.device, plan.signal is not plan.a
        self.flip_mask, self.flip_out = plan.flip_mask, plan.flip_out
        self.pad, self.length, self.dtype = plan.pad, plan.length, plan.result_dtype
        self.taps = strategy == "host_taps"

    def run(self, a: Any, v: Any) -> DeviceArray:
        signal, mask = (v, a) if self.swap else (a, v)
        geometry = (self.flip_mask, self.flip_out, self.pad, self.length, self.dtype)
        if self.taps:
            return _host_taps(self.device, signal, mask, *geometry)
        return _wrap_host(_host_fft(signal, mask, *geometry), self.device)


_find_call_plan = _CALL_PLANS.find


def _operand_key(x: DeviceArray | np.ndarray) -> tuple:
    return x.layout_key if type(x) is DeviceArray else (type(x), x.shape, x.dtype)


def _call(op: str, a: Any, v: Any, mode: Any, kernel: str | None,
          params: Mapping[str, int] | None) -> DeviceArray:
    arrays = (np.ndarray, DeviceArray)
    if (kernel is None and params is None and type(mode) in (str, int)
            and isinstance(a, arrays) and isinstance(v, arrays)):
        device = device_of(a, v)
        key = (op, mode, _operand_key(a), _operand_key(v), device)
        cached = _find_call_plan(key)
        if cached is not None and cached is not _GENERAL:
            return cached.run(a, v)
        plan = _Plan(op, a, v, mode)
        choice = _choose(plan, None, None)
        if isinstance(choice, tuple):
            entry = _NumPyLoopPlan(plan, op, a, v, mode) if (
                choice[0] == "host" and plan.compute is not None) else (
                _HostStrategyPlan(plan, choice[0]) if choice[0] in ("host_taps", "host_fft")
                else _GENERAL)
        else:
            entry = _DevicePlan.build(plan, choice) or _GENERAL
        _CALL_PLANS.get(key, lambda: entry)
        return _run(plan, kernel, params, choice)
    check_params_have_kernel("convolve", kernel, params)
    return _run(_Plan(op, a, v, mode), kernel, params)


@numpy_answers(np.convolve, "kernel", "params")
@implements(np.convolve)
def convolve(a: Any, v: Any, mode: Any = "full", *, kernel: str | None = None,
             params: Mapping[str, int] | None = None) -> DeviceArray:
    """``np.convolve`` on the device: NumPy's semantics and errors, the result a device array.

    ``kernel=`` forces a variant of :func:`clarray_gemm.kernels("convolve")` (ValueError when it
    does not fit the call) and ``params=`` its ``-D`` parameters."""
    return _call("convolve", a, v, mode, kernel, params)


@numpy_answers(np.correlate, "kernel", "params")
@implements(np.correlate)
def correlate(a: Any, v: Any, mode: Any = "valid", *, kernel: str | None = None,
              params: Mapping[str, int] | None = None) -> DeviceArray:
    """``np.correlate`` on the device: NumPy's semantics and errors, the result a device array.

    ``kernel=`` and ``params=`` as in :func:`convolve`."""
    return _call("correlate", a, v, mode, kernel, params)


def explain_convolve(a: Any, v: Any, mode: Any = "full", kernel: str | None = None,
                     op: str = "convolve", params: Mapping[str, int] | None = None) -> str:
    """Which kernel ``np.convolve(a, v, mode)`` (or ``np.correlate`` with ``op="correlate"``)
    runs, with which parameters, and why: the choice the call itself makes (same arguments,
    ``kernel=`` and ``params=`` included; ``host``/``host_fft`` for the host strategies)."""
    if op not in ("convolve", "correlate"):
        raise ValueError(f"op must be 'convolve' or 'correlate', not {op!r}")
    check_params_have_kernel("convolve", kernel, params)
    plan = _Plan(op, a, v, mode)
    choice = _choose(plan, kernel, params, explain=True)
    if isinstance(choice, tuple):
        return plan.describe() + f"\n{choice[0]}: {choice[1]}"
    return plan.describe() + "\n" + choice.describe()
