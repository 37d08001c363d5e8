"""``matmul`` / ``@`` / ``np.dot`` with NumPy's semantics, run by the GEMM catalogue.

A call is a key (device, operand dtypes, shapes, strides, alignment, ``dtype=``, forced kernel
and parameters) and a cached :class:`MatmulPlan` built on the key's first call: NumPy's shape
and dtype rules, the choice between the host path (NumPy's BLAS on the mapped buffers, where the
device's memory is the host's and the measured crossover says it wins) and a GEMM kernel, and the
operands' kernel layouts. A repeated call runs the plan: one allocation and one enqueue.
``explain_matmul`` describes the plan the call runs.

NumPy's rules, then one launch: 1-D operands are promoted and the added dimension removed,
batch dimensions broadcast, the ufunc's own dtype resolution (``np.matmul.resolve_dtypes``)
decides the result type, errors are NumPy's. Operands go to the kernel as views (transposed and
Fortran-order ones too: the kernels take a TRANS flag); only layouts no kernel can address
(negative or two-dimensional strides, multi-axis broadcast batches) are packed on the device first.
Where the device has no kernel for the dtype (float64 without fp64; complex on devices with a
host path) the product runs on the host through mapped views and the result comes back as a
device array; complex products on other devices are four real products of their parts
(``complex_ufuncs.complex_matmul``).
"""
from __future__ import annotations

import math
import operator
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from .._dispatch import OPERATORS, NumPyDecides, implements, implements_ufunc
from ..array import DeviceArray, asarray, empty, result_maker, zeros
from ..array.geometry import c_strides
from ..device import Device
from ..drivers import KernelBuildError
from ..kernels import gemm, gemm_gpu, gemm_mma, measured
from ..kernels.constants import constant
from ..kernels.crossover import has_host_path, prefer_host
from ..kernels.gemm import GemmOperand, GemmProblem
from ..kernels.gemm_mma import TENSOR_CORE_KERNELS
from ..kernels.gemm_small import SIXTEEN_BIT_KERNELS
from ..kernels.plans import PlanCache
from ..kernels.variant import Choice, check_params_have_kernel
from ..dtypes import NARROW_INT_PRODUCTS, mma_operand_dtype
from ..memory import Storage, format_bytes
from ._common import compute_dtype, device_of, numpy_answers, operand, take_operands
from .complex_ufuncs import complex_matmul
from .matmul_operands import (host_operand, host_product, operand_layout, operand_strides2,
                              packed, shape2, two_level_layouts)
from .matmul_signature import check_core, result_dtypes, shapes
from .precision import TF32_BOUND, get_precision, resolve_precision

try:  # NumPy's own exception type for this error (a TypeError subclass); private in NumPy 2.x
    from numpy._core._exceptions import _UFuncOutputCastingError as _OutputCastingError
except ImportError:  # pragma: no cover
    _OutputCastingError = None

__all__ = ["matmul", "dot", "explain_matmul"]

class MatmulPlan:
    """Everything about ``a @ b`` that its key decides; :meth:`run` does the rest."""

    def __init__(self, a: DeviceArray | np.ndarray, b: DeviceArray | np.ndarray, dtype: Any,
                 device: Device, kernel: str | None, params: Mapping[str, int] | None,
                 precision: str = "highest"):
        take_operands(a, b)  # NumPy's own matmul answers for these: dtypes before shapes
        check_core(a.shape, b.shape)
        check_params_have_kernel("matmul", kernel, params)
        self.device = device
        self.dtype_arg = dtype
        self.precision = precision
        self.a_shape, self.b_shape = a.shape, b.shape
        _, _, self.result_dtype = result_dtypes(a.dtype, b.dtype, dtype)
        self.compute = compute_dtype(self.result_dtype, device)
        if self.compute is not None:
            self.compute = NARROW_INT_PRODUCTS.get(self.result_dtype, self.compute)
        # Operands some kernels take as they are (float16, bfloat16: the tensor-core kernels
        # and `small`): kept in their own dtype where the device has tensor cores (unless its
        # measurements put a kernel on float32 copies first) or such a kernel is forced.
        _, _, M, N, K, batch_shape, out_shape = shapes(a.shape, b.shape)
        mma_dtype = mma_operand_dtype(a.dtype, b.dtype, self.result_dtype)
        if mma_dtype is not None and (kernel in SIXTEEN_BIT_KERNELS or (
                kernel is None and device.info.tensor_cores
                and not _widening_measured_faster(device, mma_dtype, math.prod(batch_shape),
                                                  M, N, K))):
            self.compute = mma_dtype
        self.c_dtype = (gemm_mma.output_dtype(self.compute) if mma_dtype is not None
                        and self.compute == mma_dtype else self.compute)
        self.M, self.N, self.K, self.batch_shape, self.out_shape = M, N, K, batch_shape, out_shape
        self.batch = math.prod(batch_shape)
        self.out_strides = c_strides(out_shape, self.result_dtype.itemsize)
        self.out_nbytes = math.prod(out_shape) * self.result_dtype.itemsize
        self.choice: Choice | None = None
        # an 8- or 16-bit integer dtype that the kernel reads and writes as it is (no widened
        # copies, no narrowing pass): GemmProblem.storage
        self.storage: np.dtype | None = None
        self.a_layout = self.b_layout = None
        self.prepared = None  # the kernel's launch with everything but buffers and offsets fixed
        self.b_from_host = False
        self.batch_inner = 0  # > 0: two batch levels (see _plan_two_level)
        self.folded = False  # a batch of vectors runs as one product of batch rows (_folded)
        self.edge_note = ""  # the parts of a product split by _plan_edges
        self.problem: GemmProblem | None = None  # the kernel's problem, for describe()
        if math.prod(out_shape) == 0 or K == 0:
            self.kind, self.reason = "trivial", "empty or K = 0: no arithmetic to run"
        elif self.compute is None:
            if self.result_dtype.kind == "c" and not has_host_path(device) and kernel is None \
                    and len(a.shape) >= 2 and len(b.shape) >= 2 \
                    and type(a) is DeviceArray and type(b) is DeviceArray:
                # four real products on the device (the matmul ufunc's complex route)
                raise NumPyDecides("complex products run as products of their parts")
            if kernel is not None:
                raise ValueError(f"matmul kernel {kernel!r} does not fit this call: no "
                                 f"{self.result_dtype} kernel on {device.name}")
            self.kind = "host"
            self.reason = (f"host: NumPy's matmul through mapped views (no {self.result_dtype} "
                           f"kernel on {device.name})")
        else:
            why_host = None if kernel is not None else prefer_host(
                device, "matmul", self.compute, 2.0 * self.batch * M * N * K)
            self.block_rows = _block_rows(self, len(a.shape), device.info.max_alloc_bytes)
            if why_host:
                self.kind, self.reason = "host", why_host
            elif self.block_rows:
                self.kind, self.kernel, self.params = "row_blocks", kernel, params
                self.reason = (
                    f"in blocks of {self.block_rows} rows, each a product of its own: computed "
                    f"in {self.c_dtype}, the whole product needs "
                    f"{format_bytes(self.batch * M * N * self.c_dtype.itemsize)}, more than the "
                    f"device's largest allocation ({format_bytes(device.info.max_alloc_bytes)}),"
                    f" while the {self.result_dtype} result fits")
            else:
                self.kind, self.reason = "kernel", ""
                self._plan_kernel(a, b, kernel, params)
        # NumPy straight into a fresh host-resident result: decided once, checked first per call
        self.host_into_mapping = self.kind == "host" and device.info.host_unified_memory
        self.fast_run = self.run  # what a repeated ``a @ b`` calls
        if (self.kind == "kernel" and self.prepared is not None and self.a_layout is not None
                and self.b_layout is not None and not self.b_from_host
                and self.c_dtype == self.result_dtype):
            self.fast_run = self._direct_run()
        elif self.host_into_mapping:
            self.fast_run = result_maker(device, self.out_nbytes, self.out_shape,
                                         self.result_dtype, self.out_strides,
                                         fill=host_product(a, b, dtype))

    def _plan_kernel(self, a, b, kernel, params) -> None:
        M, N, K, batch_shape, compute = self.M, self.N, self.K, self.batch_shape, self.compute
        operands_on_device = (isinstance(a, DeviceArray) and a.dtype == compute
                              and isinstance(b, DeviceArray) and b.dtype == compute)
        if isinstance(a, DeviceArray) and a.dtype == compute:
            self.a_layout = operand_layout(*operand_strides2(a, True), batch_shape, M, K)
        if isinstance(b, DeviceArray) and b.dtype == compute:
            self.b_layout = operand_layout(*operand_strides2(b, False), batch_shape, K, N)
        self.b_from_host = not isinstance(b, DeviceArray)
        isz = compute.itemsize
        op_a = self._operand(a, self.a_layout, M, K, isz, None)
        op_b = (gemm.host_operand(np.empty((1 if b.ndim <= 2 else self.batch, K, N), compute),
                                  self.batch) if self.b_from_host
                else self._operand(b, self.b_layout, K, N, isz, None))
        problem = GemmProblem(self.batch, M, N, K, compute, op_a, op_b,
                              GemmOperand(None, 0, N, M * N, False), self.precision)
        self.choice = gemm.choose(self.device, problem, kernel, params)
        if self.b_from_host and not self.choice.variant.takes_host_b:
            # Uploaded as a contiguous device array: the same kernel path (and prepared launch)
            # as a device operand, the upload one copy into a mapped buffer.
            self.b_from_host = False
            b_shape2 = shape2(b.shape, False)
            self.b_layout = operand_layout(b_shape2, c_strides(b_shape2, 1), batch_shape, K, N)
            problem = GemmProblem(self.batch, M, N, K, compute, op_a,
                                  self._operand(b, self.b_layout, K, N, isz, None),
                                  GemmOperand(None, 0, N, M * N, False), self.precision)
            self.choice = gemm.choose(self.device, problem, kernel, params)
        narrow = self._narrow_problem(a, b, kernel, params)
        if narrow is not None:
            problem = narrow  # the narrow operands read in place, C written narrow
        elif (operands_on_device and len(batch_shape) > 1
                and (self.a_layout is None or self.b_layout is None)
                and self.choice.variant.name in gemm.TWO_LEVEL_KERNELS
                and self._plan_two_level(a, b, kernel, params)):
            return  # the kernel chosen for the packed operands reads them in place instead
        problem = self._folded(problem, kernel, params)
        if (kernel is None and not params and not self.b_from_host
                and self.a_layout is not None and self.b_layout is not None
                and self.choice.variant.name == "gpu_blocked" and self._plan_edges(problem)):
            return  # slivers of rows or columns split off as products of their own
        self.problem = problem
        try:
            self.prepared = self._prepared_launch(problem)
        except KernelBuildError:
            # A kernel the driver cannot build may stop fitting (wgmma's sm_90a rebuild): an
            # automatic choice then takes the next one; a forced kernel raises.
            if kernel is not None:
                raise
            retry = gemm.choose(self.device, problem, None, params)
            if retry.variant is self.choice.variant:
                raise
            self.choice = retry
            self.prepared = self._prepared_launch(problem)

    def _narrow_problem(self, a, b, kernel, params) -> GemmProblem | None:
        """Where the kernel chosen for widened copies of 8- or 16-bit integer operands can read
        them as they are (gemm.NARROW_STORAGE_KERNELS): the problem on the device operands in
        place with C written in their dtype, the choice and layouts set; None elsewhere."""
        storage = self.result_dtype
        # (not ``compute != NARROW_INT_PRODUCTS.get(storage)``: NumPy reads a None dtype as
        # float64, so float64 would pass)
        # Tried whatever kernel the widened product would take: a kernel that reads the narrow
        # operands as they are saves two widening copies and a narrowing pass, which cost more
        # than any kernel's advantage (H200, int8 products of 1 to 4097 rows: 0.05-0.3x CuPy
        # through `small`'s widened copies).
        if (storage not in NARROW_INT_PRODUCTS or self.compute != NARROW_INT_PRODUCTS[storage]
                or self.b_from_host
                or type(a) is not DeviceArray or type(b) is not DeviceArray
                or a.dtype != storage or b.dtype != storage):
            return None
        M, N, K, batch_shape = self.M, self.N, self.K, self.batch_shape
        a_layout = operand_layout(*operand_strides2(a, True), batch_shape, M, K)
        b_layout = operand_layout(*operand_strides2(b, False), batch_shape, K, N)
        if a_layout is None or b_layout is None:  # not addressable in place: widened copies
            return None
        isz = storage.itemsize
        problem = GemmProblem(self.batch, M, N, K, self.compute,
                              self._operand(a, a_layout, M, K, isz, None),
                              self._operand(b, b_layout, K, N, isz, None),
                              GemmOperand(None, 0, N, M * N, False), self.precision,
                              storage=storage)
        try:
            self.choice = gemm.choose(self.device, problem, kernel, params)
        except (ValueError, RuntimeError):
            return None
        self.a_layout, self.b_layout = a_layout, b_layout
        self.storage = self.c_dtype = storage
        return problem

    def _folded(self, problem: GemmProblem, kernel, params) -> GemmProblem:
        """A batch of products sharing one B whose rows of A are evenly spaced (``(64, 1, K) @
        (K, N)``, or a contiguous ``(10000, 33, 33) @ (33, 33)``) as one matrix product of
        batch * M rows: B read once, not once per matrix, and the kernel chosen for that shape;
        ``problem`` itself elsewhere. Batches of vectors always fold; batches of M > 1 rows
        where the tuned constant ``matmul.fold_shared_b`` says (on GPUs, its dtypes, from its
        number of rows: below it, and for 16-bit dtypes, the batched kernels measured as fast
        or faster)."""
        p, a = problem, problem.a
        if (p.batch == 1 or p.batch_inner or p.b.batch_stride != 0 or a.trans
                or a.host is not None or p.b.host is not None or a.batch_stride != p.M * a.ld):
            return problem
        if p.M != 1:
            rule = constant("matmul.fold_shared_b")
            if (not self.device.info.is_gpu or p.storage is not None
                    or p.dtype.name not in rule["dtypes"]
                    or p.batch * p.M < rule["min_rows"]):
                return problem
        folded = replace(p, batch=1, M=p.batch * p.M, a=replace(a, batch_stride=0),
                         c=replace(p.c, batch_stride=p.batch * p.M * p.N))
        try:
            self.choice = gemm.choose(self.device, folded, kernel, params)
        except (ValueError, RuntimeError):  # a forced kernel that takes no such shape
            return problem
        self.folded = True
        return folded

    def _prepared_launch(self, problem: GemmProblem):
        """The chosen variant's prepared launch, or None (no ``prepare``, or B from the host)."""
        prepare = self.choice.variant.prepare
        if prepare is None or self.b_from_host:
            return None
        return prepare(self.device, problem, self.choice.params)

    def _plan_edges(self, problem: GemmProblem) -> bool:
        """Cut ``problem`` where gemm_gpu.edge_split says: the main block, then the rows below
        it and the columns beside it, each a product of its own (its own kernel choice) into
        its part of one C; False where it does not apply."""
        cut = gemm_gpu.edge_split(problem, self.device.info, self.choice.params)
        if cut is None:
            return False
        m0, n0 = cut
        p, a, b = problem, problem.a, problem.b
        blocks = [(0, m0, 0, n0)]
        if m0 < p.M:
            blocks.append((m0, p.M - m0, 0, p.N))
        if n0 < p.N:
            blocks.append((0, m0, n0, p.N - n0))
        launches, described = [], []
        for r0, rows, c0, cols in blocks:
            a_shift = r0 * (1 if a.trans else a.ld)
            b_shift = c0 * (b.ld if b.trans else 1)
            part = GemmProblem(1, rows, cols, p.K, p.dtype, replace(a, offset=a.offset + a_shift),
                               replace(b, offset=b.offset + b_shift),
                               GemmOperand(None, r0 * p.N + c0, p.N, p.M * p.N, False),
                               p.precision, storage=p.storage)
            choice = gemm.choose(self.device, part, None, None)
            launch = (choice.variant.prepare(self.device, part, choice.params)
                      if choice.variant.prepare is not None else None)
            launches.append((launch or _launcher(self.device, part, choice), a_shift, b_shift))
            resolved = choice.variant.resolved
            described.append(f"rows {r0}:{r0 + rows} x columns {c0}:{c0 + cols} by "
                             f"{choice.variant.name}" + (
                                 f" ({resolved(part, self.device.info, choice.params)})"
                                 if resolved is not None else ""))

        def run(a_buf, a_off, b_buf, b_off, c_buf):
            for launch, a_shift, b_shift in launches:
                event = launch(a_buf, a_off + a_shift, b_buf, b_off + b_shift, c_buf)
            return event
        self.prepared = run
        self.edge_note = ("\nsplit where the last tiles would hold slivers, one product each: "
                          + "; ".join(described))
        return True

    def _plan_two_level(self, a, b, kernel, params) -> bool:
        """Plan a product whose batch dimensions broadcast against each other on a kernel
        that addresses two batch levels (no packed copies); False where none takes it."""
        found = two_level_layouts(a, b, self.batch_shape, self.M, self.N, self.K)
        if found is None:
            return False
        inner, a_layout, b_layout = found
        isz = self.compute.itemsize
        problem = GemmProblem(self.batch, self.M, self.N, self.K, self.compute,
                              self._operand(a, a_layout, self.M, self.K, isz, None),
                              self._operand(b, b_layout, self.K, self.N, isz, None),
                              GemmOperand(None, 0, self.N, self.M * self.N, False),
                              self.precision, inner)
        try:
            choice = gemm.choose(self.device, problem, kernel, params)
        except (ValueError, RuntimeError):  # no two-level kernel fits: the operands are packed
            return False
        self.a_layout, self.b_layout, self.batch_inner = a_layout, b_layout, inner
        self.choice = choice
        prepare = choice.variant.prepare
        self.prepared = prepare(self.device, problem, choice.params) if prepare else None
        return True

    def _operand(self, x, layout, rows, cols, isz, buffer) -> GemmOperand:
        if layout is None:  # packed into a contiguous (batch..., rows, cols) array first
            return GemmOperand(buffer, 0, cols, rows * cols, False)
        ld, bs, trans, *inner = layout
        return GemmOperand(buffer, x.offset // isz if type(x) is DeviceArray else 0, ld, bs, trans,
                           None, *inner)

    # -- running ---------------------------------------------------------------------------------
    def run(self, a: DeviceArray | np.ndarray, b: DeviceArray | np.ndarray) -> DeviceArray:
        """Compute ``a @ b`` (operands with this plan's key) into a fresh device array."""
        device = self.device
        if self.host_into_mapping:
            return self.fast_run(a, b)
        if self.kind == "kernel":
            return self._run_kernel(a, b)
        if self.kind == "row_blocks":
            return self._run_in_row_blocks(a, b)
        if self.kind == "trivial":
            return (empty if math.prod(self.out_shape) == 0 else zeros)(
                self.out_shape, self.result_dtype, device=device)
        host = np.matmul(np.asarray(a), np.asarray(b), dtype=self.dtype_arg)
        return asarray(host, device=device)

    def _run_kernel(self, a, b) -> DeviceArray:
        device, compute = self.device, self.compute
        M, N, K, batch_shape = self.M, self.N, self.K, self.batch_shape
        isz = (self.storage or compute).itemsize
        if self.a_layout is None:
            a = packed(a, batch_shape, M, K, compute, device, True)
        if not self.b_from_host:
            if self.b_layout is None:
                b = packed(b, batch_shape, K, N, compute, device, False)
            elif type(b) is not DeviceArray:
                b = asarray(np.asarray(b, compute), device=device)
        if self.prepared is not None:  # the repeated-call path: buffers and offsets only
            if gemm.launch_log is not None:
                gemm.launch_log.append((1, self.batch * M, N, K) if self.folded
                                       else (self.batch, M, N, K))
            c = self._new_c()
            self.prepared(a.storage.kernel_buffer(), _offset_arg(a, self.a_layout, isz),
                          b.storage.kernel_buffer(), _offset_arg(b, self.b_layout, isz),
                          c.storage.kernel_buffer(write=True))
            return self._finish(c)
        op_a = self._operand(a, self.a_layout, M, K, isz, a.storage.kernel_buffer())
        if self.b_from_host:
            op_b = host_operand(np.asarray(b, compute), batch_shape, K, N)
        else:
            op_b = self._operand(b, self.b_layout, K, N, isz, b.storage.kernel_buffer())
        c = self._new_c()
        batch, rows = (1, self.batch * M) if self.folded else (self.batch, M)
        if self.folded:
            op_a = replace(op_a, batch_stride=0)
        problem = GemmProblem(batch, rows, N, K, compute, op_a, op_b,
                              GemmOperand(c.storage.kernel_buffer(write=True), 0, N, rows * N),
                              self.precision, self.batch_inner, self.storage)
        gemm.launch(device, problem, self.choice)
        return self._finish(c)

    def _new_c(self) -> DeviceArray:
        """A fresh (batch..., M, N) device array in the dtype the kernel writes."""
        csz = self.c_dtype.itemsize
        return DeviceArray.from_storage(
            Storage.for_output(self.device, self.batch * self.M * self.N * csz),
            self.out_shape, self.c_dtype, c_strides(self.out_shape, csz))

    def _direct_run(self):
        """``run`` for device operands read in place by a prepared launch that writes the
        result dtype: the result allocated and the launch enqueued, nothing else decided per
        call (the launch log, a test hook, takes ``run``)."""
        device, prepared, isz = self.device, self.prepared, self.compute.itemsize
        nbytes, shape, dtype, strides = (self.out_nbytes, self.out_shape, self.result_dtype,
                                         self.out_strides)
        for_output, from_storage, run = Storage.for_output, DeviceArray.from_storage, self.run

        def direct(a: DeviceArray, b: DeviceArray) -> DeviceArray:
            if gemm.launch_log is not None:
                return run(a, b)
            c = from_storage(for_output(device, nbytes), shape, dtype, strides)
            a_off, b_off = a._offset, b._offset
            prepared(a._storage.kernel_buffer(), _ZERO if a_off == 0 else np.int64(a_off // isz),
                     b._storage.kernel_buffer(), _ZERO if b_off == 0 else np.int64(b_off // isz),
                     c._storage.kernel_buffer(write=True))
            return c
        return direct

    def _run_in_row_blocks(self, a, b) -> DeviceArray:
        out = empty(self.out_shape, self.result_dtype, device=self.device)
        b_is_vector = len(self.b_shape) == 1
        for start in range(0, self.M, self.block_rows):
            rows = slice(start, min(self.M, start + self.block_rows))
            a_rows = a[..., rows, :]
            block = plan_for(a_rows, b, self.dtype_arg, self.device, self.kernel,
                             self.params, self.precision).run(a_rows, b)
            out[(Ellipsis, rows) if b_is_vector else (Ellipsis, rows, slice(None))] = block
        return out

    def _finish(self, c: DeviceArray) -> DeviceArray:
        """``c`` in the result dtype (kernels compute narrow types wider)."""
        if self.c_dtype == self.result_dtype:
            return c
        if self.result_dtype == np.float16:
            return asarray(np.asarray(c).astype(np.float16), device=self.device)
        return c.astype(self.result_dtype)

    def describe(self) -> str:
        head = (f"matmul {self.a_shape} @ {self.b_shape} -> {self.result_dtype} on "
                f"{self.device.name} (batch={self.batch}, M={self.M}, N={self.N}, K={self.K}"
                + (f", computed in {self.compute})" if self.compute is not None else ")"))
        if self.kind != "kernel":
            return head + "\n" + self.reason + self._precision_note()
        levels = (f"\nbatches: two levels ({self.batch // self.batch_inner} x "
                  f"{self.batch_inner}), broadcast batch dimensions read in place (no packed "
                  f"copies)" if self.batch_inner else "")
        if self.folded:
            what = "vectors" if self.M == 1 else f"{self.M}-row matrices"
            levels += (f"\nbatches: one product of {self.batch * self.M} rows (a batch of "
                       f"{what} sharing B)")
        if self.storage is not None:
            levels += (f"\noperands: {self.storage} read as they are and widened in the kernel; "
                       f"C written as {self.storage} (no {self.compute} copies)")
        resolved = self.choice.variant.resolved
        if resolved is not None and self.problem is not None and not self.edge_note:
            levels += "\nresolved: " + resolved(self.problem, self.device.info, self.choice.params)
        return (head + "\n" + self.choice.describe() + levels + self.edge_note
                + self._precision_note())

    def _precision_note(self) -> str:
        """What runs on tensor cores (or why TF32 did not), where it applies."""
        mma = self.choice is not None and self.choice.variant.name in TENSOR_CORE_KERNELS
        how = "emulated (EMULATE=1)" if mma and self.choice.params["EMULATE"] else "tensor cores"
        if mma and self.compute != np.float32:
            return (f"\n{how}: {self.compute} operands, float32 accumulation, C rounded once "
                    f"to {self.result_dtype}")
        if self.result_dtype != np.float32 or self.precision != "tf32":
            return ""
        if mma:
            packed = ("; A and B first packed K-major, rounded to TF32"
                      if self.choice.variant.name == "wgmma" else "")
            return f"\nprecision: tf32 ({how}{packed}; error bound: {TF32_BOUND})"
        if self.choice is None:
            return "\nprecision: tf32 requested, float32 arithmetic ran (no kernel)"
        why = dict(self.choice.rejected).get("mma") or (
            "needs NVIDIA tensor cores (sm_80 or newer)" if not self.device.info.tensor_cores
            else "another kernel was forced")
        return f"\nprecision: tf32 requested, float32 arithmetic ran (mma: {why})"


_ZERO = np.int64(0)


def _widening_measured_faster(device: Device, dtype: np.dtype, batch: int, M: int, N: int,
                              K: int) -> bool:
    """True where this device's measurements put a kernel that computes widened copies (float32
    arithmetic, C rounded back) ahead of the kernels that read ``dtype`` operands as they are,
    for a product this size."""
    ranking = measured.ranking(device, "matmul", dtype, batch, M, N, K)
    return ranking is not None and ranking.names[0] not in SIXTEEN_BIT_KERNELS


def _block_rows(plan: MatmulPlan, a_ndim: int, limit: int) -> int:
    """Rows of C per block where the product computed in the kernels' dtype (wider than the
    result for small types) needs a buffer larger than the device's largest allocation, but
    the result does not: each block's C and packed rows of A (padding allowed for) then fit.
    0 where one launch fits, or where blocks cannot help (a vector A, a result too large: the
    allocation raises MemoryError naming the sizes)."""
    M, N, K = plan.M, plan.N, plan.K
    isz = max(plan.compute.itemsize, plan.c_dtype.itemsize)
    if plan.batch * M * N * isz <= limit or plan.out_nbytes > limit or a_ndim < 2:
        return 0
    per_row = plan.batch * max(N, K + 16) * isz
    rows = (limit // 2) // per_row // 8 * 8
    return rows if 0 < rows < M else 0


def _launcher(device: Device, problem: GemmProblem, choice: Choice):
    """A prepared launch's signature for a variant without one: ``run(a_buf, a_off, b_buf,
    b_off, c_buf)`` through gemm.launch with ``problem``'s other fields."""
    def run(a_buf, a_off, b_buf, b_off, c_buf):
        return gemm.launch(device, replace(
            problem, a=replace(problem.a, buffer=a_buf, offset=int(a_off)),
            b=replace(problem.b, buffer=b_buf, offset=int(b_off)),
            c=replace(problem.c, buffer=c_buf)), choice)
    return run


def _offset_arg(x: DeviceArray, layout, isz: int) -> np.int64:
    """The element offset kernel argument of an operand (packed operands start at 0)."""
    if layout is None or x.offset == 0:
        return _ZERO
    return np.int64(x.offset // isz)


_PLANS: PlanCache[MatmulPlan] = PlanCache("matmul")
"""Every product's plan, under :func:`plan_for`'s key and, for ``a @ b``, under the operator's
short key too (a device array by layout and offset & 255, a NumPy operand by dtype and shape,
then the device and the precision): both lead to the one plan object ``plan_for`` built."""
_find_plan = _PLANS.find


def _operand_key(x: DeviceArray | np.ndarray) -> tuple:
    if type(x) is DeviceArray:
        # Offsets matter only modulo the widest vector alignment a kernel checks (16 elements).
        return (x.layout_key, x.offset % (16 * x.itemsize))
    return (x.dtype, x.shape)


def plan_for(a: DeviceArray | np.ndarray, b: DeviceArray | np.ndarray, dtype: Any = None,
             device: Device | None = None, kernel: str | None = None,
             params: Mapping[str, int] | None = None,
             precision: str | None = None) -> MatmulPlan:
    """The cached plan of ``matmul(a, b, dtype=dtype, kernel=kernel, params=params,
    precision=precision)`` (``precision`` None: the one in force, see ops/precision.py)."""
    device = device_of(a, b) if device is None else device
    precision = resolve_precision(precision)
    key = (device, type(a) is DeviceArray, _operand_key(a), type(b) is DeviceArray,
           _operand_key(b), dtype, kernel, tuple(sorted(params.items())) if params else None,
           precision)
    return _PLANS.get(key, lambda: MatmulPlan(a, b, dtype, device, kernel, params, precision))


def _write_out(result: DeviceArray, out: Any, casting: str) -> Any:
    if out is None:
        return result
    if tuple(out.shape) != result.shape:
        raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimension or "
                         f"shape: expected {result.shape}, got {tuple(out.shape)}")
    if not np.can_cast(result.dtype, out.dtype, casting=casting):
        if _OutputCastingError is not None:
            raise _OutputCastingError(np.matmul, casting, result.dtype, out.dtype, 0)
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {result.dtype!r} to "
                        f"{out.dtype!r} with casting rule {casting!r}")
    if isinstance(out, DeviceArray):
        out[...] = result
    else:
        np.copyto(out, np.asarray(result), casting="unsafe")
    return out


def _matmul(a: Any, b: Any, /, out: Any = None, *, dtype: Any = None, casting: str = "same_kind",
           axes: Any = None, kernel: str | None = None,
           params: Mapping[str, int] | None = None, precision: str | None = None) -> DeviceArray:
    """``np.matmul`` on the device: NumPy's semantics; ``kernel=`` forces a GEMM variant (see
    :func:`clarray_gemm.kernels`) and ``params=`` its ``-D`` parameters; ``precision="tf32"``
    lets float32 products run on TF32 tensor cores (see :func:`clarray_gemm.set_precision`)."""
    if axes is not None:
        return _matmul_axes(a, b, out, dtype, casting, axes, kernel, params, precision)
    a, b = operand(a), operand(b)
    device = device_of(a, b, out)
    result = plan_for(a, b, dtype, device, kernel, params, precision).run(a, b)
    return result if out is None else _write_out(result, out, casting)


matmul = numpy_answers(np.matmul, "kernel", "params", "precision")(_matmul)


def explain_matmul(a: Any, b: Any, kernel: str | None = None,
                   precision: str | None = None,
                   params: Mapping[str, int] | None = None, *, dtype: Any = None) -> str:
    """Which GEMM kernel ``matmul(a, b, dtype=dtype, kernel=kernel, params=params,
    precision=precision)`` runs (or the host path), with which parameters, and why: the
    description of the very plan (the cached object) the call runs (with the TF32 error bound
    when the float32 product runs in TF32); for operands only NumPy takes, NumPy's own
    ``np.matmul`` (its exception where it has one)."""
    a, b = operand(a), operand(b)
    try:
        return plan_for(a, b, dtype, device_of(a, b), kernel, params, precision).describe()
    except NumPyDecides as why:
        np.matmul(a, b, dtype=dtype)  # NumPy's exception where it has one
        return f"matmul {a.shape} @ {b.shape}: NumPy's own np.matmul on host views ({why})"


def _matmul_axes(a, b, out, dtype, casting, axes, kernel, params, precision=None):
    try:
        ax_a, ax_b, ax_out = (tuple(x) if isinstance(x, (tuple, list)) else (x,) for x in axes)
    except (TypeError, ValueError):
        raise ValueError("axes should be a list with an entry for every operand") from None
    take_operands(operand(a), operand(b))
    a_d = a if isinstance(a, DeviceArray) else asarray(a, device=device_of(a, b))
    b_d = b if isinstance(b, DeviceArray) else asarray(b, device=device_of(a, b))

    def to_end(x: DeviceArray, core: tuple) -> DeviceArray:
        core = tuple(operator.index(i) % x.ndim for i in core) if x.ndim else core
        rest = [i for i in range(x.ndim) if i not in core]
        return x.transpose(rest + list(core))
    res = _matmul(to_end(a_d, ax_a), to_end(b_d, ax_b), dtype=dtype, kernel=kernel, params=params,
                  precision=precision)
    n_core = len(ax_out)
    src = list(range(res.ndim - n_core, res.ndim))
    res_view = res.geometry_view(lambda t: np.moveaxis(t, src, list(ax_out)))
    return _write_out(res_view, out, casting)


# -- NumPy entry points ------------------------------------------------------------------------
_UNSUPPORTED_KW = {"axis", "signature", "where", "order", "subok", "keepdims", "extobj"}


def _run_on_short_key(key: tuple, a: Any, b: Any, device: Device) -> Any:
    """``a @ b`` by the plan plan_for would give, cached under ``key``: a shorter key built by
    the caller (a device array's offset & 255 keeps what _operand_key's ``% (16 * itemsize)``
    keeps; an ndarray is keyed by dtype and shape in both)."""
    plan = _find_plan(key) or _PLANS.get(
        key, lambda: plan_for(a, b, None, device))
    return plan.run(a, b)


def _matmul_operator(a: DeviceArray, b: DeviceArray) -> Any:
    """``a @ b`` for two device arrays (``OPERATORS``' entry; _run_on_short_key written out)."""
    device = a.device
    if device is not b.device:
        return NotImplemented
    key = (a.layout_key, a._offset & 255, b.layout_key, b._offset & 255, device, get_precision())
    plan = _find_plan(key) or _PLANS.get(
        key, lambda: plan_for(a, b, None, device))
    return plan.fast_run(a, b)


OPERATORS[np.matmul] = _matmul_operator


@implements_ufunc(np.matmul)
def _matmul_ufunc(ufunc, inputs, kwargs):
    if not kwargs and len(inputs) == 2:  # ``a @ b``: straight to the plan
        a, b = inputs
        if ((type(a) is DeviceArray and a.dtype.kind == "c")
                or (type(b) is DeviceArray and b.dtype.kind == "c")) \
                and not has_host_path(device_of(a, b)):
            found = complex_matmul(a, b)   # (the real products' plans decline complex numbers)
            if found is not NotImplemented:
                return found
        if type(a) is DeviceArray and type(b) is DeviceArray and a.device is b.device:
            return _matmul_operator(a, b)
        if type(a) is DeviceArray and type(b) is np.ndarray:
            return _run_on_short_key((a.layout_key, a.offset & 255, b.dtype, b.shape, a.device,
                                      resolve_precision(None), "b from the host"), a, b, a.device)
        if type(a) is np.ndarray and type(b) is DeviceArray:
            return _run_on_short_key((a.dtype, a.shape, b.layout_key, b.offset & 255, b.device,
                                      resolve_precision(None), "a from the host"), a, b, b.device)
        a, b = operand(a), operand(b)
        return plan_for(a, b, None, device_of(a, b)).run(a, b)
    if len(inputs) != 2 or _UNSUPPORTED_KW & kwargs.keys():
        return NotImplemented  # NumPy's answer through the host
    out = kwargs.get("out")
    if isinstance(out, tuple):
        out = out[0]
    return _matmul(*inputs, out=out, dtype=kwargs.get("dtype"),
                  casting=kwargs.get("casting", "same_kind"), axes=kwargs.get("axes"))


@numpy_answers(np.dot)
@implements(np.dot)
def dot(a: Any, b: Any, out: Any = None) -> Any:
    """``np.dot`` on the device (N-d operands reshaped into one 2-D product)."""
    a, b = operand(a), operand(b)
    take_operands(a, b)
    a_shape, b_shape = a.shape, b.shape
    if len(a_shape) == 0 or len(b_shape) == 0:
        return np.multiply(a, b, out=out)
    k_a = a_shape[-1]
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if k_a != k_b:
        axis_b = max(len(b_shape) - 2, 0)
        raise ValueError(f"shapes {a_shape} and {b_shape} not aligned: {k_a} (dim "
                         f"{len(a_shape) - 1}) != {k_b} (dim {axis_b})")
    if len(a_shape) <= 2 and len(b_shape) <= 2:
        result = _matmul(a, b)
    else:
        device = device_of(a, b)
        a_d = a if isinstance(a, DeviceArray) else asarray(a, device=device)
        b_d = b if isinstance(b, DeviceArray) else asarray(b, device=device)
        if b_d.ndim == 1:
            result = _matmul(a_d.reshape(-1, k_a), b_d).reshape(a_shape[:-1])
        else:
            b_moved = b_d.geometry_view(lambda t: np.moveaxis(t, -2, 0))
            prod = _matmul(a_d.reshape(-1, k_a), b_moved.reshape(k_b, -1))
            result = prod.reshape(a_shape[:-1] + b_shape[:-2] + b_shape[-1:])
    if out is not None:
        ok = (tuple(out.shape) == result.shape and out.dtype == result.dtype and
              (out.is_c_contiguous if isinstance(out, DeviceArray) else out.flags.c_contiguous))
        if not ok:
            raise ValueError("output array is not acceptable (must have the right datatype, "
                             "number of dimensions, and be a C-Array)")
        return _write_out(result, out, "no")
    return result
