"""Integer-array gathers check their indices as NumPy does: NumPy's index arrays on the host
before the upload, device index arrays by the gather kernel itself (a flag word read once)."""
import numpy as np
import pytest

import clarray_gemm as cg


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy-indices", "device-indices"])
def test_gather_rows_matches_numpy_and_raises_numpy_error(device, on_device):
    a = np.arange(7 * 5, dtype=np.float32).reshape(7, 5)
    x = cg.asarray(a, device=device)
    for idx in ([3, 0, -1, 6, -7, 3], [0], [6, 6, 6]):
        i = np.array(idx, np.int64)
        key = cg.asarray(i, device=device) if on_device else i
        np.testing.assert_array_equal(np.asarray(x[key]), a[i])
    for bad in ([0, 7, 1], [-8], [2, 100000]):
        i = np.array(bad, np.int64)
        key = cg.asarray(i, device=device) if on_device else i
        with pytest.raises(IndexError) as ours:
            x[key]
        with pytest.raises(IndexError) as numpys:
            a[i]
        assert str(ours.value) == str(numpys.value)
    # a failed check leaves nothing behind: the next gather with good indices succeeds
    good = np.array([1, 2], np.int64)
    key = cg.asarray(good, device=device) if on_device else good
    np.testing.assert_array_equal(np.asarray(x[key]), a[good])


def test_take_along_an_axis_with_device_indices(device):
    a = np.arange(4 * 6 * 3, dtype=np.int32).reshape(4, 6, 3)
    x = cg.asarray(a, device=device)
    i = np.array([[5, 0], [-6, 2]], np.int64)
    np.testing.assert_array_equal(np.asarray(np.take(x, cg.asarray(i, device=device), axis=1)),
                                  np.take(a, i, axis=1))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 6"):
        np.take(x, cg.asarray(np.array([6], np.int64), device=device), axis=1)
