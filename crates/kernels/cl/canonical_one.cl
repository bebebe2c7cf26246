// The production kernel: canonical order v1 (docs/canonical-order.md) in one launch at
// every size. Float sums and products equal the CPU backend's bit for bit.
//
// The tiles are those of canonical.cl (1024 lanes × 8 rows, work-item t owning lanes t,
// t+256, t+512, t+768; fold by halving). The aligned pairwise tree over tile results is
// cut at a level k chosen from n alone, the smallest with at most MAX_PARTIALS nodes:
// each node at that level is the root of an aligned subtree of 2^k tiles. Work-groups
// walk subtrees (group g takes g, g + groups, …); inside one, work-item 0 merges tile
// results with a binary counter (tile t closes one complete subtree per trailing one
// bit of t), which builds exactly the aligned tree, and a partial subtree at the end is
// closed from the top (what padding with IDENTITY gives, without the padding).
//
// Each group then writes its roots to out[1 + s], fences, and takes a ticket; the group
// that takes the last ticket builds the tree above level k in local memory, writes the
// result to out[0] and resets the ticket counter, so the next launch (or a replayed
// graph) starts clean. Layout of `out`: result, MAX_PARTIALS roots, then the counter.

#define LANES 1024
#define ROWS 8
#define TILE (LANES * ROWS)
#define TILE_WG 256
#ifndef MAX_PARTIALS
#define MAX_PARTIALS 1024
#endif
// Enough for any 64-bit tile count.
#define STACK_DEPTH 64

__kernel __attribute__((reqd_work_group_size(TILE_WG, 1, 1)))
void reduce(__global const in_t* in, __global acc_t* out, ulong n) {
    __local acc_t lanes[TILE_WG];
    __local acc_t level[MAX_PARTIALS];
    __local uint is_last;
    uint lid = get_local_id(0);
    ulong tiles = (n + TILE - 1) / TILE;
    uint k = 0;
    while (((tiles + ((1UL << k) - 1)) >> k) > MAX_PARTIALS)
        k++;
    ulong span = 1UL << k;
    ulong subtrees = (tiles + span - 1) >> k;
    ulong groups = get_num_groups(0);
    __global uint* counter = (__global uint*)(out + 1 + MAX_PARTIALS);

    for (ulong s = get_group_id(0); s < subtrees; s += groups) {
        ulong first = s << k;
        ulong count = min(span, tiles - first);
        acc_t stack[STACK_DEPTH]; // used by work-item 0 only
        uint depth = 0;
        for (ulong t = 0; t < count; t++) {
            ulong base = (first + t) * (ulong)TILE + lid;
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
            if (lid == 0) {
                acc_t x = lanes[0];
                for (ulong c = t; c & 1; c >>= 1)
                    x = combine(stack[--depth], x);
                stack[depth++] = x;
            }
            // lanes[] is rewritten by the next tile.
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) {
            acc_t x = stack[--depth];
            while (depth > 0)
                x = combine(stack[--depth], x);
            out[1 + s] = x;
        }
    }

    if (groups > 1) {
        // Work-item 0 wrote this group's roots; it publishes them before its ticket.
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        if (lid == 0)
            is_last = atomic_inc(counter) == (uint)(groups - 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!is_last)
            return;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
    } else {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }

    uint width = 1;
    while (width < subtrees)
        width <<= 1;
    for (uint i = lid; i < width; i += TILE_WG)
        level[i] = i < subtrees ? out[1 + i] : IDENTITY;
    for (uint w = 1; w < width; w <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = lid * 2 * w; i < width; i += TILE_WG * 2 * w)
            level[i] = combine(level[i], level[i + w]);
    }
    if (lid == 0) {
        out[0] = level[0];
        *counter = 0;
    }
}
