// Canonical float sums and products of at most CLUSTER_FINISH tiles, folded by one
// thread-block cluster (CUDA, sm_90 and later). Included by canonical_one.cl, which
// takes this path when the host launched exactly one cluster for such an input
// (crates/kernels/src/driver.rs).
//
// Why: a small input has fewer tiles than the GPU has SMs, and one work-group reading a
// whole tile (32 KiB of f32, 64 KiB of f64) from one SM is what the time is made of
// (measured on an H100: a 2-tile f64 sum took 3.2–3.6 µs in a graph, a half tile 1.7).
// Here the cluster's groups share the tiles: with the tile count rounded up to a power
// of two, each tile gets CLUSTER_FINISH / span groups and each group loads an equal
// share of its 8 rows into shared memory. The tile's first group (its owner) then
// reads every row in order, its own and its neighbours' (distributed shared memory),
// so each lane adds rows 0 … 7 exactly as canonical_one.cl does, and folds the tile.
// Rank 0 builds the finish's tree over the tile results, again from shared memory:
// no roots in global memory, no fence, no ticket.
//
// Bits: a lane takes IDENTITY for an element past the end, as the other paths do; one
// tile's result is written as it is, and several tiles' go through the same tree the
// last group's finish builds (eight roots per work-item folded pairwise, then only
// IDENTITY-trees added to work-item 0's node: kept as one combine with IDENTITY, which
// for + and × is idempotent, a −0 sum becoming +0 once as in the finish).

#ifndef REDLAB_CLUSTER_TILES_H
#define REDLAB_CLUSTER_TILES_H

// Rows a group holds for its tile's owner: with at least two groups per tile, at most
// half the tile's rows.
#define HELD_ROWS (ROWS / 2)

inline void cluster_tiles(const __global in_t* in, __global acc_t* out, ulong n, ulong tiles,
                          LOCAL_PTR acc_t* fold_lanes RESULT_PARAM) {
    __local acc_t held[HELD_ROWS * LANES];
    __local acc_t tile_result;
    uint lid = get_local_id(0);
    uint rank = cluster_rank();
    uint span = 1;
    while (span < tiles)
        span <<= 1;
    uint per_tile = CLUSTER_FINISH / span;
    uint rows = ROWS / per_tile;
    ulong tile = rank / per_tile;
    uint part = rank % per_tile;
    int owner = part == 0 && tile < tiles;
    ulong base = tile * (ulong)TILE + lid;

    acc_t l[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
    if (per_tile == 1) {
        // A whole tile per group: every row's element in flight before any is added.
        if (owner) {
            acc_t v[ROWS * 4];
#pragma unroll
            for (uint j = 0; j < ROWS * 4; j++) {
                ulong i = base + (ulong)(j >> 2) * LANES + (j & 3) * 256;
                v[j] = i < n ? lift(in, i) : IDENTITY;
            }
#pragma unroll
            for (uint j = 0; j < ROWS * 4; j++)
                l[j & 3] = combine(l[j & 3], v[j]);
        }
    } else {
        // This group's rows (part · rows …) into shared memory, IDENTITY past the end.
        if (tile < tiles) {
            acc_t v[HELD_ROWS * 4];
#pragma unroll
            for (uint j = 0; j < HELD_ROWS * 4; j++) {
                ulong i = base + (ulong)(part * rows + (j >> 2)) * LANES + (j & 3) * 256;
                v[j] = (j >> 2) < rows && i < n ? lift(in, i) : IDENTITY;
            }
#pragma unroll
            for (uint j = 0; j < HELD_ROWS * 4; j++)
                if ((j >> 2) < rows)
                    held[(j >> 2) * LANES + lid + (j & 3) * 256] = v[j];
        }
        cluster_sync_all();
        if (owner) {
            // Row r of the tile is row r mod rows of group rank + r / rows.
            acc_t v[ROWS * 4];
#pragma unroll
            for (uint r = 0; r < ROWS; r++) {
                LOCAL_PTR acc_t* peer = cluster_map(held, rank + r / rows);
#pragma unroll
                for (uint q = 0; q < 4; q++)
                    v[r * 4 + q] = peer[(r % rows) * LANES + lid + q * 256];
            }
#pragma unroll
            for (uint j = 0; j < ROWS * 4; j++)
                l[j & 3] = combine(l[j & 3], v[j]);
        }
    }
    // The owners fold their tiles (a group-uniform branch: its barriers are safe).
    acc_t folded = IDENTITY;
    if (owner)
        folded = group_fold_tile(fold_lanes, l);
    if (lid == 0)
        tile_result = folded;
    cluster_sync_all();
    if (rank == 0 && lid == 0) {
        if (tiles == 1) {
            STORE_ROOT(0, tile_result);
        } else {
            acc_t r[8];
#pragma unroll
            for (uint j = 0; j < 8; j++)
                r[j] = j < tiles ? *cluster_map(&tile_result, j * per_tile) : IDENTITY;
            r[0] = combine(r[0], r[1]);
            r[2] = combine(r[2], r[3]);
            r[4] = combine(r[4], r[5]);
            r[6] = combine(r[6], r[7]);
            r[0] = combine(r[0], r[2]);
            r[4] = combine(r[4], r[6]);
            STORE_ROOT(0, combine(combine(r[0], r[4]), IDENTITY));
        }
    }
    // Every group keeps its shared memory alive until rank 0 has read it.
    cluster_sync_all();
}

#endif
