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


def _heat_steps(u, steps: int, k: float = 0.1):
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + k * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
    return u


@pytest.mark.parametrize("shape", [(33, 31), (128, 128)])
def test_stencil_writes_slices_in_place(device, shape):
    """A heat-equation stencil's slice writes give NumPy's values; on unified memory, where the
    host path computes the right-hand sides, the writes land in the mapping: no buffer is
    copied or mapped again per step."""
    u0 = np.random.default_rng(5).random(shape)
    want = _heat_steps(u0.copy(), 20)
    u = cg.asarray(u0, device=device)
    _heat_steps(u, 1)  # first use: plans and mappings
    before = cg.transfer_stats()
    _heat_steps(u, 19)
    copied = cg.transfer_stats() - before
    np.testing.assert_allclose(np.asarray(u), want, rtol=1e-12, atol=0)
    if device.info.host_unified_memory and cg.settings.host_path():
        assert copied.device_to_device == 0 and copied.maps == 0, copied


def test_assignment_broadcasts_raises_and_spares_a_held_host_view(device, either_path):
    """A slice assignment from a device array takes NumPy's rules whether a kernel or the host
    path (NumPy between the two mappings) runs it: a source that broadcasts (leading length-1
    axes dropped), NumPy's ValueError and message for one that does not, and a host view taken
    before (``np.asarray``) keeps the values it showed."""
    a = np.arange(7 * 6, dtype=np.float32).reshape(7, 6)
    u = cg.asarray(a, device=device)
    held = np.asarray(u)
    want = a.copy()
    for key, source in (((0, slice(None)), (1, slice(0, 1))),            # (1,) into (6,)
                        ((slice(2, 4), slice(None)), (5, slice(None))),    # (6,) into (2, 6)
                        ((6, slice(None)), (slice(3, 4), slice(None)))):   # (1, 6) into (6,)
        u[key] = u[source]
        want[key] = want[source]
        np.testing.assert_array_equal(np.asarray(u), want)
    np.testing.assert_array_equal(held, a)
    for key, source in (((0, slice(None)), (slice(1, 3), slice(None))),
                        ((slice(0, 2), slice(None)), (slice(0, 3), slice(None)))):
        with pytest.raises(ValueError) as ours:
            u[key] = u[source]
        with pytest.raises(ValueError) as numpys:
            want[key] = want[source]
        assert str(ours.value) == str(numpys.value)
    np.testing.assert_array_equal(np.asarray(u), want)
