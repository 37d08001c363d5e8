"""The 1-D convolution catalogue: every correlation kernel, what it needs, how it is launched.

All kernels compute one formula, a correlation with zero "ghost cells" outside the input:

    out[k] = sum_{j<m} x[k + j - pad] * w[j]        for k in range(L)

``ops/convolve.py`` maps NumPy's ``convolve``/``correlate`` and their modes onto it (the mask is
reversed for ``convolve``; ``pad`` and ``L`` come from the mode) and describes the call as a
:class:`ConvProblem`; this module picks the variant and launches it. The kernels share the
calling convention of ``opencl/conv_basic.cl``; ``fft`` runs a sequence of launches of
``opencl/conv_fft.cl``.
"""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..memory import new_buffer
from .programs import dtype_defines, get_kernel, unsupported_dtype
from .variant import Catalogue, Choice, Variant

__all__ = ["ConvProblem", "CATALOGUE", "choose", "run", "launch_counts", "fft_length",
           "GPU_FFT_MAC_RATIO", "GPU_CHUNKS",
           "fft_preferred", "FFT_MAC_RATIO", "FFT_MIN_MASK", "VEC_MIN_OUTPUTS"]

# When the FFT path replaces the direct kernels: the direct cost is about min(L, n) * m
# multiply-adds, the FFT's about P * log2(P) (three transforms of P = 2**ceil(log2(n + m - 1))
# points), and the FFT wins when the first exceeds FFT_MAC_RATIO times the second.
# Measured with both kernels forced (float32, "full" mode, median of 7 after a warm-up, PoCL 3.1
# on 2 cores of an AMD EPYC with AVX-512, shared with other jobs; vec at its defaults VW=16
# NV=4, fft with radix-8 passes):
#   n = 2**16: m = 4096  vec  11.2 ms, fft  11.4 ms;  m = 6144  vec  16.0 ms, fft  11.7 ms
#   n = 2**20: m = 3072  vec  97 ms,   fft 191 ms;    m = 4096  vec 124 ms,   fft 124 ms;
#              m = 6144  vec 230 ms,   fft 140 ms;    m = 8192  vec 288 ms,   fft 167 ms
# The break-even points, n = 2**20 at m = 4096 and n = 2**16 near m = 5000, are
# n*m / (P log2 P) = 98 and about 147: FFT_MAC_RATIO = 120. FFT_MIN_MASK keeps short masks on
# the direct kernels whatever n is.
FFT_MAC_RATIO = 120
FFT_MIN_MASK = 1024
# Below this many outputs a call is all launch overhead and vec (64 outputs per work-item by
# default) leaves most of the device idle: const is picked instead. Measured end to end, same
# device (median of 41): n=7, m=3: const 756 us, vec 1177 us; n=200, m=63: const 963 us,
# vec 1343 us; n=1000, m=63: const 489 us, vec 440 us.
VEC_MIN_OUTPUTS = 256

_INT_MAX = 2**31 - 1

launch_counts: Counter = Counter()
"""How many times each variant was launched in this process (tests use it to prove that a call
ran on the device, and which kernel it ran)."""


@dataclass(frozen=True)
class ConvProblem:
    """``out[k] = sum_{j<m} x[x_offset + k + j - pad] * w[j]`` for ``k < length``, ``x`` taken
    as zero outside ``[0, n)``; ``w`` and ``out`` are contiguous from element 0."""

    n: int
    m: int
    pad: int
    length: int
    dtype: np.dtype
    x: cl.Buffer
    x_offset: int
    w: cl.Buffer
    out: cl.Buffer

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def macs(self) -> int:
        """Multiply-adds a direct kernel does, about (exact for "full" and "valid")."""
        return min(self.length, self.n) * self.m


CATALOGUE: Catalogue[ConvProblem] = Catalogue("convolve")


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def dtype_supported(problem: ConvProblem, info: DeviceInfo) -> str | None:
    dt = np.dtype(problem.dtype)
    why = unsupported_dtype(dt, info) or (f"dtype {dt} has no kernel" if dt.itemsize < 4 else None)
    if why:
        return why
    if problem.n + problem.m > _INT_MAX:
        return "lengths beyond 2**31 (the kernels index with int)"
    return None


def _wg_fits(params: Mapping[str, int], info: DeviceInfo) -> str | None:
    if params["WG"] > info.max_work_group_size:
        return f"work-group {params['WG']} larger than the device allows"
    return None


def _args(problem: ConvProblem) -> tuple:
    """Arguments in the shared convention of the direct kernels (see conv_basic.cl)."""
    p = problem
    i32 = np.int32
    return (p.x, np.int64(p.x_offset), i32(p.n), p.w, i32(p.m), i32(p.pad), p.out,
            i32(p.length))


def _launch_direct(name: str):
    def launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
        variant = CATALOGUE[name]
        defines = dtype_defines(problem.dtype)
        defines.update(params)
        kernel = get_kernel(device, variant.source, variant.entry, defines)
        wg = params["WG"]
        items = -(-problem.length // (params.get("VW", 1) * params.get("NV", 1)))
        launch_counts[name] += 1
        return kernel(device.queue, (_round_up(items, wg),), (wg,), *_args(problem))
    return launch


# -- basic -------------------------------------------------------------------------------------
CATALOGUE.add(Variant(
    name="basic",
    source="conv_basic.cl",
    entry="conv_basic",
    summary="one output per work-item, a bounds test per tap",
    defaults={"WG": 64},
    fits=lambda p, info, params: dtype_supported(p, info) or _wg_fits(params, info),
    rank=lambda p, info: 1.0,
    launch=_launch_direct("basic"),
    tunable={"WG": (32, 64, 128, 256)},
))


# -- const -------------------------------------------------------------------------------------
def _const_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if p.m * p.itemsize > info.constant_mem_bytes:
        return (f"mask of {p.m * p.itemsize} bytes exceeds the device's constant memory "
                f"({info.constant_mem_bytes} bytes)")
    return dtype_supported(p, info) or _wg_fits(params, info)


CATALOGUE.add(Variant(
    name="const",
    source="conv_const.cl",
    entry="conv_const",
    summary="mask in __constant memory, clamped tap range",
    defaults={"WG": 64},
    fits=_const_fits,
    rank=lambda p, info: 5.0,
    launch=_launch_direct("const"),
    tunable={"WG": (32, 64, 128, 256)},
))


# -- tiled -------------------------------------------------------------------------------------
def _local_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int],
                elements: int) -> str | None:
    need = elements * p.itemsize
    if need > info.local_mem_bytes:
        return f"needs {need} bytes of local memory, the device has {info.local_mem_bytes}"
    return dtype_supported(p, info) or _wg_fits(params, info)


def _gpu_rank(on_gpu: float):
    # On CPU drivers local memory is ordinary memory and barriers cost: there the tiled kernels
    # rank below const (vec beats all four: n = 2**20, m = 63, float32 on PoCL: vec 8.8 ms,
    # tiled 36 ms, const 52 ms, cached 60 ms, basic 70 ms). On GPUs with real local memory the
    # order follows seed 004 (tiled > cached > const); no GPU was at hand to measure it.
    return lambda p, info: on_gpu if not info.local_mem_is_global and info.is_gpu else 2.0


CATALOGUE.add(Variant(
    name="tiled",
    source="conv_tiled.cl",
    entry="conv_tiled",
    summary="tile plus halo cells (and the mask, in chunks of WG taps) in local memory",
    defaults={"WG": 128},
    fits=lambda p, info, params: _local_fits(p, info, params, 3 * params["WG"]),
    rank=_gpu_rank(7.0),
    launch=_launch_direct("tiled"),
    tunable={"WG": (64, 128, 256)},
))


# -- cached ------------------------------------------------------------------------------------
CATALOGUE.add(Variant(
    name="cached",
    source="conv_cached.cl",
    entry="conv_cached",
    summary="own tile in local memory, halo read from global memory through the cache",
    defaults={"WG": 128},
    fits=lambda p, info, params: _local_fits(p, info, params, params["WG"]),
    rank=_gpu_rank(6.0),
    launch=_launch_direct("cached"),
    tunable={"WG": (64, 128, 256)},
))


# -- vec ---------------------------------------------------------------------------------------
def _vec_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if params["VW"] not in (2, 4, 8, 16):
        return f"VW={params['VW']} is not an OpenCL vector width"
    if not 1 <= params["NV"] <= 8:
        return f"NV={params['NV']} outside 1..8"
    return dtype_supported(p, info) or _wg_fits(params, info)


def _vec_rank(p: ConvProblem, info: DeviceInfo) -> float:
    return 8.0 if p.length >= VEC_MIN_OUTPUTS else 3.0


CATALOGUE.add(Variant(
    name="vec",
    source="conv_vec.cl",
    entry="conv_vec",
    summary="NV*VW consecutive outputs per work-item in NV vectors of width VW",
    defaults={"WG": 64, "VW": 16, "NV": 4},
    fits=_vec_fits,
    rank=_vec_rank,
    launch=_launch_direct("vec"),
    tunable={"WG": (8, 16, 64), "VW": (4, 8, 16), "NV": (1, 2, 4)},
))


# -- gpu ---------------------------------------------------------------------------------------
GPU_FFT_MAC_RATIO = 230
"""FFT_MAC_RATIO for ``gpu`` on GPUs. H100, n = 2**24, "same" (ratio = m / 50 there): gpu
2.79 / 5.56 / 11.1 ms at m = 4095 / 8191 / 16383, fft 7.79 ms at all three; the direct time is
linear in m and meets the FFT's at m = 11500, ratio 230."""
GPU_CHUNKS = (64, 256, 512)
"""The mask chunks (taps staged in local memory at once) that ``gpu`` picks from when MC=0: the
smallest that holds the mask, else the largest. Fewer taps per chunk leave room in local memory
for more work-groups per compute unit (H100: see benches/gpu-notes.md, "Convolution")."""


def _gpu_resolve(p: ConvProblem, params: Mapping[str, int]) -> dict[str, int]:
    """The parameters with MC=0 replaced by the chunk that GPU_CHUNKS gives for this mask."""
    out = dict(params)
    if not out.get("MC"):
        ju = out["JU"]
        mc = next((c for c in GPU_CHUNKS if c >= p.m), GPU_CHUNKS[-1])
        out["MC"] = max(ju, _round_up(mc, ju)) if ju > 0 else mc
    return out


def _gpu_local_elements(params: Mapping[str, int]) -> int:
    """Local-memory elements of conv_gpu.cl: padded tile plus halo, and one mask chunk."""
    vectors = (params["WG"] * params["R"] + params["MC"]) // 4
    return (vectors + vectors // 8 + 1) * 4 + params["MC"]


def _gpu_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    params = _gpu_resolve(p, params)
    r, ju, mc = params["R"], params["JU"], params["MC"]
    if r % 4 or ju % 4 or r <= 0 or ju <= 0 or mc <= 0 or mc % ju:
        return f"R={r} and JU={ju} must be multiples of 4 and MC={mc} a multiple of JU"
    if params["GPC"] < 0:
        return f"GPC={params['GPC']} is negative"
    if p.length + params["WG"] * r > _INT_MAX:
        return "lengths beyond 2**31 (the kernels index with int)"
    return _local_fits(p, info, params, _gpu_local_elements(params))


def _gpu_kernel_rank(p: ConvProblem, info: DeviceInfo) -> float:
    # H100, n = 2**24, "same": gpu 0.053 / 0.065 / 0.71 ms at m = 5 / 63 / 1023, vec 0.49 /
    # 4.4 / 72 ms (benches/gpu-notes.md, "Convolution"). PoCL 3.1 (2 cores), n = 2**20, m = 63,
    # "same", end to end: gpu 20-22 ms, vec 3-5.5 ms: on CPU drivers vec stays the choice.
    if info.is_gpu and not info.is_simulator and not info.local_mem_is_global:
        return 8.5 if fft_preferred(p, GPU_FFT_MAC_RATIO) else 9.5
    return 1.5


def _gpu_launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    params = _gpu_resolve(problem, params)
    defines = dtype_defines(problem.dtype)
    defines.update(params)
    defines.pop("GPC")
    kernel = get_kernel(device, "conv_gpu.cl", "conv_gpu", defines)
    wg = params["WG"]
    groups = -(-problem.length // (wg * params["R"]))
    if params["GPC"] > 0:
        groups = min(groups, params["GPC"] * device.info.compute_units)
    launch_counts["gpu"] += 1
    return kernel(device.queue, (groups * wg,), (wg,), *_args(problem))


CATALOGUE.add(Variant(
    name="gpu",
    source="conv_gpu.cl",
    entry="conv_gpu",
    summary="tile plus halo in local memory, R outputs per work-item in a sliding register "
            "window (MC=0: mask chunk chosen from the mask length; GPC>0: GPC groups per "
            "compute unit walk all tiles)",
    defaults={"WG": 64, "R": 32, "JU": 16, "MC": 0, "GPC": 0},
    fits=_gpu_fits,
    rank=_gpu_kernel_rank,
    launch=_gpu_launch,
    tunable={"WG": (64, 128, 256), "R": (8, 16, 32), "JU": (8, 16), "GPC": (0, 4, 8)},
))


# -- fft ---------------------------------------------------------------------------------------
def fft_length(problem: ConvProblem) -> int:
    """The power-of-two transform length: at least n + m - 1, so no wrap-around."""
    return 1 << max(problem.n + problem.m - 2, 1).bit_length()


def _fft_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype).kind != "f":
        return "integer results must be exact; the FFT path is for floating dtypes only"
    P = fft_length(p)
    if 2 * P * p.itemsize > info.max_alloc_bytes or 3 * 2 * P * p.itemsize > info.global_mem_bytes:
        return f"three complex buffers of {P} elements do not fit in device memory"
    if P > _INT_MAX:
        return "transform longer than 2**31"
    return dtype_supported(p, info) or _wg_fits(params, info)


def fft_preferred(p: ConvProblem, ratio: float = FFT_MAC_RATIO) -> bool:
    """True when the FFT path is expected to beat the direct kernels: when the direct kernels'
    multiply-adds exceed ``ratio`` times P log2 P (FFT_MAC_RATIO: measured on a CPU)."""
    if np.dtype(p.dtype).kind != "f" or p.m < FFT_MIN_MASK:
        return False
    P = fft_length(p)
    return p.macs > ratio * P * (P.bit_length() - 1)


def _fft_rank(p: ConvProblem, info: DeviceInfo) -> float:
    return 9.0 if fft_preferred(p) else 0.5


_TWIDDLES: dict[tuple, tuple[cl.Buffer, list]] = {}
_TWIDDLES_KEPT = 4


def _passes(P: int) -> list[tuple[int, int]]:
    """The (radix, span) of each Stockham pass: radix 8 while it divides, then 4 or 2."""
    out, p = [], 1
    while p < P:
        radix = 8 if P // p >= 8 else P // p
        out.append((radix, p))
        p *= radix
    return out


def _twiddles(device: Device, kernels: dict, P: int, dtype: np.dtype, wg: int
              ) -> tuple[cl.Buffer, list[tuple[int, int, int]]]:
    """The twiddle table and, per pass, (radix, span, offset of its segment
    exp(-2 pi i e / (radix*span)), e < radix*span); built on the device once per
    (device, P, dtype), the few most recent tables kept."""
    key = (device.cl_device.int_ptr, P, np.dtype(dtype).str)
    entry = _TWIDDLES.pop(key, None)
    if entry is None:
        segments, total = [], 0
        for radix, p in _passes(P):
            segments.append((radix, p, total))
            total += radix * p
        table = new_buffer(device, total * 2 * np.dtype(dtype).itemsize)
        for radix, p, off in segments:
            n = radix * p
            kernels["fft_twiddles"](device.queue, (_round_up(n, wg),), (wg,), table,
                                    np.int32(off), np.int32(n))
        entry = (table, segments)
        while len(_TWIDDLES) >= _TWIDDLES_KEPT:
            _TWIDDLES.pop(next(iter(_TWIDDLES)))
    _TWIDDLES[key] = entry
    return entry


def _fft_transform(device: Device, kernels: dict, src: cl.Buffer, tmp: cl.Buffer,
                   twiddles: tuple, P: int, sign: int, wg: int) -> tuple[cl.Buffer, cl.Buffer]:
    """Stockham FFT of ``src`` (length P); returns (buffer holding the result, the other)."""
    table, segments = twiddles
    for radix, p, off in segments:
        items = P // radix
        kernels[f"fft_radix{radix}"](device.queue, (_round_up(items, wg),), (wg,), src, tmp,
                                     table, np.int32(off), np.int32(P), np.int32(p),
                                     np.int32(sign))
        src, tmp = tmp, src
    return src, tmp


_SCRATCH: dict[int, tuple[int, str, tuple[cl.Buffer, ...]]] = {}
# The FFT's launches must reach the in-order queue as one block, since they share the scratch
# buffers (a second thread's launches in between would overwrite them).
_FFT_LOCK = threading.Lock()


def _scratch(device: Device, P: int, dtype: np.dtype) -> tuple[cl.Buffer, ...]:
    """Three complex work buffers of P elements, kept for the next call of the same size (the
    queue is in order, so a call can reuse them as soon as its launches are enqueued)."""
    key = device.cl_device.int_ptr
    kept = _SCRATCH.get(key)
    if kept is None or kept[0] != P or kept[1] != np.dtype(dtype).str:
        cbytes = 2 * P * np.dtype(dtype).itemsize
        kept = (P, np.dtype(dtype).str, tuple(new_buffer(device, cbytes) for _ in range(3)))
        _SCRATCH[key] = kept
    return kept[2]


def _fft_launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    with _FFT_LOCK:
        return _fft_enqueue(device, problem, params)


def _fft_enqueue(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    p = problem
    defines = {"T": dtype_defines(p.dtype)["T"], "IS_FP64": int(np.dtype(p.dtype) == np.float64)}
    names = ("fft_twiddles", "fft_pack", "fft_radix2", "fft_radix4", "fft_radix8", "fft_cmul",
             "fft_extract")
    k = {name: get_kernel(device, "conv_fft.cl", name, defines) for name in names}
    P = fft_length(p)
    wg = min(params["WG"], P)
    a, b, c = _scratch(device, P, p.dtype)
    grid = (_round_up(P, wg),)
    i32 = np.int32
    q = device.queue
    table = _twiddles(device, k, P, p.dtype, wg)
    k["fft_pack"](q, grid, (wg,), p.x, np.int64(p.x_offset), i32(p.n), i32(0), a, i32(P))
    fx, free = _fft_transform(device, k, a, b, table, P, 1, wg)
    k["fft_pack"](q, grid, (wg,), p.w, np.int64(0), i32(p.m), i32(1), c, i32(P))
    fw, _ = _fft_transform(device, k, c, free, table, P, 1, wg)
    scale = np.dtype(p.dtype).type(1.0 / P)
    k["fft_cmul"](q, grid, (wg,), fx, fw, i32(P), scale)
    y, _ = _fft_transform(device, k, fx, fw, table, P, -1, wg)
    launch_counts["fft"] += 1
    return k["fft_extract"](q, (_round_up(p.length, wg),), (wg,), y, i32(p.m - 1 - p.pad),
                            p.out, i32(p.length))


CATALOGUE.add(Variant(
    name="fft",
    source="conv_fft.cl",
    entry="fft_radix4",
    summary="zero-padded power-of-two Stockham FFT (radix 8/4/2), pointwise product, inverse FFT",
    defaults={"WG": 64},
    fits=_fft_fits,
    rank=_fft_rank,
    launch=_fft_launch,
    tunable={"WG": (64, 128, 256)},
))


def choose(device: Device, problem: ConvProblem, kernel: str | None = None,
           params: Mapping[str, int] | None = None) -> Choice[ConvProblem]:
    """The variant that runs ``problem`` on ``device`` (see :meth:`Catalogue.choose`)."""
    return CATALOGUE.choose(problem, device, kernel, params)


def run(device: Device, problem: ConvProblem, kernel: str | None = None,
        params: Mapping[str, int] | None = None) -> tuple[cl.Event, Choice[ConvProblem]]:
    """Choose a variant and enqueue it; returns the last event and the choice."""
    choice = choose(device, problem, kernel, params)
    event = choice.variant.launch(device, problem, choice.params)
    return event, choice
