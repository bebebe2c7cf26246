// column_words and column_finish (included by segments.cl): columns of 4-byte elements
// read as 16-byte words (2-byte ones as 8-byte words: SEG_WORDS in segments.cl), so each
// load of a warp reads 512 (256) neighbouring bytes of one row instead of column_tiles'
// 128 (64). On the H200, column_tiles read 8192×8192 f32 columns at
// 0.78–0.86 of torch's speed with DRAM at 67% of its peak and loads to spare: one
// 128-byte line per warp per row, 32 KB apart, was the likelier limit. With words the f32
// sum kernel ran at 86% of DRAM peak under ncu (results/h200-column-words).
//
// The canonical fold of one output's tile is column_tiles' (segments.cl): lane classes
// y < 32 hold lanes y + 32m, each class folded by halving over m; then the halving steps
// w = 16 … 1 across classes. Steps 16, 8 and 4 only join classes of equal y mod 4, so
//   column_words   work-group (block, tile, g) holds the 8 classes y = g + 4c (c < 8,
//                  one warp each) of 128 neighbouring outputs (32 words per warp, 4
//                  outputs per work-item), folds them down to class g in local memory,
//                  and stores that partial;
//   column_finish  joins the 4 partials of each tile as steps 2 and 1 do,
//                  (p0 ∘ p2) ∘ (p1 ∘ p3), and stores the tile like column_tiles.
// Splitting a tile's classes over 4 work-groups keeps as many work-groups as
// column_tiles has (one group per block of 128 outputs and tile would leave half of an
// H200's SMs idle at 8192 columns). The tree then joins the tiles of longer outputs.
// Fewer than 128 outputs take 16, 8, 4 or 2 words per row (cw_slots): a warp then holds
// 2 to 16 classes of the same words, and a group 16 to 128 classes (2 groups per tile,
// one, or one group for 2 or 4 tiles), which fold down to their partials by the same
// steps.
//
// The word path needs 2- or 4-byte raw elements (SEG_WORDS: the input's own, or a map's
// one input, mapped as each part is lifted), 8-byte raw elements of an order-free
// operator (SEG_WIDE_WORDS: 4 outputs as two 16-byte loads), or a float sum of mapped
// f32 values that maps whole words of its inputs (SEG_MAPPED_WORDS: dot products), and
// words that hold 4 neighbouring outputs at every row: inner stride 1, a multiple of 4
// outputs per inner run, a row stride of a multiple of 4 elements and an aligned first
// element.
// The kernel checks all of it; anything else (and every other type) folds each of its 4
// outputs through seg_lane_class, in the same order. The host only picks this kernel
// where the words apply and the H200 measured it faster (`SegmentJob::for_problem`).

#define CW_WORD 4   // outputs per work-item: one word
#define CW_PARTIALS 4 // partials per tile, joined by column_finish

// Words side by side per row of a work-group's block of outputs: 32 (128 outputs) from 128
// outputs on; fewer outputs take 16, 8, 4 or 2, so a warp holds 2 to 16 lane classes of
// the same words instead of leaving idle the work-items past the last output (2^22×32
// columns on 32 words: 8 of 32 busy; 2^24×8 on 8 words: 2 of 8, 2.4 TB/s on the H200,
// results/h200-narrow-columns). SegmentJob::column_word_groups on the host uses the
// same rule.
inline uint cw_slots(ulong outputs) {
    return outputs >= 128 ? 32 : outputs > 32 ? 16 : outputs > 16 ? 8 : outputs > 8 ? 4 : 2;
}

// COL_WORDS: the word path is built. COL_WORDS_FREE: in arrival order (cw_free_fold,
// below), for every operator whose answer does not depend on the order; the canonical
// class fold otherwise (float sums and products).
#if (defined(SEG_WORDS) || defined(SEG_WIDE_WORDS)) && defined(SEG_ORDER_FREE)
#define COL_WORDS 1
#define COL_WORDS_FREE 1
#elif (defined(SEG_WORDS) || defined(SEG_MAPPED_WORDS)) && !defined(HAVE_ARG_KEY)
#define COL_WORDS 1
#endif

#if defined(COL_WORDS) && !defined(COL_WORDS_FREE)

// Lanes a0 and a1 (element indices within the output, all 8 rows) of 4 outputs, the word
// at `base` (element index of the first output's element 0): v[e] = lane a0 ∘ lane a1 of
// output e, each lane folded in row order from IDENTITY as seg_lane does. With `rows` > 0
// (a constant where it is called, so the loops unroll without tests), every lane of the
// tile holds exactly that many rows and all their loads go out before the first combine;
// with 0, rows at or past `len` hold IDENTITY, which changes no bit (as in a partial tile
// of row_tiles), and each load is tested.
inline void cw_lane_pair(__global const in_t* in, ulong base, ulong stride, ulong len,
                         ulong a0, ulong a1, uint rows, acc_t* v) {
#ifdef SEG_WORDS
    seg_word_t x[2 * ROWS];
#pragma unroll
    for (uint r = 0; r < ROWS; r++) {
        ulong j0 = a0 + (ulong)r * LANES, j1 = a1 + (ulong)r * LANES;
        if (rows > 0 ? r < rows : j0 < len)
            x[r] = *SEG_WORD_AT(in, base + j0 * stride);
        if (rows > 0 ? r < rows : j1 < len)
            x[ROWS + r] = *SEG_WORD_AT(in, base + j1 * stride);
    }
#define CW_LIFT(r, e, j) seg_lift_bits(SEG_PART(x[r], e), j)
#else
    // Mapped words (segments.cl): the 4 mapped values of each word; a float sum's lift
    // is the value itself.
    rl_map_t x[2 * ROWS][CW_WORD];
#pragma unroll
    for (uint r = 0; r < ROWS; r++) {
        ulong j0 = a0 + (ulong)r * LANES, j1 = a1 + (ulong)r * LANES;
        if (rows > 0 ? r < rows : j0 < len)
            SEG_MAP_WORD(in, base + j0 * stride, x[r]);
        if (rows > 0 ? r < rows : j1 < len)
            SEG_MAP_WORD(in, base + j1 * stride, x[ROWS + r]);
    }
#define CW_LIFT(r, e, j) ((acc_t)x[r][e])
#endif
#pragma unroll
    for (uint e = 0; e < CW_WORD; e++) {
        acc_t l0 = IDENTITY, l1 = IDENTITY;
#pragma unroll
        for (uint r = 0; r < ROWS; r++) {
            ulong j0 = a0 + (ulong)r * LANES, j1 = a1 + (ulong)r * LANES;
            if (rows > 0 ? r < rows : j0 < len)
                l0 = combine(l0, CW_LIFT(r, e, j0));
            if (rows > 0 ? r < rows : j1 < len)
                l1 = combine(l1, CW_LIFT(ROWS + r, e, j1));
        }
        v[e] = combine(l0, l1);
    }
#undef CW_LIFT
}

// combine(a, b) of 4 outputs, into a.
inline void cw_join(acc_t* a, const acc_t* b) {
#pragma unroll
    for (uint e = 0; e < CW_WORD; e++)
        a[e] = combine(a[e], b[e]);
}

// Pair k (< 16) of class y of tile t: lanes y + 32m and y + 32(m + 16), where m is 2k
// reversed over 5 bits (the order in which seg_lane_class takes them).
inline void cw_pair(__global const in_t* in, ulong base, ulong stride, ulong len, ulong t,
                    uint y, uint k, uint rows, acc_t* v) {
    uint i = 2 * k;
    uint m = ((i >> 4) & 1) | ((i >> 2) & 2) | (i & 4) | ((i << 2) & 8) | ((i << 4) & 16);
    ulong a0 = t * TILE + y + COL_CLASSES * m;
    cw_lane_pair(in, base, stride, len, a0, a0 + COL_CLASSES * 16, rows, v);
}

// Pairs k0 … k0 + 3 joined as seg_lane_class's binary counter joins them: (0 ∘ 1) ∘ (2 ∘ 3).
inline void cw_quad(__global const in_t* in, ulong base, ulong stride, ulong len, ulong t,
                    uint y, uint k0, uint rows, acc_t* v) {
    acc_t b[CW_WORD], c[CW_WORD], d[CW_WORD];
    cw_pair(in, base, stride, len, t, y, k0, rows, v);
    cw_pair(in, base, stride, len, t, y, k0 + 1, rows, b);
    cw_join(v, b);
    cw_pair(in, base, stride, len, t, y, k0 + 2, rows, c);
    cw_pair(in, base, stride, len, t, y, k0 + 3, rows, d);
    cw_join(c, d);
    cw_join(v, c);
}

// Class y of tile t of the 4 outputs whose word starts at element `base`: its 32 lanes
// y + 32m folded by halving over m, as seg_lane_class does: its binary counter over the
// 16 pairs is the balanced tree over them, (q0 ∘ q1) ∘ (q2 ∘ q3) over the quads of
// pairs. Nothing is indexed at run time (with the counter, f32 max took 196 registers
// and 12.5% occupancy on the H200, with the tree 128 and 24%: results/h200-column-words).
// Tiles of 1, 2 or 4 rows per lane have the quads written out, so all of a class's few
// loads go out at once; whole tiles and partial ones (`rows` 8 and 0) run them as a
// loop. Written out for every row count, column_words was 90% of the segment module and
// seconds of NVRTC and ptxas on a first call; as a loop there, columns of whole tiles
// read as fast on the H200, while columns of exactly 1024 rows read 20% slower
// (results/h200-column-loop). `rows` is a constant where this is called.
inline void cw_class_fold(__global const in_t* in, ulong base, ulong stride, ulong len,
                          ulong t, uint y, uint rows, acc_t* v) {
    acc_t c[CW_WORD], q[CW_WORD];
    if (rows == 1 || rows == 2 || rows == 4) {
        acc_t d[CW_WORD];
        cw_quad(in, base, stride, len, t, y, 0, rows, v);
        cw_quad(in, base, stride, len, t, y, 4, rows, q);
        cw_join(v, q);
        cw_quad(in, base, stride, len, t, y, 8, rows, c);
        cw_quad(in, base, stride, len, t, y, 12, rows, d);
        cw_join(c, d);
        cw_join(v, c);
        return;
    }
#pragma unroll 1
    for (uint s = 0; s < 4; s++) {
        cw_quad(in, base, stride, len, t, y, 4 * s, rows, q);
        if (s == 0) {
            for (uint e = 0; e < CW_WORD; e++)
                v[e] = q[e];
        } else if (s == 1) {
            cw_join(v, q);
        } else if (s == 2) {
            for (uint e = 0; e < CW_WORD; e++)
                c[e] = q[e];
        } else {
            cw_join(c, q);
            cw_join(v, c);
        }
    }
}
#endif

#ifdef COL_WORDS_FREE
// Operators whose answer does not depend on the order (min, max, integer sums, bitwise
// operators; word_rows.h's order-free case) fold a class's elements as they arrive:
// class y of tile t is the elements t × TILE + y + 32i (i < 256: lane y + 32m of row r
// is i = m + 32r), read CW_FREE_BATCH words at a time, with no pairing to keep and no
// test per row. The canonical class fold above held f32 max at 128 registers, where
// column_tiles was as fast (3.3 TB/s on 8192×8192 columns in a CUDA graph on the H200),
// and tested every row of columns shorter than a tile. This fold: 64 registers, 4.1 TB/s
// there; batches of 8 and 16 words read up to 18% slower on whole tiles. The rest of a
// class below a batch goes in runs of 16, 8 and 4 (columns of 1000 rows: 3.65 TB/s, where
// word by word read 2.9). argmin/argmax scan each output's elements in increasing index
// for the first strictly better order key (word_rows.h's scan), one compare and two
// selects per element; the classes then join by the full combine: 2.2–3.7 TB/s, where
// column_tiles read 0.83–3.1 (results/h200-column-args).
// Words in flight per work-item: 32 of 16 bytes, or 16 wide words of 32 bytes (the same
// bytes; 32 wide words would need 256 registers for the batch alone).
#ifdef SEG_WIDE_WORDS
#define CW_FREE_BATCH 16
#else
#define CW_FREE_BATCH 32
#endif

inline void cw_free_fold(__global const in_t* in, ulong base, ulong stride, ulong len,
                         ulong t, uint y, acc_t* v) {
    ulong first = t * TILE + y;
    if (first >= len)
        return;
    ulong left = (len - first + COL_CLASSES - 1) / COL_CLASSES;
    uint count = left < TILE / COL_CLASSES ? (uint)left : TILE / COL_CLASSES;
    // Consecutive elements of the class lie COL_CLASSES × stride elements apart, a whole
    // number of words (the caller checked stride % 4 == 0).
    const __global seg_word_t* at = SEG_WORD_AT(in, base + first * stride);
    ulong step = COL_CLASSES * stride / CW_WORD;
    // The fold's own registers: `v` is indexed at run time by the caller's other path,
    // which may leave it in local memory. CW_FREE_STEP(w, i) folds word w, the class's
    // i-th: its elements are element first + 32i of each of the 4 outputs.
#ifdef HAVE_ARG_KEY
    argkey_t best[CW_WORD];
    // The class's place of the best element so far (i below, < 256): one 32-bit select
    // per element where the element index took a 64-bit one; the index is made once, at
    // the end.
    uint found[CW_WORD];
    // The first word seeds the scan (no identity key needed); the batch below reads it
    // again, which leaves it in place (not strictly better than itself).
    seg_word_t w0 = at[0];
#pragma unroll
    for (uint e = 0; e < CW_WORD; e++) {
        best[e] = arg_key(seg_value_bits(SEG_PART(w0, e)));
        found[e] = 0;
    }
#define CW_FREE_STEP(w, i)                                                  \
    for (uint e = 0; e < CW_WORD; e++) {                                    \
        argkey_t k_ = arg_key(seg_value_bits(SEG_PART((w), e)));            \
        int better_ = ARG_BETTER(k_, best[e]);                              \
        best[e] = better_ ? k_ : best[e];                                   \
        found[e] = better_ ? (i) : found[e];                                \
    }
#else
    acc_t r[CW_WORD];
#pragma unroll
    for (uint e = 0; e < CW_WORD; e++)
        r[e] = v[e];
#define CW_FREE_STEP(w, i)                                                  \
    for (uint e = 0; e < CW_WORD; e++)                                      \
        r[e] = combine(r[e], seg_lift_bits(SEG_PART((w), e), first + (ulong)(i) * COL_CLASSES));
#endif
    uint i = 0;
#pragma unroll 1
    for (; i + CW_FREE_BATCH <= count; i += CW_FREE_BATCH) {
        seg_word_t w[CW_FREE_BATCH];
#pragma unroll
        for (uint b = 0; b < CW_FREE_BATCH; b++)
            w[b] = at[(ulong)(i + b) * step];
#pragma unroll
        for (uint b = 0; b < CW_FREE_BATCH; b++) {
#pragma unroll
            CW_FREE_STEP(w[b], i + b)
        }
    }
    // The rest, fewer than a batch (columns shorter than a tile, a last partial tile):
    // runs of 16, 8 and 4 words in flight, then single words, so at most 3 loads wait
    // for the one before. One batch of guarded loads instead took f32 max to 220
    // registers and cost 4–19% on whole batches on the H200 (results/h200-column-free).
#define CW_FREE_RUN(n)                                                                   \
    if (i + (n) <= count) {                                                              \
        seg_word_t w[n];                                                                 \
        for (uint b = 0; b < (n); b++)                                                   \
            w[b] = at[(ulong)(i + b) * step];                                            \
        for (uint b = 0; b < (n); b++) {                                                 \
            CW_FREE_STEP(w[b], i + b)                                                    \
        }                                                                                \
        i += (n);                                                                        \
    }
    CW_FREE_RUN(16)
    CW_FREE_RUN(8)
    CW_FREE_RUN(4)
#undef CW_FREE_RUN
#pragma unroll 1
    for (; i < count; i++) {
        seg_word_t w = at[(ulong)i * step];
#pragma unroll
        CW_FREE_STEP(w, i)
    }
#undef CW_FREE_STEP
#pragma unroll
    for (uint e = 0; e < CW_WORD; e++)
#ifdef HAVE_ARG_KEY
        v[e] = combine(v[e], arg_found(best[e], first + (ulong)found[e] * COL_CLASSES));
#else
        v[e] = r[e];
#endif
}
#endif

// Byte offset H_PARTIALS of the header: column_words' partials, CW_PARTIALS per tile.
inline __global acc_t* cw_partials(__global ulong* h) {
    return (__global acc_t*)((__global uchar*)h + h[H_PARTIALS]);
}

// Work-group (block, tiles, g) of `slots` words per row holds C = SEG_WG / slots lane
// classes. With C ≤ 32 they are classes y = g + S·c (c < C) of one tile, S = 32 / C
// groups per tile (4, 2 or 1); with C = 64 or 128 they are all 32 classes of C / 32
// neighbouring tiles, c = 32 × (tile's place) + y. The steps across classes join c and
// c + d for d = 16/S … 4/S (within one tile: c mod 32 < d), which are the halving steps
// 16, 8 and 4 (classes y and y + S·d), leaving 4/S classes: partial y of the tile.
__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void column_words(__global const in_t* in, __global acc_t* out, ulong outputs) {
    __local acc_t classes[SEG_WG * CW_WORD];
    __global ulong* h = seg_header(out, outputs);
    uint slots = cw_slots(outputs);
    uint per_group = SEG_WG / slots;
    // split and tiles_in are 1, 2 or 4: their shifts are half of them.
    uint split = per_group >= 32 ? 1 : 32 / per_group;
    uint tiles_in = per_group > 32 ? per_group / 32 : 1;
    uint lid = get_local_id(0);
    uint x = lid % slots, c = lid / slots, cy = c % 32;
    // Group indices and tile counts fit 32 bits (a grid has fewer than 2^31 groups, and
    // at least one per tile group), so the layout takes one 32-bit division, not the
    // several 64-bit ones by run-time values that each work-item paid once.
    uint tiles_per = (uint)h[H_TILES_PER];
    uint tile_groups = (tiles_per + tiles_in - 1) >> (tiles_in >> 1);
    uint group = (uint)get_group_id(0);
    uint g = group & (split - 1);
    uint rest = group >> (split >> 1);
    uint block = rest / tile_groups;
    ulong t = (ulong)((rest - block * tile_groups) * tiles_in + c / 32);
    ulong k = (ulong)block * slots * CW_WORD + (ulong)x * CW_WORD;
    uint y = g + split * cy;
    ulong len = h[H_LEN], stride = h[H_STRIDE];
    acc_t v[CW_WORD];
    for (uint e = 0; e < CW_WORD; e++)
        v[e] = IDENTITY;
    // Work-items of a last group's tiles past the end hold IDENTITY and store nothing.
    if (k < outputs && t < tiles_per) {
        ulong base = seg_start(h, k);
#ifdef COL_WORDS
        if (!h[H_TABLE] && h[H_INNER_STRIDE] == 1 && h[H_INNER] % CW_WORD == 0 &&
            stride % CW_WORD == 0 && SEG_ANY_WORDS_ALIGNED(in, base)) {
#ifdef COL_WORDS_FREE
            cw_free_fold(in, base, stride, len, t, y, v);
#else
            // Tiles whose lanes all hold the same number of rows load without tests:
            // whole tiles, and tiles of exactly 1024, 2048 or 4096 rows (columns that
            // short: with tests, 1024×65536 f32 sums read at 0.45 of torch on the H200).
            ulong rest = len - t * TILE;
            if (rest >= TILE)
                cw_class_fold(in, base, stride, len, t, y, ROWS, v);
            else if (rest == LANES)
                cw_class_fold(in, base, stride, len, t, y, 1, v);
            else if (rest == 2 * LANES)
                cw_class_fold(in, base, stride, len, t, y, 2, v);
            else if (rest == 4 * LANES)
                cw_class_fold(in, base, stride, len, t, y, 4, v);
            else
                cw_class_fold(in, base, stride, len, t, y, 0, v);
#endif
        } else
#endif
        {
            for (uint e = 0; e < CW_WORD; e++)
                if (k + e < outputs)
                    v[e] = seg_lane_class(in, seg_start(h, k + e), stride, len, t, y);
        }
    }
    LOCAL_PTR acc_t* mine = classes + lid * CW_WORD;
    for (uint e = 0; e < CW_WORD; e++)
        mine[e] = v[e];
    // Steps w = 16, 8, 4 across each tile's classes: c and c + d, d = w / split.
    for (uint d = 16 / split; d * split >= 4; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (cy < d)
            for (uint e = 0; e < CW_WORD; e++)
                mine[e] = combine(mine[e], mine[d * slots * CW_WORD + e]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (cy * split < CW_PARTIALS && t < tiles_per) {
        __global acc_t* partials = cw_partials(h);
        for (uint e = 0; e < CW_WORD; e++)
            if (k + e < outputs)
                partials[((k + e) * tiles_per + t) * CW_PARTIALS + y] = mine[e];
    }
}

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void column_finish(__global const in_t* in, __global acc_t* out, ulong outputs) {
    (void)in;
    __global ulong* h = seg_header(out, outputs);
    ulong tiles_per = h[H_TILES_PER];
    ulong i = get_global_id(0);
    if (i >= outputs * tiles_per)
        return;
    __global const acc_t* p = cw_partials(h) + i * CW_PARTIALS;
    acc_t r = combine(combine(p[0], p[2]), combine(p[1], p[3]));
    seg_store_tile(out, h, outputs, i / tiles_per, i, h[H_LEN], r);
}
