"""Seed 000's table reproduced: its five SGEMM kernels as published (``seed000_sgemm.cl`` beside
this script) and the package's GEMM kernels, at one size on one device, next to the figures the
seed measured on a GTX 1080 at M = N = K = 4096. Device time from profiling events; every result
is checked against NumPy before it is timed.

    python benches/seed000/seed000.py [--size N] [--device NAME] [--budget S]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # a checkout's package
from clarray_gemm import get_device  # noqa: E402
from clarray_gemm.bench.report import skip_note  # noqa: E402
from clarray_gemm.bench.timing import device_seconds  # noqa: E402
from clarray_gemm.device import Device  # noqa: E402
from clarray_gemm.kernels import gemm  # noqa: E402
from clarray_gemm.kernels.samples import WrongResult, bench_problem  # noqa: E402

SOURCE = Path(__file__).with_name("seed000_sgemm.cl")

__all__ = ["SEED_GTX1080", "SeedRow", "run", "format_table", "default_size"]

# version, entry point, -D defines, GFLOP/s on the GTX 1080 at 4096^3 (seed 000)
SEED_GTX1080: tuple[tuple[str, str, dict[str, int], float], ...] = (
    ("1 naive", "seed_naive", {}, 44.0),
    ("2 local-memory tiling", "seed_tiled", {}, 197.0),
    ("3 work per thread (WPT=8)", "seed_wpt", {"WPT": 8}, 544.0),
    ("4 float4", "seed_vector", {"WIDTH": 4}, 801.0),
    ("4b float8", "seed_vector", {"WIDTH": 8}, 1067.0),
)
_TS = 32


@dataclass
class SeedRow:
    """One kernel of the table: our GFLOP/s here, and the seed's on its GTX 1080 (if any)."""

    name: str
    gflops: float | None
    seed_gflops: float | None
    note: str = ""


def default_size(device: Device) -> int:
    """The seed's 4096 on GPUs; smaller where the naive kernel would take minutes."""
    if device.info.is_simulator:
        return 64
    return 4096 if device.info.is_gpu else 1024


def _seed_launch(device: Device, entry: str, defines: dict[str, int], p: Any
                 ) -> Callable[[], Any]:
    options = [f"-D{k}={v}" for k, v in {"TS": _TS, **defines}.items()]
    kernel = getattr(cl.Program(device.context, SOURCE.read_text()).build(options=options), entry)
    M, N, K = p.M, p.N, p.K
    if entry in ("seed_naive", "seed_tiled"):
        gws, lws = (M, N), (_TS, _TS)
    elif entry == "seed_wpt":
        wpt = defines["WPT"]
        gws, lws = (M // wpt, N), (_TS // wpt, _TS)
    else:
        w = defines["WIDTH"]
        gws, lws = (M, N // w), (_TS, _TS // w)
    args = (p.a.buffer, p.b.buffer, p.c.buffer, np.int32(M), np.int32(N), np.int32(K))
    return lambda: kernel(device.queue, gws, lws, *args)


def _measure(device: Device, bench: Any, op: Callable[[], Any], budget_s: float) -> float:
    bench.poison()
    op()
    bench.check()
    t = device_seconds(device, op, budget_s=budget_s, warmup=0)
    return bench.problem.flops / t.seconds * 1e-9


def run(device: Device, n: int, budget_s: float = 1.0, progress: Any = None) -> list[SeedRow]:
    """Measure the seed's kernels and every kernel of ``clarray_gemm.kernels("matmul")`` at
    ``n x n @ n x n`` float32 (``n`` is rounded up to a multiple of 32, as the seed requires)."""
    n = (max(n, _TS) + _TS - 1) // _TS * _TS
    bench = bench_problem(device, n, n, n, np.float32)
    rows = []
    for name, entry, defines, seed in SEED_GTX1080:
        if progress is not None:
            progress.note(name)
        try:
            rate = _measure(device, bench, _seed_launch(device, entry, defines, bench.problem),
                            budget_s)
            rows.append(SeedRow(f"seed {name}", rate, seed))
        except (RuntimeError, ValueError, WrongResult) as exc:  # cl.Error is a RuntimeError
            rows.append(SeedRow(f"seed {name}", None, seed,
                                skip_note(exc)))
        if progress is not None:
            progress.update()
    for name in gemm.CATALOGUE.names():
        if progress is not None:
            progress.note(name)
        p = bench.problem
        try:
            choice = gemm.choose(device, p, name)
            rate = _measure(device, bench, lambda: gemm.run(device, p, name), budget_s)
            params = ", ".join(f"{k}={v}" for k, v in sorted(choice.params.items()))
            rows.append(SeedRow(f"ours: {name}", rate, None,
                                params + (" (tuned)" if choice.tuned else "")))
        except (RuntimeError, ValueError, WrongResult) as exc:
            rows.append(SeedRow(f"ours: {name}", None, None,
                                skip_note(exc)))
        if progress is not None:
            progress.update()
    return rows


def format_table(rows: list[SeedRow], device: Device, n: int) -> str:
    """A Markdown table: our GFLOP/s on ``device`` at ``n``, the seed's GTX 1080 figure at 4096,
    and each kernel's speed relative to the seed's naive kernel on the same device."""
    base = next((r.gflops for r in rows if r.name == "seed 1 naive" and r.gflops), None)
    head = ["kernel", f"GFLOP/s here ({n}^3)", "GTX 1080 (seed, 4096^3)", "x seed naive here",
            "x seed naive on GTX 1080", "note"]
    lines = [f"Device: {device.name} ({device.info.platform}); device time, float32.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        rel = f"{r.gflops / base:.1f}" if base and r.gflops else "-"
        seed_rel = f"{r.seed_gflops / SEED_GTX1080[0][3]:.1f}" if r.seed_gflops else "-"
        lines.append("| " + " | ".join([
            r.name, f"{r.gflops:.1f}" if r.gflops else "-",
            f"{r.seed_gflops:.0f}" if r.seed_gflops else "-", rel, seed_rel, r.note]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, help="M = N = K (default: 4096 on GPUs, 1024 on "
                        "CPUs, 64 on simulators)")
    parser.add_argument("--device", help="a substring of the device's name (default: the "
                        "package's default device)")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds of calls per kernel")
    args = parser.parse_args(argv)
    device = get_device(args.device)
    n = args.size or default_size(device)
    print(format_table(run(device, n, budget_s=args.budget), device, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
