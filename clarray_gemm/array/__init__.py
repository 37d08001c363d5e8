"""The array layer: :class:`DeviceArray` and everything that makes or unmakes one.

=====================  ======================================================================
``device_array.py``    the class: views, indexing, operators, NumPy protocols, copies; the
                       constructors ``new_array`` and ``from_host``
``host_results.py``    the host path's results: fresh host-born arrays for NumPy to fill, and
                       NumPy's fresh results adopted without a copy
``geometry.py``        shape and stride arithmetic (C/F strides, basic-index views, shapes)
``creation.py``        ``asarray``, ``empty``, ``zeros``, ``ones``, ``full``, ``*_like``
``host_fallback.py``   NumPy on host views for functions and ufuncs with no device kernel
=====================  ======================================================================

Imports point one way: geometry <- device_array <- creation, host_results <- host_fallback. The class reaches
the fallback, the device copy and the operations through ``_dispatch``; importing this package
registers the fallback.
"""
from __future__ import annotations

from .creation import (asarray, empty, empty_like, full, full_like, ones, ones_like, zeros,
                       zeros_like)
from .device_array import DeviceArray, call_ufunc, from_host, is_device_array, new_array
from .host_results import adopt_host, host_result, result_adopter, result_maker
from .host_fallback import host_function, host_ufunc, to_host

__all__ = ["DeviceArray", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "is_device_array", "new_array", "from_host",
           "host_result", "result_maker", "result_adopter", "adopt_host", "call_ufunc", "to_host",
           "host_function",
           "host_ufunc"]
