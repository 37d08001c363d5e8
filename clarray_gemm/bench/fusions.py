"""``python -m clarray_gemm bench fuse``: NumPy expressions on device arrays, ``clarray_gemm.fuse``d
and as written, against ``cupy.fuse`` on CUDA machines, and against NumPy and numexpr (when
installed) on the same data as NumPy arrays: wall clock per call with the device drained, every
fused answer within a relative norm error of 1e-5 of NumPy's float64 evaluation.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..array import asarray
from ..device import Device
from ..ops.fusion import fuse
from .peers import CudaPeers
from .timing import microseconds as us, per_call_seconds

__all__ = ["EXPRESSIONS", "SIZES", "SMOKE_SIZES", "Row", "run", "format_report", "as_json"]

SIZES: tuple[int, ...] = (1 << 16, 1 << 22, 1 << 26)
SMOKE_SIZES: tuple[int, ...] = (4099,)


@dataclass(frozen=True)
class Expression:
    """``build(xp)`` returns the function in ``xp``'s spelling (``np`` or ``cupy``: cupy.fuse
    traces CuPy's ufuncs), ``numexpr`` the same expression for numexpr (empty: numexpr has no
    form of it), ``arrays`` how many array operands it takes (after them come ``scalars``),
    ``row`` the length of the rows it reduces (its n elements as n / row rows; None: 1-D)."""

    name: str
    build: Callable[[Any], Callable[..., Any]]
    numexpr: str
    arrays: int
    scalars: tuple = ()
    row: int | None = None

    def shape(self, n: int) -> tuple:
        """The operands' shape for about ``n`` elements."""
        return (n,) if self.row is None else (max(1, n // self.row), self.row)


def _gelu(xp):
    def gelu(x):
        return 0.5 * x * (1 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    return gelu


def _combine(xp):
    def combine(x, y, z, a, b):
        return a * x + b * y - z
    return combine


def _softmax(xp):
    def softmax(x):
        e = xp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return softmax


EXPRESSIONS: tuple[Expression, ...] = (
    Expression("gelu (tanh form)", _gelu,
               "0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))", 1),
    Expression("a * x + b * y - z", _combine, "a * x + b * y - z", 3, (2.0, 3.0)),
    Expression("softmax over rows of 4096", _softmax, "", 1, row=4096),
)


@dataclass
class Row:
    expression: str
    n: int
    fused_s: float | None = None
    unfused_s: float | None = None
    cupy_s: float | None = None
    cupy_plain_s: float | None = None
    numpy_s: float | None = None
    numexpr_s: float | None = None
    note: str = ""


def run(device: Device, sizes: Sequence[int] = SIZES, budget_s: float = 0.05,
        progress: Any = None, cuda_peers: bool = True) -> list[Row]:
    """Time each expression at each size: fused, unfused, and the peers present."""
    peers = CudaPeers.on(device) if cuda_peers else None
    cupy = peers.cupy if peers is not None else None
    try:
        import numexpr
    except ImportError:
        numexpr = None
    rng = np.random.default_rng(20261128)
    rows = []
    sync = device.synchronize
    for expr in EXPRESSIONS:
        plain = expr.build(np)
        fused = fuse(plain)
        for n in sizes:
            row = Row(expr.name, math.prod(expr.shape(n)))
            rows.append(row)
            if progress is not None:
                progress.note(f"{expr.name} {n}")
            host = [rng.standard_normal(expr.shape(n)).astype(np.float32)
                    for _ in range(expr.arrays)]
            args = [asarray(h, device=device) for h in host] + list(expr.scalars)
            hargs = host + list(expr.scalars)
            want = plain(*[np.asarray(h, np.float64) for h in host], *expr.scalars)
            got = np.asarray(fused(*args))
            error = np.linalg.norm((got.astype(np.float64) - want).ravel())
            if fused.kernel_for(*args) is None:
                row.note = "not fused"
            elif got.dtype != np.float32 or error > 1e-5 * np.linalg.norm(want.ravel()):
                row.note = "WRONG result"
            row.fused_s = per_call_seconds(lambda: (fused(*args), sync()), budget_s)
            row.unfused_s = per_call_seconds(lambda: (plain(*args), sync()), budget_s)
            row.numpy_s = per_call_seconds(lambda: plain(*hargs), budget_s)
            if numexpr is not None and expr.numexpr:
                names = dict(zip("xyz", host), **dict(zip("ab", expr.scalars)))
                row.numexpr_s = per_call_seconds(
                    lambda: numexpr.evaluate(expr.numexpr, local_dict=names), budget_s)
            if cupy is not None:
                cargs = [cupy.asarray(h) for h in host] + list(expr.scalars)
                cplain = expr.build(cupy)
                cfused = cupy.fuse(cplain)
                cs = cupy.cuda.runtime.deviceSynchronize
                row.cupy_plain_s = per_call_seconds(lambda: (cplain(*cargs), cs()), budget_s)
                try:
                    cfused(*cargs)
                    row.cupy_s = per_call_seconds(lambda: (cfused(*cargs), cs()), budget_s)
                except Exception as exc:  # noqa: BLE001 - what cupy.fuse cannot trace
                    row.note = (row.note + "; " if row.note else "") + \
                        f"cupy.fuse failed: {type(exc).__name__}: {str(exc)[:100]}"
            if progress is not None:
                progress.update()
    return rows


def format_report(rows: Sequence[Row]) -> str:
    """One line a cell: each time, and fused against unfused and each peer (> 1: fused is
    faster)."""
    def ratio(other, ours):
        return f"{other / ours:.2f}x" if other and ours else "-"
    lines = ["| expression | n | fused us | unfused us | cupy.fuse us | CuPy us | NumPy us "
             "| numexpr us | vs unfused | vs cupy.fuse | vs CuPy | vs NumPy | vs numexpr |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.expression} | {r.n} | {us(r.fused_s)} | {us(r.unfused_s)} | "
                     f"{us(r.cupy_s)} | {us(r.cupy_plain_s)} | {us(r.numpy_s)} | "
                     f"{us(r.numexpr_s)} | {ratio(r.unfused_s, r.fused_s)} | "
                     f"{ratio(r.cupy_s, r.fused_s)} | {ratio(r.cupy_plain_s, r.fused_s)} | "
                     f"{ratio(r.numpy_s, r.fused_s)} | {ratio(r.numexpr_s, r.fused_s)} |")
    noted = [r for r in rows if r.note]
    if noted:
        lines += ["", "notes:"] + [f"- {r.expression} {r.n}: {r.note}" for r in noted]
    return "\n".join(lines)


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"rows": [asdict(r) for r in rows]}
