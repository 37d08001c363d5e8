"""OpenCL devices: discovery, the default device, contexts, queues and capabilities.

The default device is, in order: the one named by ``PYOPENCL_CTX`` (pyopencl's own convention,
e.g. ``"0:1"`` or a name substring), the first GPU, else the first device that is not a
simulator, else a simulator (Oclgrind); among CPU drivers, the one that was faster in its
probe. Only devices that passed the driver quarantine (:mod:`clarray_gemm.drivers.vetting`: the
real kernels built and run in a child process, the verdict cached per machine) are candidates,
because some drivers install fine but cannot compile or abort the process (PoCL 3.0 from pip,
built on LLVM 14, on CPUs newer than LLVM 14 knows). ``use_device`` changes the current device
for a ``with`` block.

A child forked after the device list was built refuses device calls (:mod:`clarray_gemm.forks`);
``register_fork_reset`` is re-exported here for the modules that cache OpenCL objects.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import warnings
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Iterator

import pyopencl as cl

from .drivers import calls, vetting
from .forks import check_not_forked as _check_not_forked
from .forks import keep_in_child, mark_opencl_loaded, register_fork_reset

__all__ = ["NoDeviceError", "Device", "DeviceInfo", "devices", "default_device", "current_device",
           "use_device", "get_device", "register_fork_reset"]


class NoDeviceError(RuntimeError):
    """No OpenCL device is installed, or none passed the driver probe."""


@dataclass(frozen=True)
class DeviceInfo:
    """The capabilities that kernel selection depends on."""

    name: str
    platform: str
    type: str
    compute_units: int
    max_work_group_size: int
    local_mem_bytes: int
    local_mem_is_global: bool
    constant_mem_bytes: int
    global_mem_bytes: int
    max_alloc_bytes: int
    image_support: bool
    image2d_max_width: int
    image2d_max_height: int
    host_unified_memory: bool
    fp64: bool
    fp16: bool
    preferred_vector_width_float: int
    preferred_vector_width_double: int
    preferred_vector_width_int: int
    native_vector_width_float: int
    is_simulator: bool
    vendor: str
    # Whether ``-cl-fp32-correctly-rounded-divide-sqrt`` is available: without it OpenCL allows
    # float32 division 2.5 ulp off (NVIDIA's is, even written as a double division).
    fp32_divide_option: bool = False
    # NVIDIA's compute capability (cl_nv_device_attribute_query), e.g. (9, 0); None elsewhere.
    compute_capability: tuple[int, int] | None = None
    # 64-bit atomic operations on global memory (cl_khr_int64_base_atomics).
    int64_atomics: bool = False

    @property
    def is_gpu(self) -> bool:
        return self.type == "GPU"

    @property
    def is_cpu(self) -> bool:
        return self.type == "CPU"

    @property
    def cheap_launches(self) -> bool:
        """A CPU driver whose launch and wait cost microseconds, not PoCL's ~180 us: Intel's CPU
        runtime (a no-op launch + finish 3.7 us on a 2-core AMD Zen 5). Its direct convolution
        kernels then win for longer masks than the host's FFT lets them on PoCL."""
        return self.is_cpu and self.platform.startswith("Intel(R) OpenCL")

    @property
    def is_nvidia(self) -> bool:
        return "NVIDIA" in self.vendor.upper()

    @property
    def is_adreno(self) -> bool:
        """Qualcomm Adreno GPUs, where the texture pipe is a second path to memory (seed 003)."""
        return self.is_gpu and ("QUALCOMM" in self.vendor.upper() or "ADRENO" in self.name.upper())

    @property
    def read_copy_max_bytes(self) -> int:
        """Discrete devices: the largest buffer ``np.asarray`` reads by a blocking copy rather
        than a map (a small read is cheaper than a map plus its unmap; a large one into pageable
        memory is slower than the map's pinned transfer). 0 where mapping copies nothing."""
        return 0 if self.host_unified_memory else 128 << 10

    @property
    def host_born_max_bytes(self) -> int:
        """Unified memory: the largest host-resident storage that starts as host memory from
        NumPy's allocator (host-born) rather than as a buffer; 0 elsewhere. On a CPU device the
        host path runs nearly everything of this size, so a kernel's one copy of the bytes is
        rare, while a parked buffer's bookkeeping costs every host-path result: PoCL, 2-core
        Xeon, ``x ** 2`` on 256 x 256 float32 9.0 -> 7.6 us (NumPy 5.4-6.0) and ``np.exp`` at
        2**18 elements 0.86x -> 0.97x NumPy with 1 MiB instead of 64 KiB. Elsewhere (an
        integrated GPU) kernels run from far smaller sizes and each would pay that copy."""
        if not self.host_unified_memory:
            return 0
        return 1 << 20 if self.is_cpu else 64 << 10

    @property
    def rounding_options(self) -> tuple[str, ...]:
        """Build options for correctly rounded float32 division and square root, as NumPy's,
        where the device offers them (OpenCL otherwise allows 2.5 / 3 ulp)."""
        return ("-cl-fp32-correctly-rounded-divide-sqrt",) if self.fp32_divide_option else ()

    @property
    def host_writes_whole_buffer(self) -> bool:
        """True on Oclgrind: its uninitialized-value checker resizes a buffer's shadow memory to
        the region of each host write (a ``WRITE`` map or a host-to-device copy), so a
        pooled buffer written by the host for a smaller array would hide later kernel writes
        beyond that region and report them as uninitialized. Host writes there map the whole
        buffer."""
        return self.is_simulator

    @property
    def serializes_driver_calls(self) -> bool:
        """True on NVIDIA: its OpenCL driver crashed (SIGSEGV in a driver thread) or hung
        whenever Python threads were inside it at once (a blocking map or copy in one thread, a
        launch or a build in another); with one thread at a time it ran clean. See
        :mod:`clarray_gemm.drivers.calls`."""
        return self.is_nvidia

    @property
    def tensor_cores(self) -> bool:
        """True on NVIDIA sm_80+ (``mma.sync`` for float16, bfloat16 and TF32 via inline PTX)."""
        return self.is_nvidia and self.is_gpu and (self.compute_capability or (0, 0)) >= (8, 0)

    @property
    def warpgroup_mma(self) -> bool:
        """True on NVIDIA sm_90 (Hopper: ``wgmma.mma_async``, which its OpenCL compiler reaches
        as sm_90a; later architectures dropped the instruction)."""
        return self.tensor_cores and (self.compute_capability or (0, 0))[0] == 9

    @property
    def static_local_bytes(self) -> int:
        """Bytes of static ``__local`` arrays one kernel may declare. NVIDIA's OpenCL reports 48
        KiB of local memory, but on Hopper a kernel's static arrays may take the 227 KiB a
        thread block can have (192 KiB measured on the H100; a ``__local`` kernel argument past
        48 KiB is refused). Elsewhere the reported local memory."""
        return 227 * 1024 if self.warpgroup_mma else self.local_mem_bytes

    def as_rows(self) -> list[tuple[str, object]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


def _device_type_name(dev: cl.Device) -> str:
    t = dev.type
    for name in ("GPU", "CPU", "ACCELERATOR"):
        if t & getattr(cl.device_type, name):
            return name
    return "OTHER"


def _correctly_rounded_divide(dev: cl.Device) -> bool:
    try:
        return bool(dev.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)
    except (cl.Error, AttributeError):
        return False


_CC_MAJOR_NV, _CC_MINOR_NV = 0x4000, 0x4001  # cl_nv_device_attribute_query


def _compute_capability(dev: cl.Device, ext: list[str]) -> tuple[int, int] | None:
    if "cl_nv_device_attribute_query" not in ext:
        return None
    try:
        return int(dev.get_info(_CC_MAJOR_NV)), int(dev.get_info(_CC_MINOR_NV))
    except (cl.Error, ValueError, TypeError):
        return None


def _read_info(dev: cl.Device) -> DeviceInfo:
    ext = dev.extensions.split()
    platform = dev.platform.name
    local_is_global = dev.local_mem_type == cl.device_local_mem_type.GLOBAL
    try:
        unified = bool(dev.host_unified_memory)
    except cl.Error:  # removed from OpenCL 3.0 headers on some drivers
        unified = _device_type_name(dev) == "CPU"
    return DeviceInfo(
        name=dev.name.strip(),
        platform=platform.strip(),
        type=_device_type_name(dev),
        compute_units=dev.max_compute_units,
        max_work_group_size=dev.max_work_group_size,
        local_mem_bytes=dev.local_mem_size,
        local_mem_is_global=local_is_global,
        constant_mem_bytes=dev.max_constant_buffer_size,
        global_mem_bytes=dev.global_mem_size,
        max_alloc_bytes=dev.max_mem_alloc_size,
        image_support=bool(dev.image_support),
        image2d_max_width=dev.image2d_max_width if dev.image_support else 0,
        image2d_max_height=dev.image2d_max_height if dev.image_support else 0,
        host_unified_memory=unified,
        fp64="cl_khr_fp64" in ext or dev.double_fp_config != 0,
        fp16="cl_khr_fp16" in ext,
        preferred_vector_width_float=dev.preferred_vector_width_float,
        preferred_vector_width_double=dev.preferred_vector_width_double,
        preferred_vector_width_int=dev.preferred_vector_width_int,
        native_vector_width_float=dev.native_vector_width_float,
        is_simulator="oclgrind" in platform.lower(),
        vendor=dev.vendor.strip(),
        fp32_divide_option=_correctly_rounded_divide(dev),
        compute_capability=_compute_capability(dev, ext),
        int64_atomics="cl_khr_int64_base_atomics" in ext,
    )


class Device:
    """One OpenCL device with its own context and in-order queue (without profiling until a
    device-time measurement asks for it: :meth:`enable_profiling`).

    :func:`devices` makes one object per OpenCL device and process, so equality and hashing
    are identity (object's, in C): devices key every plan cache, and a Python ``__hash__``
    cost ~0.1 us per lookup."""

    def __init__(self, cl_device: cl.Device, index: int):
        self.cl_device = cl_device
        self.index = index
        self.info = _read_info(cl_device)

    @cached_property
    def context(self) -> cl.Context:
        _check_not_forked()
        if self.info.serializes_driver_calls:
            calls.serialize()
        return cl.Context([self.cl_device])

    @cached_property
    def queue(self) -> cl.CommandQueue:
        """The in-order queue every operation on this device uses. It records no timestamps:
        on NVIDIA's driver (H100) a profiling queue adds ~7 us to each launch (12 -> 19 us) and
        ~4 us to each blocking read (``benches/probes/queue_profiling.py``)."""
        _check_not_forked()
        return cl.CommandQueue(self.context)

    @property
    def profiling(self) -> bool:
        """Whether this device's queue records timestamps (see :meth:`enable_profiling`)."""
        return self.__dict__.get("_profiling", False)

    def enable_profiling(self) -> None:
        """From now on, a queue whose commands carry device timestamps, as device-time
        measurements (``bench``, ``tune``) need; every later launch pays the driver's profiling
        cost, until :meth:`disable_profiling`. The current queue is drained first and work goes
        on, in order, on the new one; call it while no other thread is using the device."""
        self._switch_queue(True)

    def disable_profiling(self) -> None:
        """Back to a queue without timestamps (after device-time measurements), on the same
        terms as :meth:`enable_profiling`."""
        self._switch_queue(False)

    def _switch_queue(self, profiling: bool) -> None:
        if self.profiling == profiling:
            return
        with _queue_switch:
            if self.profiling == profiling:
                return
            _check_not_forked()
            properties = cl.command_queue_properties.PROFILING_ENABLE if profiling else 0
            new = cl.CommandQueue(self.context, properties=properties)
            old = self.__dict__.get("queue")
            if old is not None:
                calls.finish(old)
            self.__dict__["queue"] = new
            self.__dict__["_profiling"] = profiling

    @property
    def name(self) -> str:
        return self.info.name

    def synchronize(self) -> None:
        """Wait until the work queued on this device has finished (launches never wait; reading
        a result on the host does). Like ``torch.cuda.synchronize()``: for timing, and before
        measuring a pipeline's end."""
        if "queue" in self.__dict__:  # no context is made for a device that never ran anything
            calls.finish(self.queue)

    @property
    def verdict(self) -> "vetting.Verdict":
        """The driver quarantine's verdict on this device (probed once per machine)."""
        return vetting.verdict_of(self.cl_device)

    @property
    def compiler_error(self) -> str | None:
        """None when the device passed the driver probe, else why it failed."""
        verdict = self.verdict
        return None if verdict.passed else verdict.cause

    @property
    def usable(self) -> bool:
        return self.compiler_error is None

    def __reduce__(self):  # copies and unpickled devices are the process's own object
        return _device_at, (self.index,)

    def __repr__(self) -> str:
        return f"<opencl:{self.index} {self.info.type} '{self.info.name}' on '{self.info.platform}'>"

    def __str__(self) -> str:
        return f"opencl:{self.index} ({self.info.name})"


_devices: list[Device] | None = None
_queue_switch = threading.Lock()  # one switch to a profiling queue at a time
_default: Device | None = None
_current: contextvars.ContextVar[Device | None] = contextvars.ContextVar(
    "clarray_gemm_device", default=None)


def _device_at(index: int) -> Device:
    return _all_devices()[index]


def devices(all: bool = False) -> list[Device]:
    """The OpenCL devices that passed the driver probe, in platform order (each named
    ``opencl:<index>`` by its place among all devices found); ``all=True``: every device
    found, each with its probe's ``verdict``, ``usable`` and ``compiler_error``."""
    found = _all_devices()
    return list(found) if all else [d for d in found if d.usable]


def _all_devices() -> list[Device]:
    """Every OpenCL device of every platform, in platform order (index = ``opencl:<index>``)."""
    global _devices
    _check_not_forked()
    if _devices is None:
        found = []
        for platform in cl.get_platforms():
            try:
                found.extend(platform.get_devices())
            except cl.Error:
                continue
        _devices = [Device(d, i) for i, d in enumerate(found)]
        mark_opencl_loaded()
    return _devices


def _from_env(spec: str) -> Device:
    """Resolve ``PYOPENCL_CTX`` the way pyopencl does ("platform:device" or a name substring)."""
    platforms = cl.get_platforms()
    parts = spec.split(":")
    all_devs = _all_devices()

    def pick(options, key):
        if key == "":
            return options[0]
        if key.isdigit():
            return options[int(key)]
        for o in options:
            if key.lower() in o.name.lower():
                return o
        raise RuntimeError(f"PYOPENCL_CTX={spec!r}: nothing matches {key!r}")

    platform = pick(platforms, parts[0])
    plat_devs = platform.get_devices()
    cl_dev = pick(plat_devs, parts[1] if len(parts) > 1 else "")
    return next(d for d in all_devs if d.cl_device == cl_dev)


def default_device() -> Device:
    """``PYOPENCL_CTX`` if set, else the first GPU, else the first non-simulator device."""
    global _default
    if _default is None:
        all_devs = _all_devices()
        if not all_devs:
            raise NoDeviceError(
                "no OpenCL device found; install the CPU drivers from pip with "
                "`pip install clarray_gemm[cpu]`")
        spec = os.environ.get("PYOPENCL_CTX")
        if spec:
            _default = _vetted(_from_env(spec))
        else:
            _default = _first_usable(all_devs)
    return _default


def _first_usable(all_devs: list[Device]) -> Device:
    real = [d for d in all_devs if not d.info.is_simulator]
    simulators = [d for d in all_devs if d.info.is_simulator]
    vetting.vet(d.cl_device for d in real)  # the probes run in parallel
    passed = [d for d in real if d.usable]
    others = sorted((d for d in passed if not d.info.is_gpu),
                    key=lambda d: (d.verdict.score_ms is None, d.verdict.score_ms or 0.0))
    ordered = [d for d in passed if d.info.is_gpu] + others
    if not ordered:
        ordered = [d for d in simulators if d.usable]
    _warn_failed([d for d in real if not d.usable and not d.verdict.cached])
    if not ordered:
        raise NoDeviceError("no OpenCL device can run the kernels: " + "; ".join(
            f"{d!r}: {d.compiler_error}" for d in real + simulators))
    if ordered[0].info.is_simulator:
        warnings.warn(f"clarray_gemm: using the simulator {ordered[0]!r} as the default device "
                      "(correct but slow); no other device passed the driver probe",
                      RuntimeWarning, stacklevel=3)
    return ordered[0]


def _warn_failed(failed: list[Device]) -> None:
    """One warning for the drivers the quarantine rejected in this process (a verdict read from
    the cache is not repeated: ``info`` shows it): the cause and the fix of each."""
    if failed:
        warnings.warn("clarray_gemm: skipped OpenCL devices that failed the driver probe: "
                      + "; ".join(f"{d!r}: {d.compiler_error}. Fix: {vetting.fix_for(d.verdict)}"
                                  for d in failed), RuntimeWarning, stacklevel=4)


def get_device(spec: "Device | int | str | cl.Device | None" = None) -> Device:
    """Resolve a device argument: None (current), a Device, an index (an int, or a string of
    digits), ``"opencl:N"``, ``"cpu"`` (the default device if it is a CPU, else the first usable
    CPU device), a name substring, or a ``pyopencl.Device``."""
    if spec is None:
        return current_device()
    if isinstance(spec, Device):
        return spec
    all_devs = _all_devices()
    if isinstance(spec, cl.Device):
        for d in all_devs:
            if d.cl_device == spec:
                return _vetted(d)
        raise ValueError(f"unknown OpenCL device {spec!r}")
    if isinstance(spec, int) and not isinstance(spec, bool):
        if not 0 <= spec < len(all_devs):
            raise ValueError(f"device index {spec} out of range: {len(all_devs)} devices")
        return _vetted(all_devs[spec])
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() == "cpu":  # the default device where it is a CPU, else the first CPU
            default = default_device()
            if default.info.is_cpu:
                return default
            return next((d for d in all_devs if d.info.is_cpu and d.usable), default)
        if text.isdigit():  # "1", as an index is given on a command line
            return get_device(int(text))
        if text.lower().startswith("opencl:") and text[7:].isdigit():
            return get_device(int(text[7:]))
        for d in all_devs:
            if text.lower() in d.name.lower() or text.lower() in d.info.platform.lower():
                return _vetted(d)
        raise ValueError(f"no OpenCL device matches {spec!r}; available: "
                         + ", ".join(str(d) for d in all_devs))
    raise TypeError(f"device must be a Device, int, str or pyopencl.Device, not {type(spec).__name__}")


def _vetted(device: Device) -> Device:
    """``device`` if it passed the driver probe, else a ValueError with the cause and the fix."""
    if not device.usable:
        raise ValueError(f"{device!r} failed the driver probe: {device.compiler_error}. Fix: "
                         f"{vetting.fix_for(device.verdict)}")
    return device


def current_device() -> Device:
    """The device new arrays go to: the innermost ``use_device`` block's, else the default."""
    return _current.get() or default_device()


@contextlib.contextmanager
def use_device(spec: "Device | int | str | cl.Device") -> Iterator[Device]:
    """Make ``spec`` the current device inside a ``with`` block."""
    dev = get_device(spec)
    token = _current.set(dev)
    try:
        yield dev
    finally:
        _current.reset(token)


# -- fork ------------------------------------------------------------------------------------
def _forget_devices() -> None:
    """In a forked child: the parent's device list, contexts and queues, kept alive unused."""
    global _devices, _default
    if _devices is None:
        return
    for dev in _devices:
        for name in ("context", "queue"):
            handle = dev.__dict__.pop(name, None)
            if handle is not None:
                keep_in_child(handle)
    keep_in_child(_devices)
    _devices, _default = None, None


register_fork_reset(_forget_devices)


def synchronize(device: "Device | int | str | None" = None) -> None:
    """Wait until the work queued on ``device`` (default: every device this process used) has
    finished; see :meth:`Device.synchronize`."""
    if device is not None:
        get_device(device).synchronize()
        return
    for dev in _devices or ():
        dev.synchronize()
