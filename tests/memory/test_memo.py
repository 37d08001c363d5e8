"""The memo helper every cache of the package is built on: values built once per key, a bound,
concurrent misses, and the registry of them all."""
import threading

import numpy as np

import clarray_gemm as cg
from clarray_gemm.memo import Memo, memos


def test_values_are_built_once_and_the_oldest_dropped_past_the_bound():
    memo = Memo("test bound", capacity=3)
    built = []
    for key in (1, 2, 1, 3, 4):
        assert memo.get(key, lambda k=key: built.append(k) or k * 10) == key * 10
    assert built == [1, 2, 3, 4]
    assert len(memo) == 3 and memo.find(1) is None and memo.find(4) == 40
    memo.clear()
    assert len(memo) == 0 and memo.find(4) is None


def test_exclusive_builds_run_once_under_concurrent_misses():
    memo = Memo("test exclusive", capacity=None, exclusive=True)
    calls, gate = [], threading.Barrier(4)

    def build():
        calls.append(1)
        return object()

    def worker(out):
        gate.wait()
        out.append(memo.get("k", build))
    results = []
    threads = [threading.Thread(target=worker, args=(results,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1


def test_the_package_caches_are_memos():
    x = cg.asarray(np.arange(12.0).reshape(3, 4))
    np.asarray(x[1:, 1:] + 1.5)  # a constant, a plan, a program, a launcher
    names = {m.name for m in memos()}
    for expected in ("programs", "launchers", "elementwise", "elementwise constants",
                     "copy launches"):
        assert expected in names, sorted(names)
