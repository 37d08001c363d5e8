"""The probes' one clock: the median wall time of a fixed number of calls, through the bench
package's timer (``clarray_gemm.bench.timing.wall_seconds``), and their cProfile table."""
from __future__ import annotations

import cProfile
import io
import pstats
from typing import Any, Callable

from clarray_gemm.bench.timing import wall_seconds


def median_us(call: Callable[..., Any], calls: int, setup: Callable[[], Any] | None = None,
              sync: Callable[[], Any] | None = None) -> float:
    """Median µs of ``calls`` timed calls after two untimed ones. ``setup`` (untimed) makes
    each call's argument; ``sync`` runs inside the clock after each call (a queue drained)."""
    op = call if sync is None else (lambda *arg: (call(*arg), sync()))
    timing = wall_seconds(op, budget_s=0.0, min_reps=calls, max_reps=calls, setup=setup)
    return timing.seconds * 1e6


def profile(call: Callable[[], Any], calls: int, top: int = 14) -> str:
    """cProfile's table (by own time, ``top`` rows) of ``calls`` calls of ``call``."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        call()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()
