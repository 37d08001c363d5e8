// The Cholesky factorisation (potf2: a column at a time, the diagonal element on one work-item,
// the rest of the column in parallel) of the w x w lower triangle held in local memory `l` with
// rows `ld` apart, in place; every work-item of the group calls it. `failed` is left at 1 + the
// first column whose pivot was not positive, or at 0 (set it to 0 and reach a barrier first).
// Used by linalg_small.cl's cholesky and linalg_blocked.cl's diagonal blocks.
#ifndef CHOLESKY_LOCAL_H
#define CHOLESKY_LOCAL_H

inline void cholesky_local(__local T* l, const int w, const int ld, __local int* failed,
                           const int lid)
{
    for (int j = 0; j < w; ++j) {
        if (lid == 0) {
            T d = l[j * ld + j];
            for (int q = 0; q < j; ++q)
                d = d - l[j * ld + q] * l[j * ld + q];
            if (!(d > (T)0) && *failed == 0)
                *failed = j + 1;
            l[j * ld + j] = sqrt(d);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const T djj = l[j * ld + j];
        for (int i = j + 1 + get_local_id(0); i < w; i += get_local_size(0)) {
            T s = l[i * ld + j];
            for (int q = 0; q < j; ++q)
                s = s - l[i * ld + q] * l[j * ld + q];
            l[i * ld + j] = s / djj;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
