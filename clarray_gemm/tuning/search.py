"""The parameter search: each variant's tunable ``-D`` parameters (work-group sizes included)
per device, dtype and size class; a result is stored only when it beat the defaults in the same
run by more than the run-to-run noise measured there.

Every candidate is built, run once and checked against NumPy before it is timed; candidates that
fail to build, exceed the device's resources or compute a wrong result are skipped.
"""
from __future__ import annotations

import itertools
import random
import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pyopencl as cl

from ..bench.progress import Progress
from ..bench.timing import device_seconds
from ..device import Device, get_device
from ..kernels import tuned
from ..kernels.registry import CATALOGUES
from ..kernels.samples import BenchProblem, WrongResult, bench_problem, conv_bench_problem
from ..kernels.tuned import SIZE_CLASSES, TuningStore, entry_key
from ..kernels.variant import Catalogue, Variant

__all__ = ["Family", "families", "default_sizes", "candidates", "Trial", "Outcome", "Measure",
           "measure_on_device", "tune", "save_store", "CONV_MASK"]

CONV_MASK = 31  # the mask width tuned for when only signal lengths are given


@dataclass(frozen=True)
class Family:
    """What the tuner needs to know about an operation family."""

    name: str
    catalogue: Catalogue
    classify: Callable[[Any], str]
    make: Callable[[Device, Any, np.dtype], BenchProblem]
    sizes: Callable[[Device, bool], tuple]


def _gemm_sizes(device: Device, quick: bool) -> tuple[int, ...]:
    if device.info.is_simulator:
        return (32,)
    if quick:
        return (128,)
    if device.info.is_gpu:
        return tuple(size for _, _, size in SIZE_CLASSES)
    return (128, 512)


def _conv_sizes(device: Device, quick: bool) -> tuple[tuple[int, int], ...]:
    if device.info.is_simulator:
        return ((1024, 15),)
    if quick:
        return ((2**14, CONV_MASK),)
    return ((2**16, CONV_MASK), (2**20, CONV_MASK), (2**20, 255), (2**18, 2047))


def _conv_make(device: Device, size: Any, dt: np.dtype) -> BenchProblem:
    n, m = size if isinstance(size, (tuple, list)) else (size, CONV_MASK)
    return conv_bench_problem(device, int(n), int(m), dt)


def families() -> dict[str, Family]:
    """The tunable families."""
    return {
        "matmul": Family("matmul", CATALOGUES["matmul"], tuned.CLASSIFIERS["matmul"],
                         lambda d, n, dt: bench_problem(d, n, n, n, dt), _gemm_sizes),
        "convolve": Family("convolve", CATALOGUES["convolve"], tuned.CLASSIFIERS["convolve"],
                           _conv_make, _conv_sizes),
    }


def default_sizes(device: Device, quick: bool = False, family: str = "matmul") -> tuple:
    """One representative size per size class worth tuning on this kind of device."""
    return families()[family].sizes(device, quick)


def candidates(variant: Variant, limit: int | None = None, seed: int = 0) -> list[dict[str, int]]:
    """Parameter sets to try: the defaults first, then the grid of ``variant.tunable`` (sampled
    down to ``limit`` sets in all when it is larger)."""
    names = sorted(variant.tunable)
    defaults = dict(variant.defaults)
    grid = []
    for values in itertools.product(*(variant.tunable[n] for n in names)):
        params = {**defaults, **dict(zip(names, values))}
        if params != defaults:
            grid.append(params)
    if limit is not None and len(grid) > limit - 1:
        grid = random.Random(seed).sample(grid, max(limit - 1, 0))
    return [defaults] + grid


@dataclass
class Trial:
    """One parameter set: its device time (median seconds) or why it was skipped."""

    params: dict[str, int]
    seconds: float | None = None
    error: str | None = None


@dataclass
class Outcome:
    """The search of one (variant, dtype, size): the defaults' time, the best, the noise of the
    defaults' repeated measurements, and whether the best was stored."""

    key: str
    size: str
    default_s: float | None
    best_params: dict[str, int] | None
    best_s: float | None
    stored: bool
    note: str
    trials: list[Trial] = field(default_factory=list)
    noise: float = 0.0  # (slowest - fastest) / median of the defaults' measurements

    @property
    def speedup(self) -> float | None:
        if self.default_s and self.best_s:
            return self.default_s / self.best_s
        return None


Measure = Callable[[Device, Any, Variant, Mapping[str, int]], float]


def measure_on_device(bench: BenchProblem, budget_s: float) -> Measure:
    """The real measurement: build and run once, check against NumPy, then time on the device."""
    def measure(device: Device, problem: Any, variant: Variant,
                params: Mapping[str, int]) -> float:
        bench.poison()
        variant.launch(device, problem, dict(params))
        bench.check()
        return device_seconds(device, lambda: variant.launch(device, problem, dict(params)),
                              budget_s=budget_s, warmup=0).seconds
    return measure


def _try(measure: Measure, device: Device, problem: Any, variant: Variant,
         params: dict[str, int]) -> Trial:
    why = variant.fits(problem, device.info, params)
    if why:
        return Trial(params, error=f"does not fit: {why}")
    try:
        return Trial(params, seconds=float(measure(device, problem, variant, params)))
    except WrongResult as exc:
        return Trial(params, error=str(exc))
    except (cl.Error, RuntimeError, ValueError) as exc:  # build failure, out of resources
        first = str(exc).strip().splitlines()
        return Trial(params, error=f"{type(exc).__name__}: {first[0] if first else ''}"[:200])


def _variants_to_tune(catalogue: Catalogue, problem: Any, device: Device,
                      kernels: Sequence[str] | None) -> list[Variant]:
    """``kernels`` by name; ``["all"]``: every variant dispatch may rank for this problem;
    None: the one dispatch chooses (the highest-ranked that fits with its defaults)."""
    if kernels is not None and list(kernels) != ["all"]:
        return [catalogue[name] for name in kernels]
    ranked = [v for v in sorted(catalogue, key=lambda v: -v.rank(problem, device.info))
              if v.rank(problem, device.info) > 0]
    if kernels is not None:
        return ranked
    fitting = [v for v in ranked if not v.fits(problem, device.info, dict(v.defaults))]
    return fitting[:1]


def save_store(store: TuningStore) -> bool:
    """Write ``store``; a cache folder that cannot be written gives a warning, not an error."""
    try:
        store.save()
    except OSError as exc:
        warnings.warn(f"cannot write the tuning file {store.path} ({exc}); results are kept "
                      "for this process only", RuntimeWarning, stacklevel=2)
        return False
    return True


def tune(device: Device | str | int | None = None, *, family: str = "matmul",
         dtypes: Sequence[Any] = ("float32",), sizes: Iterable[Any] | None = None,
         kernels: Sequence[str] | None = None, quick: bool = False, limit: int | None = None,
         margin: float = 0.03, confirm: int = 3, budget_s: float | None = None,
         measure: Measure | None = None, progress: bool = True, save: bool = True
         ) -> list[Outcome]:
    """Search the tunable parameters of ``family``'s variants on ``device``; store the winners.

    For every dtype, size (one per size class, see :func:`default_sizes`; for ``"convolve"`` an
    ``n`` or an ``(n, m)`` pair) and variant (the one dispatch chooses there; ``kernels`` names
    others, ``["all"]`` every variant that ranks for the problem), the defaults and up to
    ``limit - 1`` other parameter sets are checked and timed. The fastest is then re-measured
    against the defaults ``confirm`` more times, interleaved; it is stored only if the median of
    those fresh measurements beats the defaults' by more than the noise (the spread of all the
    defaults' measurements, relative to their median) and by at least ``margin``. A stored
    entry the new search does not confirm is removed. ``measure`` replaces the device
    measurement (tests use it); ``quick`` searches one small size and 4 sets per variant.
    """
    device = get_device(device)
    fam = families()[family]
    sizes = tuple(sizes) if sizes else fam.sizes(device, quick)
    limit = limit if limit is not None else (4 if quick else 24)
    budget = budget_s if budget_s is not None else (0.1 if quick else 0.3)
    store = tuned.store_for(device)
    plan = []
    for dt in (np.dtype(d) for d in dtypes):
        for size in sizes:
            bench = fam.make(device, size, dt)
            for variant in _variants_to_tune(fam.catalogue, bench.problem, device, kernels):
                if not variant.tunable or variant.fits(bench.problem, device.info,
                                                       dict(variant.defaults)):
                    continue  # nothing to tune, or no defaults to beat at this size
                plan.append((bench, variant, candidates(variant, limit)))
    bar = Progress(sum(len(c) + confirm * 2 for _, _, c in plan), f"tune {family}", progress,
                   unit="cfg")
    outcomes = []
    # one profiling queue for the whole search (each device-time measurement would otherwise
    # switch to one and back), the user's plain queue again afterwards
    was_profiling = device.profiling
    if measure is None:
        device.enable_profiling()
    try:
        for bench, variant, cands in plan:
            p = bench.problem
            key = entry_key(family, variant.name, p.dtype, fam.classify(p))
            bar.note(f"{variant.name} {np.dtype(p.dtype).name} {bench.label}")
            run = measure or measure_on_device(bench, budget)
            trials = []
            for params in cands:
                trials.append(_try(run, device, p, variant, params))
                bar.update()
            outcome = _decide(key, bench.label, trials, run, device, p, variant, margin,
                              confirm, bar)
            outcomes.append(outcome)
            _record(store, key, outcome, trials)
            if save:
                save_store(store)
    finally:
        bar.close()
        if not was_profiling:
            device.disable_profiling()
    if save:
        tuned.forget(store.path)
    return outcomes


def _record(store: TuningStore, key: str, outcome: Outcome, trials: list[Trial]) -> None:
    store.searched[key] = {
        "size": outcome.size, "default_s": outcome.default_s,
        "best_params": outcome.best_params, "best_s": outcome.best_s, "noise": outcome.noise,
        "stored": outcome.stored, "note": outcome.note,
        "tried": len(trials), "skipped": sum(t.error is not None for t in trials),
        "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if outcome.stored:
        store.entries[key] = {"params": outcome.best_params, "seconds": outcome.best_s,
                              "default_seconds": outcome.default_s, "size": outcome.size}
    else:
        store.entries.pop(key, None)


def _decide(key: str, size: str, trials: list[Trial], run: Measure, device: Device,
            problem: Any, variant: Variant, margin: float, confirm: int, bar: Progress
            ) -> Outcome:
    default, *others = trials
    timed = [t for t in others if t.seconds is not None]
    best = min(timed, key=lambda t: t.seconds, default=None)
    if default.seconds is None or best is None or best.seconds >= default.seconds:
        bar.update(confirm * 2)
        if default.seconds is None:
            note = f"defaults failed ({default.error}); nothing stored"
        else:
            note = "defaults are the fastest"
        return Outcome(key, size, default.seconds, dict(default.params), default.seconds,
                       False, note, trials)
    # The best of many noisy samples is biased low, so the decision rests on fresh,
    # interleaved samples of both (drifting clocks or load then hit both alike).
    d_times, b_times = [default.seconds], ([] if confirm else [best.seconds])
    for _ in range(confirm):
        for times, params in ((d_times, default.params), (b_times, best.params)):
            t = _try(run, device, problem, variant, params)
            if t.seconds is not None:
                times.append(t.seconds)
            bar.update()
    if len(d_times) < 1 + min(confirm, 1) or not b_times:
        return Outcome(key, size, default.seconds, dict(best.params), best.seconds, False,
                       "re-measurement failed; nothing stored", trials)
    d_med, b_med = statistics.median(d_times), statistics.median(b_times)
    noise = (max(d_times) - min(d_times)) / d_med if d_med > 0 else 0.0
    needed = max(margin, noise)
    if b_med < d_med * (1.0 - needed):
        return Outcome(key, size, d_med, dict(best.params), b_med, True,
                       f"{d_med / b_med:.2f}x faster than the defaults (noise {noise:.0%})",
                       trials, noise)
    why = (f"within the defaults' run-to-run noise ({noise:.0%})" if noise > margin
           else f"not {margin:.0%} faster than the defaults")
    return Outcome(key, size, d_med, dict(best.params), b_med, False,
                   f"{why} when re-measured; nothing stored", trials, noise)
