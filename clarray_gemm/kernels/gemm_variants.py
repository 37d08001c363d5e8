"""The GEMM kernels beyond ``naive``: their rules (fits, rank) and launchers.

=========  =====================  ========================================================
name       source                 chosen when
=========  =====================  ========================================================
gemv       gemv.cl                M == 1 or N == 1 (a matrix-vector product)
const_b    gemm_const_b.cl        B is small (K, N <= 64) and A has many rows (any device)
cpu        gemm_cpu.cl            CPU devices (PoCL): packed panels, wide vectors along N
image      gemm_image.cl          Adreno GPUs, float32 (B through the texture pipe); elsewhere
                                  only where a measurement of the device puts it first
vec        gemm_vec.cl            GPUs: float4/float8 tiles
regtile    gemm_regtile.cl        (work per thread, any dtype and layout without packing)
tiled      gemm_tiled.cl          (local-memory tiles)
naive      gemm_naive.cl          tiny products, where launch cost dominates
=========  =====================  ========================================================

Every launcher takes the :class:`GemmProblem` as ``ops/matmul.py`` describes it (views,
transposes, broadcast batches) and packs an operand on the device only where its kernel needs
an aligned, zero-padded layout. :data:`VARIANTS` lists them; ``kernels/registry.py`` adds them to
``gemm.CATALOGUE``.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..memo import Memo
from ..drivers import calls
from ..dtypes import dtype_defines, unsupported_dtype
from ..memory import count_transfer, new_buffer
from .gemm import (GemmOperand, GemmProblem, _round_up, base_defines,
                   dtype_supported, launch_standard, pack_operand, with_operands)
from .programs import get_kernel
from .variant import Variant

__all__ = ["TINY_VOLUME", "CONST_B_MAX", "vector_width", "VARIANTS"]

TINY_VOLUME = 32 ** 3
"""Products with M*N*K up to this are left to ``naive``: one launch, no packing, no tiles."""

_VECTOR_WIDTHS = (2, 4, 8, 16)
i32, i64 = np.int32, np.int64


def _tiny(p: GemmProblem) -> bool:
    return p.M * p.N * p.K <= TINY_VOLUME


def _is_gemv(p: GemmProblem) -> bool:
    return p.M == 1 or p.N == 1


def _work_group(info: DeviceInfo, threads: int) -> str | None:
    if threads > info.max_work_group_size:
        return f"work-group of {threads} exceeds the device's {info.max_work_group_size}"
    return None


def _local_mem(info: DeviceInfo, nbytes: int) -> str | None:
    if nbytes > info.local_mem_bytes:
        return f"needs {nbytes} bytes of local memory, the device has {info.local_mem_bytes}"
    return None


def _first(*reasons: str | None) -> str | None:
    return next((r for r in reasons if r), None)


def _tile_rank(on_gpu: float, elsewhere: float):
    """The rank of a tiled kernel: low for tiny products, else by the kind of device."""
    return lambda p, info: 0.5 if _tiny(p) else (on_gpu if info.is_gpu else elsewhere)


# -- tiled -------------------------------------------------------------------------------------
def _tiled_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    ts = params["TS"]
    return _first(dtype_supported(p, info), _work_group(info, ts * ts),
                  _local_mem(info, 2 * ts * ts * p.itemsize))


def _tiled_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    ts = params["TS"]
    gs = (_round_up(p.N, ts), _round_up(p.M, ts), p.batch)
    return launch_standard(device, p, TILED, params, gs, (ts, ts, 1))


TILED = Variant(
    name="tiled", source="gemm_tiled.cl", entry="gemm_tiled",
    summary="TS x TS tiles of A and B in local memory",
    defaults={"TS": 16}, fits=_tiled_fits, rank=_tile_rank(on_gpu=5.0, elsewhere=2.0),
    launch=_tiled_launch,
    tunable={"TS": (8, 16, 32)},
)


# -- regtile -----------------------------------------------------------------------------------
def _block_tiles_fit(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int],
                     cols_per_item: int, cols_name: str) -> str | None:
    """The rules regtile and vec share: TSM x TSN tiles of C, a WPTM x ``cols_per_item``
    block per work-item, TSK-deep slices of A and B in local memory."""
    tsm, tsn, tsk, wm = (params[k] for k in ("TSM", "TSN", "TSK", "WPTM"))
    if min(tsm, tsn, tsk, wm, cols_per_item) < 1 or tsm % wm or tsn % cols_per_item:
        return f"TSM must be a multiple of WPTM and TSN of {cols_name}"
    return _first(dtype_supported(p, info),
                  _work_group(info, (tsm // wm) * (tsn // cols_per_item)),
                  _local_mem(info, (tsm + tsn) * tsk * p.itemsize))


def _launch_block_tiles(device: Device, p: GemmProblem, variant: Variant[GemmProblem],
                        params: Mapping[str, int], cols_per_item: int) -> cl.Event:
    tsm, tsn = params["TSM"], params["TSN"]
    local = (tsn // cols_per_item, tsm // params["WPTM"], 1)
    gs = (-(-p.N // tsn) * local[0], -(-p.M // tsm) * local[1], p.batch)
    return launch_standard(device, p, variant, params, gs, local)


def _regtile_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    return _block_tiles_fit(p, info, params, params["WPTN"], "WPTN")


def _regtile_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _launch_block_tiles(device, p, REGTILE, params, params["WPTN"])


REGTILE = Variant(
    name="regtile", source="gemm_regtile.cl", entry="gemm_regtile",
    summary="local tiles, a WPTM x WPTN block of C in registers per work-item",
    defaults={"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4},
    fits=_regtile_fits, rank=_tile_rank(on_gpu=12.0, elsewhere=3.0), launch=_regtile_launch,
    tunable={"TSM": (32, 64, 128), "TSN": (32, 64, 128), "TSK": (8, 16, 32),
             "WPTM": (2, 4, 8), "WPTN": (2, 4, 8)},
)


# -- vec ---------------------------------------------------------------------------------------
def _vec_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if params["VW"] not in _VECTOR_WIDTHS:
        return f"VW must be one of {_VECTOR_WIDTHS}"
    return _block_tiles_fit(p, info, params, params["VW"], "VW")


def _vec_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    vw = params["VW"]
    if p.b.trans or not p.b.aligned(vw):
        p = with_operands(p, b=pack_operand(device, p.b, p.K, p.N, p.batch, p.dtype,
                                            ld_multiple=vw))
    return _launch_block_tiles(device, p, VEC, params, vw)


VEC = Variant(
    name="vec", source="gemm_vec.cl", entry="gemm_vec",
    summary="float4/float8 (VW) vectors along N, WPTM rows per work-item, local tiles",
    defaults={"VW": 4, "TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8},
    fits=_vec_fits, rank=_tile_rank(on_gpu=15.0, elsewhere=4.0), launch=_vec_launch,
    tunable={"VW": (4, 8), "TSM": (32, 64, 128), "TSN": (32, 64, 128), "TSK": (8, 16, 32),
             "WPTM": (4, 8, 16)},
)


# -- image (Adreno) ----------------------------------------------------------------------------
def _image_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    why = unsupported_dtype(p.dtype, info, only=(np.float32,),
                            why_only="; B is read with read_imagef")
    if why:
        return why
    if not info.image_support:
        return "the device has no image support"
    width, height = -(-p.N // 4), p.batch * _round_up(p.K, 4)
    if width > info.image2d_max_width or height > info.image2d_max_height:
        return (f"B needs a {width} x {height} image, the device allows "
                f"{info.image2d_max_width} x {info.image2d_max_height}")
    return _work_group(info, params["WG_X"] * params["WG_Y"])


def _b_image(device: Device, p: GemmProblem, defines: Mapping[str, object]) -> cl.Image:
    """B as an RGBA float image (ceil(N/4) texels wide, batch*K4 high, zeros past N and K),
    packed and written on the device by one kernel from B in any layout."""
    k4, width = _round_up(p.K, 4), -(-p.N // 4)
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    with calls.guard():
        image = cl.create_image(device.context, cl.mem_flags.READ_WRITE, fmt,
                                shape=(width, p.batch * k4))
    b = p.b
    kernel = get_kernel(device, "gemm_image.cl", "pack_b_image", defines)
    kernel(device.queue, (width, k4, p.batch), None, i32(p.N), i32(p.K), i32(k4),
           b.buffer, i64(b.offset), i32(b.ld), i64(b.batch_stride), image)
    return image


def _b_image_from_host(device: Device, p: GemmProblem) -> cl.Image:
    """B as the same RGBA image, filled from NumPy data through ``clEnqueueMapImage`` as
    Qualcomm's host code does: one copy, row by row at the returned row pitch."""
    k4, width = _round_up(p.K, 4), -(-p.N // 4)
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    with calls.guard():
        image = cl.create_image(device.context, cl.mem_flags.READ_WRITE, fmt,
                                shape=(width, p.batch * k4))
    height = p.batch * k4
    mapped, row_pitch = calls.map_image(
        device.queue, image, cl.map_flags.WRITE_INVALIDATE_REGION, (0, 0), (width, height),
        (height, width * 4), np.float32)
    # The driver may pad rows: address the mapping with its own pitch, not width * 16 bytes.
    texels = np.lib.stride_tricks.as_strided(mapped, (height, width * 4), (row_pitch, 4))
    texels[...] = 0
    host = p.b.host
    for b in range(p.batch):
        texels[b * k4: b * k4 + p.K, :p.N] = host[b if host.shape[0] > 1 else 0]
    del texels
    calls.unmap(device.queue, mapped)
    count_transfer(host_to_device=0 if device.info.host_unified_memory else height * row_pitch)
    return image


def _image_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    wx, wy = params["WG_X"], params["WG_Y"]
    a = p.a
    if a.trans or not a.aligned(4) or p.M % 8 or p.K % 4:
        a = pack_operand(device, a, p.M, p.K, p.batch, p.dtype, ld_multiple=4, row_multiple=8)
    defines = {"WG_X": wx, "WG_Y": wy, "TRANS_B": int(p.b.trans)}
    image = (_b_image_from_host(device, p) if p.b.host is not None
             else _b_image(device, p, defines))
    kernel = get_kernel(device, "gemm_image.cl", "gemm_image", defines)
    gs = (_round_up(-(-p.N // 4), wx), _round_up(-(-p.M // 8), wy), p.batch)
    c = p.c
    return kernel(device.queue, gs, (wx, wy, 1), i32(p.M), i32(p.N), i32(_round_up(p.K, 4)),
                  a.buffer, i64(a.offset), i32(a.ld), i64(a.batch_stride), image,
                  c.buffer, i64(c.offset), i32(c.ld), i64(c.batch_stride))


def _image_rank(p: GemmProblem, info: DeviceInfo) -> float:
    # The texture pipe is Adreno's advantage; on other GPUs it only runs where a measurement of
    # that device puts it first (an H200 ran it at 0.04x cuBLAS where it outranked the others).
    if _tiny(p) or not (info.is_gpu and info.image_support) or not info.is_adreno:
        return 0.5
    return 150.0


IMAGE = Variant(
    name="image", source="gemm_image.cl", entry="gemm_image",
    summary="Adreno style: A from a buffer, B as an RGBA image, 8x4 micro-tile per work-item",
    defaults={"WG_X": 16, "WG_Y": 4}, fits=_image_fits, rank=_image_rank,
    launch=_image_launch, tunable={"WG_X": (4, 8, 16, 32), "WG_Y": (1, 2, 4, 8)},
    takes_host_b=True,
)


# -- const_b -----------------------------------------------------------------------------------
CONST_B_MAX = 64
"""``const_b`` is ranked for K and N up to this (seed 002: a 32 x 32 matrix)."""


def _const_b_count(p: GemmProblem) -> int:
    """How many B matrices the kernel needs (one when B is broadcast over the batch)."""
    return 1 if p.b.batch_stride == 0 else p.batch


def _const_b_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    nbytes = _const_b_count(p) * p.K * p.N * p.itemsize
    if nbytes > info.constant_mem_bytes:
        return (f"B needs {nbytes} bytes of constant memory, "
                f"the device has {info.constant_mem_bytes}")
    if params["NB"] < 1:
        return "NB must be positive"
    return _first(dtype_supported(p, info), _work_group(info, params["WG"]))


def _const_b_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    nb, wg = params["NB"], params["WG"]
    count = _const_b_count(p)
    # Always a fresh buffer of exactly B: drivers size-check __constant arguments by buffer.
    b = pack_operand(device, p.b, p.K, p.N, count, p.dtype)
    defines = base_defines(p)
    defines.update(params)
    kernel = get_kernel(device, "gemm_const_b.cl", "gemm_const_b", defines)
    gs = (_round_up(p.M, wg), -(-p.N // nb), p.batch)
    a, c = p.a, p.c
    return kernel(device.queue, gs, (wg, 1, 1), i32(p.M), i32(p.N), i32(p.K),
                  a.buffer, i64(a.offset), i32(a.ld), i64(a.batch_stride),
                  b.buffer, i64(b.batch_stride if count > 1 else 0),
                  c.buffer, i64(c.offset), i32(c.ld), i64(c.batch_stride))


def _const_b_rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above the general kernels everywhere: on PoCL (2 cores) (2^19 x 32) @ (32 x 32) takes
    # 77 ms here against 88 ms for `cpu`, whose packing copies all of A first.
    small_b = p.K <= CONST_B_MAX and p.N <= CONST_B_MAX and p.M >= 16 * max(p.K, p.N)
    return 0.5 if _tiny(p) or not small_b else 120.0


CONST_B = Variant(
    name="const_b", source="gemm_const_b.cl", entry="gemm_const_b",
    summary="small B in __constant memory, one row of A per work-item (many vectors x matrix)",
    defaults={"NB": 8, "WG": 64}, fits=_const_b_fits, rank=_const_b_rank,
    launch=_const_b_launch, tunable={"NB": (4, 8, 16, 32), "WG": (32, 64, 128, 256)},
)


# -- gemv ---------------------------------------------------------------------------------------
def _gemv_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if not _is_gemv(p):
        return "neither M nor N is 1"
    wg, vw = params["WG"], params["VW"]
    if wg < 0 or wg & (wg - 1):
        return "WG must be a power of two (or 0: 1 on CPUs, 64 elsewhere)"
    if vw not in (0, 1) + _VECTOR_WIDTHS:
        return f"VW must be 0 (the device's width), 1 or one of {_VECTOR_WIDTHS}"
    if params["NVEC"] < 1:
        return "NVEC must be positive"
    return _first(dtype_supported(p, info), _work_group(info, wg or 1))


def _gemv_geometry(p: GemmProblem):
    """(R, X(buffer, offset, r-stride, k-stride, batch), v(buffer, offset, stride, batch),
    y(buffer, offset, stride, batch)) for y(r) = sum_k X(r, k) v(k)."""
    a, b, c = p.a, p.b, p.c
    if p.N == 1:
        x = (a.buffer, a.offset) + ((1, a.ld) if a.trans else (a.ld, 1)) + (a.batch_stride,)
        v = (b.buffer, b.offset, 1 if b.trans else b.ld, b.batch_stride)
        y = (c.buffer, c.offset, c.ld, c.batch_stride)
        return p.M, x, v, y
    x = (b.buffer, b.offset) + ((b.ld, 1) if b.trans else (1, b.ld)) + (b.batch_stride,)
    v = (a.buffer, a.offset, a.ld if a.trans else 1, a.batch_stride)
    y = (c.buffer, c.offset, 1, c.batch_stride)
    return p.N, x, v, y


def _gemv_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    info = device.info
    wg = params["WG"] or (1 if info.is_cpu else 64)
    vw = params["VW"] or vector_width(info, p.dtype)
    rows, x, v, y = _gemv_geometry(p)
    # Columns of X contiguous: one work-item per VW rows (unless there are too few rows to
    # occupy a work-group); otherwise a reduction along each row.
    sweep = x[2] == 1 and (rows >= wg * vw or x[3] != 1)
    if not sweep and not (x[3] == 1 and v[2] == 1):
        vw = 1   # vector loads along k need both X's rows and v contiguous
    defines = dtype_defines(p.dtype)
    nvec = params["NVEC"] if sweep and vw > 1 else 1
    defines.update(WG=wg, VW=vw, NVEC=nvec)
    kernel = get_kernel(device, "gemv.cl", "gemv_sweep" if sweep else "gemv_reduce", defines)
    gs = (_round_up(-(-rows // (vw * nvec)), wg), 1, p.batch) if sweep else (wg, rows, p.batch)
    return kernel(device.queue, gs, (wg, 1, 1), i32(rows), i32(p.K),
                  x[0], i64(x[1]), i64(x[2]), i64(x[3]), i64(x[4]),
                  v[0], i64(v[1]), i64(v[2]), i64(v[3]),
                  y[0], i64(y[1]), i64(y[2]), i64(y[3]))


GEMV = Variant(
    name="gemv", source="gemv.cl", entry="gemv_reduce",
    summary="matrix-vector (M == 1 or N == 1): vector row reductions or a column sweep",
    defaults={"WG": 0, "VW": 0, "NVEC": 4}, fits=_gemv_fits,
    rank=lambda p, info: 50.0 if _is_gemv(p) and not _tiny(p) else 0.5,
    launch=_gemv_launch,
    tunable={"WG": (0, 1, 16, 64, 256), "VW": (0, 1, 4, 8, 16), "NVEC": (1, 2, 4, 8)},
)


# -- cpu ---------------------------------------------------------------------------------------
def vector_width(info: DeviceInfo, dtype: np.dtype) -> int:
    """The device's preferred vector width (elements) for ``dtype``, at least 4: what
    ``VW=0`` means for the ``cpu`` and ``gemv`` kernels."""
    dt = np.dtype(dtype)
    if dt.itemsize == 8:
        width = info.preferred_vector_width_double
    elif dt.kind == "f":
        width = info.preferred_vector_width_float
    else:
        width = info.preferred_vector_width_int
    fitting = [w for w in _VECTOR_WIDTHS if w <= max(width, 4)]
    return fitting[-1]


def _cpu_fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if params["VW"] not in (0,) + _VECTOR_WIDTHS:
        return f"VW must be 0 (the device's width) or one of {_VECTOR_WIDTHS}"
    if min(params["MR"], params["NV"], params["WG"]) < 1 or params["KC"] < 0:
        return "MR, NV and WG must be positive, KC positive or 0 (all of K)"
    return _first(dtype_supported(p, info), _work_group(info, params["WG"]))


# (device, dtype, MR, VW, NV) -> (pack_panels, gemm_cpu) launchers: a repeated call builds no
# defines and looks up no program.
_cpu_launchers: Memo[tuple] = Memo("gemm_cpu launchers")


def _cpu_kernels(device: Device, dtype: np.dtype, mr: int, vw: int, nv: int) -> tuple:
    def build() -> tuple:
        defines = dtype_defines(dtype)
        pack = get_kernel(device, "gemm_cpu.cl", "pack_panels", dtype_defines(dtype))
        defines.update(MR=mr, VW=vw, NV=nv)
        return pack, get_kernel(device, "gemm_cpu.cl", "gemm_cpu", defines)
    key = (device, dtype, mr, vw, nv)
    return _cpu_launchers.find(key) or _cpu_launchers.get(key, build)


def _cpu_prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)`` with the kernels, panel counts and fixed
    arguments resolved once: each call packs A and B into zero-padded k-major panels (MR rows,
    VW*NV columns) in fresh buffers, then multiplies them, K in blocks of KC."""
    mr, nv, wg = params["MR"], params["NV"], params["WG"]
    nr = (params["VW"] or vector_width(device.info, p.dtype)) * nv
    a, b, c = p.a, p.b, p.c
    pack, kernel = _cpu_kernels(device, p.dtype, mr, nr // nv, nv)
    itemsize = np.dtype(p.dtype).itemsize

    def packing(op: GemmOperand, outer: int, width: int, so: int, sk: int) -> tuple:
        panels = -(-outer // width)
        count = 1 if op.batch_stride == 0 else p.batch
        per_batch = panels * p.K * width
        head = (i32(outer), i32(p.K), i32(width), i32(panels))
        tail = (i64(so), i64(sk), i64(op.batch_stride))
        return ((p.K, count * panels), head, tail, count * per_batch * itemsize, panels,
                i64(per_batch if count > 1 else 0))
    a_geo, a_head, a_tail, a_bytes, a_panels, a_pb = packing(
        a, p.M, mr, *((1, a.ld) if a.trans else (a.ld, 1)))
    b_geo, b_head, b_tail, b_bytes, b_panels, b_pb = packing(
        b, p.N, nr, *((b.ld, 1) if b.trans else (1, b.ld)))
    kc = params["KC"] if params["KC"] > 0 else p.K
    geometry = ((_round_up(a_panels, wg), b_panels, p.batch), (wg, 1, 1))
    sizes = (i32(p.M), i32(p.N), i32(p.K))
    slices = [(i32(k0), i32(min(kc, p.K - k0)), i32(k0 > 0)) for k0 in range(0, p.K, kc)]
    a_fixed, b_fixed = (i32(a_panels), a_pb), (i32(b_panels), b_pb)
    c_fixed = (i64(c.offset), i32(c.ld), i64(c.batch_stride))

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        queue = device.queue
        ap, bp = new_buffer(device, a_bytes), new_buffer(device, b_bytes)
        pack(queue, a_geo, None, *a_head, a_buf, a_off, *a_tail, ap)
        pack(queue, b_geo, None, *b_head, b_buf, b_off, *b_tail, bp)
        for k_slice in slices:
            event = kernel(queue, *geometry, *sizes, *k_slice, ap, *a_fixed, bp, *b_fixed,
                           c_buf, *c_fixed)
        return event
    return run


def _cpu_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _cpu_prepare(device, p, params)(p.a.buffer, i64(p.a.offset), p.b.buffer,
                                           i64(p.b.offset), p.c.buffer)


def _cpu_rank(p: GemmProblem, info: DeviceInfo) -> float:
    if _tiny(p):
        return 0.5
    return 30.0 if info.is_cpu else 0.8


CPU = Variant(
    name="cpu", source="gemm_cpu.cl", entry="gemm_cpu",
    summary="CPU: packed panels, MR x (VW*NV) register block per work-item, no barriers",
    defaults={"MR": 6, "VW": 0, "NV": 2, "WG": 1, "KC": 512}, fits=_cpu_fits, rank=_cpu_rank,
    launch=_cpu_launch, prepare=_cpu_prepare,
    tunable={"MR": (4, 6, 8), "VW": (0, 8, 16), "NV": (1, 2, 3, 4), "WG": (1, 2, 4, 8),
             "KC": (0, 256, 512, 1024)},
)


VARIANTS: tuple[Variant[GemmProblem], ...] = (TILED, REGTILE, VEC, IMAGE, CONST_B, GEMV, CPU)
"""In catalogue order (ties in rank go to the earlier)."""
