// A one-work-item kernel that does nothing visible: the benches' mark on the device's clock.
//
// `python -m clarray_gemm bench latency` launches it through raw pyopencl (argument set once,
// then clEnqueueNDRangeKernel + clFinish per call) to measure what any OpenCL call costs on a
// device before a library adds its own work; bench/timing.py enqueues it before and after an
// operation and reads the device time between the two from their profiling events.
//
// Parameters: none.
__kernel void bench_noop(__global float* scratch)
{
    if (get_global_id(0) == 0)
        scratch[1] = scratch[0];
}
