// Strided layouts of up to 8 dimensions passed as long8 shapes and strides (reduce.cl's kept and
// reduced axes; gather.cl's and compact.cl's columns of a row): UNPACK8 turns a long8 into an
// array, offset_of(i, shp, st, dims) is the element offset of flat index i over the innermost
// `dims` of the 8 dimensions (dimension 7 innermost).
#ifndef STRIDED_OFFSET_H
#define STRIDED_OFFSET_H

#define UNPACK8(v) {v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7}

inline long offset_of(long i, const long* shp, const long* st, const int dims)
{
    if (dims == 1) return i * st[7];
    long off = 0;
    for (int d = 7; d >= 8 - dims; --d) {
        const long q = i / shp[d];  // not % and /: see opencl/copy.cl
        off += (i - q * shp[d]) * st[d];
        i = q;
    }
    return off;
}
#endif
