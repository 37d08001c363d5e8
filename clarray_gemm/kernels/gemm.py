"""The GEMM catalogue: every matrix-product kernel, what it needs, and how it is launched.

All kernels compute ``C[b] = A[b] @ B[b]`` for ``b`` in ``range(batch)`` in one launch, with the
shared calling convention documented in ``opencl/gemm_naive.cl`` (element offsets, leading
dimensions, batch strides, ``TRANS_A``/``TRANS_B`` defines). ``ops/matmul.py`` describes the call
as a :class:`GemmProblem`; this module picks the variant and launches it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo, register_fork_reset
from ..memo import Memo
from ..drivers import calls
from ..memory import Storage, new_buffer, register_scratch
from .copy import strided_copy
from .flags import group_counters
from ..dtypes import ctype, dtype_defines, unsupported_dtype
from . import measured
from .programs import BoundLaunch, Launcher, get_kernel
from .variant import Catalogue, Choice, Variant

__all__ = ["GemmOperand", "GemmProblem", "CATALOGUE", "choose", "run", "launch", "pack_operand"]


@dataclass(frozen=True)
class GemmOperand:
    """A batch of matrices in a buffer: element (r, c) of matrix b is at
    ``offset + b*batch_stride + (c*ld + r if trans else r*ld + c)`` (in elements); in a
    problem with two batch levels (``GemmProblem.batch_inner`` = I > 0), at
    ``offset + (b // I)*batch_stride + (b % I)*inner_stride + ...``."""

    buffer: cl.Buffer | None
    offset: int
    ld: int
    batch_stride: int
    trans: bool = False
    host: np.ndarray | None = None  # (1 or batch, rows, cols) NumPy data not yet uploaded
    inner_stride: int = 0

    def aligned(self, width: int) -> bool:
        """True when every row (or column, if transposed) starts on a multiple of ``width``."""
        return (self.offset % width == 0 and self.ld % width == 0
                and self.batch_stride % width == 0 and self.inner_stride % width == 0)


@dataclass(frozen=True)
class GemmProblem:
    """One batched product ``C = A @ B`` with A: (batch, M, K), B: (batch, K, N), C: (batch, M, N)."""

    batch: int
    M: int
    N: int
    K: int
    dtype: np.dtype
    a: GemmOperand
    b: GemmOperand
    c: GemmOperand
    # "tf32": float32 products may round their inputs to TF32 (tensor cores); see ops/precision.
    precision: str = "highest"
    # 0: one batch level. I > 0: batch index b is (b // I, b % I) for A and B (batch dimensions
    # broadcast against each other, addressed without packing); only TWO_LEVEL_KERNELS take it.
    batch_inner: int = 0
    # None: A, B and C hold ``dtype``. An 8- or 16-bit integer dtype: A, B and C hold it in
    # memory and the kernel widens to ``dtype`` (dtypes.NARROW_INT_PRODUCTS); only
    # NARROW_STORAGE_KERNELS take it. Offsets, leading dimensions and strides count its elements.
    storage: np.dtype | None = None

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.M * self.N * self.K

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize


CATALOGUE: Catalogue[GemmProblem] = Catalogue("matmul")
# The variants whose kernels address two batch levels (GemmProblem.batch_inner); for the others
# the operands are packed into one level first.
TWO_LEVEL_KERNELS = frozenset({"gpu_blocked"})
# The variants that read and write narrow integers as they are (GemmProblem.storage); for the
# others the operands are widened into copies first and C narrowed after.
NARROW_STORAGE_KERNELS = frozenset({"gpu_blocked", "shallow"})


# Split-K partial sums: one scratch buffer per (device, thread), grown on demand. A product's
# slice kernel and its reduction are enqueued back to back, but another thread's product may be
# enqueued between them on the same in-order queue: sharing one buffer between threads would let
# it overwrite the partial sums before they are reduced.
_split_workspaces: dict[tuple, cl.Buffer] = {}
register_fork_reset(_split_workspaces)
register_scratch(_split_workspaces.clear)


def split_workspace(device: Device, nbytes: int, slot: int = 0) -> cl.Buffer:
    """This thread's scratch buffer on ``device``, at least ``nbytes`` long; ``slot`` 1 is a
    second one, for operands packed before a product whose split-K partials use slot 0."""
    key = (device, threading.get_ident(), slot)
    buf = _split_workspaces.get(key)
    if buf is None or buf.size < nbytes:
        buf = _split_workspaces[key] = new_buffer(device, nbytes)
    return buf


def matrix_vector_run(device: Device, product: BoundLaunch, total: BoundLaunch | None,
                      work_bytes: int, wide_is_a: bool, counters: int = 0):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)`` for the kernels that take the wide operand X
    and the thin one V (``gemv_split``, ``thin``): ``product(x_buf, x_off, v_buf, v_off, c_buf,
    work)``, then with split-K ``total(work, c_buf)`` summing the slices from this thread's
    workspace into C; or, with ``counters`` (the count of group counters the product's last
    slices finish on, ``opencl/last_group.h``), the product alone, given those counters."""
    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        (xb, xo), (vb, vo) = ((a_buf, a_off), (b_buf, b_off)) if wide_is_a else \
            ((b_buf, b_off), (a_buf, a_off))
        work = split_workspace(device, work_bytes)  # this thread's: see split_workspace
        if counters:
            return product(xb, xo, vb, vo, c_buf, work, group_counters(device, counters))
        event = product(xb, xo, vb, vo, c_buf, work)
        return event if total is None else total(work, c_buf)
    return run


def warp_tiled_threads(d: Mapping[str, object]) -> int:
    """Work-items of a warp-tiled kernel (``gemm_mma``, ``gemm_dmma``): one 32-wide warp per
    WM x WN tile of the BM x BN block."""
    return (d["BM"] // d["WM"]) * (d["BN"] // d["WN"]) * 32  # type: ignore[operator]


def warp_tiled_sizes(p: "GemmProblem", d: Mapping[str, object]) -> tuple[tuple, tuple]:
    """Global and local sizes of a warp-tiled kernel: one work-group per BM x BN tile of C."""
    threads = warp_tiled_threads(d)
    tiles_n, tiles_m = -(-p.N // d["BN"]), -(-p.M // d["BM"])  # type: ignore[operator]
    return (threads * tiles_n, tiles_m, p.batch), (threads, 1, 1)


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def base_defines(problem: GemmProblem) -> dict[str, object]:
    d = dtype_defines(problem.dtype)
    if problem.storage is not None:  # narrow in memory (gemm_gpu.cl's ST)
        d["ST"] = ctype(problem.storage)
        d["UST"] = ctype(np.dtype(f"u{problem.storage.itemsize}"))
    d["TRANS_A"] = int(problem.a.trans)
    d["TRANS_B"] = int(problem.b.trans)
    return d


def standard_args(problem: GemmProblem) -> tuple:
    """Arguments in the shared convention (M, N, K, then A, B, C with offset/ld/batch stride)."""
    p = problem
    i32, i64 = np.int32, np.int64
    return (i32(p.M), i32(p.N), i32(p.K),
            p.a.buffer, i64(p.a.offset), i32(p.a.ld), i64(p.a.batch_stride),
            p.b.buffer, i64(p.b.offset), i32(p.b.ld), i64(p.b.batch_stride),
            p.c.buffer, i64(p.c.offset), i32(p.c.ld), i64(p.c.batch_stride))


def prepared_standard(device: Device, problem: GemmProblem, launcher: Launcher, global_size,
                      local_size, extra: tuple = (), per_call: int = 0) -> BoundLaunch:
    """A launch for the standard convention with everything but A's, B's and C's buffers and
    A's and B's offsets fixed: ``run(a_buf, a_off, b_buf, b_off, c_buf, *more)``. ``extra``:
    fixed arguments a kernel takes after the standard ones (a local-memory size); ``per_call``:
    how many more it takes after those, passed to each call as ``more`` (``GATE``'s)."""
    p = problem
    i32, i64 = np.int32, np.int64
    args = (i32(p.M), i32(p.N), i32(p.K),
            None, None, i32(p.a.ld), i64(p.a.batch_stride),
            None, None, i32(p.b.ld), i64(p.b.batch_stride),
            None, i64(p.c.offset), i32(p.c.ld), i64(p.c.batch_stride), *extra)
    varying = (3, 4, 7, 8, 11) + tuple(range(len(args), len(args) + per_call))
    return launcher.bind(device, global_size, local_size, args + (None,) * per_call, varying)


def dtype_supported(problem: GemmProblem, info: DeviceInfo) -> str | None:
    """Why the GEMM kernels cannot take the problem's dtype on this device, or None."""
    return unsupported_dtype(problem.dtype, info)


_zero_scalars: Memo[cl.Buffer] = Memo("zero scalars")


def _zero_fill(device: Device, buf: cl.Buffer, count: int, dtype: np.dtype) -> None:
    """Zero ``count`` elements with a kernel (a stride-0 copy of one zero) rather than
    clEnqueueFillBuffer, whose writes Oclgrind's uninitialized-value checker does not see."""
    dtype = np.dtype(dtype)

    def build() -> cl.Buffer:
        with calls.guard():
            return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                             hostbuf=np.zeros(1, dtype))
    zero = _zero_scalars.get((device, dtype), build)
    strided_copy(device, (count,), zero, dtype, 0, (0,), buf, dtype, 0, (1,))


def pack_operand(device: Device, operand: GemmOperand, rows: int, cols: int, batch: int,
                 dtype: np.dtype, ld_multiple: int = 1, row_multiple: int = 1
                 ) -> GemmOperand:
    """A contiguous, row-major, zero-padded copy: rows rounded up to ``row_multiple`` and the
    leading dimension to ``ld_multiple``. Returns the new operand (a fresh buffer)."""
    prow, ld = _round_up(rows, row_multiple), _round_up(cols, ld_multiple)
    itemsize = np.dtype(dtype).itemsize
    nbytes = max(batch * prow * ld * itemsize, 16)
    buf = new_buffer(device, nbytes)
    if prow != rows or ld != cols:
        _zero_fill(device, buf, batch * prow * ld, dtype)
    src_r, src_c = (1, operand.ld) if operand.trans else (operand.ld, 1)
    strided_copy(device, (batch, rows, cols),
                 operand.buffer, dtype, operand.offset, (operand.batch_stride, src_r, src_c),
                 buf, dtype, 0, (prow * ld, ld, 1))
    return GemmOperand(buf, 0, ld, prow * ld, False)


def launch_standard(device: Device, problem: GemmProblem, variant: Variant[GemmProblem],
                    params: Mapping[str, int], global_size, local_size) -> cl.Event:
    defines = base_defines(problem)
    defines.update(params)
    kernel = get_kernel(device, variant.source, variant.entry, defines)
    return kernel(device.queue, global_size, local_size, *standard_args(problem))


# -- naive -------------------------------------------------------------------------------------
def _naive_launch(device: Device, problem: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    # a work-group no wider than the matrix (8 x 8 products: 64 work-items, not 256 with 3/4 idle)
    tx = min(params["WG_X"], 1 << max(problem.N - 1, 0).bit_length())
    ty = min(params["WG_Y"], 1 << max(problem.M - 1, 0).bit_length())
    gs = (_round_up(problem.N, tx), _round_up(problem.M, ty), problem.batch)
    return launch_standard(device, problem, CATALOGUE["naive"], {}, gs, (tx, ty, 1))


CATALOGUE.add(Variant(
    name="naive",
    source="gemm_naive.cl",
    entry="gemm_naive",
    summary="one work-item per element of C",
    defaults={"WG_X": 16, "WG_Y": 16},
    fits=lambda p, info, params: dtype_supported(p, info) or (
        None if params["WG_X"] * params["WG_Y"] <= info.max_work_group_size
        else "work-group larger than the device allows"),
    rank=lambda p, info: 1.0,
    launch=_naive_launch,
    tunable={"WG_X": (8, 16, 32), "WG_Y": (4, 8, 16)},
))


def _measured_ranking(device: Device, p: GemmProblem) -> measured.Ranking | None:
    # float32 products that may use TF32 are the tensor-core kernel's (the tables time
    # float32 arithmetic)
    if p.precision != "highest" and np.dtype(p.dtype) == np.float32:
        return None
    return measured.ranking(device, "matmul", p.dtype, p.batch, p.M, p.N, p.K)


CATALOGUE.measured = _measured_ranking


def choose(device: Device, problem: GemmProblem, kernel: str | None = None,
           params: Mapping[str, int] | None = None) -> Choice[GemmProblem]:
    """The variant that runs ``problem`` on ``device`` (see :meth:`Catalogue.choose`)."""
    only = TWO_LEVEL_KERNELS if problem.batch_inner else None
    if problem.storage is not None:
        only = NARROW_STORAGE_KERNELS if only is None else only & NARROW_STORAGE_KERNELS
    return CATALOGUE.choose(problem, device, kernel, params, only)


def run(device: Device, problem: GemmProblem, kernel: str | None = None,
        params: Mapping[str, int] | None = None) -> tuple[cl.Event, Choice[GemmProblem]]:
    """Choose a variant and enqueue it; returns the kernel's event (None where the device
    enqueues without events: ``kernels/programs.py``, ``eventless_kernel_enqueue``) and the
    choice."""
    choice = choose(device, problem, kernel, params)
    return launch(device, problem, choice), choice


launch_log: list[tuple[int, int, int, int]] | None = None
"""When a list (tests set one), every GEMM launch appends its (batch, M, N, K) to it, on the
prepared path of ``ops/matmul.py`` as on :func:`launch`."""


def launch(device: Device, problem: GemmProblem, choice: Choice[GemmProblem]) -> cl.Event:
    """Enqueue the chosen variant (uploading a host B first unless the variant takes it)."""
    if launch_log is not None:
        launch_log.append((problem.batch, problem.M, problem.N, problem.K))
    if problem.b.host is not None and not choice.variant.takes_host_b:
        problem = with_operands(problem, b=upload_operand(device, problem.b, problem.batch))
    return choice.variant.launch(device, problem, choice.params)


def host_operand(host: np.ndarray, batch: int) -> GemmOperand:
    """Describe NumPy data of shape (1 or batch, rows, cols) as an operand not yet uploaded:
    the layout it will have once uploaded (contiguous; one matrix broadcast over the batch)."""
    n, rows, cols = host.shape
    return GemmOperand(None, 0, cols, 0 if n == 1 and batch > 1 else rows * cols, False, host)


def upload_operand(device: Device, operand: GemmOperand, batch: int) -> GemmOperand:
    """Copy a host operand into a new buffer (one copy, through a write mapping)."""
    storage = Storage(device, operand.host.nbytes, host_resident=True)
    storage.write_from(np.ascontiguousarray(operand.host))
    return replace(host_operand(operand.host, batch), buffer=storage.kernel_buffer(), host=None)


def with_operands(problem: GemmProblem, a: GemmOperand | None = None,
                  b: GemmOperand | None = None) -> GemmProblem:
    return replace(problem, a=a or problem.a, b=b or problem.b)
