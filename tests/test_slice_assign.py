"""Slice assignment between views of one array: NumPy's answer whether or not the views share
bytes (a shared source is buffered first, a disjoint one copied straight)."""
import numpy as np
import pytest

import clarray_gemm as cg


@pytest.mark.parametrize("assign", [
    lambda u: u.__setitem__((0, slice(None)), u[1, :]),            # disjoint rows
    lambda u: u.__setitem__(slice(1, None), u[:-1]),                # overlapping, shifted down
    lambda u: u.__setitem__(slice(None, -1), u[1:]),                # overlapping, shifted up
    lambda u: u.__setitem__((slice(None), slice(None, None, -1)), u),   # reversed in place
    lambda u: u.__setitem__((slice(1, -1), slice(1, -1)), u[:-2, 2:]),  # 2-D, overlapping
    lambda u: u.__setitem__((slice(None), 0), u[:, 5]),             # disjoint columns
    lambda u: u.__setitem__(slice(None, -1, 2), u[1::2]),           # interleaved, disjoint bytes
], ids=["rows", "down", "up", "reversed", "stencil", "columns", "interleaved"])
def test_assignment_between_views_of_one_array(device, assign):
    a = np.arange(7 * 6, dtype=np.float32).reshape(7, 6)
    u = cg.asarray(a, device=device)
    want = a.copy()
    assign(want)
    assign(u)
    np.testing.assert_array_equal(np.asarray(u), want)
