// A flat work-item index taken apart into per-dimension indices, innermost dimension first (the
// strided kernels: copy.cl's strided_copy, elementwise.cl's strided layouts).
//
// Parameters: IDX32 1: fewer than 2^31 elements, the decomposition in 32 bits (a 64-bit division
// is many times slower).
#ifndef FLAT_INDEX_H
#define FLAT_INDEX_H
#ifndef IDX32
#define IDX32 0
#endif
#if IDX32
typedef uint flat_index_t;
#else
typedef long flat_index_t;
#endif

// The index along a dimension of n elements; *rem is left with the index into the dimensions
// outside it. q and rem - q*n rather than / and %: LLVM fuses that pair into an instruction
// ("freeze") that Oclgrind's uninitialized-value checker cannot simulate.
inline long next_index(flat_index_t* rem, const long n)
{
    const flat_index_t q = *rem / (flat_index_t)n;
    const long idx = *rem - q * (flat_index_t)n;
    *rem = q;
    return idx;
}
#endif
