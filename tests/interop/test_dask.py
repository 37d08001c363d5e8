"""dask.array with device-array chunks: results stay device arrays and match NumPy; tokens,
sizes and serialization; the array backend; two workers on dask.distributed."""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import assert_matches, random_array

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'clarray_gemm[dask]')")
import dask  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def test_registration_is_lazy_and_happens_on_import():
    code = ("import sys, clarray_gemm; assert 'dask' not in sys.modules; "
            "import dask.array as da; from dask.array.dispatch import concatenate_lookup; "
            "from dask.array.chunk_types import is_valid_chunk_type; "
            "assert concatenate_lookup.dispatch(clarray_gemm.DeviceArray).__module__ "
            "== 'clarray_gemm.ops.joining'; assert is_valid_chunk_type(clarray_gemm.DeviceArray)")
    subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], check=True)


def test_multi_chunk_results_are_device_arrays():
    a = random_array((40, 30), np.float32, 1)
    x = da.from_array(cg.asarray(a), chunks=(16, 12))
    assert isinstance(x._meta, cg.DeviceArray)
    cases = [
        (x @ x.T, a @ a.T), ((x @ x.T).sum(), (a @ a.T).sum()), (x.mean(axis=0), a.mean(axis=0)),
        (x.std(), a.std()), (da.einsum("ij,kj->ik", x, x), a @ a.T),
        (da.tensordot(x, x, axes=([1], [1])), a @ a.T),
        (da.concatenate([x, x], axis=1), np.concatenate([a, a], axis=1)),
        (x[[1, 5, 30]], a[[1, 5, 30]]), (x.max(axis=1), a.max(axis=1)),
    ]
    for lazy, want in cases:
        got = lazy.compute()
        assert isinstance(got, cg.DeviceArray), type(got)
        assert_matches(got, np.asarray(want, np.float64) if np.ndim(want) else want)


def test_convolution_blocks_and_overlap():
    s = random_array((3000,), np.float32, 2)
    v = random_array((9,), np.float32, 3)
    x = da.from_array(cg.asarray(s), chunks=700)
    blocks = x.map_blocks(np.convolve, cg.asarray(v), mode="same").compute()
    assert isinstance(blocks, cg.DeviceArray)
    assert_matches(blocks[:700], np.convolve(s[:700].astype(np.float64), v, "same"))
    overlapped = x.map_overlap(lambda b: np.convolve(b, v, mode="same"), depth=4,
                               boundary=0, dtype=np.float32).compute()
    assert isinstance(overlapped, cg.DeviceArray)
    assert_matches(overlapped, np.convolve(s.astype(np.float64), v, "same"))


def test_tokens_sizes_and_pickling():
    from dask.base import tokenize
    from dask.sizeof import sizeof
    a = random_array((64, 50), np.float32, 4)
    assert tokenize(cg.asarray(a)) == tokenize(cg.asarray(a))
    assert tokenize(cg.asarray(a)) != tokenize(cg.asarray(a + 1))
    assert sizeof(cg.asarray(a)) == a.nbytes
    buffers = []
    data = pickle.dumps(cg.asarray(a), protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < a.nbytes  # the elements travel out of band
    back = pickle.loads(data, buffers=buffers)
    assert isinstance(back, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(back), a)


def test_array_backend_creates_device_chunks():
    with dask.config.set({"array.backend": "clarray_gemm"}):
        ones = da.ones((6, 4), chunks=3, dtype=np.float32)
        rand = da.random.RandomState(0).random_sample((6, 4), chunks=3)
        ramp = da.arange(10, chunks=4)
    for lazy in (ones, rand, ramp):
        assert isinstance(lazy._meta, cg.DeviceArray)
        assert isinstance(lazy.compute(), cg.DeviceArray)
    assert float(ones.sum().compute()) == 24.0
    np.testing.assert_array_equal(np.asarray(ramp.compute()), np.arange(10))
    moved = da.from_array(np.arange(6.0), chunks=4).to_backend("clarray_gemm")
    assert isinstance(moved._meta, cg.DeviceArray) and isinstance(moved.compute(), cg.DeviceArray)
    back = moved.to_backend("numpy").compute()
    assert type(back) is np.ndarray and back.tolist() == list(range(6))


def test_array_backend_registers_without_the_packages_entry_point():
    """A checkout run with PYTHONPATH has no installed entry point: ``device_cluster`` (and
    ``register_backend``) registers the backend itself, once."""
    from dask.array.backends import array_creation_dispatch
    from clarray_gemm.interop.dask_backend import DeviceBackendEntrypoint, register_backend
    saved = array_creation_dispatch._lookup.pop("clarray_gemm", None)
    try:
        register_backend()
        first = array_creation_dispatch._lookup["clarray_gemm"]
        assert isinstance(first, DeviceBackendEntrypoint)
        register_backend()
        assert array_creation_dispatch._lookup["clarray_gemm"] is first
        with dask.config.set({"array.backend": "clarray_gemm"}):
            assert isinstance(da.zeros(3, chunks=2).compute(), cg.DeviceArray)
    finally:
        if saved is not None:
            array_creation_dispatch._lookup["clarray_gemm"] = saved


def test_distributed_serialization_is_a_view_of_the_buffer():
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from distributed.protocol import deserialize, serialize
    a = random_array((64, 32), np.float32, 5)
    x = cg.asarray(a)
    header, frames = serialize(x, serializers=("dask",))
    assert header["serializer"] == "dask"
    (frame,) = frames
    assert np.shares_memory(np.frombuffer(frame, np.float32), np.asarray(x))
    back = deserialize(header, frames)
    assert isinstance(back, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(back), a)


def test_two_workers_compute_device_arrays_created_on_them():
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from distributed import Client
    from clarray_gemm.interop.distributed import device_cluster, worker_device
    dev = cg.default_device()
    with device_cluster([dev, dev], cpu_threads=1, silence_logs=40) as cluster, \
            Client(cluster) as client:
        where = client.run(worker_device)
        assert len(where) == 2 and all(str(dev) in w for w in where.values())
        # nothing listens beyond loopback unless the caller names an address
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        assert all(addr.startswith("tcp://127.0.0.1:") for addr in where)
        from distributed.system import MEMORY_LIMIT  # half the host each, not a thread's share
        limits = [w["memory_limit"] for w in client.scheduler_info()["workers"].values()]
        assert limits == [MEMORY_LIMIT // 2] * 2
        if dev.info.is_cpu and "Portable" in dev.info.platform:  # PoCL takes the core count
            assert all("[1 compute units]" in w for w in where.values())
        if dev.info.is_cpu:  # the host FFT's threads too
            from clarray_gemm.ops.convolve_host import _cores
            assert set(client.run(_cores).values()) == {1}
        with dask.config.set({"array.backend": "clarray_gemm"}):
            x = da.random.RandomState(3).random_sample((64, 48), chunks=(32, 48))
        product = (x @ x.T).persist()
        got = product.compute(scheduler=client)
        host = x.compute(scheduler=client)
        assert isinstance(got, cg.DeviceArray) and isinstance(host, cg.DeviceArray)
        assert_matches(got, host.get() @ host.get().T)
        assert len(client.who_has(product)) == 4


def _dask_command() -> str | None:
    """The ``dask`` command of this interpreter's environment (a venv need not be on PATH)."""
    import shutil
    from pathlib import Path
    beside = Path(sys.executable).with_name("dask")
    return str(beside) if beside.exists() else shutil.which("dask")


def _stop(processes: list) -> None:
    """SIGTERM each started process's group (a worker's nanny and its child), wait, then
    SIGKILL what is left."""
    import os
    import signal
    for p in processes:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def test_scheduler_and_workers_started_by_the_dask_command(tmp_path):
    """Across hosts each machine runs ``dask scheduler`` / ``PYOPENCL_CTX=<p>:<d> dask worker
    <scheduler> --nthreads 1``: here both on 127.0.0.1, two workers on the default device."""
    import os
    import time
    from pathlib import Path
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    dask_cli = _dask_command()
    if dask_cli is None:
        pytest.skip("the dask command is not installed")
    from distributed import Client
    from clarray_gemm.interop.distributed import _THREAD_VARIABLES, pyopencl_ctx, worker_device
    dev = cg.default_device()
    checkout = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYOPENCL_CTX": pyopencl_ctx(dev),
           "PYTHONPATH": os.pathsep.join(filter(None, [checkout, os.environ.get("PYTHONPATH")]))}
    if dev.info.is_cpu:  # one core per worker, as device_cluster pins CPU workers
        env.update({name: "1" for name in _THREAD_VARIABLES})
    address_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "wb")
    common = {"env": env, "cwd": tmp_path, "stdout": log, "stderr": subprocess.STDOUT,
              "start_new_session": True}
    processes = [subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(address_file)],
                                  **common)]
    try:
        for i in range(2):
            processes.append(subprocess.Popen(
                [dask_cli, "worker", "--scheduler-file", str(address_file), "--host",
                 "127.0.0.1", "--nthreads", "1", "--name", f"opencl-{i}", "--no-dashboard",
                 "--local-directory", str(tmp_path), "--death-timeout", "60"], **common))
        deadline = time.monotonic() + 40
        while not address_file.exists():
            assert all(p.poll() is None for p in processes), (tmp_path / "dask.log").read_text()
            assert time.monotonic() < deadline, "dask scheduler wrote no address file"
            time.sleep(0.2)
        with Client(scheduler_file=str(address_file), timeout=30) as client:
            client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
            assert client.scheduler.address.startswith("tcp://127.0.0.1:")
            where = client.run(worker_device)
            assert len(where) == 2 and all(a.startswith("tcp://127.0.0.1:") for a in where)
            assert all(str(dev) in w for w in where.values()), where
            assert {w["nthreads"] for w in client.scheduler_info()["workers"].values()} == {1}
            a = random_array((70, 33), np.float32, 11)
            b = random_array((33, 31), np.float32, 12)
            s = random_array((1031,), np.float32, 13)
            v = random_array((9,), np.float32, 14)
            x = da.from_array(cg.asarray(a), chunks=(35, 33))
            y = da.from_array(cg.asarray(b), chunks=(33, 31))
            signal_ = da.from_array(cg.asarray(s), chunks=257)
            product = (x @ y).persist(scheduler=client)
            filtered = signal_.map_overlap(np.convolve, depth=4, boundary=0, dtype=np.float32,
                                           v=cg.asarray(v), mode="same").persist(
                                               scheduler=client)
            assert len(client.who_has(product)) == 2
            got = product.compute(scheduler=client)
            conv = filtered.compute(scheduler=client)
            assert isinstance(got, cg.DeviceArray) and isinstance(conv, cg.DeviceArray)
            assert_matches(got, a.astype(np.float64) @ b)
            assert_matches(conv, np.convolve(s.astype(np.float64), v, "same"))
            # the workers' results are device arrays too, not only what the client rebuilt
            holders = client.run(lambda dask_worker: sorted(
                type(value).__name__ for value in dask_worker.data.values()))
            assert {"DeviceArray"} == {t for types in holders.values() for t in types}
    finally:
        _stop(processes)
        log.close()
    assert all(p.returncode is not None for p in processes)
