// Shared by the kernels of the transposed layout class (elementwise_tiled in elementwise.cl,
// transposed_copy in copy.cl): a work-group of TILE x TILE_ROWS work-items owns a TILE x TILE
// block of the output (rows r0.., columns c0.., along which the output is contiguous); each
// work-item handles TILE / TILE_ROWS rows of one column. An operand that runs along the rows
// (row stride 1) is staged through local memory first, so that its global reads go down its
// rows (coalesced) and the work-group reads it across them from the tile; read in the output's
// order it would touch a memory segment per element.
//
// Parameters: TILE, TILE_ROWS (TILE a multiple of TILE_ROWS).
#ifndef TILE
#define TILE 32
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 8
#endif
#define TILE_STEPS (TILE / TILE_ROWS)

// tile[j][i] = element (r0 + i, c0 + j) of `src` at element `base` with (batch, row, column)
// strides `st` (a long4), clamped into the rows x cols matrix. Expects lx, ly (local ids), r0,
// c0, rows and cols in scope. The column index first and one column of padding keep both the
// staging and the reads across it free of local-memory bank conflicts.
#define STAGE_TILE(tile, src, base, st)                                                    \
    for (int j = ly; j < TILE; j += TILE_ROWS)                                             \
        tile[j][lx] = src[(base) + min(r0 + lx, rows - 1) * (st).y                         \
                          + min(c0 + j, cols - 1) * (st).z]
