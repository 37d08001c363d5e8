"""The 1-D convolution catalogue: choose a kernel for a :class:`ConvProblem` and launch it.

The problem, the catalogue and the shared rules are in ``conv_problem.py``, the direct kernels
in ``conv_direct.py``, the FFT paths in ``conv_fft.py`` (whole-signal transforms) and
``conv_fft_block.py`` (overlap-save blocks, one work-group each); ``kernels/registry.py`` adds their
variants to :data:`CATALOGUE`. Their public names are importable from here.
"""
from __future__ import annotations

from typing import Mapping

import pyopencl as cl

from ..device import Device
from .conv_direct import (FLIPPED_MASK_PREPARES, GPU_CHUNKS, GPU_FFT_MAC_RATIO,  # noqa: F401
                          VEC_MIN_OUTPUTS, _gpu_resolve)
from .conv_direct import VARIANTS as DIRECT_VARIANTS
from .conv_fft import FFT_MAC_RATIO, FFT_MIN_MASK, fft_length, fft_preferred
from .conv_fft import VARIANTS as FFT_VARIANTS
from .conv_fft_block import FFT_BLOCK_MIN_MASK, block_length, fft_block_preferred
from .conv_fft_block import VARIANTS as FFT_BLOCK_VARIANTS
from .conv_problem import CATALOGUE, ConvProblem, dtype_supported, launch_counts
from .plans import PlanCache
from .variant import Choice, Variant

__all__ = ["ConvProblem", "CATALOGUE", "VARIANTS", "choose", "launch", "run", "launch_counts",
           "dtype_supported", "fft_length", "GPU_FFT_MAC_RATIO", "GPU_CHUNKS", "fft_preferred",
           "FFT_MAC_RATIO", "FFT_MIN_MASK", "VEC_MIN_OUTPUTS", "block_length",
           "fft_block_preferred", "FFT_BLOCK_MIN_MASK", "FLIPPED_MASK_PREPARES"]

VARIANTS: tuple[Variant[ConvProblem], ...] = DIRECT_VARIANTS + FFT_VARIANTS + FFT_BLOCK_VARIANTS
"""Every convolution kernel, in catalogue order."""


# Selection looks at the lengths, padding and dtype only (never at buffers or offsets): a repeated
# call is one dict hit instead of a ranking and a tuning-store lookup.
_CHOICES: PlanCache[Choice[ConvProblem]] = PlanCache("convolve-choice")


def choose(device: Device, problem: ConvProblem, kernel: str | None = None,
           params: Mapping[str, int] | None = None) -> Choice[ConvProblem]:
    """The variant that runs ``problem`` on ``device`` (see :meth:`Catalogue.choose`)."""
    p = problem
    key = (device, p.n, p.m, p.pad, p.length, p.dtype, kernel,
           None if params is None else tuple(sorted(params.items())))
    return _CHOICES.get(key, lambda: CATALOGUE.choose(problem, device, kernel, params))


def run(device: Device, problem: ConvProblem, kernel: str | None = None,
        params: Mapping[str, int] | None = None) -> tuple[cl.Event, Choice[ConvProblem]]:
    """Choose a variant and enqueue it; returns the last event and the choice."""
    choice = choose(device, problem, kernel, params)
    return launch(device, problem, choice), choice


def launch(device: Device, problem: ConvProblem, choice: Choice[ConvProblem]) -> cl.Event:
    """Enqueue the chosen variant with its parameters; returns the last event."""
    return choice.variant.launch(device, problem, choice.params)
