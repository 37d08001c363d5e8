"""``np.einsum`` of device arrays, contracting operand pairs with the GEMM kernels.

Each pair of operands becomes one batched matrix product: indices in both operands and the
output are batch axes, indices in both but not the output are contracted (K), the others are
the rows (M) and columns (N). The operands are transposed and reshaped into (batch, M, K) and
(batch, K, N) device views (a device copy where no view fits) and the product is reshaped and
permuted into the output's order. More than two operands are folded left to right. An index
repeated within an operand is a diagonal view; an index only one operand has is summed on the
device first; one operand alone is diagonals, a device sum and a transpose. What this does not
cover (ellipses that broadcast, size-1 broadcasting, the interleaved form) runs NumPy's
``einsum`` on host views (a counted host fallback), the result on the device. Shape and subscript errors are NumPy's (``np.einsum_path`` checks the call first).
"""
from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, host_function, to_host
from ..fallbacks import record_host_call
from . import matmul as _mm
from ._common import device_of, operand, take_operands

__all__ = ["einsum", "parse_subscripts"]


def parse_subscripts(subscripts: str, shapes: list[tuple[int, ...]]
                     ) -> tuple[list[str], str] | None:
    """The input and output index strings with ``...`` replaced by letters, or None when an
    ellipsis would broadcast (its axes differ in length or in size between operands)."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    used = set(subscripts) - {".", ",", "-", ">"}
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_shape = None
    expanded = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            n = len(shape) - (len(term) - 3)
            dims = shape[term.index("..."): term.index("...") + n]
            if ellipsis_shape is not None and tuple(dims) != ellipsis_shape:
                return None
            ellipsis_shape = tuple(dims)
            term = term.replace("...", "".join(spare[:n]))
        expanded.append(term)
    ellipsis = "".join(spare[:len(ellipsis_shape)]) if ellipsis_shape is not None else ""
    if arrow:
        output = output.replace("...", ellipsis)
    else:  # implicit mode: the ellipsis, then the indices seen once, in alphabetical order
        counts = {c: inputs.count(c) for c in set(inputs) - {".", ","}}
        output = ellipsis + "".join(sorted(c for c, k in counts.items() if k == 1))
    return expanded, output


def _pair(a: DeviceArray, sa: str, b: DeviceArray, sb: str, keep: str
          ) -> tuple[DeviceArray, str] | None:
    """``einsum(f"{sa},{sb}->{out}")`` as one batched GEMM, where ``out`` is the indices of
    ``keep`` present in ``sa`` or ``sb``; None when an index is summed within one operand."""
    batch = [c for c in sa if c in sb and c in keep]
    contracted = [c for c in sa if c in sb and c not in keep]
    rows = [c for c in sa if c not in sb]
    cols = [c for c in sb if c not in sa]
    if any(c not in keep for c in rows + cols):
        return None
    size_a, size_b = dict(zip(sa, a.shape)), dict(zip(sb, b.shape))
    if any(size_a[c] != size_b[c] for c in sa if c in sb):
        return None  # a length-1 axis broadcast against a longer one: NumPy's einsum
    size = {**size_a, **size_b}
    nb = math.prod(size[c] for c in batch)
    m, k, n = (math.prod(size[c] for c in group) for group in (rows, contracted, cols))
    a3 = a.transpose([sa.index(c) for c in batch + rows + contracted]).reshape(nb, m, k)
    b3 = b.transpose([sb.index(c) for c in batch + contracted + cols]).reshape(nb, k, n)
    product = _mm.matmul(a3, b3).reshape(tuple(size[c] for c in batch + rows + cols))
    return product, "".join(batch + rows + cols)


def _diagonal(x: DeviceArray, subs: str) -> tuple[DeviceArray, str]:
    """Repeated subscripts of one operand taken as a diagonal view (no copy)."""
    while len(set(subs)) != len(subs):
        c = next(c for c in subs if subs.count(c) > 1)
        i = subs.index(c)
        j = subs.index(c, i + 1)
        x = x.geometry_view(lambda t: np.diagonal(t, 0, i, j))
        subs = subs[:i] + subs[i + 1:j] + subs[j + 1:] + c
    return x, subs


def _plain_einsum(subscripts: str, operands: list[Any], kwargs: dict) -> Any:
    record_host_call("einsum")  # a host fallback (``clarray_gemm.on_host_calls``)
    device = device_of(*operands)
    result = np.einsum(subscripts, *to_host(operands), **to_host(kwargs))
    return asarray(result, device=device) if isinstance(result, (np.ndarray, np.generic)) else result


@implements(np.einsum)
def einsum(subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None,
           order: str = "K", casting: str = "safe", optimize: Any = False) -> Any:
    """NumPy's ``einsum`` on device arrays: pairwise GEMM contractions (see the module's doc)."""
    kwargs = {"dtype": dtype, "order": order, "casting": casting, "optimize": optimize}
    if isinstance(subscripts, str):  # (the interleaved form runs on the host: NumPy's answer)
        take_operands(*(operand(o) for o in operands))
    if out is not None:
        return host_function(np.einsum, (subscripts, *operands), dict(kwargs, out=out))
    if not isinstance(subscripts, str):  # the interleaved (operand, sublist, ...) form
        return _plain_einsum(subscripts, list(operands), kwargs)
    templates = [np.broadcast_to(np.zeros((), np.result_type(o)), np.shape(o)) for o in operands]
    np.einsum_path(subscripts, *templates, optimize=False)  # NumPy's errors
    result_dtype = np.result_type(*templates) if dtype is None else np.dtype(dtype)
    for t in templates:
        if not np.can_cast(t.dtype, result_dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {t.dtype!r} to {result_dtype!r} "
                            f"according to the rule {casting!r}")
    parsed = parse_subscripts(subscripts, [t.shape for t in templates])
    if parsed is None:
        return _plain_einsum(subscripts, list(operands), kwargs)
    terms, output = parsed
    if len(set(output)) != len(output):
        return _plain_einsum(subscripts, list(operands), kwargs)
    device = device_of(*operands)
    arrays = [o.astype(result_dtype, copy=False) if isinstance(o, DeviceArray)
              else asarray(np.asarray(o, result_dtype), device=device) for o in operands]
    for i, (x, t) in enumerate(zip(arrays, terms)):  # repeated subscripts: diagonal views
        arrays[i], terms[i] = _diagonal(x, t)
    for i, (x, t) in enumerate(zip(arrays, terms)):  # indices only this operand has: summed
        others = set(output).union(*(terms[k] for k in range(len(terms)) if k != i))
        summed = tuple(k for k, c in enumerate(t) if c not in others)
        if summed and len(arrays) > 1:
            arrays[i] = np.sum(x, axis=summed, dtype=result_dtype)
            terms[i] = "".join(c for c in t if c in others)
    if len(arrays) == 1:  # traces, diagonals, sums and transposes of one operand
        x, t = arrays[0], terms[0]
        summed = tuple(k for k, c in enumerate(t) if c not in output)
        if summed:
            x, t = np.sum(x, axis=summed, dtype=result_dtype), "".join(c for c in t if c in output)
        return x.transpose([t.index(c) for c in output]) if output else x.reshape(())
    current, indices = arrays[0], terms[0]
    for i in range(1, len(arrays)):
        needed = output + "".join(terms[i + 1:])
        folded = _pair(current, indices, arrays[i], terms[i], needed)
        if folded is None:
            return _plain_einsum(subscripts, list(operands), kwargs)
        current, indices = folded
    if set(indices) != set(output):
        return _plain_einsum(subscripts, list(operands), kwargs)
    return current.transpose([indices.index(c) for c in output]) if output else current.reshape(())
