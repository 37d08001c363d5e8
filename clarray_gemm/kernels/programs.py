"""The program cache (each (device, source, defines) is built once) and the launchers.

Sources come from :mod:`clarray_gemm.sources`; builds go through the driver layer, which turns a
failed build into :class:`clarray_gemm.KernelBuildError`.
"""
from __future__ import annotations

import re
import threading
from typing import Mapping

import numpy as np
import pyopencl as cl

from .. import settings
from ..device import Device
from ..memo import Memo
from ..sources import source_names, source_text  # noqa: F401  (re-exported)
# The dtype rules live in clarray_gemm.dtypes; importable from here too for older callers.
from ..dtypes import ctype, dtype_defines, unsupported_dtype  # noqa: F401
from ..drivers import calls, eventless
from ..drivers.build import build as drivers_build
from .constants import constant

__all__ = ["source_text", "build_program", "built_programs", "build_text", "get_kernel", "Launcher", "BoundLaunch",
           "eventless_kernel_enqueue", "eventless_copy_enqueue",
           "ctype", "dtype_defines", "unsupported_dtype", "build_count", "check_defines"]

# built programs (each compiled once: exclusive builds) and their launchers
_cache: Memo[cl.Program] = Memo("programs", capacity=None, exclusive=True)
_kernels: Memo["Launcher"] = Memo("launchers", capacity=None)
_builds = 0


def build_count() -> int:
    """How many programs were compiled in this process (tests use it to prove caching)."""
    return _builds


def _options(defines: Mapping[str, object], extra: tuple[str, ...]) -> list[str]:
    opts = [f"-D{k}={v}" for k, v in sorted(defines.items())]
    return opts + list(extra)


_identifiers: dict[str, frozenset[str]] = {}
# The element-type defines every dtype-generic kernel is given (dtypes.dtype_defines), whether
# or not a source uses each one (IS_FP64 also selects the fp64 pragma here)
_DTYPE_DEFINES = frozenset(dtype_defines("float32"))


def check_defines(source: str, defines: Mapping[str, object]) -> None:
    """ValueError naming the ``-D`` defines that ``opencl/<source>`` (its headers included)
    never mentions: a misspelt parameter would otherwise build silently with its default."""
    names = _identifiers.get(source)
    if names is None:
        names = _identifiers[source] = frozenset(re.findall(r"[A-Za-z_]\w*", source_text(source)))
    unknown = sorted(k for k in defines if k not in names and k not in _DTYPE_DEFINES)
    if unknown:
        raise ValueError(f"opencl/{source} has no parameter {', '.join(unknown)}")


def built_programs() -> list[tuple]:
    """``(device, source, defines, options)`` of every program built so far, oldest first
    (``defines`` a frozenset of (name, value) pairs): for probes that rebuild them, e.g. with a
    driver's verbose option to read its register report."""
    return [key for key, _ in _cache.items()]


def build_program(device: Device, source: str, defines: Mapping[str, object] | None = None,
                  options: tuple[str, ...] = ()) -> cl.Program:
    """Build ``opencl/<source>`` for ``device`` with ``-D`` defines, once per process; a build
    the driver fails raises :class:`clarray_gemm.KernelBuildError` (kernel and driver named)."""
    defines = defines or {}
    key = (device, source, frozenset(defines.items()), options)
    prog = _cache.find(key)
    if prog is not None:
        return prog

    def build() -> cl.Program:
        global _builds
        chosen = dict(defines)
        check_defines(source, chosen)
        text = source_text(source)
        if chosen.get("IS_FP64") or chosen.get("T") == "double":
            text = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text
        opts = _options(chosen, options)
        if settings.nv_verbose() and device.info.is_nvidia:
            opts.append("-cl-nv-verbose")
        built = drivers_build(device.context, text, opts, source,
                              f"{device.info.platform} / {device.name}",
                              retarget=bool(chosen.get("SM90A_PTX")))
        _builds += 1
        return built
    return _cache.get(key, build)


def build_text(device: Device, text: str, name: str, options: tuple[str, ...] = ()
               ) -> cl.Program:
    """Build a user's program text (user kernels: ``ops/user_kernels.py``) for ``device``,
    once per process per (text, options) in the same cache as ours; a build the driver fails
    raises :class:`clarray_gemm.KernelBuildError` with the compiler's log. ``name`` names it
    in errors."""
    key = (device, "text", text, options)
    prog = _cache.find(key)
    if prog is not None:
        return prog

    def build() -> cl.Program:
        global _builds
        source = text
        if device.info.fp64 and "double" in text:
            source = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text
        built = drivers_build(device.context, source, list(options), name,
                              f"{device.info.platform} / {device.name}")
        _builds += 1
        return built
    return _cache.get(key, build)


class Launcher:
    """A kernel ready to enqueue at the cost of the enqueue itself.

    pyopencl's generic ``kernel(queue, gsize, lsize, *args)`` re-derives how to pass every
    argument on each call (measured: ~190 us on PoCL and the H100 for a 15-argument kernel, against
    ~3 us for ``enqueue_nd_range_kernel``). A launcher keeps one ``cl.Kernel`` per thread (kernel
    objects hold their arguments, so threads must not share one) and calls ``set_arg`` only for
    the arguments that differ from the previous call of that thread: a repeated call sets its
    buffers, at most, and enqueues. It never waits for the kernel to finish.
    """

    __slots__ = ("program", "name", "_local", "_sizes")

    def __init__(self, program: cl.Program, name: str):
        self.program = program
        self.name = name
        self._local = threading.local()
        self._sizes: dict = {}  # (global, local) -> the event-free enqueue's size arrays

    def _kernel_and_args(self) -> tuple[cl.Kernel, list]:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = (cl.Kernel(self.program, self.name), [])
        return state

    def __call__(self, queue: cl.CommandQueue, global_size, local_size, *args,
                 wait_for=None) -> cl.Event:
        if calls.serialized():
            with calls.guard():  # the arguments and the enqueue, in one turn in the driver
                return self._set_args_and_enqueue(queue, global_size, local_size, args, wait_for)
        return self._set_args_and_enqueue(queue, global_size, local_size, args, wait_for)

    def _set_args_and_enqueue(self, queue: cl.CommandQueue, global_size, local_size,
                              args: tuple, wait_for) -> cl.Event:
        kernel, last = self._kernel_and_args()
        if len(last) != len(args):
            last[:] = [_UNSET] * len(args)
        _set_changed(kernel, last, range(len(args)), args)
        return cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size,
                                          wait_for=wait_for)

    def launch(self, device: Device, global_size: tuple, local_size: tuple | None,
               *args) -> cl.Event | None:
        """Enqueue on ``device``'s queue for a caller that waits with ``clFinish`` or a
        blocking map: where the device enqueues without events (:func:`eventless_kernel_enqueue`)
        none is made and None is returned, else the kernel's event."""
        key = (device, settings.eventless_enqueue())
        enqueue = _EVENTLESS.find(key)
        if enqueue is None:
            enqueue = _EVENTLESS.get(key, lambda: eventless_kernel_enqueue(device) or False)
        if enqueue is False:
            return self(device.queue, global_size, local_size, *args)
        sizes = self._sizes.get((global_size, local_size))
        if sizes is None:
            if len(self._sizes) >= 64:
                self._sizes.clear()
            sizes = self._sizes[(global_size, local_size)] = (
                len(global_size), eventless.sizes(global_size), eventless.sizes(local_size))
        with calls.guard():  # the arguments and the enqueue, in one turn in the driver
            kernel, last = self._kernel_and_args()
            if len(last) != len(args):
                last[:] = [_UNSET] * len(args)
            _set_changed(kernel, last, range(len(args)), args)
            queue = device.queue
            if _enqueue_without_event(enqueue, queue, kernel, sizes):
                return None
            # refused: pyopencl's call raises the driver's error in its words
            return cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size)

    def bind(self, device: Device, global_size, local_size, args, per_call) -> "BoundLaunch":
        """This kernel with its geometry and every argument but those at positions
        ``per_call`` fixed: see :class:`BoundLaunch`. ``args`` holds every argument in order
        (anything, e.g. None, at the ``per_call`` positions)."""
        return BoundLaunch(self.program, self.name, device, global_size, local_size, args,
                           per_call)


class BoundLaunch:
    """One launch of a kernel prepared for repeated calls: the geometry and the arguments that
    never change (sizes, strides, leading dimensions) are set once, on a ``cl.Kernel`` of its
    own per thread; a call passes the others (buffers, offsets), in order, and enqueues on the
    device's queue of the moment (a device-time measurement may switch it). A plan's repeated
    call then checks the handful of arguments that can change, not all twenty."""

    __slots__ = ("program", "name", "device", "global_size", "local_size", "_fixed",
                 "_per_call", "_local", "_eventless", "_sizes")

    def __init__(self, program: cl.Program, name: str, device: Device, global_size,
                 local_size, args, per_call):
        self.program, self.name, self.device = program, name, device
        self.global_size = tuple(global_size)
        self.local_size = None if local_size is None else tuple(local_size)
        self._per_call = tuple(per_call)
        self._fixed = tuple((i, a) for i, a in enumerate(args) if i not in self._per_call)
        self._local = threading.local()
        self._eventless = eventless_kernel_enqueue(device)
        self._sizes = (len(self.global_size), eventless.sizes(self.global_size),
                       eventless.sizes(self.local_size))

    def _state(self) -> tuple:
        kernel = cl.Kernel(self.program, self.name)
        fixed = [a for _, a in self._fixed]
        _set_changed(kernel, [_UNSET] * len(fixed), [i for i, _ in self._fixed], fixed)
        state = self._local.state = (kernel, [_UNSET] * len(self._per_call))
        return state

    def __call__(self, *args, wait_for=None) -> cl.Event | None:
        """Enqueue with ``args`` at the per-call positions. Returns the kernel's event, or
        None where the device enqueues without events (``eventless_kernel_enqueue``) and
        ``wait_for`` is None: callers wait with ``clFinish`` or a blocking map."""
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._state()
        kernel, last = state
        if calls.serialized():
            with calls.guard():  # the arguments and the enqueue, in one turn in the driver
                _set_changed(kernel, last, self._per_call, args)
                return self._enqueue(kernel, wait_for)
        _set_changed(kernel, last, self._per_call, args)
        return self._enqueue(kernel, wait_for)

    def _enqueue(self, kernel: cl.Kernel, wait_for) -> cl.Event | None:
        queue = self.device.queue
        if self._eventless is not None and wait_for is None:
            if _enqueue_without_event(self._eventless, queue, kernel, self._sizes):
                return None
            # refused: pyopencl's call raises the driver's error in its words
        return cl.enqueue_nd_range_kernel(queue, kernel, self.global_size, self.local_size,
                                          wait_for=wait_for)


def _enqueue_without_event(enqueue, queue: cl.CommandQueue, kernel: cl.Kernel,
                           sizes: tuple) -> bool:
    """``enqueue`` (the event-free ``clEnqueueNDRangeKernel``) of ``kernel`` with ``sizes``
    (work dimensions, global and local size arrays); True where the driver took it."""
    work_dim, global_size, local_size = sizes
    return not enqueue(queue.int_ptr, kernel.int_ptr, work_dim, None, global_size, local_size,
                       0, None, None)


# (device, CLARRAY_GEMM_EVENTLESS) -> the event-free enqueue, or False: Launcher.launch's choice
_EVENTLESS: Memo = Memo("event-free enqueues", capacity=64)


def _eventless(device: Device) -> bool:
    """Whether ``device``'s enqueues that no one waits on make no event: its vendor is one
    whose events measured costly (``enqueue.eventless_vendors``), unless
    ``CLARRAY_GEMM_EVENTLESS`` says otherwise."""
    chosen = settings.eventless_enqueue()
    if chosen is None:
        vendor = device.info.vendor.upper()
        chosen = any(v.upper() in vendor for v in constant("enqueue.eventless_vendors"))
    return chosen


def eventless_kernel_enqueue(device: Device):
    """The event-free ``clEnqueueNDRangeKernel`` (:mod:`clarray_gemm.drivers.eventless`) for
    ``device``, or None where its launches go through pyopencl."""
    return eventless.kernel_enqueue() if _eventless(device) else None


def eventless_copy_enqueue(device: Device):
    """The event-free ``clEnqueueCopyBuffer`` for ``device``, or None (see
    :func:`eventless_kernel_enqueue`)."""
    return eventless.copy_enqueue() if _eventless(device) else None


def _set_changed(kernel: cl.Kernel, last: list, positions, args) -> None:
    """Set ``args[j]`` as argument ``positions[j]`` of ``kernel`` where it differs from
    ``last[j]`` (what that position was last set to), and remember it there."""
    j = -1
    for arg in args:
        j += 1
        prev = last[j]
        if prev is arg:  # the same scalar or array object as last time
            continue
        kind = type(arg)
        if kind in _BUFFER_TYPES or (kind not in _VALUE_TYPES
                                     and isinstance(arg, cl.MemoryObjectHolder)):
            # a buffer is remembered by its handle, not the object: a pooled buffer must be
            # free to return to its pool while the kernel object remembers it
            token = arg.int_ptr
            if prev == token:
                continue
            kernel.set_arg(positions[j], arg)
            last[j] = token
            continue
        if type(prev) is kind and kind is not np.ndarray and prev == arg:
            continue  # an equal scalar
        if _SET_BYTES is not None and isinstance(arg, (np.generic, np.ndarray)):
            _SET_BYTES(kernel, positions[j], arg)
        else:
            kernel.set_arg(positions[j], arg)
        last[j] = arg


_UNSET = object()
# ``Kernel.set_arg`` probes a NumPy scalar through several conversions (~18 us each, measured on
# PoCL); pyopencl's own invokers pass its bytes with ``_set_arg_buf`` (~1 us). Use it where this
# pyopencl has it.
_SET_BYTES = getattr(cl.Kernel, "_set_arg_buf", None)
# Exact types tested before isinstance (a type lookup is several times cheaper).
_BUFFER_TYPES = frozenset(t for t in (cl.Buffer, getattr(cl._cl, "PooledBuffer", None))
                          if t is not None)
_VALUE_TYPES = frozenset((int, float, np.int32, np.int64, np.uint32, np.uint64, np.float32,
                          np.float64, np.ndarray))


def get_kernel(device: Device, source: str, name: str,
               defines: Mapping[str, object] | None = None,
               options: tuple[str, ...] = ()) -> Launcher:
    """A launcher for kernel ``name`` of the cached program (launchers are cached too)."""
    prog = build_program(device, source, defines, options)
    key = (id(prog), name)
    return _kernels.find(key) or _kernels.get(key, lambda: Launcher(prog, name))
