"""Host-mapped buffers: zero-copy views, the coherence rule, the fill path and byte counters."""
import threading
import time

import numpy as np
import pyopencl as cl
import pytest

import clarray_gemm as cg
from conftest import random_array


def test_buffers_are_alloc_host_ptr():
    x = cg.zeros(10, np.float32)
    flags = x.storage.buffer.get_info(cl.mem_info.FLAGS)
    assert flags & cl.mem_flags.ALLOC_HOST_PTR and flags & cl.mem_flags.READ_WRITE


def test_asarray_result_is_zero_copy_on_unified_memory(device):
    if not device.info.host_unified_memory:
        pytest.skip("zero-copy host views need unified memory")
    y = cg.asarray(np.ones((64, 64), np.float32)) @ np.ones((64, 64), np.float32)
    before = cg.transfer_stats()
    h1 = np.asarray(y)
    h2 = np.asarray(y)
    delta = cg.transfer_stats() - before
    assert np.shares_memory(h1, h2)
    assert h1.__array_interface__["data"][0] == h2.__array_interface__["data"][0]
    assert delta.device_to_host == 0 and delta.host_to_device == 0 and delta.maps <= 1
    assert not h1.flags.writeable and not h1.flags.owndata
    assert (h1 == 64).all()


def test_host_views_are_snapshots_not_torn_by_writes():
    x = cg.asarray(np.arange(8, dtype=np.float32))
    view = np.asarray(x)
    sub = x[2:5]  # a device view sharing the storage
    x += 100  # in-place write while a host view lives: copy-on-write
    np.testing.assert_array_equal(view, np.arange(8))  # the snapshot is intact
    np.testing.assert_array_equal(np.asarray(x), np.arange(8) + 100)
    np.testing.assert_array_equal(np.asarray(sub), np.arange(2, 5) + 100)  # device views follow
    x[0] = -1
    assert np.asarray(x)[0] == -1 and view[0] == 0


def test_no_kernel_while_mapped_for_writing():
    x = cg.zeros((4, 4), np.float32)
    with x.storage.map_for_write() as host:
        host.view(np.float32)[:] = 2
        with pytest.raises(RuntimeError, match="mapped for writing"):
            x @ np.ones((4, 4), np.float32)
        with pytest.raises(RuntimeError, match="mapped for writing"):
            np.asarray(x)
    np.testing.assert_array_equal(np.asarray(x @ np.ones((4, 4), np.float32)), np.full((4, 4), 8))


def test_fill_path_without_extra_copy(device):
    x = cg.empty((1000,), np.float32)
    before = cg.transfer_stats()
    with x.storage.map_for_write(discard=True) as host:
        host.view(np.float32)[:] = np.arange(1000)  # the only write of the data
    delta = cg.transfer_stats() - before
    if device.info.host_unified_memory:
        assert delta.host_to_device == 0 and delta.device_to_host == 0
    np.testing.assert_array_equal(np.asarray(x), np.arange(1000))


def test_counters_count_host_data_uploads():
    before = cg.transfer_stats()
    cg.asarray(np.zeros(256, np.float64))
    assert (cg.transfer_stats() - before).host_to_device == 2048
    cg.reset_transfer_stats()
    assert cg.transfer_stats().host_to_device == 0


def test_zero_size_arrays():
    x = cg.asarray(np.zeros((0, 3), np.float32))
    assert np.asarray(x).shape == (0, 3)
    assert (x @ np.ones((3, 2), np.float32)).shape == (0, 2)
    assert_zero = np.asarray(cg.asarray(np.ones((2, 0), np.float32)) @ np.ones((0, 3), np.float32))
    np.testing.assert_array_equal(assert_zero, np.zeros((2, 3)))


def test_pooled_buffer_not_reused_while_a_host_view_lives():
    import gc

    x = cg.asarray(np.arange(1024, dtype=np.float32))
    view = np.asarray(x)
    del x
    gc.collect()
    others = [cg.full(1024, -7.0, np.float32) for _ in range(4)]  # same size: pool candidates
    np.testing.assert_array_equal(view, np.arange(1024))
    assert all((np.asarray(o) == -7).all() for o in others)


def test_freed_buffers_are_reused():
    from clarray_gemm.memory import free_cached_memory

    free_cached_memory()
    a = cg.empty(4096, np.float32)
    ptr = a.storage.buffer.int_ptr
    del a
    b = cg.empty(4096, np.float32)
    assert b.storage.buffer.int_ptr == ptr
    free_cached_memory()


def test_free_cached_memory_gives_back_the_kernels_scratch(device):
    """Split-K partial sums and packed operands live in a scratch buffer per thread between
    calls; ``free_cached_memory()`` releases it, and the next call makes a new one."""
    from clarray_gemm.kernels import gemm
    from clarray_gemm.memory import free_cached_memory

    rng = np.random.default_rng(4)
    a = rng.standard_normal((33, 300)).astype(np.float32)
    b = rng.standard_normal((300, 20)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    split = {"KSPLIT": 3}
    first = np.asarray(cg.matmul(x, y, kernel="gpu_blocked", params=split))
    assert any(k[0] is device for k in gemm._split_workspaces)
    free_cached_memory()
    assert not any(k[0] is device for k in gemm._split_workspaces)
    again = np.asarray(cg.matmul(x, y, kernel="gpu_blocked", params=split))
    np.testing.assert_array_equal(again, first)
    exact = a.astype(np.float64) @ b
    assert np.linalg.norm(again - exact) <= 1e-5 * np.linalg.norm(exact)


def test_host_resident_buffers_are_reused_still_mapped(device):
    """Unified memory: a freed host-resident buffer is parked mapped, so the next host-path
    result of that size costs neither an allocation nor a map."""
    if not device.info.host_unified_memory:
        pytest.skip("host-resident buffers exist on unified memory only")
    from clarray_gemm.memory import free_cached_memory

    free_cached_memory()
    n = device.info.host_born_max_bytes // 4 + 512  # past the host-born sizes: a buffer at once
    a = cg.asarray(np.arange(n, dtype=np.float32), device=device)
    assert not a.storage.host_born
    ptr = a.storage.buffer.int_ptr
    del a
    before = cg.transfer_stats()
    b = cg.asarray(np.ones(n, np.float32), device=device)
    assert b.storage.buffer.int_ptr == ptr and b.storage.host_resident
    assert (cg.transfer_stats() - before).maps == 0
    np.testing.assert_array_equal(np.asarray(b), np.ones(n))


# -- host-born storages (unified memory): host memory until a kernel needs a buffer -------------
@pytest.fixture
def unified(device):
    if not device.info.host_unified_memory:
        pytest.skip("host-born storages exist on unified memory only")
    return device


@pytest.mark.parametrize("n", [1, 7, 257])
def test_small_host_resident_arrays_are_host_born(unified, n):
    before = cg.transfer_stats()
    x = cg.asarray(np.arange(n, dtype=np.float32), device=unified)
    assert x.storage.host_born and x.storage.host_resident
    assert (cg.transfer_stats() - before).maps == 0  # no buffer, so nothing mapped
    np.testing.assert_array_equal(np.asarray(x), np.arange(n))


@pytest.mark.parametrize("nbytes", [0, 4, 4096])
def test_host_results_are_the_host_born_storages_that_storage_builds(unified, nbytes):
    """host_result's written-out constructors leave a storage in the state
    ``Storage(device, nbytes, True)`` gives and an array as ``DeviceArray.from_storage`` builds
    it: the two must not drift apart."""
    from clarray_gemm.array.host_results import host_result
    from clarray_gemm.memory import Storage
    from clarray_gemm.memory.storage import _as_bytes

    built = Storage(unified, nbytes, True)
    n = nbytes // 4
    out, view = host_result(unified, nbytes, (n,), np.dtype(np.float32), (4,))
    fast = out.storage
    for slot in Storage.__slots__:
        if slot != "__weakref__":
            mine, theirs = getattr(fast, slot), getattr(built, slot)
            if slot == "_host":  # the same bytes (a C-order result keeps its typed array)
                assert theirs.dtype == np.uint8 and _as_bytes(mine).size == theirs.size
                assert mine is view if nbytes else mine.dtype == np.uint8
            else:
                assert mine == theirs, slot
    twin = cg.DeviceArray.from_storage(built, (n,), np.dtype(np.float32), (4,))
    for slot in ("_shape", "_dtype", "_strides", "_offset", "_size", "layout_key"):
        assert getattr(out, slot) == getattr(twin, slot), slot
    view[:] = np.arange(n)
    np.testing.assert_array_equal(np.asarray(out), np.arange(n))



@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 17), (2, 3, 5)])
def test_typed_host_born_results_go_through_every_transition(unified, host_path, shape):
    """A host-path result in C order keeps NumPy's typed array as its memory. Each transition
    that moves bytes sees them: a user view then a write (copy-on-write), ``x[...] =``, a
    kernel's first use (the bytes copied into a buffer), the host path after the kernel, and a
    0-d result. Expected values are NumPy's on the same steps."""
    from clarray_gemm.memory.storage import _as_bytes

    a = random_array(shape, np.float32, 31)
    x = cg.asarray(a, device=unified)
    y = x * 2                                   # a host-born result in its own typed array
    host = y.storage._host
    assert host.dtype == np.float32 and host.shape == shape and host.flags.c_contiguous
    assert _as_bytes(host).nbytes == y.nbytes
    view = np.asarray(y)                        # a user view of the typed memory
    y += 1                                      # written while the view lives: detached
    np.testing.assert_array_equal(view, a * 2)
    np.testing.assert_array_equal(np.asarray(y), a * 2 + 1)
    z = x - 3                                   # written through the array-assignment path
    z[...] = np.full(shape, 5, np.float32)
    np.testing.assert_array_equal(np.asarray(z), np.full(shape, 5, np.float32))
    q = x * 4                                   # a whole-storage write (Storage.write_from)
    q.storage.write_from(np.full(shape, 7, np.float32))
    np.testing.assert_array_equal(np.asarray(q), np.full(shape, 7, np.float32))
    w = x + 0.5                                 # a kernel's first use of a typed storage
    flat = w.reshape(-1, 1) if w.ndim else w.reshape(1, 1)
    product = cg.matmul(flat, np.ones((1, 1), np.float32), kernel="naive")
    np.testing.assert_array_equal(np.asarray(product).ravel(), (a + 0.5).ravel())
    np.testing.assert_array_equal(np.asarray(w + 1), a + 0.5 + 1)  # host path after it

def test_host_born_bound_follows_the_device_type(device):
    """1 MiB on CPU devices (the host path runs nearly everything that size), 64 KiB on other
    unified-memory devices, none on discrete ones; storages follow their device's bound."""
    import dataclasses
    info = device.info
    if info.host_unified_memory:
        gpu_like = dataclasses.replace(info, type="GPU")
        assert gpu_like.host_born_max_bytes == 64 << 10
        assert dataclasses.replace(info, type="CPU").host_born_max_bytes == 1 << 20
        bound = info.host_born_max_bytes
        at, past = (cg.asarray(np.zeros(size // 4, np.float32), device=device)
                    for size in (bound, bound + 4))
        assert at.storage.host_born and not past.storage.host_born
    assert dataclasses.replace(info, host_unified_memory=False).host_born_max_bytes == 0


def test_large_host_born_result_to_kernel_and_back(unified, host_path):
    """A host-path result up to the CPU bound (512 KiB here) is host-born; a kernel forced on
    it gets its bytes, and the host reads the kernel's answer."""
    if unified.info.host_born_max_bytes < 1 << 19:
        pytest.skip("host-born results of 512 KiB are a CPU device's")
    a = np.linspace(-3, 3, 1 << 17, dtype=np.float32)
    squared = cg.asarray(a, device=unified) ** 2  # the host path: NumPy into a host-born result
    assert squared.storage.host_born
    with cg.host_path(False):
        doubled = squared + squared  # a kernel
    assert not squared.storage.host_born
    np.testing.assert_array_equal(np.asarray(doubled), (a * a) * 2)
    np.testing.assert_array_equal(np.asarray(squared), a * a)


def test_host_born_to_kernel_and_back(unified, monkeypatch):
    """A kernel (host path off, as in the suite) gets a buffer holding the host-born bytes,
    created with them (no queue command to wait for: ~80 us each on PoCL); the host reads the
    kernel's result after it."""
    from clarray_gemm.drivers import calls
    a = np.arange(33, dtype=np.float32)
    x = cg.asarray(a, device=unified)
    y = cg.asarray(np.full(33, 0.5, np.float32), device=unified)
    with monkeypatch.context() as m:
        m.setattr(calls, "copy", lambda *args, **kw: pytest.fail("a queued copy"))
        z = x + y  # a kernel
    assert not x.storage.host_born and not x.storage.host_resident
    np.testing.assert_array_equal(np.asarray(z), a + 0.5)
    np.testing.assert_array_equal(np.asarray(x), a)  # the bytes moved with the storage


@pytest.mark.parametrize("host_born", [True, False], ids=["host-born", "mapped"])
def test_threads_sharing_a_host_resident_array_all_read_its_bytes(unified, host_born,
                                                                   monkeypatch):
    """Kernels launched by several threads at once on one shared host-resident storage (the
    first kernel moves it to the device): every thread reads its bytes. Buffer creation is
    slowed down so that the other threads run while the first one moves the storage: they
    must not take the new buffer before the bytes are in it (a race once seen as garbage in
    1 of ~5 runs of the 8-thread host-path test)."""
    from clarray_gemm.memory import storage as memory  # where Storage looks new_buffer up

    def slowed(create):
        def slow(*args, **kwargs):
            buffer = create(*args, **kwargs)
            time.sleep(0.002)
            return buffer
        return slow
    # small host-born storages get buffers created holding their bytes, larger ones pooled ones
    monkeypatch.setattr(memory, "new_buffer", slowed(memory.new_buffer))
    monkeypatch.setattr(memory, "buffer_holding", slowed(memory.buffer_holding))
    n = 5 if host_born else unified.info.host_born_max_bytes // 8 + 1000
    a = np.arange(n, dtype=np.float64) + 0.5
    wrong = []
    for _ in range(10):
        shared = cg.asarray(a, device=unified)
        assert shared.storage.host_born == host_born
        gate = threading.Barrier(6)

        def work():
            gate.wait()
            got = np.asarray(shared + 1.0)  # a kernel (host path off, as in the suite)
            if not np.array_equal(got, a + 1.0):
                wrong.append(got[:4])
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not wrong, wrong


def test_host_born_view_is_a_snapshot_through_a_kernel_write(unified):
    """Rule 2 for host-born storages: a host view taken before an in-place kernel write keeps
    the values it was taken of; the array sees the write."""
    x = cg.asarray(np.arange(31, dtype=np.float32), device=unified)
    view = np.asarray(x)
    x += 1  # a kernel writes x: the storage leaves its host memory to the view
    np.testing.assert_array_equal(view, np.arange(31))
    np.testing.assert_array_equal(np.asarray(x), np.arange(31) + 1)


def test_host_born_view_is_a_snapshot_through_a_host_write(unified, host_path):
    x = cg.asarray(np.arange(31, dtype=np.float32), device=unified)
    view = np.asarray(x)
    x[...] = -1.0  # host path: fresh host memory for x, the old memory stays with the view
    assert x.storage.host_born
    np.testing.assert_array_equal(view, np.arange(31))
    np.testing.assert_array_equal(np.asarray(x), np.full(31, -1.0))


def test_host_born_buffer_on_request_is_mapped_alloc_host_ptr(unified):
    x = cg.asarray(np.arange(7, dtype=np.float64), device=unified)
    view = np.asarray(x)
    flags = x.storage.buffer.get_info(cl.mem_info.FLAGS)  # asked for: one is made, mapped
    assert flags & cl.mem_flags.ALLOC_HOST_PTR
    assert not x.storage.host_born and x.storage.host_resident
    np.testing.assert_array_equal(np.asarray(x), np.arange(7))
    np.testing.assert_array_equal(view, np.arange(7))


def test_host_born_results_of_the_host_path(unified, host_path):
    """Host-path results (operators, matmul, norm) are host-born, their values NumPy's, and a
    kernel forced on them afterwards reads the same values."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((31, 33)).astype(np.float32)
    v = rng.standard_normal(33).astype(np.float32)
    A, V = cg.asarray(a, device=unified), cg.asarray(v, device=unified)
    w = A @ V
    n = np.linalg.norm(w)
    u = w / n
    for r in (w, n, u):
        assert r.storage.host_born
    np.testing.assert_array_equal(np.asarray(w), a @ v)
    assert np.asarray(n).tobytes() == np.linalg.norm(a @ v).tobytes()
    np.testing.assert_array_equal(np.asarray(u), (a @ v) / np.linalg.norm(a @ v))
    forced = cg.matmul(u, A, kernel="naive")  # a kernel reads the host-born operand
    np.testing.assert_allclose(np.asarray(forced), np.asarray(u) @ a, rtol=1e-5, atol=1e-5)


def test_host_view_outliving_its_array_keeps_the_buffer(device):
    x = cg.asarray(np.arange(64, dtype=np.float32), device=device)
    view = np.asarray(x)
    del x
    others = [cg.asarray(np.full(64, -1.0, np.float32), device=device) for _ in range(4)]
    np.testing.assert_array_equal(view, np.arange(64))
    del view
    again = [cg.asarray(np.full(64, 2.0, np.float32), device=device) for _ in range(4)]
    assert all((np.asarray(o) == -1).all() for o in others)
    assert all((np.asarray(o) == 2).all() for o in again)


def test_host_path_reduction_results_are_adopted_without_a_copy(unified, host_path):
    """A host-path reduction's fresh NumPy result becomes the result's memory (no copy), keeps
    NumPy's values and dtype, and a kernel reads it afterwards."""
    a = np.arange(7 * 33, dtype=np.float32).reshape(7, 33)
    x = cg.asarray(a, device=unified)
    before = cg.transfer_stats()
    s = np.sum(x, axis=0)
    assert (cg.transfer_stats() - before).host_to_device == 0  # adopted, not copied in
    assert s.storage.host_born and s.dtype == np.float32 and s.shape == (33,)
    np.testing.assert_array_equal(np.asarray(s), a.sum(axis=0))
    total = np.sum(x)  # 0-d
    assert total.shape == () and np.asarray(total) == a.sum()
    forced = cg.matmul(s, np.ones((33, 2), np.float32), kernel="naive")
    np.testing.assert_allclose(np.asarray(forced), np.tile(a.sum(axis=0).sum(), (2,)), rtol=1e-6)


def test_adopt_host_copies_what_it_cannot_take_over(unified):
    from clarray_gemm.array import adopt_host

    base = np.arange(20, dtype=np.float32)
    view = base[::2]  # not its own memory, not contiguous
    y = adopt_host(np.ascontiguousarray(view), unified)
    base[:] = -1
    np.testing.assert_array_equal(np.asarray(y), np.arange(0, 20, 2))
    swapped = np.arange(5, dtype=">f4")  # not native: copied (from_host)
    z = adopt_host(swapped.astype("<f4"), unified)
    np.testing.assert_array_equal(np.asarray(z), np.arange(5))
    empty = adopt_host(np.empty((0, 3), np.float32), unified)
    assert empty.shape == (0, 3)
