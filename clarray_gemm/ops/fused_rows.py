"""The kernel of a fused function with reductions (``clarray_gemm.fuse`` of softmax, a
normalisation, a fused norm): ``opencl/fused_rows.cl`` assembled from a trace's reductions and
outputs, one work-group per reduced row, every stage and output in one launch.

A :class:`RowPlan` is one such function at one set of argument layouts: the kernel built for
them (the program cache shares it between plans whose source is the same), the fixed
arguments, and how each call's arrays and scalars become the rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..array import DeviceArray
from ..array.geometry import c_strides
from ..device import Device
from ..dtypes import ctype
from ..kernels.constants import constant
from ..kernels.copy import MAX_DIMS, as_long8
from ..kernels.programs import Launcher, build_text, source_text
from ..memo import Memo
from ..memory import Storage
from .user_kernels import _element_strides

__all__ = ["Reduction", "RowPlan", "extremum", "UNSIGNED"]

# each signed C type's unsigned twin: signed integers wrap as NumPy's through it
UNSIGNED = {"char": "uchar", "short": "ushort", "int": "uint", "long": "ulong"}
# The fewest work-items a group on GPUs (a warp: fewer leaves lanes idle).
_MIN_WG = 32
# Where a work-item walks more than this many elements a stage, the function runs fused only
# with a work-group for every compute unit: one group walking one long row leaves the rest of
# the device idle, where the function as written runs each step over the whole device.
_SERIAL_STEPS = 64
_ZERO = np.int64(0)


def extremum(op: str, kind: str, a: str, b: str) -> str:
    """``np.maximum`` (``op`` ``>``) or ``np.minimum`` (``<``) of two C values of ``kind``."""
    if kind == "f":   # NumPy's: a NaN on either side is the result
        return f"(isnan({a}) ? {a} : (isnan({b}) ? {b} : ({a} {op}= {b} ? {a} : {b})))"
    return f"({a} {op}= {b} ? {a} : {b})"


def _literal(value: int, dtype: np.dtype) -> str:
    """An integer of ``dtype`` as a C literal (the most negative long has none of its own)."""
    c = ctype(dtype)
    if dtype.kind == "i" and value == np.iinfo(dtype).min:
        return f"(({c})(-{-(value + 1)}L - 1))"
    return f"(({c}){value}{'UL' if dtype.kind == 'u' else 'L'})"


@dataclass(frozen=True)
class Reduction:
    """One stage: ``map`` (a C expression of the row's elements and the earlier stages'
    results ``red0``, ``red1``, ...) combined by ``combine`` (of ``a`` and ``b``) from
    ``identity`` in the accumulator dtype ``acc``."""

    op: str
    acc: np.dtype
    map: str
    identity: str
    combine: str

    @classmethod
    def of(cls, op: str, acc: np.dtype, map_expr: str) -> "Reduction":
        """NumPy's ``op`` (sum, prod, max, min; mean sums) in ``acc``: integers wrap as
        NumPy's, floating maxima and minima propagate NaN as NumPy's."""
        c, kind = ctype(acc), acc.kind
        if op in ("sum", "mean", "prod"):
            sign = "*" if op == "prod" else "+"
            identity = "1" if op == "prod" else "0"
            if kind == "i":
                combine = f"(({c})(({UNSIGNED[c]})a {sign} ({UNSIGNED[c]})b))"
            else:
                combine = f"(a {sign} b)"
        else:
            high = op == "max"
            combine = extremum(">" if high else "<", kind, "a", "b")
            if kind == "f":
                identity = "(-INFINITY)" if high else "INFINITY"
            else:
                info = np.iinfo(acc)
                identity = _literal(info.min if high else info.max, acc)
        return cls(op, acc, map_expr, identity, combine)


def _collapsed(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The one element stride that walks ``shape`` (C order) with ``strides``, or None where
    the axes do not line up as one."""
    stride = None
    step = None
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if stride is None:
            stride, step = s, s * n
        elif s != step:
            return None
        else:
            step = s * n
    return 0 if stride is None else stride


def walk(info: Any, rows: int, cols: int, columns: bool = False) -> tuple[int, bool] | None:
    """How a device walks ``rows`` rows of ``cols`` elements: (work-items a group, a power of
    two; whether each walks a row alone), or None where the function runs better as written.
    CPU devices: a row a work-item, in groups of the tuned ``fuse.rows_cpu`` rows (the driver
    vectorises across them; no barriers to emulate), rows of at least its ``min_cols``. GPUs: a
    work-group a row (``fuse.rows_gpu``: larger groups where there are fewer rows than
    compute units), at least two elements a lane; but a work-item a row where the rows are
    ``columns`` (neighbouring rows neighbours in memory: the group's loads then coalesce).
    Either way not a few long rows (:data:`_SERIAL_STEPS`)."""
    if info.is_cpu:
        tuned = constant("fuse.rows_cpu")
        if cols < tuned["min_cols"]:
            return None
        wg, per_item = _pow2_at_most(min(tuned["rows_per_group"],
                                         info.max_work_group_size)), True
    elif columns:
        wg = _pow2_at_most(min(constant("fuse.rows_gpu")["group"], info.max_work_group_size))
        per_item = True
    else:
        tuned = constant("fuse.rows_gpu")
        most = tuned["few_rows_group"] if rows < info.compute_units else tuned["group"]
        wg, per_item = _pow2_at_most(min(most, info.max_work_group_size)), False
        while wg > _MIN_WG and wg >= cols:
            wg //= 2
    groups = -(-rows // wg) if per_item else rows
    serial = cols if per_item else cols / wg   # elements a work-item walks a stage
    if groups < info.compute_units and serial > _SERIAL_STEPS:
        return None
    return wg, per_item


def _pow2_at_most(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


class RowPlan:
    """A fused function with reductions at one set of argument layouts: ``run(args)``
    allocates the outputs, passes the operands and launches one kernel."""

    __slots__ = ("device", "launcher", "gsize", "lsize", "head", "slots", "outputs", "rows",
                 "cols", "stages", "name", "per_item")

    @classmethod
    def build(cls, device: Device, name: str, args: Sequence[Any], dtypes: Sequence[np.dtype],
              full: tuple, axes: tuple, reductions: Sequence[Reduction],
              outputs: Sequence[tuple[str, np.dtype, tuple | None]]) -> "RowPlan | None":
        """The plan of ``args`` (device arrays broadcasting to ``full``, and scalars of
        ``dtypes``) reducing ``axes``, writing ``outputs`` ((expression, dtype, None for the
        full shape or the per-row output's shape) each); None where these shapes run better
        unfused (no elements, too many dimensions, a few long rows, or short rows on a CPU
        device)."""
        kept = [d for d in range(len(full)) if d not in axes]
        order = kept + list(axes)
        pshape = tuple(full[d] for d in order)
        rows = math.prod(full[d] for d in kept)
        cols = math.prod(full[d] for d in axes)
        if rows == 0 or cols == 0 or len(pshape) > MAX_DIMS:
            return None
        nk = len(kept)
        # the rows are columns where the largest operand's neighbouring rows are neighbours
        first = max((a for a in args if type(a) is DeviceArray), key=lambda a: a.size)
        strides = [_element_strides(first, full)[d] for d in order]
        columns = (_collapsed(pshape[:nk], strides[:nk]) == 1
                   and _collapsed(pshape[nk:], strides[nk:]) not in (0, 1))
        form = walk(device.info, rows, cols, columns)
        if form is None:
            return None
        wg, per_item = form
        groups = -(-rows // wg) if per_item else rows
        if groups * wg >= 2 ** 31:
            return None

        def layout(strides: list[int]) -> tuple[str, tuple]:
            permuted = [strides[d] for d in order]
            rs = _collapsed(pshape[:nk], permuted[:nk])
            cs = _collapsed(pshape[nk:], permuted[nk:])
            if rs is not None and cs is not None:
                return "R", (np.int64(rs), np.int64(cs))
            return "S", (as_long8(permuted, 0),)

        params, strided, loads, slots = [], [], [], []
        for k, (a, dtype) in enumerate(zip(args, dtypes)):
            c = ctype(dtype)
            if type(a) is not DeviceArray:
                params.append(f"SCALAR_ARG({c}, in{k})")
                slots.append((k, dtype.type, ()))
                continue
            form, extra = layout(_element_strides(a, full))
            params.append(f"{'ROWS' if form == 'R' else 'IN'}_ARG({c}, in{k})")
            if form == "S":
                strided.append(f"    STRIDES_OF(in{k})")
            loads.append(f"        const {c} in{k} = in{k}__p[AT_{form}(in{k})];")
            slots.append((k, False, extra))
        stores, row_stores, specs = [], [], []
        for j, (expr, dtype, shape) in enumerate(outputs):
            c = ctype(dtype)
            value = f"(({expr}) ? 1 : 0)" if dtype == np.bool_ else expr
            if shape is None:
                form, extra = layout(list(c_strides(full)))
                params.append(f"{'ROWS_OUT' if form == 'R' else 'OUT'}_ARG({c}, out{j})")
                if form == "S":
                    strided.append(f"    STRIDES_OF(out{j})")
                stores.append(f"        out{j}__p[AT_{form}(out{j})] = {value};")
                shape = full
            else:
                params.append(f"ROW_ARG({c}, out{j})")
                row_stores.append(f"        out{j}__p[out{j}__o + row] = {value};")
                extra = ()
            specs.append((shape, dtype, extra))
        combiners, locals_, stages = [], [], []
        for r, red in enumerate(reductions):
            acc = ctype(red.acc)
            combiners.append(f"inline {acc} combine{r}(const {acc} a, const {acc} b) "
                             f"{{ return {red.combine}; }}\n"
                             f"GROUP_REDUCE({acc}, group{r}, combine{r})")
            locals_.append(f"    __local {acc} part{r}[WG];")
            stages.append("\n".join((
                f"    {acc} red{r};",
                "    {",
                f"        {acc} acc = {red.identity};",
                "        for (long c = FIRST_C; c < cols; c += STEP_C) {",
                "            const long i = row * cols + c;",
                *("    " + line for line in loads),
                f"            acc = combine{r}(acc, ({acc})({red.map}));",
                "        }",
                f"        red{r} = GROUP_RESULT(group{r}, part{r}, acc);",
                "    }")))
        pieces = {"COMBINERS": "\n".join(combiners), "NAME": name,
                  "PARAMS": " ".join(params), "LOCALS": "\n".join(locals_),
                  "STRIDES": "\n".join(strided), "STAGES": "\n".join(stages),
                  "LOADS": "\n".join(loads), "STORES": "\n".join(stores),
                  "ROW_STORES": "\n".join(row_stores)}
        text = source_text("fused_rows.cl")
        for marker, piece in pieces.items():
            text = text.replace(f"@{marker}@", piece)
        text = (f"#define NDIM {len(pshape)}\n#define WG {wg}\n"
                f"#define ROW_PER_ITEM {int(per_item)}\n" + text)
        plan = object.__new__(cls)
        plan.device, plan.name = device, name
        key = (device, text)
        plan.launcher = _launchers.find(key) or _launchers.get(
            key, lambda: Launcher(build_text(device, text, name), name))
        plan.gsize, plan.lsize, plan.per_item = (groups * wg,), (wg,), per_item
        plan.head = (np.int64(rows), np.int64(cols), as_long8(pshape, 1))
        plan.slots, plan.rows, plan.cols, plan.stages = tuple(slots), rows, cols, len(reductions)
        plan.outputs = tuple((math.prod(shape) * dtype.itemsize, shape, dtype,
                              tuple(s * dtype.itemsize for s in c_strides(shape)), extra)
                             for shape, dtype, extra in specs)
        return plan

    def run(self, args: Sequence[Any]) -> tuple:
        """The outputs of one call with ``args`` (of the layouts the plan was built for)."""
        device = self.device
        argv = list(self.head)
        for k, kind, extra in self.slots:
            x = args[k]
            if kind is False:
                offset = x._offset
                argv += (x._storage.kernel_buffer(False),
                         _ZERO if offset == 0 else np.int64(offset // x._dtype.itemsize), *extra)
            else:   # a scalar, as the dtype the trace bound it to
                argv.append(kind(x))
        outs = []
        for nbytes, shape, dtype, strides, extra in self.outputs:
            storage = Storage.for_output(device, nbytes)
            argv += (storage.kernel_buffer(True), _ZERO, *extra)
            outs.append(DeviceArray.from_storage(storage, shape, dtype, strides))
        self.launcher.launch(device, self.gsize, self.lsize, *argv)
        return tuple(outs)

    def describe(self) -> str:
        walk = (f"a work-item per row in groups of {self.lsize[0]}" if self.per_item
                else f"a work-group of {self.lsize[0]} per row")
        return (f"{self.name}: {self.stages} reduction stage(s) and the outputs in one kernel, "
                f"{walk} ({self.rows} rows of {self.cols}; opencl/fused_rows.cl)")


# Built kernels by (device, source): plans of one function at layouts that assemble the same
# source share one.
_launchers: Memo[Launcher] = Memo("fused row kernels", capacity=256)
