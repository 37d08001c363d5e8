"""The rows of our own kernels, shared by the per-family benchmarks: each kernel checked against
NumPy, timed on the device and end to end, and measured twice (tuned and with its defaults)
when a tuning is stored for it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from ..device import Device
from ..kernels.samples import BenchProblem, WrongResult
from ..kernels.variant import Catalogue, Choice
from .report import Row, skip_note
from .timing import device_seconds, host_seconds

__all__ = ["KernelBench", "kernel_rows", "rows_of_kernels"]


@dataclass(frozen=True)
class KernelBench:
    """What one family's benchmark measures for a kernel ``name`` with ``params``."""

    catalogue: Catalogue
    run: Callable[[Device, Any, str, Mapping[str, int] | None], Any]  # enqueue on the device
    e2e: Callable[[str, Mapping[str, int] | None], Any]  # NumPy in, NumPy out
    work: float  # flops or bytes of one call
    unit: str  # "GFLOP/s" or "GB/s"
    note: Callable[[Row], str] = lambda row: ""  # appended to the parameters


def _row(device: Device, bench: BenchProblem, spec: KernelBench, name: str,
         params: Mapping[str, int] | None, label: str, budget_s: float, size: str,
         n: int) -> Row:
    p = bench.problem
    row = Row(label, size, spec.work, spec.unit, n=n)
    try:
        choice: Choice = spec.catalogue.choose(p, device, name, params)
        bench.poison()
        spec.run(device, p, name, params)
        bench.check()
    except (ValueError, RuntimeError, WrongResult) as exc:
        row.note = skip_note(exc)
        return row
    row.device = device_seconds(device, lambda: spec.run(device, p, name, params),
                                budget_s=budget_s, warmup=0)
    row.e2e = host_seconds(lambda: spec.e2e(name, params), budget_s=budget_s)
    row.note = ", ".join(f"{k}={v}" for k, v in sorted(choice.params.items())) + spec.note(row)
    return row


def kernel_rows(device: Device, bench: BenchProblem, spec: KernelBench, name: str,
                budget_s: float, size: str, n: int) -> list[Row]:
    """The rows of kernel ``name``: one, or "(tuned)" and "(defaults)" when a tuning is stored."""
    variant = spec.catalogue[name]
    if spec.catalogue.tuned_params(device, variant, bench.problem):
        return [_row(device, bench, spec, name, None, f"{name} (tuned)", budget_s, size, n),
                _row(device, bench, spec, name, dict(variant.defaults), f"{name} (defaults)",
                     budget_s, size, n)]
    return [_row(device, bench, spec, name, None, name, budget_s, size, n)]


def rows_of_kernels(device: Device, bench: BenchProblem, spec: KernelBench,
                    names: Iterable[str], budget_s: float, size: str, n: int,
                    progress: Any = None) -> list[Row]:
    """:func:`kernel_rows` of each kernel of ``names`` in turn, each noted on ``progress``
    (a ``bench.progress`` bar) when given."""
    rows: list[Row] = []
    for name in names:
        if progress is not None:
            progress.note(f"{name} {size}")
        rows.extend(kernel_rows(device, bench, spec, name, budget_s, size, n))
        if progress is not None:
            progress.update()
    return rows
