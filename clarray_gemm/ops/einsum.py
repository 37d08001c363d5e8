"""``np.einsum`` on the device: contractions become (batched) matrix products.

Each operand first loses its repeated subscripts (a diagonal view) and the subscripts only it
has and the output lacks (a device sum). Two operands are then laid out as (batch, free, summed)
and (batch, summed, free) by transposes and reshapes (views, or device copies) and multiplied by
the matmul plan; more operands are contracted left to right. Subscripts with ``...``, and the
``dtype``/``order``/``casting`` arguments, go to NumPy on host views.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, _host_function, asarray
from ._common import device_of


def _parse(subscripts: str, n: int) -> tuple[list[str], str] | None:
    subscripts = subscripts.replace(" ", "")
    if "." in subscripts:
        return None
    lhs, arrow, out = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != n:
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string" if n > len(inputs) else
                         "fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    if not arrow:
        letters = "".join(inputs)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if not all(s.isalpha() for s in inputs + [out] if s):
        return None
    return inputs, out


def _diagonal(x: DeviceArray, subs: str) -> tuple[DeviceArray, str]:
    """Repeated subscripts of one operand taken as a diagonal view."""
    while len(set(subs)) != len(subs):
        c = next(c for c in subs if subs.count(c) > 1)
        i, j = subs.index(c), subs.index(c, subs.index(c) + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"dimensions in operand for collapsing index '{c}' don't match "
                             f"({x.shape[i]} != {x.shape[j]})")
        x = x.geometry_view(lambda t: np.diagonal(t, 0, i, j))
        subs = subs[:i] + subs[i + 1:j] + subs[j + 1:] + c
    return x, subs


def _sum_out(x: DeviceArray, subs: str, keep: set[str]) -> tuple[DeviceArray, str]:
    axes = tuple(i for i, c in enumerate(subs) if c not in keep)
    if not axes:
        return x, subs
    return np.sum(x, axis=axes), "".join(c for c in subs if c in keep)


def _permute(x: DeviceArray, subs: str, order: str) -> DeviceArray:
    return x.transpose([subs.index(c) for c in order]) if subs != order else x


def _contract(a: DeviceArray, sa: str, b: DeviceArray, sb: str, keep: set[str]
              ) -> tuple[DeviceArray, str]:
    sizes = {}
    for x, s in ((a, sa), (b, sb)):
        for c, n in zip(s, x.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"operands could not be broadcast together: subscript '{c}' "
                                 f"has sizes {sizes[c]} and {n}")
    batch = "".join(c for c in sa if c in sb and c in keep)
    summed = "".join(c for c in sa if c in sb and c not in keep)
    free_a = "".join(c for c in sa if c not in sb)
    free_b = "".join(c for c in sb if c not in sa)
    nb, m, n, k = (math.prod(sizes[c] for c in s) for s in (batch, free_a, free_b, summed))
    a3 = _permute(a, sa, batch + free_a + summed).reshape(nb, m, k)
    b3 = _permute(b, sb, batch + summed + free_b).reshape(nb, k, n)
    product = np.matmul(a3, b3)
    return (product.reshape(tuple(sizes[c] for c in batch + free_a + free_b)),
            batch + free_a + free_b)


@implements(np.einsum)
def einsum(subscripts: Any, *operands: Any, out: Any = None, optimize: Any = False,
           **kwargs: Any) -> Any:
    """``np.einsum`` by diagonal views, device sums and batched matmuls."""
    parsed = _parse(subscripts, len(operands)) if isinstance(subscripts, str) else None
    ok = (parsed is not None and not kwargs and (out is None or type(out) is DeviceArray)
          and all(np.asarray(x).dtype.kind in "biuf" if type(x) is not DeviceArray
                  else x.dtype.kind in "biuf" for x in operands))
    if not ok:
        return _host_function(np.einsum, (subscripts,) + operands,
                              dict(kwargs, out=out, optimize=optimize))
    inputs, target = parsed
    device = device_of(*operands)
    xs = [x if type(x) is DeviceArray else asarray(x, device=device) for x in operands]
    for x, s in zip(xs, inputs):
        if x.ndim != len(s):
            raise ValueError(f"einstein sum subscripts string contains too many subscripts for "
                             f"operand {inputs.index(s)}")
    terms = [_diagonal(x, s) for x, s in zip(xs, inputs)]
    acc, sacc = terms[0]
    for i in range(1, len(terms) + 1):
        later = set(target).union(*(s for _, s in terms[i:]))
        acc, sacc = _sum_out(acc, sacc, later)
        if i == len(terms):
            break
        x, s = _sum_out(*terms[i], later | set(sacc))
        acc, sacc = _contract(acc, sacc, x, s, later)
    result = _permute(acc, sacc, target)
    if out is not None:
        out[...] = result
        return out
    if result.ndim and not result.is_c_contiguous:
        result = result.copy()
    return result
