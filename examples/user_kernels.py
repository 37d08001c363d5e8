"""Your own OpenCL C on device arrays: a custom activation (ElementwiseKernel, and the same one
written in NumPy and fused), a fused softmax (reductions in the fused function), a user
reduction (ReductionKernel), a hand-written kernel (RawKernel) and pyopencl code on the same
buffers.

    python examples/user_kernels.py [--size N]

The activation is the tanh form of GELU written as one elementwise kernel, and as NumPy code
that `clarray_gemm.fuse` compiles into one; the softmax over rows (a max, a sum and the
outputs) is one kernel too; the reduction is a root mean square; the raw kernel
clips a vector in place; pyopencl's own array arithmetic then runs on the same buffer, on the
same queue. Each result is checked against NumPy.
"""
import argparse

import numpy as np
import pyopencl.array as cl_array

import clarray_gemm as cg

GELU = cg.ElementwiseKernel(
    "T x", "T y",
    """const T c = (T)0.7978845608028654;   // sqrt(2 / pi)
       y = (T)0.5 * x * ((T)1 + tanh(c * (x + (T)0.044715 * x * x * x)));""",
    "gelu_tanh")

RMS = cg.ReductionKernel("T x", "T r", "x * x", "a + b", "r = sqrt(a / n)", "0", "rms")


@cg.fuse
def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@cg.fuse
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


CLIP = cg.RawKernel("""
__kernel void clip_in_place(__global float* y, const float lo, const float hi, const int n)
{
    const int i = get_global_id(0);
    if (i < n)
        y[i] = fmin(fmax(y[i], lo), hi);
}
""", "clip_in_place")


def main(size: int = 1 << 20) -> None:
    rng = np.random.default_rng(0)
    host = rng.standard_normal(size).astype(np.float32)
    x = cg.asarray(host)

    y = GELU(x)                                               # one pass, on the device
    want = 0.5 * host * (1 + np.tanh(0.7978845608028654 * (host + 0.044715 * host ** 3)))
    assert np.allclose(np.asarray(y), want, rtol=1e-5, atol=1e-6), "gelu"
    assert np.allclose(np.asarray(gelu(x)), want, rtol=1e-5, atol=1e-6), "fused gelu"
    n = size // 256 * 256                                     # softmax over rows of 256
    block = host[:n].reshape(-1, 256)
    e = np.exp(block - block.max(axis=-1, keepdims=True))
    assert np.allclose(np.asarray(softmax(x[:n].reshape(-1, 256))),
                       e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7), "fused softmax"
    rms = float(np.asarray(RMS(x)))
    assert np.isclose(rms, np.sqrt(np.mean(host.astype(np.float64) ** 2)), rtol=1e-5), "rms"

    CLIP((size,), None, (y, np.float32(-0.1), np.float32(1.0), size))
    want = np.clip(want, -0.1, 1.0)
    assert np.allclose(np.asarray(y), want, rtol=1e-5, atol=1e-6), "clip"

    shared = y.to_pyopencl()                                  # the same buffer, no copy
    shared *= 3                                               # pyopencl's kernel
    assert np.allclose(np.asarray(y), 3 * want, rtol=1e-5, atol=1e-6), "pyopencl"
    back = cg.asarray(cl_array.to_device(y.device.queue, host))  # pyopencl -> device array
    assert np.allclose(np.asarray(np.abs(back)), np.abs(host)), "asarray"
    print(f"gelu (kernel and fused), softmax, rms, clip and pyopencl on {size} elements of "
          f"{x.device.name}: ok")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20)
    main(parser.parse_args().size)
