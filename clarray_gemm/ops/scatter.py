"""``np.add.at`` into a device array (``opencl/scatter.cl``): the index array along the first
axis turned into flat positions of the C-contiguous target, the values broadcast to them, one
atomic add a value, in the dtype NumPy's loop adds in (integers wrap as NumPy's do; a float32
target takes float64 sums rounded to float32 where NumPy's loop does; float sums of repeated
positions may round differently from NumPy's loop, which adds in index order). Other ufuncs,
index forms and dtypes go to NumPy (written back, counted)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dispatch
from ..array import DeviceArray, asarray
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from .along_axis import wrapped_indices
from .arrayfuncs import arange

__all__ = ["add_at"]

SOURCE = "scatter.cl"
_LOCAL = 256
# the target's dtype: its OpenCL type and scatter.cl's HOW (the kind of atomic add)
_ATOMICS = {np.dtype(np.int32): ("int", 0), np.dtype(np.uint32): ("uint", 0),
            np.dtype(np.int64): ("long", 1), np.dtype(np.uint64): ("ulong", 1),
            np.dtype(np.float32): ("float", 2), np.dtype(np.float64): ("double", 3)}


def _supported(a: DeviceArray) -> bool:
    info = a.device.info
    found = _ATOMICS.get(a.dtype)
    return (found is not None and (found[1] in (0, 2) or info.int64_atomics)
            and (a.dtype != np.float64 or info.fp64))


def add_at(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc.at`` for ``np.add`` with one integer index array into a C-contiguous device
    array (on devices without a host path); NotImplemented elsewhere (NumPy then, written
    back)."""
    if ufunc is not np.add or kwargs or len(inputs) != 3:
        return NotImplemented
    a, indices, values = inputs
    if (type(a) is not DeviceArray or has_host_path(a.device) or not a.is_c_contiguous
            or a.ndim == 0 or not _supported(a)):
        return NotImplemented
    if isinstance(indices, tuple):
        if len(indices) != 1:
            return NotImplemented
        indices = indices[0]
    kind = indices.dtype.kind if type(indices) is DeviceArray else np.asarray(indices).dtype.kind
    if kind not in "iu":
        return NotImplemented   # slices, masks, several arrays: NumPy's
    # the dtype NumPy's loop adds in: a Python number counts as its default NumPy type here
    given = values.dtype if type(values) is DeviceArray else np.asarray(values).dtype
    if given.kind not in "biuf":
        return NotImplemented
    loop = np.result_type(a.dtype, given)
    if a.dtype.kind in "iu":
        if loop.kind not in "iu":
            return NotImplemented   # sums in float64 cast back to integers: NumPy's
        value_dtype = a.dtype       # (integer sums wrap alike in any width)
    elif loop == a.dtype or (loop == np.float64 and a.device.info.fp64):
        value_dtype = loop          # float32 targets: float32 sums, or NumPy's float64 ones
    else:
        return NotImplemented
    device = a.device
    idx = wrapped_indices(asarray(indices, device=device), a.shape[0], 0)
    row = math.prod(a.shape[1:])
    pos = idx.astype(np.int64)[..., None] * row + arange(row, dtype=np.int64, device=device)
    pos = pos.reshape(idx.shape + a.shape[1:])
    vals = np.broadcast_to(asarray(values, device=device).astype(value_dtype), pos.shape)
    pos, vals = pos.reshape(-1), vals.reshape(-1)   # contiguous copies (a broadcast's too)
    if not vals.is_c_contiguous:
        vals = vals.copy()
    n = pos.size
    if n == 0:
        return None
    ctype, how = _ATOMICS[a.dtype]
    defines = {"T": ctype, "HOW": how}
    if value_dtype != a.dtype:
        defines["V"] = "double"
    if np.float64 in (a.dtype, value_dtype):
        defines["IS_FP64"] = 1
    kernel = get_kernel(device, SOURCE, "scatter_add", defines)
    kernel.launch(device, (-(-n // _LOCAL) * _LOCAL,), (_LOCAL,), np.int64(n),
                  pos.storage.kernel_buffer(), vals.storage.kernel_buffer(),
                  a.storage.kernel_buffer(write=True), np.int64(a.offset // a.itemsize))
    return None


_dispatch.UFUNC_METHODS["at"] = add_at
