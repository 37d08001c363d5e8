"""The matrix-product benchmark: every GEMM kernel (tuned and with its defaults, when a tuning is
stored), NumPy, CLBlast and cuBLAS, at square sizes, measured in one run. NumPy is timed before
and after our kernels and its faster median is the one compared with (on a busy CPU the first
and second can differ several-fold)."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..device import Device
from ..kernels import gemm
from ..kernels.samples import bench_problem
from ..ops.matmul import matmul
from . import peers
from .kernel_rows import KernelBench, rows_of_kernels
from .report import Row

__all__ = ["default_sizes", "run"]


def default_sizes(device: Device) -> tuple[int, ...]:
    """Sizes that finish in a few minutes on this kind of device."""
    if device.info.is_simulator:
        return (16, 32)
    if device.info.is_gpu:
        return (256, 512, 1024, 2048, 4096)
    return (128, 256, 512)


def run(device: Device, sizes: Iterable[int], kernels: Sequence[str] | None = None,
        dtype: Any = np.float32, budget_s: float = 0.5, with_peers: bool = True,
        progress: Any = None) -> list[Row]:
    """Measure every kernel in ``kernels`` (default: all of ``clarray_gemm.kernels("matmul")``)
    and the peers at each size ``n`` (an ``n x n @ n x n`` product)."""
    names = list(kernels) if kernels else gemm.CATALOGUE.names()
    rows: list[Row] = []
    reported: set[str] = set()
    for n in sizes:
        size = f"{n}^3"
        bench = bench_problem(device, n, n, n, dtype)
        p = bench.problem
        peer_rows: list[Row] = []
        if with_peers:
            found = [peers.numpy_matmul(bench.a, bench.b, budget_s),
                     peers.clblast_gemm(device, bench, budget_s),
                     *peers.cuda_matmuls(bench.a, bench.b, budget_s)]
            for res in found:
                if res.skipped and res.name in reported:
                    continue  # say once why a peer is missing, not at every size
                reported.add(res.name)
                peer_rows.append(Row(res.name, size, p.flops, "GFLOP/s", res.device, res.e2e,
                                     f"peer not measured: {res.skipped}" if res.skipped
                                     else "peer", n=n))
        a, b = bench.a, bench.b
        spec = KernelBench(gemm.CATALOGUE, gemm.run,
                           lambda name, params: np.asarray(matmul(a, b, kernel=name,
                                                                  params=params)),
                           p.flops, "GFLOP/s")
        ours = rows_of_kernels(device, bench, spec, names, budget_s, size, n, progress)
        numpy_row = next((r for r in peer_rows if r.name == "numpy"), None)
        if numpy_row is not None:  # again after our kernels: the faster median counts
            again = peers.numpy_matmul(bench.a, bench.b, budget_s).e2e
            numpy_row.e2e = min(numpy_row.e2e, again, key=lambda t: t.seconds)
        _add_ratios(ours, peer_rows)
        rows.extend(ours + peer_rows)
    return rows


def _add_ratios(ours: list[Row], peer_rows: list[Row]) -> None:
    by_name = {r.name: r for r in peer_rows}
    numpy_row = by_name.get("numpy")
    cuda = [r for r in peer_rows if r.name.startswith("cuBLAS") and r.device]
    for r in ours:
        if r.device is None:
            continue
        if numpy_row and numpy_row.e2e:
            r.ratios["x NumPy"] = numpy_row.e2e.seconds / r.device.seconds
            if r.e2e:
                r.ratios["e2e x NumPy"] = numpy_row.e2e.seconds / r.e2e.seconds
        clb = by_name.get("CLBlast")
        if clb and clb.device:
            r.ratios["x CLBlast"] = clb.device.seconds / r.device.seconds
        if cuda:
            r.ratios["x cuBLAS"] = min(c.device.seconds for c in cuda) / r.device.seconds
