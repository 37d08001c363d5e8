"""What a kernel variant is (data more than code) and how a catalogue chooses among them.

A variant names its ``.cl`` source and entry point, its tunable ``-D`` parameters with defaults,
and three small functions: ``fits`` (why it cannot run this problem on this device, or None),
``rank`` (how much it is preferred here: higher first) and ``launch``. Selection takes the
order of a measurement where the device has one for the problem (``measured``: the kernels
ranked by their wall-clock time at the nearest measured shape, ``kernels/measured.py``), then
the remaining variants best-rank first, and runs the first that fits; the reasons it skipped
the others are kept, so ``explain`` can say why the choice was made.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Generic, Mapping, Sequence, TypeVar

from ..device import Device, DeviceInfo

P = TypeVar("P")  # a problem description (GemmProblem, ConvProblem)

__all__ = ["Variant", "Choice", "Catalogue", "check_params_have_kernel"]


@dataclass(frozen=True)
class Variant(Generic[P]):
    """One kernel of a family: its source, parameters and the rules for using it."""

    name: str
    source: str
    entry: str
    summary: str
    defaults: Mapping[str, int]
    fits: Callable[[P, DeviceInfo, Mapping[str, int]], str | None]
    rank: Callable[[P, DeviceInfo], float]
    launch: Callable[..., Any]
    tunable: Mapping[str, Sequence[int]] = field(default_factory=dict)
    # True when ``launch`` takes a host (NumPy) B itself, uploading it its own way (the image
    # kernel maps the image and fills it); every other variant gets B uploaded to a buffer.
    takes_host_b: bool = False
    # Optional: ``prepare(device, problem, params)`` returns a launch function for every later
    # call with this problem's geometry (taking only the buffers and offsets that change), with
    # kernel, fixed arguments and launch geometry resolved once; None where it cannot.
    prepare: Callable[..., Any] | None = None
    # Optional: ``resolved(problem, info, params)`` says what ``params`` come to for this
    # problem where the variant decides some of them by shape (``explain_*`` prints it).
    resolved: Callable[[P, DeviceInfo, Mapping[str, int]], str] | None = None


@dataclass(frozen=True)
class Choice(Generic[P]):
    """The outcome of selection: the variant, its parameters, and why."""

    variant: Variant[P]
    params: Mapping[str, int]
    reason: str
    rejected: tuple[tuple[str, str], ...] = ()
    tuned: bool = False

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items())) or "none"
        lines = [f"kernel: {self.variant.name} ({self.variant.summary})",
                 f"source: opencl/{self.variant.source}, entry {self.variant.entry}",
                 f"parameters: {params}" + (" (tuned)" if self.tuned else " (defaults)"),
                 f"why: {self.reason}"]
        for name, why in self.rejected:
            lines.append(f"  skipped {name}: {why}")
        return "\n".join(lines)


def check_params_have_kernel(family: str, kernel: str | None,
                             params: Mapping[str, int] | None) -> None:
    """ValueError where ``params`` are given without the ``kernel`` they would set."""
    if params and kernel is None:
        raise ValueError(f"{family} parameters ({', '.join(sorted(params))}) belong to a "
                         f"kernel: name it (kernel=...)")


class Catalogue(Generic[P]):
    """An ordered collection of variants of one operation family."""

    def __init__(self, family: str):
        self.family = family
        self._variants: dict[str, Variant[P]] = {}
        self.tuned_params: Callable[[Device, Variant[P], P], Mapping[str, int] | None] = (
            lambda device, variant, problem: None)
        # ``measured(device, problem)``: a ``kernels.measured.Ranking`` of this problem's kernels
        # by measurement on this device, or None (no table covers it)
        self.measured: Callable[[Device, P], Any] = lambda device, problem: None

    def add(self, variant: Variant[P]) -> Variant[P]:
        self._variants[variant.name] = variant
        return variant

    def names(self) -> list[str]:
        return list(self._variants)

    def __getitem__(self, name: str) -> Variant[P]:
        try:
            return self._variants[name]
        except KeyError:
            raise ValueError(f"unknown {self.family} kernel {name!r}; known: "
                             + ", ".join(self._variants)) from None

    def __iter__(self):
        return iter(self._variants.values())

    def params_for(self, device: Device, variant: Variant[P], problem: P
                   ) -> tuple[dict[str, int], bool]:
        tuned = self.tuned_params(device, variant, problem)
        params = dict(variant.defaults)
        if tuned:
            params.update(tuned)
        return params, bool(tuned)

    def choose(self, problem: P, device: Device, kernel: str | None = None,
               params: Mapping[str, int] | None = None,
               only: Collection[str] | None = None) -> Choice[P]:
        """The variant to run: ``kernel`` if forced (ValueError if it does not fit, or if
        ``params`` names a parameter it does not have), else the highest-ranked variant that
        fits (``params`` without ``kernel``: ValueError); ``only``: the variants that can take
        this problem at all (the others are skipped, or refused when forced)."""
        info = device.info
        check_params_have_kernel(self.family, kernel, params)
        if kernel is not None:
            variant = self[kernel]
            if only is not None and kernel not in only:
                raise ValueError(f"{self.family} kernel {kernel!r} does not fit this call: "
                                 f"only {', '.join(sorted(only))} can take it")
            unknown = sorted(set(params or ()) - set(variant.defaults))
            if unknown:
                raise ValueError(f"{self.family} kernel {kernel!r} has no parameter "
                                 f"{', '.join(unknown)}; its parameters: "
                                 f"{', '.join(sorted(variant.defaults))}")
            chosen, tuned = self.params_for(device, variant, problem)
            if params:
                chosen.update(params)
            why_not = variant.fits(problem, info, chosen)
            if why_not:
                raise ValueError(f"{self.family} kernel {kernel!r} does not fit this call: {why_not}")
            return Choice(variant, chosen, "forced by the caller", tuned=tuned)
        rejected = []
        measured = self.measured(device, problem)
        if measured is not None:
            for name in measured.names:
                variant = self._variants.get(name)
                if variant is None or (only is not None and name not in only):
                    continue
                chosen, tuned = self.params_for(device, variant, problem)
                why_not = variant.fits(problem, info, chosen)
                if why_not is None:
                    return Choice(variant, chosen, measured.reason(name), tuple(rejected), tuned)
                rejected.append((name, why_not))
        tried = {name for name, _ in rejected}
        ranked = sorted(self._variants.values(), key=lambda v: -v.rank(problem, info))
        for variant in ranked:
            if (variant.name in tried or variant.rank(problem, info) <= 0
                    or (only is not None and variant.name not in only)):
                continue
            chosen, tuned = self.params_for(device, variant, problem)
            why_not = variant.fits(problem, info, chosen)
            if why_not is None:
                reason = (f"highest-ranked of the variants that fit a {info.type} device "
                          f"for this shape and dtype (rank {variant.rank(problem, info):.1f}"
                          + ("; none measured here fits)" if measured is not None else ")"))
                return Choice(variant, chosen, reason, tuple(rejected), tuned)
            rejected.append((variant.name, why_not))
        raise RuntimeError(f"no {self.family} kernel fits: "
                           + "; ".join(f"{n}: {w}" for n, w in rejected))
