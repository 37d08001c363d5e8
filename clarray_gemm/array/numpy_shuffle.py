"""NumPy's shuffle of a device array made an error instead of a silent duplication.

``numpy.random.Generator.shuffle`` (and ``numpy.random.shuffle``) move the items of an array
type they do not know as Python objects, ``x[i], x[j] = x[j], x[i]``; a row of a device array is
a view, as an ndarray's row is, so that swap copies row j over row i and then the changed row i
back: rows end up duplicated. NumPy only warns first ("you are shuffling a 'DeviceArray'
object ..."), after ``len(x)``. :func:`guard`, called by ``DeviceArray.__len__``, keeps a
warnings filter first in ``warnings.filters`` whose message pattern raises a TypeError when
that warning is issued for an array of two or more dimensions (``len()`` records the last
array's: a 1-D array's items are scalars, which the swap moves correctly): before any item
moves. (A filter installed once at import would not last: ``warnings.catch_warnings``
blocks, pytest's among them, restore the list they found.)
"""
from __future__ import annotations

import warnings

__all__ = ["SHUFFLE_MESSAGE", "FILTER", "guard"]

SHUFFLE_MESSAGE = (
    "NumPy's shuffle (numpy.random.Generator.shuffle, numpy.random.shuffle) cannot shuffle a "
    "clarray_gemm device array: for array types it does not know it swaps x[i] and x[j] as "
    "Python objects, and a row of a device array is a view, as NumPy's are, so rows would be "
    "duplicated. Use clarray_gemm.random.default_rng(seed).shuffle(x), or "
    "x[...] = x[rng.permutation(len(x))].")

_WARNING_TEXT = "you are shuffling a 'DeviceArray' object"

last_len_ndim = 0
"""The dimensions of the device array whose ``len()`` was taken last (NumPy's shuffle takes it
right before it warns)."""


class _ShuffleOfDeviceArray:
    """The message pattern of the filter: matches nothing but NumPy's shuffle warning for a
    ``DeviceArray`` of two or more dimensions, and for that one raises (warnings calls
    ``pattern.match(text)``)."""

    def match(self, text: str) -> None:
        if last_len_ndim >= 2 and text.startswith(_WARNING_TEXT):
            raise TypeError(SHUFFLE_MESSAGE)
        return None


FILTER = ("error", _ShuffleOfDeviceArray(), UserWarning, None, 0)
"""The ``warnings.filters`` entry :func:`guard` keeps first."""


def guard() -> None:
    """Put the filter first in ``warnings.filters`` (a no-op where it is)."""
    filters = warnings.filters
    if filters and filters[0] is FILTER:
        return
    while FILTER in filters:
        filters.remove(FILTER)
    # filterwarnings bumps the filters' version (so no cached verdict outlives the change); its
    # text entry then gives way to the pattern object
    warnings.filterwarnings("error", message=_WARNING_TEXT, category=UserWarning)
    warnings.filters[0] = FILTER
