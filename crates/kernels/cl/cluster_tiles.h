// Canonical float sums and products of at most CLUSTER_FINISH tiles, folded by one
// thread-block cluster (CUDA, sm_90 and later). Included by canonical_one.cl, which
// takes this path when the host launched exactly one cluster for such an input
// (crates/kernels/src/driver.rs).
//
// Group r folds tile r (groups past the last tile only wait at the cluster barrier),
// and rank 0 builds the finish's tree over the tile results from its neighbours'
// shared memory: no roots in global memory, no fence, no ticket. On an H100 a two-tile
// f64 sum went from 3.6 to 3.0 µs in a graph (results/h100-canonical-cluster).
// Sharing a tile among several groups measured slower, both by rows (the owner reading
// its neighbours' rows through distributed shared memory) and by lanes (each group a
// slice of the lanes, the owner folding the slices): 3.7–4.0 µs for what one group
// per tile did in 1.9–3.3.
//
// Bits: a lane takes IDENTITY for an element past the end, as the other paths do; one
// tile's result is written as it is, and several tiles' go through the same tree the
// last group's finish builds (eight roots per work-item folded pairwise, then only
// IDENTITY-trees added to work-item 0's node: kept as one combine with IDENTITY, which
// for + and × is idempotent, a −0 sum becoming +0 once as in the finish).

#ifndef REDLAB_CLUSTER_TILES_H
#define REDLAB_CLUSTER_TILES_H

// CLUSTER_TILE_WORDS (halves, default 1): rows as 8-byte words (vec_tile_lanes in
// canonical_one.cl). With one 2-byte load per lane and row, ptxas kept only 6–7 of a
// work-item's 32 loads in flight between conversions (40 registers; the f32 build of the
// same code issues all 32 first), and a one-cluster f16 tile took 2.46 µs in a graph on
// the H200 where f32 took 1.54 (results/h200-half-cluster-words). The host sets 0 for
// launches that do not take this path (crates/kernels/src/driver.rs, `launch_params`).
#ifndef CLUSTER_TILE_WORDS
#define CLUSTER_TILE_WORDS 1
#endif
#if CLUSTER_TILE_WORDS && USE_VEC && IN_BYTES == 2
#define USE_CLUSTER_TILE_WORDS 1
#define CLUSTER_TRANSPOSED_PARAM , LOCAL_PTR acc_t* transposed
#define CLUSTER_TRANSPOSED_ARG , transposed
#else
#define USE_CLUSTER_TILE_WORDS 0
#define CLUSTER_TRANSPOSED_PARAM
#define CLUSTER_TRANSPOSED_ARG
#endif

inline void cluster_tiles(const __global in_t* in, __global acc_t* out, ulong n, ulong tiles,
                          LOCAL_PTR acc_t* fold_lanes CLUSTER_TRANSPOSED_PARAM RESULT_PARAM) {
    __local acc_t tile_result;
    uint lid = get_local_id(0);
    uint rank = cluster_rank();
    acc_t folded = IDENTITY;
    if (rank < tiles) {
        acc_t l[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
#if USE_CLUSTER_TILE_WORDS
        vec_tile_lanes(in, n, rank * (ulong)TILE, l, transposed);
#elif IN_BYTES == 4 && ACC_BYTES == 4 && !defined(IN_IS_MAPPED)
        // f32: every row's element in flight before any is added. Offsets inside the
        // tile fit 32 bits (a 64-bit check per element had cost five instructions each
        // in the SASS), and rows past the end are not added: as in vec_tile_lanes,
        // adding IDENTITY would leave the same bits. On the H200 a one-cluster f32 sum
        // of 2^12 went from 1.41–1.42 to 1.37 µs in a graph, of 12345 from 2.02–2.03 to
        // 1.94; the same form made f64 4–6% slower (1.52–1.55 to 1.61 µs at 2^12), so
        // the other types keep the form below (results/h200-half-partial-rows, f32-f64/).
        ulong tile_start = rank * (ulong)TILE;
        uint left = (uint)min(n - tile_start, (ulong)TILE);
        acc_t v[ROWS * 4];
#pragma unroll
        for (uint j = 0; j < ROWS * 4; j++) {
            uint offset = (j >> 2) * LANES + (j & 3) * 256 + lid;
            v[j] = offset < left ? lift(in, tile_start + offset) : IDENTITY;
        }
#pragma unroll
        for (uint j = 0; j < ROWS * 4; j++)
            if ((j >> 2) * LANES < left)
                l[j & 3] = combine(l[j & 3], v[j]);
#else
        // Every row's element in flight before any is added.
        ulong base = rank * (ulong)TILE + lid;
        acc_t v[ROWS * 4];
#pragma unroll
        for (uint j = 0; j < ROWS * 4; j++) {
            ulong i = base + (ulong)(j >> 2) * LANES + (j & 3) * 256;
            v[j] = i < n ? lift(in, i) : IDENTITY;
        }
#pragma unroll
        for (uint j = 0; j < ROWS * 4; j++)
            l[j & 3] = combine(l[j & 3], v[j]);
#endif
        // A group-uniform branch: the fold's barriers are safe.
        folded = group_fold_tile(fold_lanes, l);
    }
    if (tiles == 1) {
        if (rank == 0 && lid == 0)
            STORE_ROOT(0, folded);
        return;
    }
    if (lid == 0)
        tile_result = folded;
    cluster_sync_all();
    if (rank == 0 && lid == 0) {
        acc_t r[8];
#pragma unroll
        for (uint j = 0; j < 8; j++)
            r[j] = j < tiles ? *cluster_map(&tile_result, j) : IDENTITY;
        r[0] = combine(r[0], r[1]);
        r[2] = combine(r[2], r[3]);
        r[4] = combine(r[4], r[5]);
        r[6] = combine(r[6], r[7]);
        r[0] = combine(r[0], r[2]);
        r[4] = combine(r[4], r[6]);
        STORE_ROOT(0, combine(combine(r[0], r[4]), IDENTITY));
    }
    // Every group keeps its shared memory alive until rank 0 has read it.
    cluster_sync_all();
}

#endif
