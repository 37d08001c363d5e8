"""Six ordinary NumPy programs, written once as plain NumPy code, run on NumPy arrays and on
device arrays: what a user who hands ``clarray_gemm`` arrays to existing code gets.

The programs only call NumPy (``@``, ``.T``, ufuncs, reductions, ``np.linalg``, ``np.convolve``),
so the same function runs on either kind of array. The bench converts the inputs once with
``clarray_gemm.asarray`` outside the clock and reads every result with ``np.asarray`` inside it;
NumPy is timed before and after ours and once more at the end, and its fastest median counts. Each program's answer (ours
and NumPy's float32 one) is checked against the same program run by NumPy in float64: relative
norm error below ``TOLERANCE``, integer outputs (k-means labels) exactly.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..device import Device
from .report import error_text, markdown_table, noise_note, timing_json
from .timing import Timing, wall_seconds

__all__ = ["Program", "PROGRAMS", "ProgramRow", "mlp_step", "mlp_classifier_step",
           "least_squares", "fir_filter_bank", "softmax_attention", "power_iteration",
           "kmeans_step", "to_device", "to_host", "max_error", "run", "format_table", "as_json",
           "TOLERANCE"]

TOLERANCE = 1e-5  # float32 results: relative norm error against float64


# -- the programs (plain NumPy) -------------------------------------------------------------------
def mlp_step(x: Any, y: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> tuple:
    """A two-layer tanh MLP, forward and backward: the mean-squared loss and its gradients."""
    h = np.tanh(x @ w1 + b1)
    err = h @ w2 + b2 - y
    loss = np.mean(err ** 2)
    d_out = err * (2.0 / err.size)
    d_h = (d_out @ w2.T) * (1.0 - h ** 2)
    return loss, x.T @ d_h, np.sum(d_h, axis=0), h.T @ d_out, np.sum(d_out, axis=0)


def mlp_classifier_step(x: Any, w1: Any, b1: Any, w2: Any, onehot: Any) -> tuple:
    """A two-layer tanh MLP classifier, forward and backward: the softmax cross-entropy loss
    against one-hot targets and the gradients of ``w2``, ``w1`` and ``b1``."""
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum(onehot * np.log(p + 1e-30), axis=1))
    dlogits = (p - onehot) / x.shape[0]
    dw2 = h.T @ dlogits
    dpre = (dlogits @ w2.T) * (1 - h ** 2)
    return loss, dw2, x.T @ dpre, dpre.sum(axis=0)


def least_squares(x: Any, y: Any) -> Any:
    """Least squares by the normal equations."""
    return np.linalg.solve(x.T @ x, x.T @ y)


def fir_filter_bank(signal: Any, filters: tuple) -> list:
    """A signal through each FIR filter of a bank, outputs as long as the signal."""
    return [np.convolve(signal, f, mode="same") for f in filters]


def softmax_attention(q: Any, k: Any, v: Any) -> Any:
    """Scaled dot-product attention with a numerically stable softmax."""
    scores = (q @ k.T) * (q.shape[-1] ** -0.5)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return weights @ v


def power_iteration(a: Any, v: Any, steps: int = 40) -> tuple:
    """The dominant eigenvalue and eigenvector of ``a`` by ``steps`` power iterations."""
    for _ in range(steps):
        w = a @ v
        v = w / np.linalg.norm(w)
    return v @ (a @ v), v


def kmeans_step(points: Any, centroids: Any) -> tuple:
    """One Lloyd step: each point's nearest centroid, then each centroid moved to its mean
    (``like=`` keeps the label range on the points' device: CuPy arrays run it too)."""
    diff = points[:, None, :] - centroids[None, :, :]
    labels = np.argmin(np.sum(diff ** 2, axis=-1), axis=1)
    onehot = (labels[:, None] == np.arange(centroids.shape[0], like=points)).astype(points.dtype)
    counts = np.maximum(np.sum(onehot, axis=0), 1)
    return labels, (onehot.T @ points) / counts[:, None]


# -- inputs ------------------------------------------------------------------------------------
def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _mlp_inputs(rng: np.random.Generator) -> tuple:
    return (_normal(rng, 256, 512), _normal(rng, 256, 64), _normal(rng, 512, 256, scale=0.05),
            _normal(rng, 256, scale=0.1), _normal(rng, 256, 64, scale=0.1),
            _normal(rng, 64, scale=0.1))


def _lstsq_inputs(rng: np.random.Generator) -> tuple:
    x = _normal(rng, 8192, 128)
    beta = _normal(rng, 128, 4)
    return x, (x @ beta + _normal(rng, 8192, 4, scale=0.1)).astype(np.float32)


def _fir_inputs(rng: np.random.Generator) -> tuple:
    filters = tuple(np.hanning(m).astype(np.float32) / np.float32(m / 2) for m in (15, 31, 63))
    return _normal(rng, 2**16), filters


def _attention_inputs(rng: np.random.Generator) -> tuple:
    return tuple(_normal(rng, 512, 64) for _ in range(3))


def _power_inputs(rng: np.random.Generator) -> tuple:
    m = _normal(rng, 1024, 1024)
    a = (m @ m.T / np.float32(1024)).astype(np.float32)
    return a, np.ones(1024, np.float32)


def _kmeans_inputs(rng: np.random.Generator) -> tuple:
    centers = _normal(rng, 8, 16, scale=10.0)
    points = centers[rng.integers(0, 8, 4096)] + _normal(rng, 4096, 16)
    return points.astype(np.float32), (centers + _normal(rng, 8, 16)).astype(np.float32)


@dataclass(frozen=True)
class Program:
    """A program, the size it runs at, and a maker of its float32 inputs."""

    name: str
    size: str
    fn: Callable[..., Any]
    inputs: Callable[[np.random.Generator], tuple]


PROGRAMS = (
    Program("MLP forward + backward", "256x512 -> 256 -> 64, tanh", mlp_step, _mlp_inputs),
    Program("least squares (normal equations)", "8192x128, 4 right-hand sides", least_squares,
            _lstsq_inputs),
    Program("FIR filter bank", "N=65536, m=15/31/63, 'same'", fir_filter_bank, _fir_inputs),
    Program("softmax attention", "512 tokens, d=64", softmax_attention, _attention_inputs),
    Program("power iteration", "1024^2, 40 steps", power_iteration, _power_inputs),
    Program("k-means step", "4096 points, d=16, k=8", kmeans_step, _kmeans_inputs),
)


# -- conversion and checks -----------------------------------------------------------------------
def to_device(obj: Any, device: Device) -> Any:
    """``obj`` with every NumPy array in it (tuples, lists) put on ``device``."""
    from .. import asarray
    if isinstance(obj, (tuple, list)):
        return type(obj)(to_device(o, device) for o in obj)
    return asarray(obj, device=device) if isinstance(obj, np.ndarray) else obj


def to_host(obj: Any) -> Any:
    """``obj`` with every array in it (tuples, lists) read with ``np.asarray``."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(to_host(o) for o in obj)
    return np.asarray(obj)


def _as_float64(obj: Any) -> Any:
    if isinstance(obj, (tuple, list)):
        return type(obj)(_as_float64(o) for o in obj)
    return obj.astype(np.float64)


def _leaves(obj: Any) -> list[np.ndarray]:
    if isinstance(obj, (tuple, list)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [np.asarray(obj)]


def max_error(got: Any, reference: Any) -> float:
    """The largest relative norm error of ``got``'s outputs against ``reference``'s; integer
    outputs count as 0 when equal and infinite otherwise, as do mismatched shapes."""
    worst = 0.0
    for g, r in zip(_leaves(got), _leaves(reference), strict=True):
        if g.shape != r.shape:
            return float("inf")
        if r.dtype.kind in "biu":
            worst = max(worst, 0.0 if np.array_equal(g, r) else float("inf"))
            continue
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        scale = max(float(np.linalg.norm(r64)), 1e-300)
        worst = max(worst, float(np.linalg.norm(g64 - r64)) / scale)
    return worst


# -- the bench -----------------------------------------------------------------------------------
@dataclass
class ProgramRow:
    """One program: NumPy's time, ours, and each one's error against the float64 answer."""

    name: str
    size: str
    numpy: Timing | None = None
    ours: Timing | None = None
    numpy_error: float | None = None
    ours_error: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """NumPy's time over ours: above 1, ours is faster."""
        if self.numpy and self.ours and self.ours.seconds > 0:
            return self.numpy.seconds / self.ours.seconds
        return None

    @property
    def ok(self) -> bool:
        return self.ours_error is not None and self.ours_error < TOLERANCE


def run(device: Device, budget_s: float = 1.0, min_reps: int = 5, warmup: int = 1,
        programs: tuple[Program, ...] = PROGRAMS, progress: Any = None,
        seed: int = 0) -> list[ProgramRow]:
    """Time each program on NumPy arrays and on ``device``'s arrays and check both answers.
    Each side is measured three times, interleaved with the other (NumPy, ours, NumPy, ours,
    then both again after all programs), and keeps its fastest: a loaded machine moves single
    measurements by up to 2x, and both sides get the same chances."""
    clock = {"budget_s": budget_s, "min_reps": min_reps, "warmup": warmup}
    rows: list[tuple[ProgramRow, Callable[[], Any], Callable[[], Any] | None]] = []
    for prog in programs:
        if progress is not None:
            progress.note(prog.name)
        inputs = prog.inputs(np.random.default_rng(seed))
        reference = prog.fn(*_as_float64(inputs))
        row = ProgramRow(prog.name, prog.size)
        row.numpy_error = max_error(prog.fn(*inputs), reference)
        numpy_call = _reading(prog.fn, inputs)
        row.numpy = wall_seconds(numpy_call, **clock)
        ours_call = None
        try:
            on_device = to_device(inputs, device)
            row.ours_error = max_error(to_host(prog.fn(*on_device)), reference)
            ours_call = _reading(prog.fn, on_device)
            row.ours = wall_seconds(ours_call, **clock)
        except Exception as exc:  # a failing program is reported; the others still run
            row.note = f"FAILED: {error_text(exc)}"
        row.numpy = _faster(row.numpy, wall_seconds(numpy_call, **clock))
        if ours_call is not None:
            row.ours = _faster(row.ours, wall_seconds(ours_call, **clock))
        if row.ours_error is not None and not row.ok:
            row.note = f"WRONG RESULT (error {row.ours_error:.2g} > {TOLERANCE:g})"
        rows.append((row, numpy_call, ours_call))
        if progress is not None:
            progress.update()
    for row, numpy_call, ours_call in rows:  # each once more, away from the other programs
        row.numpy = _faster(row.numpy, wall_seconds(numpy_call, **clock))
        if ours_call is not None:
            row.ours = _faster(row.ours, wall_seconds(ours_call, **clock))
    return [row for row, _, _ in rows]


def _reading(fn: Callable[..., Any], inputs: tuple) -> Callable[[], Any]:
    """A call of ``fn`` on ``inputs`` that returns its results read with ``np.asarray``."""
    return lambda: to_host(fn(*inputs))


def _faster(a: Timing, b: Timing) -> Timing:
    return a if a.seconds <= b.seconds else b


def _err(e: float | None) -> str:
    return "-" if e is None else f"{e:.1e}"


def format_table(rows: list[ProgramRow]) -> str:
    """The rows as a Markdown table: times in milliseconds, ratio NumPy / ours."""
    head = ["program", "size", "NumPy ms", "ours ms", "NumPy / ours", "NumPy error",
            "ours error", "note"]
    return markdown_table(head, [
        [r.name, r.size, _ms(r.numpy), _ms(r.ours), "-" if r.ratio is None else f"{r.ratio:.3g}x",
         _err(r.numpy_error), _err(r.ours_error), _notes(r)] for r in rows])


def _notes(r: ProgramRow) -> str:
    noisy = (noise_note("NumPy", r.numpy), noise_note("ours", r.ours))
    return "; ".join(n for n in (r.note, *noisy) if n)


def _ms(t: Timing | None) -> str:
    return "-" if t is None else f"{t.seconds * 1e3:.3g}"


def as_json(rows: list[ProgramRow], device: Device) -> dict[str, Any]:
    """The run's raw numbers (seconds), for ``--json``."""
    return {"bench": "programs", "device": device.name, "platform": device.info.platform,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "rows": [{"program": r.name, "size": r.size, "numpy": timing_json(r.numpy),
                      "ours": timing_json(r.ours), "ratio": r.ratio,
                      "numpy_error": r.numpy_error, "ours_error": r.ours_error, "note": r.note}
                     for r in rows]}
