// Canonical float sums and products of at most CLUSTER_FINISH tiles, folded by one
// thread-block cluster (CUDA, sm_90 and later). Included by canonical_one.cl, which
// takes this path when the host launched exactly one cluster for such an input
// (crates/kernels/src/driver.rs).
//
// Why: a small input has fewer tiles than the GPU has SMs, and one work-group reading a
// whole tile (32 KiB of f32, 64 KiB of f64) from one SM is what the time is made of
// (measured on an H100: a 2-tile f64 sum took 3.2–3.6 µs in a graph, a half tile 1.7).
// Here the cluster's groups share the tiles: with the tile count rounded up to a power
// of two, each tile gets G = CLUSTER_FINISH / span groups, and group g of a tile owns
// the lanes [g·W, (g+1)·W), W = 1024 / G, of all 8 rows: coalesced loads, and each lane
// adds its rows 0 … 7 in order, as everywhere. The tile's fold halves 1024 lanes from
// the top, so its first log2(G) steps pair whole slices (slice g with g + G/2, …): the
// tile's first group (its owner) reads the other slices' W lanes from their shared
// memory, folds them in that order, and halves its W lanes on. (Moving whole rows to
// the owner instead, 64 KiB per f64 tile through distributed shared memory, measured
// slower than one group per tile.) Rank 0 then builds the finish's tree over the tile
// results, again from shared memory: no roots in global memory, no fence, no ticket.
//
// Bits: a lane takes IDENTITY for an element past the end, as the other paths do; one
// tile's result is written as it is, and several tiles' go through the same tree the
// last group's finish builds (eight roots per work-item folded pairwise, then only
// IDENTITY-trees added to work-item 0's node: kept as one combine with IDENTITY, which
// for + and × is idempotent, a −0 sum becoming +0 once as in the finish).

#ifndef REDLAB_CLUSTER_TILES_H
#define REDLAB_CLUSTER_TILES_H

// Lanes a group holds for its tile's owner: half the tile at most (two groups a tile).
#define HELD_LANES (LANES / 2)

inline void cluster_tiles(const __global in_t* in, __global acc_t* out, ulong n, ulong tiles,
                          LOCAL_PTR acc_t* fold_lanes RESULT_PARAM) {
    __local acc_t held[HELD_LANES];
    __local acc_t tile_result;
    uint lid = get_local_id(0);
    uint rank = cluster_rank();
    uint span = 1;
    while (span < tiles)
        span <<= 1;
    uint per_tile = CLUSTER_FINISH / span;
    uint width = LANES / per_tile;
    ulong tile = rank / per_tile;
    uint part = rank % per_tile;
    int owner = part == 0 && tile < tiles;
    // This work-item's first lane in the tile's rows.
    ulong base = tile * (ulong)TILE + part * width + lid;

    acc_t folded = IDENTITY;
    if (per_tile == 1) {
        // A whole tile per group: every row's element in flight before any is added.
        if (owner) {
            acc_t v[ROWS * 4];
            acc_t l[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
#pragma unroll
            for (uint j = 0; j < ROWS * 4; j++) {
                ulong i = base + (ulong)(j >> 2) * LANES + (j & 3) * 256;
                v[j] = i < n ? lift(in, i) : IDENTITY;
            }
#pragma unroll
            for (uint j = 0; j < ROWS * 4; j++)
                l[j & 3] = combine(l[j & 3], v[j]);
            folded = group_fold_tile(fold_lanes, l);
        }
    } else {
        // The slice's lanes: lid and lid + 256 of it (W = 512), lid (256), lid < 128 (128).
        acc_t l[2] = {IDENTITY, IDENTITY};
        if (tile < tiles && lid < width) {
            acc_t v[ROWS * 2];
#pragma unroll
            for (uint j = 0; j < ROWS * 2; j++) {
                ulong i = base + (ulong)(j >> 1) * LANES + (j & 1) * 256;
                v[j] = ((j & 1) == 0 || width > 256) && i < n ? lift(in, i) : IDENTITY;
            }
#pragma unroll
            for (uint j = 0; j < ROWS * 2; j++)
                l[j & 1] = combine(l[j & 1], v[j]);
            held[lid] = l[0];
            if (width > 256)
                held[lid + 256] = l[1];
        }
        cluster_sync_all();
        if (owner) {
            // The fold's steps across slices: slice s takes slice s + h, h = G/2 … 1.
            acc_t x[2];
#pragma unroll
            for (uint q = 0; q < 2; q++) {
                acc_t s[8];
                s[0] = l[q];
#pragma unroll
                for (uint g = 1; g < 8; g++) {
                    s[g] = IDENTITY;
                    if (g < per_tile && lid + q * 256 < width)
                        s[g] = cluster_map(held, rank + g)[lid + q * 256];
                }
                // Written out so that s stays in registers (see warp_tiles.h).
                if (per_tile == 8) {
                    s[0] = combine(s[0], s[4]);
                    s[1] = combine(s[1], s[5]);
                    s[2] = combine(s[2], s[6]);
                    s[3] = combine(s[3], s[7]);
                }
                if (per_tile >= 4) {
                    s[0] = combine(s[0], s[2]);
                    s[1] = combine(s[1], s[3]);
                }
                x[q] = combine(s[0], s[1]);
            }
            // W = 512: step 256 inside the work-item; then the group halves on.
            folded = group_fold_lanes(fold_lanes, width > 256 ? combine(x[0], x[1]) : x[0],
                                      width > 256 ? 256 : width);
        }
    }
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
