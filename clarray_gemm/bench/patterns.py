"""``python -m clarray_gemm bench patterns``: the call forms of ordinary NumPy code (broadcasts,
views, reductions with ``axis``/``keepdims``, ``mean``/``var``/``std``, ``argmax``, gathers,
masks, slice assignment, ``out=``) at shapes from 10 x 10 to 4096 x 4096, against CuPy and
torch on CUDA machines (NumPy elsewhere), wall clock per call with the device drained.

Ours runs NumPy's own spelling on device arrays (``np.sum(a, axis=0)``, ``a[idx]``); CuPy the
same spelling on its arrays; torch its equivalent. Each cell's answer is checked against NumPy.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..array import asarray
from ..device import Device
from .peers import CudaPeers
from .timing import microseconds as us, per_call_seconds

__all__ = ["SHAPES", "SMOKE_SHAPES", "PATTERNS", "Row", "run", "format_report", "as_json"]

SHAPES: tuple[tuple[int, int], ...] = ((10, 10), (37, 1000), (1000, 37), (256, 256),
                                       (1000, 1000), (4096, 4096))
SMOKE_SHAPES: tuple[tuple[int, int], ...] = ((10, 10), (37, 100))


@dataclass(frozen=True)
class Pattern:
    """One call form: ``numpy(xp, d)`` in NumPy's spelling (``xp`` is ``np`` for ours and NumPy,
    ``cupy`` for CuPy), ``torch(t, d)`` in torch's; ``d`` holds the operands by name."""

    name: str
    numpy: Callable[[Any, dict], Any]
    torch: Callable[[Any, dict], Any] | None = None
    in_place: bool = False  # writes into d["a"]: compared by the array written


def _assign(d: dict) -> Any:
    a = d["a"]
    a[1:-1, 1:-1] = d["b"][1:-1, 1:-1]
    return a


def _assign_row(d: dict) -> Any:
    a = d["a"]
    a[0, :] = a[1, :]
    return a


PATTERNS: tuple[Pattern, ...] = (
    Pattern("a + b", lambda xp, d: d["a"] + d["b"], lambda t, d: d["a"] + d["b"]),
    Pattern("a + row", lambda xp, d: d["a"] + d["row"], lambda t, d: d["a"] + d["row"]),
    Pattern("a + col[:, None]", lambda xp, d: d["a"] + d["col"][:, None],
            lambda t, d: d["a"] + d["col"][:, None]),
    Pattern("a * 2.0", lambda xp, d: d["a"] * 2.0, lambda t, d: d["a"] * 2.0),
    Pattern("a + 0-d", lambda xp, d: d["a"] + d["zero_d"], lambda t, d: d["a"] + d["zero_d"]),
    Pattern("a.T + bt", lambda xp, d: d["a"].T + d["bt"], lambda t, d: d["a"].T + d["bt"]),
    Pattern("a[:, ::2] * 2", lambda xp, d: d["a"][:, ::2] * 2, lambda t, d: d["a"][:, ::2] * 2),
    Pattern("a[1:, 1:] + 1", lambda xp, d: d["a"][1:, 1:] + 1, lambda t, d: d["a"][1:, 1:] + 1),
    Pattern("exp(a - row)", lambda xp, d: xp.exp(d["a"] - d["row"]),
            lambda t, d: t.exp(d["a"] - d["row"])),
    Pattern("sum(a)", lambda xp, d: xp.sum(d["a"]), lambda t, d: t.sum(d["a"])),
    Pattern("sum(a, axis=0)", lambda xp, d: xp.sum(d["a"], axis=0),
            lambda t, d: t.sum(d["a"], 0)),
    Pattern("sum(a, axis=1, keepdims)", lambda xp, d: xp.sum(d["a"], axis=1, keepdims=True),
            lambda t, d: t.sum(d["a"], 1, keepdim=True)),
    Pattern("mean(a)", lambda xp, d: xp.mean(d["a"]), lambda t, d: t.mean(d["a"])),
    Pattern("var(a, axis=1)", lambda xp, d: xp.var(d["a"], axis=1),
            lambda t, d: t.var(d["a"], 1, unbiased=False)),
    Pattern("std(a, axis=0)", lambda xp, d: xp.std(d["a"], axis=0),
            lambda t, d: t.std(d["a"], 0, unbiased=False)),
    Pattern("max(a, axis=1)", lambda xp, d: xp.max(d["a"], axis=1),
            lambda t, d: t.amax(d["a"], 1)),
    Pattern("argmax(a, axis=1)", lambda xp, d: xp.argmax(d["a"], axis=1),
            lambda t, d: t.argmax(d["a"], 1)),
    Pattern("argmin(a)", lambda xp, d: xp.argmin(d["a"]), lambda t, d: t.argmin(d["a"])),
    Pattern("a[idx] (rows)", lambda xp, d: d["a"][d["idx"]], lambda t, d: d["a"][d["idx"]]),
    Pattern("a[a > 0]", lambda xp, d: d["a"][d["a"] > 0], lambda t, d: d["a"][d["a"] > 0]),
    Pattern("add(a, b, out=c)", lambda xp, d: xp.add(d["a"], d["b"], out=d["c"]),
            lambda t, d: t.add(d["a"], d["b"], out=d["c"])),
    Pattern("a[1:-1, 1:-1] = b[...]", lambda xp, d: _assign(d), lambda t, d: _assign(d), True),
    Pattern("a[0, :] = a[1, :]", lambda xp, d: _assign_row(d), lambda t, d: _assign_row(d), True),
)


@dataclass
class Row:
    pattern: str
    shape: tuple
    ours_s: float | None = None
    cupy_s: float | None = None
    torch_s: float | None = None
    numpy_s: float | None = None
    note: str = ""

    def ratio(self, peer: str) -> float | None:
        other = getattr(self, f"{peer}_s")
        return other / self.ours_s if other and self.ours_s else None


def _operands(shape: tuple, rng: np.random.Generator) -> dict[str, np.ndarray]:
    m, n = shape
    a = rng.standard_normal(shape).astype(np.float32)
    return {"a": a, "b": rng.standard_normal(shape).astype(np.float32),
            "c": np.zeros(shape, np.float32),
            "bt": rng.standard_normal((n, m)).astype(np.float32),
            "row": rng.standard_normal(n).astype(np.float32),
            "col": rng.standard_normal(m).astype(np.float32),
            "zero_d": np.array(1.5, np.float32),
            "idx": rng.integers(0, m, max(m // 2, 1)).astype(np.int64)}


def _close(got: Any, want: Any) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "biu":
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max(
        initial=0)))))


def _fresh(host: dict[str, np.ndarray], to: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    return {k: to(v) for k, v in host.items()}


def run(device: Device, shapes: Sequence[tuple[int, int]] = SHAPES,
        patterns: Sequence[Pattern] = PATTERNS, budget_s: float = 0.03,
        progress: Any = None, cuda_peers: bool = True) -> list[Row]:
    """Time every pattern at every shape: ours, CuPy and torch (or NumPy), in the same run."""
    peers = CudaPeers.on(device) if cuda_peers else None
    rng = np.random.default_rng(20261127)
    rows = []
    for shape in shapes:
        host = _operands(shape, rng)
        ours = _fresh(host, lambda v: asarray(v, device=device))
        cp_d = tc_d = None
        if peers is not None and peers.cupy is not None:
            cp_d = _fresh(host, peers.cupy.asarray)
        if peers is not None and peers.torch is not None:
            tc_d = _fresh(host, lambda v: peers.torch.from_numpy(np.array(v)).cuda())
        for pat in patterns:
            row = Row(pat.name, shape)
            rows.append(row)
            if progress is not None:
                progress.note(f"{pat.name} {shape}")
            try:
                want = pat.numpy(np, _fresh(host, np.array))
                d = _fresh(host, lambda v: asarray(v, device=device)) if pat.in_place else ours
                got = pat.numpy(np, d)
                if not _close(got, want):
                    row.note = "WRONG result"
                sync = device.synchronize
                row.ours_s = per_call_seconds(lambda: (pat.numpy(np, d), sync()), budget_s)
                if peers is None:
                    hd = _fresh(host, np.array)
                    row.numpy_s = per_call_seconds(lambda: pat.numpy(np, hd), budget_s)
                if cp_d is not None:
                    cp = peers.cupy
                    cs = cp.cuda.runtime.deviceSynchronize
                    row.cupy_s = per_call_seconds(lambda: (pat.numpy(cp, cp_d), cs()), budget_s)
                if tc_d is not None and pat.torch is not None:
                    torch = peers.torch
                    row.torch_s = per_call_seconds(lambda: (pat.torch(torch, tc_d), torch.cuda.synchronize()),
                                        budget_s)
            except Exception as exc:  # noqa: BLE001 - one failing cell is reported, not fatal
                row.note = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
            if progress is not None:
                progress.update()
    return rows


def _distribution(rows: Sequence[Row], peer: str) -> str:
    ratios = sorted(r for r in (row.ratio(peer) for row in rows) if r is not None)
    if not ratios:
        return ""
    return (f"| {peer} | {len(ratios)} | {statistics.median(ratios):.2f}x | "
            f"{sum(x < 0.5 for x in ratios)} | {sum(x < 0.7 for x in ratios)} | "
            f"{sum(x >= 1.0 for x in ratios)} | {ratios[0]:.2f}x |")


def format_report(rows: Sequence[Row], count: int = 20) -> str:
    """The distribution against each peer, then every cell (worst first against CuPy, or
    NumPy where there is no CuPy)."""
    lines = ["| peer | cells | median | < 0.5x | < 0.7x | >= 1.0x | worst |",
             "|---|---|---|---|---|---|---|"]
    lines += [x for x in (_distribution(rows, p) for p in ("cupy", "torch", "numpy")) if x]
    main = next((p for p in ("cupy", "numpy") if any(r.ratio(p) for r in rows)), "cupy")
    ranked = sorted((r for r in rows if r.ratio(main) is not None), key=lambda r: r.ratio(main))
    lines += ["", f"{count} worst cells against {main}:", "",
              "| pattern | shape | ours us | CuPy us | torch us | NumPy us | ratio |",
              "|---|---|---|---|---|---|---|"]
    for r in ranked[:count]:
        lines.append(f"| {r.pattern} | {r.shape[0]}x{r.shape[1]} | {us(r.ours_s)} | "
                     f"{us(r.cupy_s)} | {us(r.torch_s)} | {us(r.numpy_s)} | "
                     f"{r.ratio(main):.2f}x |")
    noted = [r for r in rows if r.note]
    if noted:
        lines += ["", "notes:"] + [f"- {r.pattern} {r.shape}: {r.note}" for r in noted[:40]]
    return "\n".join(lines)


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"rows": [asdict(r) for r in rows]}
