"""Auto-tuning, on top of the library (it times with ``bench``): the parameter search
(``search.py``) and the host/OpenCL crossovers (``crossover.py``). Results go to the tuning
store that dispatch reads, ``clarray_gemm.kernels.tuned``; its main names are importable from
here too. ``python -m clarray_gemm tune`` runs both.
"""
from __future__ import annotations

from ..kernels.tuned import (SIZE_CLASSES, TuningStore, conv_size_class, crossover, reset,
                             size_class, store_for, store_path)
from ..settings import CACHE_ENV, cache_dir
from .crossover import Crossover, Point, crossover_size, measure_crossovers
from .search import (Family, Measure, Outcome, Trial, candidates, default_sizes, families,
                     measure_on_device, tune)

__all__ = ["tune", "families", "default_sizes", "candidates", "measure_on_device", "Family",
           "Measure", "Outcome", "Trial", "measure_crossovers", "crossover_size", "Crossover",
           "Point", "crossover", "store_for", "store_path", "reset", "size_class",
           "conv_size_class", "SIZE_CLASSES", "TuningStore", "CACHE_ENV", "cache_dir"]
