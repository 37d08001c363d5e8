"""Auto-tuning: search each variant's tunable ``-D`` parameters (work-group sizes included) per
device, dtype and size class, and keep a result only when it beat the defaults in the same run.

Results live in one JSON file per device in the user cache directory
(``platformdirs.user_cache_dir("clarray_gemm")``, or ``$CLARRAY_GEMM_CACHE_DIR``). Importing this
module installs :func:`tuned_params_hook` as the ``tuned_params`` of the GEMM and convolution
catalogues, so dispatch uses the stored parameters (``Choice.tuned`` is then True and
``explain_matmul`` / ``explain_convolve`` say "(tuned)").

Every candidate is built, run once and checked against NumPy before it is timed; candidates that
fail to build, exceed the device's resources or compute a wrong result are skipped.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import random
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import platformdirs
import pyopencl as cl

from ..bench.progress import Progress
from ..bench.timing import device_seconds
from ..device import Device, get_device, register_fork_reset
from . import gemm
from .samples import BenchProblem, WrongResult, bench_problem, conv_bench_problem
from .variant import Catalogue, Variant

__all__ = ["CACHE_ENV", "cache_dir", "store_path", "size_class", "conv_size_class",
           "SIZE_CLASSES", "TuningStore", "store_for", "reset", "tuned_params_hook", "install",
           "families", "candidates", "tune", "Outcome", "Trial", "default_sizes",
           "measure_on_device"]

CACHE_ENV = "CLARRAY_GEMM_CACHE_DIR"
_FORMAT = 1

# (name, smallest geometric-mean size of M, N, K, the size tuned for it)
SIZE_CLASSES: tuple[tuple[str, int, int], ...] = (
    ("small", 0, 128), ("medium", 192, 512), ("large", 768, 2048), ("huge", 3072, 4096))


@functools.lru_cache(maxsize=None)
def _path(text: str) -> Path:
    return Path(text)


@functools.lru_cache(maxsize=1)
def _user_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("clarray_gemm"))


def cache_dir() -> Path:
    """Where tuning results are stored: ``$CLARRAY_GEMM_CACHE_DIR``, else the user cache dir."""
    env = os.environ.get(CACHE_ENV)
    return _path(env) if env else _user_cache_dir()


_identities: dict[int, tuple[str, str]] = {}
register_fork_reset(_identities)  # keyed by the parent's device handles


def device_identity(device: Device) -> str:
    """Platform, device name and driver version: a new driver gets a fresh tuning."""
    return _identity(device)[0]


def _identity(device: Device) -> tuple[str, str]:
    # dispatch asks for every call, so the driver query and the hash are done once per device
    key = device.cl_device.int_ptr
    if key not in _identities:
        try:
            driver = device.cl_device.driver_version.strip()
        except cl.Error:
            driver = "?"
        ident = f"{device.info.platform} | {device.info.name} | {driver}"
        slug = re.sub(r"[^A-Za-z0-9]+", "-", device.info.name).strip("-")[:40]
        digest = hashlib.sha1(ident.encode()).hexdigest()[:10]
        _identities[key] = (ident, f"tuning-{slug}-{digest}.json")
    return _identities[key]


def store_path(device: Device) -> Path:
    """The JSON file holding ``device``'s tuning results."""
    return _join(cache_dir(), _identity(device)[1])


@functools.lru_cache(maxsize=64)
def _join(folder: Path, name: str) -> Path:
    return folder / name


def size_class(M: int, N: int, K: int) -> str:
    """The size class of a product, by the geometric mean of M, N and K."""
    mean = (max(M, 1) * max(N, 1) * max(K, 1)) ** (1.0 / 3.0)
    name = SIZE_CLASSES[0][0]
    for cls, lower, _ in SIZE_CLASSES:
        if mean >= lower:
            name = cls
    return name


def entry_key(family: str, variant: str, dtype: Any, cls: str) -> str:
    return f"{family}/{variant}/{np.dtype(dtype).name}/{cls}"


class TuningStore:
    """One device's tuning results: ``entries`` (parameters dispatch uses) and ``searched``
    (every search, kept or not, with its timings)."""

    def __init__(self, path: Path, device: str = ""):
        self.path = path
        self.device = device
        self.entries: dict[str, dict[str, Any]] = {}
        self.searched: dict[str, dict[str, Any]] = {}

    @classmethod
    def load(cls, path: Path) -> "TuningStore":
        store = cls(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return store
        if data.get("format") == _FORMAT:
            store.device = data.get("device", "")
            store.entries = dict(data.get("entries", {}))
            store.searched = dict(data.get("searched", {}))
        return store

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": _FORMAT, "device": self.device,
                                   "entries": self.entries, "searched": self.searched},
                                  indent=1, sort_keys=True))
        tmp.replace(self.path)

    def params(self, key: str) -> dict[str, int] | None:
        entry = self.entries.get(key)
        return dict(entry["params"]) if entry else None


_loaded: dict[Path, tuple[float, float, TuningStore]] = {}
RECHECK_S = 1.0
"""How often dispatch looks at the file for another process's tuning (a stat per variant and
call cost ~0.1 ms per operation; this process's own tuning updates the cached store directly)."""


def store_for(device: Device) -> TuningStore:
    """``device``'s store, re-read when the file changed (another process may have tuned)."""
    path = store_path(device)
    now = time.monotonic()
    cached = _loaded.get(path)
    if cached is not None and now - cached[0] < RECHECK_S:
        return cached[2]
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0
    if cached is None or cached[1] != mtime:
        store = TuningStore.load(path) if mtime >= 0 else TuningStore(path)
        store.device = store.device or device_identity(device)
    else:
        store = cached[2]
    _loaded[path] = (now, mtime, store)
    return store


def reset(device: Device | None = None) -> list[Path]:
    """Delete the stored tuning of ``device`` (all devices when None); returns the files removed."""
    paths = [store_path(device)] if device is not None else sorted(cache_dir().glob("tuning-*.json"))
    removed = []
    for p in paths:
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
        _loaded.pop(p, None)
    return removed


def tuned_params_hook(catalogue: Catalogue, classify: Callable[[Any], str]
                      ) -> Callable[[Device, Variant, Any], dict | None]:
    """The ``Catalogue.tuned_params`` function of a catalogue: the stored parameters for
    (device, variant, dtype, ``classify(problem)``), or None when none are stored or they do
    not fit this problem."""
    family = catalogue.family

    def lookup(device: Device, variant: Variant, problem: Any) -> dict | None:
        if not variant.tunable:
            return None
        key = entry_key(family, variant.name, problem.dtype, classify(problem))
        params = store_for(device).params(key)
        if not params:
            return None
        if variant.fits(problem, device.info, {**variant.defaults, **params}):
            return None
        return params
    return lookup


# -- the families --------------------------------------------------------------------------------
CONV_MASK = 31  # the mask width tuned for when only signal lengths are given


def conv_size_class(n: int, m: int) -> str:
    """The size class of a 1-D convolution: signal length and mask width."""
    length = "short" if n < 2**15 else "mid" if n < 2**19 else "long"
    width = "narrow" if m < 64 else "wide" if m < 1024 else "huge"
    return f"{length}-{width}"


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
    """The tunable families present in this installation."""
    found = {"matmul": Family("matmul", gemm.CATALOGUE,
                              lambda p: size_class(p.M, p.N, p.K),
                              lambda d, n, dt: bench_problem(d, n, n, n, dt), _gemm_sizes)}
    try:
        from . import conv
    except ImportError:  # the convolution catalogue is optional
        return found
    found["convolve"] = Family("convolve", conv.CATALOGUE, lambda p: conv_size_class(p.n, p.m),
                               _conv_make, _conv_sizes)
    return found


def install() -> None:
    """Make dispatch use stored tuning results (done when this module is imported)."""
    for fam in families().values():
        fam.catalogue.tuned_params = tuned_params_hook(fam.catalogue, fam.classify)


install()


def default_sizes(device: Device, quick: bool = False, family: str = "matmul") -> tuple:
    """One representative size per size class worth tuning on this kind of device."""
    return families()[family].sizes(device, quick)


# -- search ------------------------------------------------------------------------------------
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
    """The search of one (variant, dtype, size): the defaults' time, the best, and whether the
    best was stored (it must beat the defaults by ``margin`` in the same run)."""

    key: str
    size: str
    default_s: float | None
    best_params: dict[str, int] | None
    best_s: float | None
    stored: bool
    note: str
    trials: list[Trial] = field(default_factory=list)

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


def tune(device: Device | str | int | None = None, *, family: str = "matmul",
         dtypes: Sequence[Any] = ("float32",), sizes: Iterable[Any] | None = None,
         kernels: Sequence[str] | None = None, quick: bool = False, limit: int | None = None,
         margin: float = 0.03, confirm: int = 3, budget_s: float | None = None,
         measure: Measure | None = None, progress: bool = True, save: bool = True
         ) -> list[Outcome]:
    """Search the tunable parameters of ``family``'s variants on ``device``; store the winners.

    For every dtype, size (one per size class, see :func:`default_sizes`; for ``"convolve"`` an
    ``n`` or an ``(n, m)`` pair) and variant (the one dispatch chooses there; ``kernels`` names
    others, ``["all"]`` every variant that ranks for the problem),
    the defaults and up to ``limit - 1`` other parameter sets are checked and timed; the fastest
    is then re-measured against the defaults ``confirm`` more times, interleaved, and stored only
    if the median of those fresh measurements is ``margin`` faster. A stored entry the new search does not confirm is
    removed. ``measure`` replaces the device measurement (tests use it); ``quick`` searches one
    small size and 4 sets per variant.
    """
    device = get_device(device)
    fam = families()[family]
    sizes = tuple(sizes) if sizes else fam.sizes(device, quick)
    limit = limit if limit is not None else (4 if quick else 24)
    budget = budget_s if budget_s is not None else (0.1 if quick else 0.3)
    store = store_for(device)
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
            store.searched[key] = {
                "size": outcome.size, "default_s": outcome.default_s,
                "best_params": outcome.best_params, "best_s": outcome.best_s,
                "stored": outcome.stored, "note": outcome.note,
                "tried": len(trials), "skipped": sum(t.error is not None for t in trials),
                "when": time.strftime("%Y-%m-%d %H:%M:%S")}
            if outcome.stored:
                store.entries[key] = {"params": outcome.best_params, "seconds": outcome.best_s,
                                      "default_seconds": outcome.default_s,
                                      "size": outcome.size}
            else:
                store.entries.pop(key, None)
            if save:
                store.save()
    finally:
        bar.close()
    if save:
        _loaded.pop(store.path, None)
    return outcomes


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
    d_times, b_times = ([], []) if confirm else ([default.seconds], [best.seconds])
    for _ in range(confirm):
        for times, params in ((d_times, default.params), (b_times, best.params)):
            t = _try(run, device, problem, variant, params)
            if t.seconds is not None:
                times.append(t.seconds)
            bar.update()
    if not d_times or not b_times:
        return Outcome(key, size, default.seconds, dict(best.params), best.seconds, False,
                       "re-measurement failed; nothing stored", trials)
    d_med, b_med = statistics.median(d_times), statistics.median(b_times)
    if b_med < d_med * (1.0 - margin):
        return Outcome(key, size, d_med, dict(best.params), b_med, True,
                       f"{d_med / b_med:.2f}x faster than the defaults", trials)
    return Outcome(key, size, d_med, dict(best.params), b_med, False,
                   f"not {margin:.0%} faster than the defaults when re-measured; nothing stored",
                   trials)
