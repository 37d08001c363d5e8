"""The direct 1-D convolution kernels: each output a sum over the mask, one ``.cl`` file per
idea (seed 004 and beyond), all with the calling convention of ``opencl/conv_basic.cl``.

=======  =====================================================================  ==============
name     idea                                                                   chosen on
=======  =====================================================================  ==============
basic    one output per work-item, a bounds test per tap                        (forced)
const    mask in ``__constant`` memory, clamped tap range                       short outputs
tiled    tile plus halo (and mask chunks) in local memory                       GPUs (seed 004)
cached   own tile in local memory, halo through the cache                       (forced)
vec      NV vectors of VW outputs per work-item                                 CPU devices
gpu      tile + halo in local memory, R outputs in a sliding register window    GPUs
=======  =====================================================================  ==============
"""
from __future__ import annotations

from functools import partial
from typing import Callable, Mapping, Sequence

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import dtype_defines
from .conv_fft import fft_preferred
from .conv_problem import (INT_MAX, ConvProblem, dtype_supported, launch_counts,
                           local_fits, round_up, wg_fits)
from .constants import constant
from .programs import get_kernel
from .variant import Variant

__all__ = ["VEC_MIN_OUTPUTS", "GPU_FFT_MAC_RATIO", "GPU_CHUNKS", "VARIANTS",
           "FLIPPED_MASK_PREPARES"]

# Below this many outputs a call is all launch overhead and vec (64 outputs per work-item by
# default) leaves most of the device idle: const is picked instead (tuning data).
VEC_MIN_OUTPUTS = constant("conv.vec_min_outputs")

Fits = Callable[[ConvProblem, DeviceInfo, Mapping[str, int]], "str | None"]
Rank = Callable[[ConvProblem, DeviceInfo], float]


def _prepared(device: Device, name: str, kernel, global_size: int, wg: int,
              problem: ConvProblem) -> Callable[..., cl.Event]:
    """``run(x, x_offset, w, out)``: enqueue ``kernel`` in the direct kernels' convention for
    ``problem``'s lengths, everything but the buffers and the signal's offset fixed once."""
    i32, int64, queue = np.int32, np.int64, device.queue
    n, m, pad, length = i32(problem.n), i32(problem.m), i32(problem.pad), i32(problem.length)
    gsize, lsize = (global_size,), (wg,)

    def run(x: cl.Buffer, x_offset: int, w: cl.Buffer, out: cl.Buffer) -> cl.Event:
        launch_counts[name] += 1
        return kernel(queue, gsize, lsize, x, int64(x_offset), n, w, m, pad, out, length)
    return run


def _prepare_direct(name: str):
    """The ``prepare`` of ``conv_<name>.cl``: one work-item per ``VW * NV`` outputs (1 if unset)."""
    def prepare(device: Device, problem: ConvProblem, params: Mapping[str, int]):
        defines = dtype_defines(problem.dtype)
        defines.update(params)
        kernel = get_kernel(device, f"conv_{name}.cl", f"conv_{name}", defines)
        wg = params["WG"]
        items = -(-problem.length // (params.get("VW", 1) * params.get("NV", 1)))
        return _prepared(device, name, kernel, round_up(items, wg), wg, problem)
    return prepare


def _launch_by(prepare: Callable[..., Callable[..., cl.Event]]):
    """A variant's ``launch`` through its ``prepare``."""
    def launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
        return prepare(device, problem, params)(problem.x, problem.x_offset, problem.w,
                                                problem.out)
    return launch


def _plain_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    return dtype_supported(p, info) or wg_fits(params, info)


def _direct(name: str, summary: str, defaults: Mapping[str, int],
            tunable: Mapping[str, Sequence[int]], rank: Rank | float,
            fits: Fits = _plain_fits, prepare: Callable | None = None) -> Variant[ConvProblem]:
    """A direct kernel: source ``conv_<name>.cl``, entry ``conv_<name>``."""
    prepare = prepare or _prepare_direct(name)
    return Variant(name=name, source=f"conv_{name}.cl", entry=f"conv_{name}", summary=summary,
                   defaults=defaults, fits=fits,
                   rank=rank if callable(rank) else (lambda p, info: rank),
                   launch=_launch_by(prepare), tunable=tunable, prepare=prepare)


# -- const -------------------------------------------------------------------------------------
def _const_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if p.m * p.itemsize > info.constant_mem_bytes:
        return (f"mask of {p.m * p.itemsize} bytes exceeds the device's constant memory "
                f"({info.constant_mem_bytes} bytes)")
    return _plain_fits(p, info, params)


# -- tiled, cached -----------------------------------------------------------------------------
def _gpu_rank(on_gpu: float) -> Rank:
    # On CPU drivers local memory is ordinary memory and barriers cost: there the tiled kernels
    # rank below const (vec beats all four, measured on PoCL). On GPUs with real local memory
    # the order follows seed 004 (tiled > cached > const); the measured choice tables and the
    # gpu kernel decide there first.
    return lambda p, info: on_gpu if not info.local_mem_is_global and info.is_gpu else 2.0


# -- vec ---------------------------------------------------------------------------------------
def _vec_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if params["VW"] not in (2, 4, 8, 16):
        return f"VW={params['VW']} is not an OpenCL vector width"
    if not 1 <= params["NV"] <= 8:
        return f"NV={params['NV']} outside 1..8"
    return _plain_fits(p, info, params)


def _vec_rank(p: ConvProblem, info: DeviceInfo) -> float:
    return 8.0 if p.length >= VEC_MIN_OUTPUTS else 3.0


# -- gpu ---------------------------------------------------------------------------------------
GPU_FFT_MAC_RATIO = 230
"""FFT_MAC_RATIO for ``gpu`` on GPUs. H100, n = 2**24, "same" (ratio = m / 50 there): gpu
2.79 / 5.56 / 11.1 ms at m = 4095 / 8191 / 16383, fft 7.79 ms at all three; the direct time is
linear in m and meets the FFT's at m = 11500, ratio 230."""
GPU_CHUNKS = (64, 256, 512)
"""The mask chunks (taps staged in local memory at once) that ``gpu`` picks from when MC=0: the
smallest that holds the mask, else the largest. Fewer taps per chunk leave room in local memory
for more work-groups per compute unit (H100: see benches/gpu-notes.md, "Convolution")."""


FIXED_M_MAX = GPU_CHUNKS[0]
"""Masks up to this many taps are compiled into ``gpu`` (FIXED_M=1: one build per mask length),
so the chunk's step count and its last partial step fold away. H100, N = 2**24, 20 launches
queued: m = 63 0.0683-0.0692 -> 0.0630-0.0636 ms (72-73% -> 78-79% of a copy), m = 31 0.0534 ->
0.0515 ms; m = 3 and 15 within 1% (2026-11-26, benches/probes/conv_gpu_sweep.py). Longer masks
are FMA-bound, and a build per length would cost more than a partial step."""


def _gpu_resolve(p: ConvProblem, params: Mapping[str, int]) -> dict[str, int]:
    """The parameters with MC=0 replaced by the chunk that GPU_CHUNKS gives for this mask."""
    out = dict(params)
    if not out.get("MC"):
        ju = out["JU"]
        mc = next((c for c in GPU_CHUNKS if c >= p.m), GPU_CHUNKS[-1])
        out["MC"] = max(ju, round_up(mc, ju)) if ju > 0 else mc
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
    if params["FIXED_M"] not in (0, 1):
        return f"FIXED_M={params['FIXED_M']} must be 0 or 1"
    if p.length + params["WG"] * r > INT_MAX:
        return "lengths beyond 2**31 (the kernels index with int)"
    return local_fits(p, info, params, _gpu_local_elements(params))


def _gpu_kernel_rank(p: ConvProblem, info: DeviceInfo) -> float:
    # gpu (local-memory tiles) is an order of magnitude ahead of vec on GPUs and several times
    # behind it on CPU drivers (benches/gpu-notes.md, "Convolution"): vec stays the CPU choice.
    if info.is_gpu and not info.is_simulator and not info.local_mem_is_global:
        return 8.5 if fft_preferred(p, GPU_FFT_MAC_RATIO) else 9.5
    return 1.5


def _gpu_prepare(device: Device, problem: ConvProblem, params: Mapping[str, int],
                 flipped_mask: bool = False):
    params = _gpu_resolve(problem, params)
    defines = dtype_defines(problem.dtype)
    defines.update(params)
    defines.pop("GPC")
    if defines.pop("FIXED_M") and problem.m <= FIXED_M_MAX:
        defines["MASK_LEN"] = problem.m
    if flipped_mask:
        defines["FLIP_W"] = 1
    kernel = get_kernel(device, "conv_gpu.cl", "conv_gpu", defines)
    wg = params["WG"]
    groups = -(-problem.length // (wg * params["R"]))
    if params["GPC"] > 0:
        groups = min(groups, params["GPC"] * device.info.compute_units)
    return _prepared(device, "gpu", kernel, groups * wg, wg, problem)


FLIPPED_MASK_PREPARES = {"gpu": partial(_gpu_prepare, flipped_mask=True)}
"""The direct kernels that read a reversed mask in place (a convolution's mask as given:
FLIP_W, so the caller makes no reversed copy first): name -> ``prepare`` for it."""


VARIANTS: tuple[Variant[ConvProblem], ...] = (
    _direct("basic", "one output per work-item, a bounds test per tap",
            {"WG": 64}, {"WG": (32, 64, 128, 256)}, rank=1.0),
    _direct("const", "mask in __constant memory, clamped tap range",
            {"WG": 64}, {"WG": (32, 64, 128, 256)}, rank=5.0, fits=_const_fits),
    _direct("tiled", "tile plus halo cells (and the mask, in chunks of WG taps) in local memory",
            {"WG": 128}, {"WG": (64, 128, 256)}, rank=_gpu_rank(7.0),
            fits=lambda p, info, params: local_fits(p, info, params, 3 * params["WG"])),
    _direct("cached", "own tile in local memory, halo read from global memory through the cache",
            {"WG": 128}, {"WG": (64, 128, 256)}, rank=_gpu_rank(6.0),
            fits=lambda p, info, params: local_fits(p, info, params, params["WG"])),
    _direct("vec", "NV*VW consecutive outputs per work-item in NV vectors of width VW",
            {"WG": 64, "VW": 16, "NV": 4}, {"WG": (8, 16, 64), "VW": (4, 8, 16), "NV": (1, 2, 4)},
            rank=_vec_rank, fits=_vec_fits),
    _direct("gpu", "tile plus halo in local memory, R outputs per work-item in a sliding "
                   "register window (MC=0: mask chunk chosen from the mask length; GPC>0: GPC "
                   "groups per compute unit walk all tiles; FIXED_M=1: masks of up to 64 taps "
                   "compiled in)",
            {"WG": 64, "R": 32, "JU": 16, "MC": 0, "GPC": 0, "FIXED_M": 1},
            {"WG": (64, 128, 256), "R": (8, 16, 32), "JU": (8, 16), "GPC": (0, 4, 8),
             "FIXED_M": (0, 1)},
            rank=_gpu_kernel_rank, fits=_gpu_fits, prepare=_gpu_prepare),
)
"""In catalogue order (ties in rank go to the earlier)."""
