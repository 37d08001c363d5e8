"""The one list of kernel catalogues and the variants in each, and the call that fills them.

Adding a kernel: write its ``Variant`` in the family's module and name it here (the order is
the catalogue's order: ties in rank go to the earlier). ``kernels/__init__.py`` calls
:func:`register` and installs the tuned-parameters lookup of ``kernels/tuned.py``.
"""
from __future__ import annotations

from . import (conv, gemm, gemm_dmma, gemm_gpu, gemm_mma, gemm_shallow, gemm_small, gemm_tf32x3,
               gemm_variants, gemm_thin, gemm_wgmma, gemv_split, tuned)
from .variant import Catalogue

__all__ = ["CATALOGUES", "register"]

CATALOGUES: dict[str, Catalogue] = {"matmul": gemm.CATALOGUE, "convolve": conv.CATALOGUE}
"""Every operation family with a kernel catalogue, by name."""

_VARIANTS = (
    # naive is added by gemm.py itself, first
    (gemm.CATALOGUE, gemm_variants.VARIANTS),  # tiled, regtile, vec, image, const_b, gemv, cpu
    (gemm.CATALOGUE, gemm_gpu.VARIANTS),       # gpu_blocked
    (gemm.CATALOGUE, gemm_small.VARIANTS),     # small (the whole of K staged at once)
    (gemm.CATALOGUE, gemm_mma.VARIANTS),       # mma (tensor cores)
    (gemm.CATALOGUE, gemm_wgmma.VARIANTS),     # wgmma (Hopper tensor cores)
    (gemm.CATALOGUE, gemm_tf32x3.VARIANTS),    # tf32x3 (float32 as three TF32 products)
    (gemm.CATALOGUE, gemm_dmma.VARIANTS),      # dmma (FP64 tensor cores)
    (gemm.CATALOGUE, gemv_split.VARIANTS),     # gemv_split
    (gemm.CATALOGUE, gemm_thin.VARIANTS),      # thin (M or N up to 128)
    (gemm.CATALOGUE, gemm_shallow.VARIANTS),   # shallow (K up to 16, C written in runs)
    (conv.CATALOGUE, conv.VARIANTS),           # basic, const, tiled, cached, vec, gpu, fft,
                                               # fft_block
)


def register() -> None:
    """Fill the catalogues and make their dispatch use stored tuning (idempotent)."""
    for catalogue, variants in _VARIANTS:
        for variant in variants:
            if variant.name not in catalogue.names():
                catalogue.add(variant)
    tuned.install(CATALOGUES.values())
