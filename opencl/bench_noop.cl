// The latency benches' floor: the least work one OpenCL launch can do.
//
// `python -m clarray_gemm bench latency` launches this kernel with one work-item through raw
// pyopencl (arguments set once, then clEnqueueNDRangeKernel + clFinish per call) to measure what
// any OpenCL call costs on a device before a library adds its own work.
//
// Parameters: none.
__kernel void bench_noop(__global float* scratch)
{
    if (get_global_id(0) == 0)
        scratch[0] = scratch[0];
}
