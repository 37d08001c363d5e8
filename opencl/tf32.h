// float32 bits rounded to TF32 (10 mantissa bits): to nearest, ties away from zero, NaN kept;
// what cvt.rna.tf32.f32 gives, and the rounding whose bound clarray_gemm/ops/precision.py states.
#ifndef CLARRAY_TF32_H
#define CLARRAY_TF32_H
inline uint to_tf32_bits(const uint u)
{
    return (u & 0x7FFFFFFFu) > 0x7F800000u ? u : ((u + 0x1000u) & 0xFFFFE000u);
}
#endif
