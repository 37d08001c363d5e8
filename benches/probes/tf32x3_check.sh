# H100: the tf32x3 variant against gpu_blocked and torch (cuBLAS float32) at the shapes of
# benches/gpu_gemm_shapes.py, with configurations; then uniform-data errors.
#   bash benches/probes/tf32x3_check.sh   (after source .whl/prelude.sh)
cd "$(dirname "$0")"
X='{"kernel":"tf32x3"'
python3 gemm_shape_sweep.py --calls 20 \
    --shape 1024x1024x1024 --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192 \
    --shape 3000x5000x700 --shape 4097x3001x2049 --shape 1024x65536x1024 --shape 512x512x512 \
    --shape 8192x8192x64 --shape 64x8192x8192 --shape 8192x64x8192 --shape 65536x256x256 \
    --configs '{"kernel":"gpu_blocked"}' "$X}" "$X,\"params\":{\"PROMOTE\":8}}" \
    "$X,\"params\":{\"BN\":256}}" "$X,\"params\":{\"STAGES\":3}}" "$X,\"params\":{\"PROMOTE\":2}}" \
    2>&1 | grep -v -i warn
python3 gemm_shape_sweep.py --calls 10 --uniform --shape 4096x4096x4096 --shape 8192x8192x8192 \
    --configs '{"kernel":"gpu_blocked"}' "$X}" "$X,\"params\":{\"PROMOTE\":8}}" \
    2>&1 | grep -v -i warn
python3 gemm_shape_sweep.py --calls 10 --orient tn --shape 4096x4096x4096 --configs "$X}" 2>&1 | grep -v -i warn
python3 gemm_shape_sweep.py --calls 10 --orient nt --shape 4096x4096x4096 --configs "$X}" 2>&1 | grep -v -i warn
python3 gemm_shape_sweep.py --calls 10 --shape 8x512x512x512 --shape 64x256x256x256 --configs "$X}" 2>&1 | grep -v -i warn
python3 - <<'PY' 2>&1 | grep -v -i warn
# Values the split cannot carry: the gated fallback's result equals gpu_blocked's, bit for bit.
import numpy as np, clarray_gemm as cg
from clock import median_us
dev = cg.get_device("NVIDIA")
rng = np.random.default_rng(1)
for n in (1000, 2048):
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    for label, (i, j, v) in {"inf in A": (3, 4, np.inf), "nan in A": (5, 6, np.nan),
                             "2^50 in A": (7, 8, 2.0 ** 50), "1e-20 in A": (9, 9, 1e-20),
                             "none": (0, 0, a[0, 0])}.items():
        a2 = a.copy(); a2[i, j] = v
        x, y = cg.asarray(a2, device=dev), cg.asarray(b, device=dev)
        got = np.asarray(cg.matmul(x, y, kernel="tf32x3"))
        exp = np.asarray(cg.matmul(x, y, kernel="gpu_blocked"))
        ref = a2.astype(np.float64) @ b
        us = median_us(lambda: cg.matmul(x, y, kernel="tf32x3"), 10, sync=dev.synchronize)
        fin = np.isfinite(ref)
        err = np.linalg.norm((got - ref)[fin]) / np.linalg.norm(ref[fin])
        print(f"{n}^2 {label}: equal to gpu_blocked {np.array_equal(got, exp, equal_nan=True)}, "
              f"NaN {np.isnan(got).sum()} / NumPy {np.isnan(a2 @ b).sum()}, inf {np.isinf(got).sum()}"
              f" / {np.isinf(a2 @ b).sum()}, finite error {err:.1e}, {us:.0f} us", flush=True)
    print(cg.explain_matmul(x, y), flush=True)
PY
