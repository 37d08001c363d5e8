"""GEMM on one GPU at every shape and dtype against cuBLAS (torch, TF32 off) and CuPy.

Run on the GPU machine from the repository root, in one call (under 4 minutes)::

    source .whl/prelude.sh; python3 benches/gpu_gemm_shapes.py [--out $OUT] [--only SUBSTR ...]

Every row is one product through the public API (``a @ b`` on device arrays, or
``cg.matmul(a, b, kernel=..., params=...)`` where a row forces a kernel) against the same product
on the peer: torch (cuBLAS, TF32 off) for floating dtypes, CuPy for integers (torch has no CUDA
integer matmul). Columns, wall clock first:

* wall ratio = peer wall / ours wall: median per-call time as a user sees it, the queue drained
  after every call (``queue.finish()`` / ``cuda.synchronize()``);
* device ratio = peer device / ours device: fence-kernel spans (ours) and CUDA events (peer);
* the kernel our plan chose (``explain_matmul``'s choice), and its resolved parameters;
* check: ours against NumPy (float64 reference for floats, the same integer dtype for integers,
  so wrapping is NumPy's), on every output row for small products and on sampled rows of big
  ones: relative Frobenius error for floats, exact equality (mismatch count) for integers;
* GEMV rows also print GB/s (matrix + vectors read, result written) and the percentage of the
  device-to-device copy bandwidth measured at the start of the same run.

Groups: ``copy`` (bandwidth floor), ``gemv``, ``batched``, ``int``, ``fp32`` (square, irregular,
skinny), ``sweep`` rows (forced kernels and parameters, our times only, for the next tuning step:
integer gpu_blocked presets against vec/regtile, gemv_split at 4096^2 and 8192^2, gpu_blocked's
float64 presets), then ``fp64`` (on sm_80+ the inline-PTX ``dmma`` kernel by default) and the
``dmma`` tile sweep last, so that a faulting PTX kernel cannot spoil the rows before it. Each row catches its own exceptions; ``--budget`` seconds after the start the
remaining rows are listed as skipped. With ``CLARRAY_GEMM_NV_VERBOSE`` set (the default here) each
newly built program's ptxas report (registers, spills) is printed under the row that built it.
Locally (no CUDA) ``--device pocl --quick`` runs the same rows at small sizes without peers.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

os.environ.setdefault("CLARRAY_GEMM_NV_VERBOSE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pyopencl as cl  # noqa: E402

import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import (cuda_event_seconds, device_seconds,  # noqa: E402
                                       synced_seconds)
from clarray_gemm.kernels import gemm_gpu, gemv_split, programs  # noqa: E402
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem  # noqa: E402
from clarray_gemm.ops.matmul import plan_for  # noqa: E402

BUDGET_S = 0.25  # timing budget per measurement (3 to 20 repetitions)


def say(*args: Any) -> None:
    print(" ".join(str(a) for a in args), flush=True)


# -- operands -----------------------------------------------------------------------------------
@dataclass
class Operand:
    """An operand as NumPy shape + layout: ``"C"`` contiguous, ``"T"`` a transposed view of a
    contiguous array, ``"S2"`` every second element along the last axis."""

    shape: tuple
    layout: str = "C"

    def host(self, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        """The backing NumPy array (before the view is taken)."""
        shape = list(self.shape)
        if self.layout == "T":
            shape[-2:] = shape[-1:-3:-1] if len(shape) >= 2 else shape
        elif self.layout == "S2":
            shape[-1] *= 2
        if dtype.kind == "f":
            return rng.standard_normal(shape, dtype=dtype if dtype.itemsize >= 4 else np.float32
                                       ).astype(dtype)
        info = np.iinfo(dtype)  # full range: products and sums wrap
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def view(self, x: Any) -> Any:
        """The view this operand describes of the backing array ``x`` (any array library)."""
        if self.layout == "T":
            return x.swapaxes(-1, -2)
        if self.layout == "S2":
            return x[..., ::2]
        return x


@dataclass
class Case:
    group: str
    label: str
    a: Operand
    b: Operand
    dtype: str = "float32"
    kernel: str | None = None
    params: dict = field(default_factory=dict)
    peer: str | None = "auto"  # "auto": torch for floats, cupy for integers; None: ours only
    bandwidth: bool = False     # report GB/s and % of copy bandwidth


def mkn(M: int, K: int, N: int) -> tuple[Operand, Operand]:
    return Operand((M, K)), Operand((K, N))


def cases(quick: bool) -> list[Case]:
    """Every row, in order of value (the target table's rows first, then the other paths)."""
    s = (lambda n: max(n // 16, 8)) if quick else (lambda n: n)
    rows: list[Case] = []
    add = rows.append
    # GEMV: both orientations, 1-D and 2-D vectors, transposed / strided operands, batched.
    for n in (4096, 8192):
        n = s(n)
        add(Case("gemv", f"x @ A  1x{n}x{n} (x 1-D)", Operand((n,)), Operand((n, n)), bandwidth=True))
        add(Case("gemv", f"A @ x  {n}x{n}x1 (x 1-D)", Operand((n, n)), Operand((n,)), bandwidth=True))
    n = s(4096)
    add(Case("gemv", f"(1,{n}) @ A  2-D row", Operand((1, n)), Operand((n, n)), bandwidth=True))
    add(Case("gemv", f"A @ ({n},1)  2-D column", Operand((n, n)), Operand((n, 1)), bandwidth=True))
    add(Case("gemv", f"A.T @ x  {n}x{n}x1", Operand((n, n), "T"), Operand((n,)), bandwidth=True))
    add(Case("gemv", f"x @ A.T  1x{n}x{n}", Operand((n,)), Operand((n, n), "T"), bandwidth=True))
    add(Case("gemv", f"A @ x[::2]  {n}x{n}x1", Operand((n, n)), Operand((n,), "S2"), bandwidth=True))
    add(Case("gemv", f"x[::2] @ A  1x{n}x{n}", Operand((n,), "S2"), Operand((n, n)), bandwidth=True))
    add(Case("gemv", f"A @ x  {n}x{n}x1 float64", Operand((n, n)), Operand((n,)), "float64",
             bandwidth=True))
    add(Case("gemv", f"x @ A  1x{n}x{n} float64", Operand((n,)), Operand((n, n)), "float64",
             bandwidth=True))
    b, n = (8, s(1024)) if quick else (64, 1024)
    add(Case("gemv", f"batched {b}x({n}x{n} @ {n}x1)", Operand((b, n, n)), Operand((b, n, 1)),
             bandwidth=True))
    add(Case("gemv", f"batched {b}x(1x{n} @ {n}x{n})", Operand((b, 1, n)), Operand((b, n, n)),
             bandwidth=True))
    add(Case("gemv", f"shared A {b} vectors: ({b},1,{n}) @ {n}x{n}", Operand((b, 1, n)),
             Operand((n, n)), bandwidth=True))
    # Small batched products (one launch).
    for batch, m in ((1000, 32), (10000, 8), (256, 64), (100, 128)):
        batch = max(batch // 50, 2) if quick else batch
        add(Case("batched", f"{batch} x {m}^3", Operand((batch, m, m)), Operand((batch, m, m))))
    bb = 16 if quick else 256
    add(Case("batched", f"broadcast ({bb},64,64) @ (64,64)", Operand((bb, 64, 64)), Operand((64, 64))))
    add(Case("batched", "broadcast (8,1,64,64) @ (1,32,64,64)", Operand((8, 1, 64, 64)),
             Operand((1, 32 if not quick else 2, 64, 64))))
    add(Case("batched", f"A.T batched {bb} x 64^3", Operand((bb, 64, 64), "T"), Operand((bb, 64, 64))))
    # Integers (exact, wrapping as NumPy does).
    for dt in ("int32", "int64"):
        for n in (1024, 4096):
            n = s(n)
            add(Case("int", f"{n}^3 {dt}", *mkn(n, n, n), dt))
    add(Case("int", f"{s(1024)}^3 uint32", *mkn(s(1024), s(1024), s(1024)), "uint32"))
    add(Case("int", f"{s(1024)}^3 uint8", *mkn(s(1024), s(1024), s(1024)), "uint8"))
    add(Case("int", f"{s(4096)}^3 uint8", *mkn(s(4096), s(4096), s(4096)), "uint8"))
    add(Case("int", f"{s(1024)}^3 int8", *mkn(s(1024), s(1024), s(1024)), "int8"))
    add(Case("int", f"{s(4096)}^3 uint32", *mkn(s(4096), s(4096), s(4096)), "uint32"))
    add(Case("int", f"{s(1000)}x{s(999)}x{s(1001)} int32 odd", *mkn(s(1000), s(999), s(1001)), "int32"))
    # float32: the target table (M x K x N): squares, then irregular and skinny shapes.
    for n in (64, 100, 1024, 4096, 8192):
        n = n if n <= 100 else s(n)
        add(Case("fp32", f"{n}^3", *mkn(n, n, n)))
    for m, k, nn in ((4097, 3001, 2049), (3000, 5000, 700), (8192, 8192, 64), (64, 8192, 8192),
                     (8192, 64, 8192), (1024, 65536, 1024), (65536, 256, 256)):
        add(Case("fp32", f"{s(m)}x{s(k)}x{s(nn)} (MxKxN)", *mkn(s(m), s(k), s(nn))))
    n = s(4096)
    add(Case("fp32", f"A.T @ B {n}^3", Operand((n, n), "T"), Operand((n, n))))
    add(Case("fp32", f"A @ B.T {n}^3", Operand((n, n)), Operand((n, n), "T")))
    # Sweeps: forced kernels / parameters, our times only (peers measured above).
    for n in (1024, 4096):
        n = s(n)
        for dt, kern, params in (("int32", "gpu_blocked", {"PRESET": 7}),
                                 ("int32", "gpu_blocked", {"PRESET": 1}),
                                 ("int32", "gpu_blocked", {"PRESET": 4}),
                                 ("int32", "vec", {}), ("int32", "regtile", {}),
                                 ("int64", "gpu_blocked", {"PRESET": 1}),
                                 ("int64", "gpu_blocked", {"PRESET": 4})):
            add(Case("sweep", f"{dt} {n}^3 {kern} {params or ''}", *mkn(n, n, n), dt, kern,
                     params, peer=None))
    for n in (4096, 8192):
        n = s(n)
        gemv_rows = (Operand((n, n)), Operand((n,)))   # A @ x: gemv_rows
        gemv_cols = (Operand((n,)), Operand((n, n)))   # x @ A: gemv_cols
        for params in ({"WG": 256}, {"WG": 128, "KSPLIT": 2}, {"WG": 64}, {"WG": 128, "LANES": 16}):
            add(Case("sweep", f"A @ x {n}^2 gemv_split {params}", *gemv_rows, kernel="gemv_split",
                     params=params, peer=None, bandwidth=True))
        for params in ({"KSPLIT": 1}, {"RT": 8}, {"RT": 32}, {"WG": 128}, {"WG": 512, "RT": 32}):
            add(Case("sweep", f"x @ A {n}^2 gemv_split {params}", *gemv_cols, kernel="gemv_split",
                     params=params, peer=None, bandwidth=True))
    # 4097x3001x2049 runs scalar loads (K and N not multiples of 4): the same product with K and
    # N padded to multiples of 4 (what zero-padded operand copies would run), and split-K.
    for m, k, nn, params in ((4097, 3004, 2052, {}), (4096, 3000, 2048, {}),
                             (4097, 3001, 2049, {"PRESET": 7, "KSPLIT": 2}),
                             (4097, 3001, 2049, {"PRESET": 1})):
        add(Case("sweep", f"fp32 {s(m)}x{s(k)}x{s(nn)} gpu_blocked {params}",
                 *mkn(s(m), s(k), s(nn)), "float32", "gpu_blocked", params, peer=None))
    for kern in ("gpu_blocked", "vec"):
        add(Case("sweep", f"1000 x 32^3 {kern}", Operand((1000 if not quick else 20, 32, 32)),
                 Operand((1000 if not quick else 20, 32, 32)), kernel=kern, peer=None))
    # float64 without tensor cores first (the fallback's presets), then the dmma tile sweep.
    for n in (2048, 4096):
        n = s(n)
        for preset in (1, 4):
            add(Case("sweep", f"fp64 {n}^3 gpu_blocked PRESET={preset}", *mkn(n, n, n),
                     "float64", "gpu_blocked", {"PRESET": preset, "KSPLIT": 1}, peer=None))
    # float64 (after every other group: its default on sm_80+ is the inline-PTX dmma kernel, and
    # a kernel that faults would spoil the context for the rows after it).
    for n in (1024, 2048, 4096):
        n = s(n)
        add(Case("fp64", f"{n}^3 float64", *mkn(n, n, n), "float64"))
    n = s(2048)
    add(Case("fp64", f"A.T @ B {n}^3 float64", Operand((n, n), "T"), Operand((n, n)), "float64"))
    add(Case("fp64", f"4097x3001x2049 float64 (MxKxN)", *mkn(s(4097), s(3001), s(2049)), "float64"))
    n = s(4096)
    add(Case("fp64", f"A @ B.T {n}^3 float64", Operand((n, n)), Operand((n, n), "T"), "float64"))
    add(Case("fp64", f"batched 64 x 256^3 float64", Operand((64, s(256), s(256))),
             Operand((64, s(256), s(256))), "float64"))
    emulate = {"EMULATE": 1} if quick else {}
    tiles = ((64, 64, 16, 32, 32, 8, 0), (64, 64, 16, 32, 32, 8, 1), (128, 128, 8, 64, 32, 8, 0),
             (128, 128, 8, 64, 32, 8, 1), (128, 64, 8, 64, 32, 8, 1), (64, 64, 8, 32, 32, 8, 1),
             (128, 64, 8, 32, 32, 8, 0), (128, 128, 8, 32, 64, 8, 1), (64, 64, 16, 32, 32, 1, 0),
             (64, 128, 8, 32, 64, 8, 1))
    for n, shown in ((2048, tiles), (4096, tiles[:5])):
        n = s(n)
        for bm, bn, bk, wm, wn, gm, kp in shown:
            params = dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, GROUP_M=gm, KPAIR=kp, **emulate)
            add(Case("sweep", f"fp64 {n}^3 dmma {bm}x{bn}x{bk} warp {wm}x{wn} G{gm} KPAIR={kp}",
                     *mkn(n, n, n), "float64", "dmma", params, peer=None))
    return rows


# -- peers --------------------------------------------------------------------------------------
class Peers:
    """torch (cuBLAS, TF32 off) and CuPy, where importable and a CUDA device is present."""

    def __init__(self, enabled: bool):
        self.torch = self.cupy = None
        if not enabled:
            return
        try:
            import torch
            if torch.cuda.is_available():
                torch.backends.cuda.matmul.allow_tf32 = False
                torch.backends.cudnn.allow_tf32 = False
                self.torch = torch
        except Exception as exc:  # noqa: BLE001
            say("torch unavailable:", exc)
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
            self.cupy = cupy
        except Exception as exc:  # noqa: BLE001
            say("cupy unavailable:", exc)

    def describe(self) -> str:
        parts = []
        if self.torch is not None:
            parts.append(f"torch {self.torch.__version__} on {self.torch.cuda.get_device_name()} "
                         f"(allow_tf32={self.torch.backends.cuda.matmul.allow_tf32})")
        if self.cupy is not None:
            parts.append(f"cupy {self.cupy.__version__}")
        return "; ".join(parts) or "no peers"

    def pick(self, case: Case) -> str | None:
        if case.peer is None:
            return None
        want = case.peer if case.peer != "auto" else (
            "torch" if np.dtype(case.dtype).kind == "f" else "cupy")
        return want if getattr(self, want) is not None else None

    def operands(self, name: str, a_host: np.ndarray, b_host: np.ndarray, case: Case):
        if name == "torch":
            t = self.torch
            return (case.a.view(t.from_numpy(np.ascontiguousarray(a_host)).cuda()),
                    case.b.view(t.from_numpy(np.ascontiguousarray(b_host)).cuda()))
        cp = self.cupy
        return case.a.view(cp.asarray(a_host)), case.b.view(cp.asarray(b_host))

    def times(self, name: str, a, b) -> tuple[float, float, Any]:
        """(wall s, device s, one result) of ``a @ b`` on the peer."""
        if name == "torch":
            t = self.torch
            op, sync = (lambda: t.matmul(a, b)), t.cuda.synchronize
            new_event = lambda: t.cuda.Event(enable_timing=True)  # noqa: E731
        else:
            cp = self.cupy
            op, sync = (lambda: cp.matmul(a, b)), cp.cuda.runtime.deviceSynchronize
            new_event = cp.cuda.Event
        result = op()
        sync()
        wall = synced_seconds(op, sync, budget_s=BUDGET_S).seconds
        dev = cuda_event_seconds(new_event, op, sync, budget_s=BUDGET_S).seconds
        return wall, dev, result


# -- checks -------------------------------------------------------------------------------------
def sample_rows(case: Case, a_view: np.ndarray, flops: float) -> np.ndarray | None:
    """Rows of the output's M axis to check (None: all); big products are sampled."""
    if a_view.ndim < 2 or flops <= 4e9:
        return None
    M = a_view.shape[-2]
    count = 8 if np.dtype(case.dtype).kind != "f" else 48
    return np.unique(np.linspace(0, M - 1, count).astype(np.int64))


def check(case: Case, ours: np.ndarray, a_view: np.ndarray, b_view: np.ndarray,
          flops: float) -> tuple[str, bool]:
    """(text, passed) of ours against NumPy."""
    rows = sample_rows(case, a_view, flops)
    if rows is not None:
        a_view = a_view[..., rows, :]
        ours = ours[..., rows, :] if b_view.ndim > 1 else ours[..., rows]
    dt = np.dtype(case.dtype)
    if dt.kind == "f":
        ref = np.matmul(a_view.astype(np.float64), b_view.astype(np.float64))
        if ours.shape != ref.shape:
            return f"shape {ours.shape} != {ref.shape}", False
        err = float(np.linalg.norm(ours.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-300))
        ok = err < (1e-4 if dt == np.float32 else 1e-12) and np.all(np.isfinite(ours))
        return f"rel {err:.1e}" + ("" if rows is None else f" ({len(rows)} rows)"), bool(ok)
    ref = np.matmul(a_view, b_view)
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return f"{ours.dtype}{ours.shape} != {ref.dtype}{ref.shape}", False
    bad = int(np.count_nonzero(ours != ref))
    return f"{'exact' if bad == 0 else f'{bad} wrong'}" + (
        "" if rows is None else f" ({len(rows)} rows)"), bad == 0


# -- one row ------------------------------------------------------------------------------------
def shape_mnk(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int]:
    a2 = a.shape if a.ndim > 1 else (1,) + a.shape
    b2 = b.shape if b.ndim > 1 else b.shape + (1,)
    batch = math.prod(np.broadcast_shapes(a2[:-2], b2[:-2]))
    return batch, a2[-2], a2[-1], b2[-1]


def ptxas_reports(seen: set) -> list[str]:
    """ptxas lines (registers, spills) of the programs built since the last call."""
    out = []
    for key in programs.built_programs():
        if key in seen:
            continue
        seen.add(key)
        device, source, defines = key[0], key[1], dict(key[2])
        prog = programs.build_program(device, source, defines, key[3])   # built: the cached one
        try:
            log = prog.get_build_info(device.cl_device, cl.program_build_info.LOG)
        except Exception:  # noqa: BLE001
            continue
        lines = [x.split(":", 1)[-1].strip() for x in log.splitlines()
                 if "ptxas" in x and ("registers" in x or "spill" in x or "Compiling" in x)]
        if lines:
            tag = " ".join(f"{k}={v}" for k, v in sorted(defines.items())
                           if k not in ("T", "ACC", "VACC", "T4", "SIMULATOR"))
            out.append(f"    ptxas {source} [{tag}]: " + " | ".join(lines[-4:]))
    return out


def _problem_of(plan, x, y) -> GemmProblem:
    """The GemmProblem the plan launches (layouts as the plan computed them; no buffers)."""
    def op(layout, cols, rows):
        if layout is None:
            return GemmOperand(None, 0, cols, rows * cols, False)
        ld, bs, trans, *inner = layout  # an inner batch stride where batches have two levels
        return GemmOperand(None, 0, ld, bs, trans, None, *inner)
    return GemmProblem(plan.batch, plan.M, plan.N, plan.K, plan.compute,
                       op(plan.a_layout, plan.K, plan.M), op(plan.b_layout, plan.N, plan.K),
                       GemmOperand(None, 0, plan.N, plan.M * plan.N, False), plan.precision,
                       plan.batch_inner)


def run_case(case: Case, dev: cg.Device, peers: Peers, copy_bw: dict, seen: set) -> dict:
    rng = np.random.default_rng(len(case.label))
    dt = np.dtype(case.dtype)
    a_host, b_host = case.a.host(rng, dt), case.b.host(rng, dt)
    a_view, b_view = case.a.view(a_host), case.b.view(b_host)
    x = case.a.view(cg.asarray(a_host, device=dev))
    y = case.b.view(cg.asarray(b_host, device=dev))
    batch, M, K, N = shape_mnk(a_view, b_view)
    flops = 2.0 * batch * M * N * K
    if case.kernel is None and not case.params:
        op = lambda: x @ y  # noqa: E731
    else:
        op = lambda: cg.matmul(x, y, kernel=case.kernel, params=case.params)  # noqa: E731
    plan = plan_for(x, y, None, dev, case.kernel, case.params or None)
    if plan.choice is not None:
        chosen = plan.choice.variant.name
        shown = {k: v for k, v in plan.choice.params.items()}
    else:
        chosen, shown = plan.kind, {}
    result = np.asarray(op())
    dev.queue.finish()
    if chosen == "gemv_split":  # the slices, lanes and alignment resolved for this shape
        shown = {k: v for k, v in gemv_split.resolve(
            _problem_of(plan, x, y), dev.info, case.params).items() if k != "GROUPS"}
    if chosen == "gpu_blocked":  # the tile and split-K its cost model resolved for this shape
        for key, (defines, *_rest) in list(gemm_gpu._resolved.items()):
            if key[1:5] == (M, N, K, batch) and np.dtype(case.dtype) in key[5:7]:  # dtype, storage
                shown.update((k, defines[k]) for k in ("BM", "BN", "TM", "TN", "BK", "KSPLIT"))
    row = {"group": case.group, "case": case.label, "dtype": case.dtype, "batch": batch, "M": M,
           "K": K, "N": N, "kernel": chosen, "params": shown}
    row["check"], row["ok"] = check(case, result, a_view, b_view, flops)
    row["ours_wall"] = synced_seconds(op, dev.queue.finish, budget_s=BUDGET_S).seconds
    row["ours_dev"] = device_seconds(dev, op, budget_s=BUDGET_S).seconds
    name = peers.pick(case)
    if name is not None:
        pa, pb = peers.operands(name, a_host, b_host, case)
        row["peer"] = name
        row["peer_wall"], row["peer_dev"], peer_result = peers.times(name, pa, pb)
        peer_np = peer_result.cpu().numpy() if name == "torch" else peers.cupy.asnumpy(peer_result)
        if dt.kind != "f":
            row["peer_agrees"] = bool(np.array_equal(peer_np, result))
        del pa, pb, peer_result
    if case.bandwidth:
        nbytes = (a_view.size + b_view.size + batch * M * N) * dt.itemsize
        row["gbps_wall"] = nbytes / row["ours_wall"] / 1e9
        row["gbps_dev"] = nbytes / row["ours_dev"] / 1e9
        if copy_bw:
            row["pct_copy_wall"] = 100 * row["gbps_wall"] / copy_bw["ours_gbps_wall"]
            row["pct_copy_dev"] = 100 * row["gbps_dev"] / copy_bw["ours_gbps_dev"]
        if "peer_wall" in row:
            row["peer_gbps_wall"] = nbytes / row["peer_wall"] / 1e9
    row["ptxas"] = ptxas_reports(seen)
    return row


# -- copy bandwidth -----------------------------------------------------------------------------
def copy_bandwidth(dev: cg.Device, peers: Peers, nbytes: int) -> dict:
    """Device-to-device copy bandwidth (bytes read + written / time), ours and torch's."""
    ctx = dev.context
    src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(dev.queue, src, np.float32(1), 0, nbytes)
    # the queue of the moment: device_seconds runs op on a profiling queue, then switches back
    op = lambda: cl.enqueue_copy(dev.queue, dst, src)  # noqa: E731
    wall = synced_seconds(op, dev.synchronize, budget_s=BUDGET_S).seconds
    devt = device_seconds(dev, op, budget_s=BUDGET_S).seconds
    out = {"bytes": nbytes, "ours_gbps_wall": 2 * nbytes / wall / 1e9,
           "ours_gbps_dev": 2 * nbytes / devt / 1e9}
    x = cg.asarray(np.ones(nbytes // 4, np.float32), device=dev)
    w = synced_seconds(lambda: x.copy(), dev.synchronize, budget_s=BUDGET_S).seconds
    out["cg_copy_gbps_wall"] = 2 * nbytes / w / 1e9
    if peers.torch is not None:
        t = peers.torch
        a = t.empty(nbytes // 4, dtype=t.float32, device="cuda")
        b = t.empty_like(a)
        w = synced_seconds(lambda: b.copy_(a), t.cuda.synchronize, budget_s=BUDGET_S).seconds
        out["torch_gbps_wall"] = 2 * nbytes / w / 1e9
    return out


# -- output -------------------------------------------------------------------------------------
HEADER = ("| group | case | wall ratio | device ratio | ours wall ms | peer wall ms | ours dev ms "
          "| peer dev ms | peer | kernel (params) | check | GB/s wall (% copy) |")


def fmt_row(r: dict) -> str:
    ms = lambda key: f"{r[key] * 1e3:.4g}" if key in r else "-"  # noqa: E731
    wall = f"**{r['peer_wall'] / r['ours_wall']:.3f}x**" if "peer_wall" in r else "-"
    devr = f"{r['peer_dev'] / r['ours_dev']:.3f}x" if "peer_dev" in r else "-"
    keep = ("PRESET", "KSPLIT", "BM", "BN", "TM", "TN", "BK", "WG", "VW", "NVEC", "TSM", "TSN",
            "TSK", "WPTM", "WPTN", "TS", "LANES", "RT", "KC", "ROWS", "ALIGNED", "WM", "WN",
            "GROUP_M", "KPAIR", "EMULATE")
    params = ",".join(f"{k}={v}" for k, v in r.get("params", {}).items() if k in keep)
    bw = "-"
    if "gbps_wall" in r:
        bw = f"{r['gbps_wall']:.0f}"
        if "pct_copy_wall" in r:
            bw += f" ({r['pct_copy_wall']:.0f}%; dev {r['pct_copy_dev']:.0f}%)"
        if "peer_gbps_wall" in r:
            bw += f"; peer {r['peer_gbps_wall']:.0f}"
    check = r["check"] + ("" if r["ok"] else " **FAIL**")
    if "peer_agrees" in r and not r["peer_agrees"]:
        check += " (peer differs)"
    return (f"| {r['group']} | {r['case']} | {wall} | {devr} | {ms('ours_wall')} | "
            f"{ms('peer_wall')} | {ms('ours_dev')} | {ms('peer_dev')} | {r.get('peer', '-')} | "
            f"{r['kernel']} ({params}) | {check} | {bw} |")


def pick_device(name: str | None) -> cg.Device:
    devs = cg.devices()
    if name:
        names = {d: f"{d.name} {d.info.platform}".lower().replace("portable computing language",
                                                                    "pocl") for d in devs}
        return next(d for d in devs if name.lower() in names[d])
    return next(d for d in devs if d.info.is_gpu and not d.info.is_simulator)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for the JSON rows")
    ap.add_argument("--only", nargs="*", default=None, help="run rows whose group/case contains any")
    ap.add_argument("--device", default=None, help="substring of the device/platform name")
    ap.add_argument("--quick", action="store_true", help="small sizes (local smoke test)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--budget", type=float, default=215.0, help="seconds before rows are skipped")
    args = ap.parse_args()
    start = time.perf_counter()
    dev = pick_device(args.device)
    peers = Peers(not args.no_peers)
    info = dev.info
    say(f"device: {dev.name} ({info.platform}), {info.compute_units} compute units; "
        f"peers: {peers.describe()}")
    copy_bw: dict = {}
    try:
        copy_bw = copy_bandwidth(dev, peers, (1 << 24) if args.quick else (1 << 28))
        say("copy bandwidth (read + write): " + ", ".join(
            f"{k} {v:.0f}" for k, v in copy_bw.items() if k != "bytes") + " GB/s")
    except Exception as exc:  # noqa: BLE001
        say("copy bandwidth failed:", repr(exc))
    say("ratio = peer time / ours (>1: ours faster); wall = per call with the queue drained.\n")
    say(HEADER)
    say("|" + "---|" * (HEADER.count("|") - 1))
    rows, seen = [], set(programs.built_programs())
    for case in cases(args.quick):
        text = f"{case.group} {case.label}"
        if args.only and not any(s in text for s in args.only):
            continue
        if time.perf_counter() - start > args.budget:
            say(f"| {case.group} | {case.label} | skipped: time budget |")
            continue
        try:
            row = run_case(case, dev, peers, copy_bw, seen)
        except Exception as exc:  # noqa: BLE001
            tb = traceback.format_exc().strip().splitlines()
            say(f"| {case.group} | {case.label} | ERROR {type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:200] if str(exc) else ''} | {tb[-3].strip()[:120]} |")
            rows.append({"group": case.group, "case": case.label, "error": repr(exc)[:500]})
            continue
        say(fmt_row(row))
        for line in row.pop("ptxas"):
            say(line)
        rows.append(row)
    failed = [r["case"] for r in rows if "error" in r or not r.get("ok", True)]
    say(f"\n{len(rows)} rows in {time.perf_counter() - start:.0f} s; failed or wrong: "
        f"{failed or 'none'}; host fallbacks: {cg.on_host_calls() or 'none'}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_gemm_shapes.json").write_text(json.dumps(
            {"device": dev.name, "copy": copy_bw, "rows": rows}, indent=1, default=str))


if __name__ == "__main__":
    main()
