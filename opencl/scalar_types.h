// The element-type defaults shared by the arithmetic kernels (the host always passes both):
// T element type, ACC accumulator type (unsigned for integers, so that overflow wraps exactly as
// NumPy's does).
#ifndef T
#define T float
#endif
#ifndef ACC
#define ACC T
#endif
