"""Each operation of a power-iteration step (1024^2, float32) on a GPU: wall time with a
finish, the enqueue alone, and device time.

    python benches/probes/power_step_ops.py
"""
import numpy as np, clarray_gemm as cg, time, warnings
warnings.simplefilter("ignore")
from clarray_gemm.bench.timing import device_seconds
dev = cg.get_device("NVIDIA")
rng = np.random.default_rng(0)
a = rng.standard_normal((1024, 1024)).astype(np.float32); v = np.ones(1024, np.float32)
A, V = cg.asarray(a, device=dev), cg.asarray(v, device=dev)
W = A @ V; N = np.linalg.norm(W)
ops = {"A @ V": lambda: A @ V, "W * W": lambda: W * W, "np.sum(W*W)": lambda: np.sum(W),
       "np.sqrt(0-d)": lambda: np.sqrt(N), "W / N": lambda: W / N, "norm(W)": lambda: np.linalg.norm(W),
       "step": lambda: W / np.linalg.norm(A @ V)}
def wall(f, n=300):
    f(); dev.synchronize(); t = []
    for _ in range(n):
        s = time.perf_counter(); f(); dev.synchronize(); t.append(time.perf_counter() - s)
    return np.median(t) * 1e6
def enq(f, n=300):
    f(); dev.synchronize(); t = []
    for _ in range(n):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    dev.synchronize(); return np.median(t) * 1e6
rows = {k: (wall(f), enq(f)) for k, f in ops.items()}
rows = {k: r + (device_seconds(dev, f, reps=20).seconds * 1e6,) for k, (f, r) in zip(ops, zip(ops.values(), rows.values()))}
print("| op | wall+finish us | enqueue only us | device us |")
for k, (w, e, d) in rows.items():
    print(f"| {k} | {w:.1f} | {e:.1f} | {d:.1f} |")
print(cg.explain_matmul(A, V))
