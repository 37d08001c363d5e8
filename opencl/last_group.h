// A split computation finished in one launch: the work-groups that produce one output's
// partial results count themselves on a group counter (an int32 word, zero before the launch),
// and the last of them to arrive combines the partials and sets its counter back to zero. A
// second launch that would combine them costs a GPU more (several microseconds of host and
// device time) than the last group's reads of a few partials.
//
//   FINISH_LAST  1: the includer's split kernel finishes in its last group (0: the includer's
//                second kernel combines the partials)
//
// LAST_GROUP_ARRIVE(counter, count, is_last): called by every work-item of the group after its
// partial results are stored; `is_last` (a __local int of the kernel) becomes nonzero in every
// work-item of the group that arrived count-th on `*counter`. Read the other groups' partials
// through volatile pointers (past any cache of this compute unit).
#ifndef LAST_GROUP_H
#define LAST_GROUP_H

#ifndef FINISH_LAST
#define FINISH_LAST 0
#endif

#define LAST_GROUP_ARRIVE(counter, count, is_last) do { \
        mem_fence(CLK_GLOBAL_MEM_FENCE);  /* this work-item's partials, before the count */ \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); \
        if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) \
            (is_last) = atomic_inc(counter) == (int)(count) - 1; \
        barrier(CLK_LOCAL_MEM_FENCE); \
        mem_fence(CLK_GLOBAL_MEM_FENCE); \
    } while (0)

#endif
