// A source seen as rows x columns (gather.cl, compact.cl): column c of a row lies at off(c)
// from the row's start, where off walks the NDIM innermost of 8 column dimensions (shape `shp`,
// strides `st`, in elements; dimension 7 innermost).
//
// Parameters: NDIM (column dimensions, 0-8), defined by the including file.
#ifndef GATHER_ROWS_H
#define GATHER_ROWS_H

#define UNPACK8(v) {v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7}

inline long column_offset(long c, const long* shp, const long* st)
{
    long off = 0;
    for (int d = 7; d >= 8 - NDIM; --d) {
        const long q = c / shp[d];  // not % and /: see opencl/copy.cl
        off += (c - q * shp[d]) * st[d];
        c = q;
    }
    return off;
}
#endif
