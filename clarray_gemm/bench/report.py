"""Benchmark rows, the printed table (Markdown, so it pastes into ``benches/RESULTS.md``) and the
chart (``--plot``).

Columns: ``device ms`` is device-only time (OpenCL profiling events or CUDA events, operands
already on the device); ``e2e ms`` is end-to-end (NumPy arrays in, NumPy array out) with the
``copied`` host<->device bytes of one call. Ratios are the peer's time divided by ours, both
measured in the same run, so above 1 means ours is faster: ``x NumPy`` compares our device time
with NumPy's host time (and ``e2e x NumPy`` our end-to-end time with it), ``x CLBlast`` and
``x cuBLAS`` compare device times.
"""
from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from .timing import Timing

__all__ = ["Row", "format_table", "plot", "skip_note", "error_text", "markdown_table", "micros",
           "peer_distribution", "cell_failure",
           "noise_note", "timing_json", "write_json"]


@dataclass
class Row:
    """One measured (kernel or peer, size): times, the work it did, and ratios to peers."""

    name: str
    size: str
    work: float  # flops (matmul) or bytes (convolve) of one call
    unit: str  # "GFLOP/s" or "GB/s"
    device: Timing | None = None
    e2e: Timing | None = None
    note: str = ""
    ratios: dict[str, float] = field(default_factory=dict)
    n: int = 0  # the size as a number, for charts

    def rate(self, which: str = "device") -> float | None:
        t = self.device if which == "device" else self.e2e
        return self.work / t.seconds * 1e-9 if t and t.seconds > 0 else None

    def best_seconds(self) -> float | None:
        return (self.device or self.e2e).seconds if (self.device or self.e2e) else None


def skip_note(exc: BaseException) -> str:
    """A table note for a kernel that could not run: the reason, without the caller's prefix."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^.*? does not fit this call: ", "", text)
    return "skipped: " + (text if len(text) <= 100 else text[:97] + "...")


def error_text(exc: BaseException) -> str:
    """An exception in one line for a table note: its type and the first line of its message."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


PEER_COLUMNS = ("x NumPy", "x CLBlast", "x cuBLAS")


def _ms(t: Timing | None) -> str:
    return f"{t.seconds * 1e3:.3f}" if t else "-"


def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return fmt.format(x) if x is not None else "-"


def _bytes(t: Timing | None) -> str:
    if t is None or t.copied is None:
        return "-"
    n = t.bytes_copied
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**10:.1f} KiB" if n else "0"


def peer_distribution(rows: Sequence[Any]) -> tuple[str, list[str]]:
    """The peer (CuPy where measured, else NumPy) and the distribution of ``row.ratio(peer)``
    as a Markdown table: cells, median, below 0.5x and 0.8x, at or above 1.0x, the worst."""
    peer = "cupy" if any(r.ratio("cupy") for r in rows) else "numpy"
    ratios = sorted(x for x in (r.ratio(peer) for r in rows) if x is not None)
    lines = ["| peer | cells | median | < 0.5x | < 0.8x | >= 1.0x | worst |",
             "|---|---|---|---|---|---|---|"]
    if ratios:
        lines.append(f"| {peer} | {len(ratios)} | {statistics.median(ratios):.2f}x | "
                     f"{sum(x < 0.5 for x in ratios)} | {sum(x < 0.8 for x in ratios)} | "
                     f"{sum(x >= 1.0 for x in ratios)} | {ratios[0]:.2f}x |")
    return peer, lines


def cell_failure(exc: BaseException) -> str:
    """A grid cell's note for a call that raised (the cell is reported, the grid goes on)."""
    return f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of ``head`` and the rows' cells."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def micros(t: Timing | float | None) -> str:
    """A time (a ``Timing``'s median, or seconds) in microseconds, about 3 significant digits."""
    if t is None:
        return "-"
    us = (t.seconds if isinstance(t, Timing) else t) * 1e6
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


NOISY = 2.0  # a median this many times the fastest call marks a cell as noisy


def noise_note(label: str, t: Timing | None) -> str | None:
    """"<label> noisy (median Nx its fastest)" when a cell's calls spread that much (a shared
    CPU, a clock boost, a driver's wake-up latency), else None."""
    if t is None or t.reps < 5 or t.best <= 0 or t.seconds < NOISY * t.best:
        return None
    return f"{label} noisy (median {t.seconds / t.best:.1f}x its fastest)"


def timing_json(t: Timing | None) -> dict[str, Any] | None:
    """A ``Timing`` as plain numbers (seconds), for ``--json``."""
    if t is None:
        return None
    return {"median_s": t.seconds, "best_s": t.best, "reps": t.reps, "kind": t.kind,
            "bytes_copied": t.bytes_copied if t.copied is not None else None}


def write_json(path: str, payload: dict[str, Any]) -> None:
    """Write a bench's raw numbers to ``path`` (indented JSON)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    unit = rows[0].unit if rows else "GFLOP/s"
    head = ["kernel", "size", "device ms", unit, *PEER_COLUMNS, "e2e ms", f"e2e {unit}",
            "e2e x NumPy", "copied", "note"]
    return markdown_table(head, [
        [r.name, r.size, _ms(r.device), _num(r.rate("device")),
         *(_num(r.ratios.get(c), "{:.2f}") for c in PEER_COLUMNS),
         _ms(r.e2e), _num(r.rate("e2e")), _num(r.ratios.get("e2e x NumPy"), "{:.2f}"),
         _bytes(r.e2e), r.note] for r in rows])


def plot(rows: Sequence[Row], path: str, title: str, xlabel: str = "size") -> None:
    """Save a chart of rate against size, one line per kernel or peer (peers dashed; device
    time where measured, else end-to-end, and the legend says which)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float]]] = {}
    peers = {r.name for r in rows if r.note.startswith("peer")}
    for r in rows:
        which = "device" if r.device else "e2e"
        rate = r.rate(which)
        if rate is None:
            continue
        label = r.name + ("" if which == "device" else " (end-to-end)")
        series.setdefault(label, []).append((r.n, rate))
    fig, ax = plt.subplots(figsize=(9, 5))
    colors = plt.get_cmap("tab20").colors
    for i, (label, points) in enumerate(sorted(series.items())):
        points.sort()
        peer = label.split(" (end-to-end)")[0] in peers
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label,
                color=colors[i % len(colors)], linestyle="--" if peer else "-")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(rows[0].unit if rows else "GFLOP/s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
