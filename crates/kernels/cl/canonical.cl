// The production kernel: canonical order v1 (docs/canonical-order.md), so float sums and
// products equal the CPU backend's bit for bit; every other operator is exact anyway.
//
// tiles: one work-group of 256 per tile of 1024 lanes × 8 rows. Work-item t owns lanes
// t, t+256, t+512 and t+768, so each row is read by consecutive work-items at
// consecutive addresses (coalesced). Each lane combines its 8 elements in row order;
// the fold w = 512 and w = 256 happens in registers (lane t with t+512, t+256 with
// t+768, then t with t+256), and w = 128 … 1 in local memory. Missing elements of a
// partial tile are IDENTITY, which changes no bit.
//
// tree: the aligned pairwise tree over tile results, 256 entries per work-group per
// pass: adjacent pairs first, as the order prescribes; padding with IDENTITY is exact.

#define LANES 1024
#define ROWS 8
#define TILE (LANES * ROWS)
#define TILE_WG 256

__kernel __attribute__((reqd_work_group_size(TILE_WG, 1, 1)))
void tiles(__global const in_t* in, __global acc_t* out, ulong n) {
    __local acc_t lanes[TILE_WG];
    uint lid = get_local_id(0);
    ulong base = get_group_id(0) * (ulong)TILE + lid;
    acc_t l0 = IDENTITY, l1 = IDENTITY, l2 = IDENTITY, l3 = IDENTITY;
    for (uint r = 0; r < ROWS; r++) {
        ulong row = base + (ulong)r * LANES;
        l0 = combine(l0, row < n ? lift(in, row) : IDENTITY);
        l1 = combine(l1, row + 256 < n ? lift(in, row + 256) : IDENTITY);
        l2 = combine(l2, row + 512 < n ? lift(in, row + 512) : IDENTITY);
        l3 = combine(l3, row + 768 < n ? lift(in, row + 768) : IDENTITY);
    }
    l0 = combine(l0, l2);
    l1 = combine(l1, l3);
    lanes[lid] = combine(l0, l1);
    for (uint w = TILE_WG / 2; w > 0; w >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w)
            lanes[lid] = combine(lanes[lid], lanes[lid + w]);
    }
    if (lid == 0)
        out[get_group_id(0)] = lanes[0];
}

__kernel __attribute__((reqd_work_group_size(TILE_WG, 1, 1)))
void tree(__global const acc_t* in, __global acc_t* out, ulong n) {
    __local acc_t level[TILE_WG];
    uint lid = get_local_id(0);
    ulong i = get_group_id(0) * (ulong)TILE_WG + lid;
    level[lid] = i < n ? in[i] : IDENTITY;
    for (uint step = 1; step < TILE_WG; step <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid % (2 * step) == 0)
            level[lid] = combine(level[lid], level[lid + step]);
    }
    if (lid == 0)
        out[get_group_id(0)] = level[0];
}
