"""Pickling of device arrays: the elements travel as a read-only host view of the buffer (a
mapping, not a copy, on unified memory), which NumPy pickles out of band under protocol 5, so
``pickle.dumps(x, protocol=5, buffer_callback=...)`` (dask.distributed, multiprocessing) copies
nothing on the sending side. Unpickling writes them into a buffer of the current device (the one
copy every transfer needs), so an array sent to a process pinned to another device lands there.
"""
from __future__ import annotations

import copyreg

import numpy as np

from ..array import DeviceArray, asarray

__all__ = ["from_host"]


def from_host(host: np.ndarray) -> DeviceArray:
    """The unpickling side: ``host``'s elements in a new array on the current device."""
    return asarray(host)


def _reduce(x: DeviceArray):
    return from_host, (np.asarray(x),)


copyreg.pickle(DeviceArray, _reduce)
