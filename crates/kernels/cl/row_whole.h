// row_whole (included by segments.cl after row_tiles): many outputs of a few tiles each,
// a work-group per output. row_tiles gives every tile of an output its own work-group
// and leaves the tile results to `tree`; where outputs are numerous and a few tiles long
// that split costs more than it gives. Rows of 8193 elements are one whole tile and a
// tile of one element, so half of row_tiles' work-groups all but idle, and `tree` is a
// second launch. Here work-group k walks the tiles of output k in turn and writes its
// result (segments_whole.rs says when the host asks for this).
//
// A tile's elements are loaded as in row_tiles: lanes lid + 256q (q < 4) of work-item lid,
// eight rows each, with no bounds checks in whole tiles (16-byte words for order-free
// operators, row_words.h) and with them in a partial last tile. Only consecutive elements:
// the host takes row_tiles for strided outputs.
// - Operators whose answer does not depend on the order (SEG_ORDER_FREE) fold all of the
//   output's lanes together and fold the group once at the end.
// - The others (float sums and products) fold each tile by halving, as row_tiles does,
//   and work-item 0 joins the tile results on a binary counter: done[i] holds a finished
//   subtree of 2^i tiles where bit i of `have` is set; a new tile joins equal subtrees as
//   a counter carries, and the close joins what is left from the latest, smallest
//   subtree leftwards. That is the aligned pairwise tree, padded with the identity, that
//   `tree` builds over the same tile results, so every bit is the same. Loops of constant
//   length keep the subtrees in registers; the counter holds up to 2^RW_LEVELS − 1 tiles
//   (the host asks for at most 4).
//
// Register use decides this kernel's speed: a first version of this walk inside row_tiles
// took 128 registers for a float sum where row_tiles takes 32, and float sums along rows
// of 1 to 512 tiles read 20–25% slower on an H100. A strided walk in the same kernel, its
// 32 products of a lane's offset and the stride unchanged from tile to tile, kept those
// live across the tile loop and took 128 registers too (a kernel gets the registers of
// its hungriest path). Order-free operators gather every lane of a work-item into l0.

#define RW_LEVELS 4

// The lanes of tile `t` of an output of `len` consecutive elements from `start`,
// combined into l0 … l3 (work-item lid's lanes lid, lid + 256, lid + 512, lid + 768).
#define RW_ROW_TILE(l0, l1, l2, l3, t)                                                  \
    do {                                                                                \
        ulong j0_ = (t) * TILE + lid;                                                   \
        if (((t) + 1) * TILE <= len) {                                                  \
            RW_WHOLE_TILE(l0, l1, l2, l3, t);                                           \
        } else {                                                                        \
            for (uint r_ = 0; r_ < ROWS; r_++) {                                        \
                ulong j_ = j0_ + (ulong)r_ * LANES;                                     \
                RW_CHECKED(l0, j_);                                                     \
                RW_CHECKED(RW_LANE(l1), j_ + 256);                                      \
                RW_CHECKED(RW_LANE(l2), j_ + 512);                                      \
                RW_CHECKED(RW_LANE(l3), j_ + 768);                                      \
            }                                                                           \
        }                                                                               \
    } while (0)

// Where a lane's elements go: order-free operators gather every lane of a work-item into
// l0 (any grouping gives their answer), which keeps fewer values live across the walk.
#ifdef SEG_ORDER_FREE
#define RW_LANE(l) l0
#else
#define RW_LANE(l) l
#endif

// Element j where it is in the output, else the identity. Mapped inputs load from the
// output's last element instead and drop the value after the load, the form row_tiles
// uses for them (results/h200-map-bug).
#ifdef IN_IS_MAPPED
#define RW_CHECKED(l, j)                                                                \
    do {                                                                                \
        acc_t v_ = seg_load(in, start + min((j), len - 1), (j));                        \
        (l) = combine((l), (j) < len ? v_ : IDENTITY);                                  \
    } while (0)
#else
#define RW_CHECKED(l, j) ((l) = combine((l), (j) < len ? seg_load(in, start + (j), (j)) : IDENTITY))
#endif

// A whole tile of consecutive elements, with no bounds checks: 16-byte words for
// order-free operators (row_words.h), else each lane's 8 rows.
#ifdef SEG_HAS_ROW_WORDS
#define RW_WHOLE_TILE(l0, l1, l2, l3, t) ((l0) = combine((l0), seg_row_words(in, start, (t), lid)))
#else
#define RW_WHOLE_TILE(l0, l1, l2, l3, t)                                                \
    for (uint r_ = 0; r_ < ROWS; r_++) {                                                \
        ulong j_ = j0_ + (ulong)r_ * LANES;                                             \
        (l0) = combine((l0), seg_load(in, start + j_, j_));                             \
        (l1) = combine((l1), seg_load(in, start + j_ + 256, j_ + 256));                 \
        (l2) = combine((l2), seg_load(in, start + j_ + 512, j_ + 512));                 \
        (l3) = combine((l3), seg_load(in, start + j_ + 768, j_ + 768));                 \
    }
#endif

// Around each tile of the walk: order-free operators gather all of the tiles' lanes and
// fold the group once, after the walk; the others start each tile from the identity,
// fold it, and count its result (rw_count_tile).
#ifdef SEG_ORDER_FREE
#define RW_TILE_START
#define RW_TILE_END(t)
#else
#define RW_TILE_START l0 = l1 = l2 = l3 = IDENTITY
#define RW_TILE_END(t)                                                                  \
    do {                                                                                \
        /* The halving fold ends on each work-item's own slot, so the next tile's */   \
        /* first write needs no barrier; this one keeps that true of any fold (the */   \
        /* simulator finds no race without it; measured with it, one per tile). */      \
        if ((t) > 0)                                                                    \
            barrier(CLK_LOCAL_MEM_FENCE);                                               \
        acc_t r_ = seg_fold_group(l0, l1, l2, l3, lanes, lid);                           \
        if (lid == 0)                                                                   \
            rw_count_tile(done, &have, r_);                                             \
    } while (0)
#endif

// Work-item 0's binary counter over the tile results (see the top of this file).
inline void rw_count_tile(acc_t* done, uint* have, acc_t r) {
    int carry = 1;
    for (uint i = 0; i < RW_LEVELS; i++) {
        int full = (*have >> i) & 1u;
        if (carry && full)
            r = combine(done[i], r);
        if (carry && !full)
            done[i] = r;
        *have ^= carry ? 1u << i : 0u;
        carry = carry && full;
    }
}

// The counter closed: what is left joined from the latest, smallest subtree leftwards.
inline acc_t rw_close_tiles(const acc_t* done, uint have) {
    acc_t x = IDENTITY;
    int any = 0;
    for (uint i = 0; i < RW_LEVELS; i++) {
        if ((have >> i) & 1u) {
            x = any ? combine(done[i], x) : done[i];
            any = 1;
        }
    }
    return x;
}

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void row_whole(__global const in_t* in, __global acc_t* out, ulong outputs) {
    __local acc_t lanes[SEG_WG];
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    ulong k = get_group_id(0);
    if (k >= outputs)
        return;
    ulong len = seg_len(h, k);
    // An empty output's value over nothing comes from the host.
    if (len == 0)
        return;
    ulong start = seg_start(h, k);
    ulong tiles = (len + TILE - 1) / TILE;
    acc_t l0 = IDENTITY, l1 = IDENTITY, l2 = IDENTITY, l3 = IDENTITY;
#ifndef SEG_ORDER_FREE
    acc_t done[RW_LEVELS];
    uint have = 0;
#endif
    // The tile loop stays rolled, a hint only: NVRTC 13 gave the same registers without it.
#pragma unroll 1
    for (ulong t = 0; t < tiles; t++) {
        RW_TILE_START;
        RW_ROW_TILE(l0, l1, l2, l3, t);
        RW_TILE_END(t);
    }
#ifdef SEG_ORDER_FREE
    acc_t x = seg_fold_group(l0, l1, l2, l3, lanes, lid);
#else
    acc_t x = rw_close_tiles(done, have);
#endif
    if (lid == 0)
        seg_put(out, h, k, x);
}
