// short_rows and short_rows_wide (included by segments.cl): outputs of at most a
// work-group's lanes, a work-item per lane. Uses segments.cl's header readers, loads and
// fold tail.

// short_rows: each work-group takes SHORT_BLOCKS blocks of SEG_WG / WIDTH outputs, so a
// group has several loads in flight. Where warps shuffle and an output fits in one
// (WIDTH ≤ 32), the fold runs in registers without barriers.
#define SHORT_BLOCKS 4

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void short_rows(__global const in_t* in, __global acc_t* out, ulong outputs) {
    __local acc_t lanes[SEG_WG];
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    // SPAN lanes per output (a power of two ≤ 1024), on WIDTH = min(SPAN, 256) work-items:
    // work-item j holds lanes j, j + 256, j + 512, j + 768 (as many as SPAN has), so the
    // first halving steps (w = 512, 256) happen in its registers, as in a tile.
    uint span = (uint)h[H_WIDTH];
    uint width = span < SEG_WG ? span : SEG_WG;
    uint per = span / width;
    uint j = lid % width;
    ulong per_block = SEG_WG / width;
    ulong first = get_group_id(0) * (ulong)SHORT_BLOCKS * per_block + lid / width;
    acc_t v[SHORT_BLOCKS];
    for (uint u = 0; u < SHORT_BLOCKS; u++) {
        ulong k = first + u * per_block;
        acc_t l0 = IDENTITY, l1 = IDENTITY, l2 = IDENTITY, l3 = IDENTITY;
        if (k < outputs) {
            ulong len = seg_len(h, k), start = seg_start(h, k), stride = h[H_STRIDE];
            if (j < len)
                l0 = seg_first(seg_load(in, start + j * stride, j));
            if (per > 1) {
                ulong at = j + SEG_WG;
                if (at < len)
                    l1 = seg_first(seg_load(in, start + at * stride, at));
                if (per > 2) {
                    if (at + SEG_WG < len)
                        l2 = seg_first(seg_load(in, start + (at + SEG_WG) * stride, at + SEG_WG));
                    if (at + 2 * SEG_WG < len)
                        l3 = seg_first(seg_load(in, start + (at + 2 * SEG_WG) * stride, at + 2 * SEG_WG));
                }
            }
        }
        v[u] = per == 4 ? combine(combine(l0, l2), combine(l1, l3))
             : per == 2 ? combine(l0, l1)
                        : l0;
    }
#ifdef HAVE_SUBGROUP_SHUFFLE
    if (width <= 32) {
        for (uint u = 0; u < SHORT_BLOCKS; u++) {
            ulong k = first + u * per_block;
            acc_t x = v[u];
            // Lane j takes j + w of the same output (same warp): the halving fold.
            for (uint w = width / 2; w > 0; w >>= 1)
                x = combine(x, sub_group_shuffle_down(x, w));
            if (j == 0 && k < outputs)
                seg_put(out, h, k, x);
        }
        return;
    }
#endif
    for (uint u = 0; u < SHORT_BLOCKS; u++) {
        ulong k = first + u * per_block;
        barrier(CLK_LOCAL_MEM_FENCE);
        lanes[lid] = v[u];
        for (uint w = width / 2; w >= SEG_TAIL; w >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (j < w)
                lanes[lid] = combine(lanes[lid], lanes[lid + w]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        acc_t x = seg_fold_tail(lanes[lid], width);
        if (j == 0 && k < outputs)
            seg_put(out, h, k, x);
    }
}

// short_rows_wide: outputs of 33 to 1024 elements (64 to 1024 lanes) whose accumulator
// is at most 8 bytes.
// An output gets one warp's worth of work-items (SHORT_WIDTH = 32), work-item j holding
// lanes j + 32m in registers: every halving step w ≥ 32 pairs two of its own registers,
// the first applied as the upper half loads, and the steps below 32 are shuffles within
// the warp (or local memory where there are none). No barrier where warps shuffle; on
// the H200, rows of 1024 f32 read 1.65× (sum) and 2.1× (max) faster than with
// short_rows' 256 work-items and barriers per output (results/h200-short-rows). Its own
// entry point: in one kernel with short_rows, whose register count is its paths'
// largest, rows of 32 read at half speed; and argmin/argmax, whose accumulators are 16
// bytes, read rows of 1024 at 0.6 of short_rows' speed here (both measured).
#define SHORT_WIDTH 32
// Registers per work-item (at most): the first halving step is applied as the upper
// half of the lanes loads, so half of the 32 lanes are ever held.
#define SHORT_HALF (LANES / SHORT_WIDTH / 2)

// Fold step d of a work-item's registers (lanes m and m + d, m < d), where d is below
// the registers in use.
#define SHORT_FOLD(d)                                   \
    if ((d) < used) {                                   \
        for (uint m = 0; m < (d); m++)                  \
            a[m] = combine(a[m], a[m + (d)]);           \
    }

// The halving steps below WIDTH of a work-item's lane `x0` of output `k`, and the store
// of lane 0: warp shuffles where there are any, else the group's `lanes` in local
// memory (every work-item of the group runs this, so its barriers are uniform). A macro:
// CUDA cannot pass a __shared__ array to a function.
#ifdef HAVE_SUBGROUP_SHUFFLE
#define SHORT_FINISH(x0, k)                                          \
    do {                                                             \
        acc_t x_ = (x0);                                             \
        for (uint w_ = width / 2; w_ > 0; w_ >>= 1)                  \
            x_ = combine(x_, sub_group_shuffle_down(x_, w_));        \
        if (j == 0 && (k) < outputs)                                 \
            seg_put(out, h, k, x_);                                  \
    } while (0)
#else
#define SHORT_FINISH(x0, k)                                          \
    do {                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                \
        lanes[lid] = (x0);                                           \
        for (uint w_ = width / 2; w_ > 0; w_ >>= 1) {                \
            barrier(CLK_LOCAL_MEM_FENCE);                            \
            if (j < w_)                                              \
                lanes[lid] = combine(lanes[lid], lanes[lid + w_]);   \
        }                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                \
        if (j == 0 && (k) < outputs)                                 \
            seg_put(out, h, k, lanes[lid]);                          \
    } while (0)
#endif

// How many of work-item j's lanes j + 32m (m < per) lie inside an output of `len`
// elements: one 32-bit bound per lane instead of a 64-bit compare.
inline uint seg_lanes_in(ulong len, uint j, uint per) {
    if (j >= len)
        return 0;
    ulong n = (len - j + SHORT_WIDTH - 1) / SHORT_WIDTH;
    return n < per ? (uint)n : per;
}

// Where warps shuffle, whole rows of 128 to 1024 consecutive 2- or 4-byte elements load
// as words of 4 (SEG_WORDS), in the lane ownership of warp_tiles.h: work-item j loads
// words j + 32q, so it holds lanes 4j + e + 128q (e < 4, q < SPAN / 128). Halving steps
// w ≥ 128 pair words q and q + w/128 of one work-item, steps 64 … 4 pair work-items j
// and j + w/4 (shuffles), steps 2 and 1 pair elements of one word: the same canonical
// fold with a quarter of the load instructions (maps of such inputs too). Mapped words
// (SEG_MAPPED_WORDS, above) take the same lanes and folds: dot products along rows of
// 1024 load 4 words per input in place of 16 elements. Other rows (partial, strided,
// unaligned, other maps, argmin/argmax) take the lane-per-load path below.
#if defined(HAVE_SUBGROUP_SHUFFLE) && !defined(HAVE_ARG_KEY) && \
    (defined(SEG_WORDS) || defined(SEG_MAPPED_WORDS))
#define SHORT_WORDS 1
// Step d of the word folds: words q < d take words q + d, element by element.
#define SHORT_WORD_FOLD(d)                                              \
    if ((d) < words_used) {                                             \
        for (uint q = 0; q < (d); q++)                                  \
            for (uint e = 0; e < 4; e++)                                \
                a[4 * q + e] = combine(a[4 * q + e], a[4 * (q + (d)) + e]); \
    }

// The fold of the full row at `start` (`span` elements, 16-byte aligned); the result is
// valid in work-item 0 of the warp.
inline acc_t short_row_words(__global const in_t* in, ulong start, uint span, uint j) {
    uint words_used = span / 128;
    acc_t a[32];
#ifdef SEG_WORDS
    const __global seg_word_t* words = SEG_WORD_AT(in, start) + j;
    seg_word_t w[8];
#pragma unroll
    for (uint q = 0; q < 8; q++)
        if (q < words_used)
            w[q] = words[32 * q];
#pragma unroll
    for (uint q = 0; q < 8; q++) {
        ulong e0 = 4 * ((ulong)j + 32 * q);
        int in_row = q < words_used;
        a[4 * q + 0] = in_row ? seg_first(seg_lift_bits(SEG_PART(w[q], 0), e0)) : IDENTITY;
        a[4 * q + 1] = in_row ? seg_first(seg_lift_bits(SEG_PART(w[q], 1), e0 + 1)) : IDENTITY;
        a[4 * q + 2] = in_row ? seg_first(seg_lift_bits(SEG_PART(w[q], 2), e0 + 2)) : IDENTITY;
        a[4 * q + 3] = in_row ? seg_first(seg_lift_bits(SEG_PART(w[q], 3), e0 + 3)) : IDENTITY;
    }
#else
#pragma unroll
    for (uint q = 0; q < 8; q++) {
        rl_map_t m[4];
        int in_row = q < words_used;
        if (in_row)
            SEG_MAP_WORD(in, start + 4 * ((ulong)j + 32 * q), m);
        // A float sum's lift is the mapped value itself (mapped.rs: RL_MAP_WORD).
        for (uint e = 0; e < 4; e++)
            a[4 * q + e] = in_row ? seg_first((acc_t)m[e]) : IDENTITY;
    }
#endif
    SHORT_WORD_FOLD(4);
    SHORT_WORD_FOLD(2);
    SHORT_WORD_FOLD(1);
    for (uint d = 16; d > 0; d >>= 1)
        for (uint e = 0; e < 4; e++)
            a[e] = combine(a[e], sub_group_shuffle_down(a[e], d));
    return combine(combine(a[0], a[2]), combine(a[1], a[3]));
}
#endif

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void short_rows_wide(__global const in_t* in, __global acc_t* out, ulong outputs) {
#ifndef HAVE_SUBGROUP_SHUFFLE
    __local acc_t lanes[SEG_WG];
#endif
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    // SPAN lanes per output (a power of two, 64 … 1024) on 32 work-items, PER = SPAN / 32
    // lanes each, of which USED registers are held.
    uint span = (uint)h[H_WIDTH];
    uint width = SHORT_WIDTH;
    uint per = span / width;
    uint used = per / 2;
    uint j = lid % width;
    ulong per_block = SEG_WG / width;
    ulong first = get_group_id(0) * (ulong)SHORT_BLOCKS * per_block + lid / width;
    // Block by block; not unrolled, so one block's registers are all the kernel needs.
#pragma unroll 1
    for (uint u = 0; u < SHORT_BLOCKS; u++) {
        ulong k = first + u * per_block;
#ifdef HAVE_ARG_KEY
        // argmin/argmax: each work-item's lanes j + 32m are all loaded first, then
        // scanned in increasing index for the first strictly better key (combine() on
        // later elements), with one (key, value, lane) live instead of 16 registers of
        // pairs; the fold across work-items uses the full combine.
        acc_t x = IDENTITY;
        if (k < outputs) {
            ulong len = seg_len(h, k), start = seg_start(h, k), stride = h[H_STRIDE];
            uint valid = seg_lanes_in(len, j, per);
            val_t v[2 * SHORT_HALF];
            (void)used;
            if (stride == 1 && len == span) {
                // A full row of consecutive elements: one base plus constant offsets and
                // no lane bound (argmax on 65536 rows of 1024 f32, H100: +13–16%; the
                // same for sum and max was neutral and −9%, results/h100-full-rows).
#pragma unroll
                for (uint m = 0; m < 2 * SHORT_HALF; m++)
                    v[m] = m < per ? seg_load(in, start + j + m * SHORT_WIDTH, 0).v : (val_t)0;
            } else {
#pragma unroll
                for (uint m = 0; m < 2 * SHORT_HALF; m++) {
                    ulong at = j + (ulong)m * width;
                    v[m] = m < valid ? seg_load(in, start + at * stride, at).v : (val_t)0;
                }
            }
            argkey_t bk = arg_key(v[0]);
            val_t bv = v[0];
            uint bm = 0;
#pragma unroll
            for (uint m = 1; m < 2 * SHORT_HALF; m++) {
                argkey_t km = arg_key(v[m]);
                int p = m < valid && ARG_BETTER(km, bk);
                bk = p ? km : bk;
                bv = p ? v[m] : bv;
                bm = p ? m : bm;
            }
            // Lane j itself is in range whenever any of the work-item's lanes is.
            if (j < len) {
                x.v = bv;
                x.i = j + (ulong)bm * width;
            }
        }
        SHORT_FINISH(x, k);
#else
#ifdef SHORT_WORDS
        // The condition is the same for the whole warp (one output per warp), so the
        // shuffles inside see every work-item.
        if (k < outputs && h[H_STRIDE] == 1 && span >= 128 && seg_len(h, k) == span &&
            SEG_ANY_WORDS_ALIGNED(in, seg_start(h, k))) {
            acc_t x = short_row_words(in, seg_start(h, k), span, j);
            if (j == 0)
                seg_put(out, h, k, x);
            continue;
        }
#endif
        acc_t a[SHORT_HALF];
#pragma unroll
        for (uint m = 0; m < SHORT_HALF; m++)
            a[m] = IDENTITY;
        if (k < outputs) {
            ulong len = seg_len(h, k), start = seg_start(h, k), stride = h[H_STRIDE];
            uint valid = seg_lanes_in(len, j, per);
            // Lanes j + m·32 for m < used, then the upper half combined into them: the
            // halving step w = SPAN / 2, in the canonical grouping (lower lane left).
#pragma unroll
            for (uint m = 0; m < SHORT_HALF; m++) {
                ulong at = j + (ulong)m * width;
                if (m < used && m < valid)
                    a[m] = seg_first(seg_load(in, start + at * stride, at));
            }
#pragma unroll
            for (uint m = 0; m < SHORT_HALF; m++) {
                ulong at = j + (ulong)(m + used) * width;
                if (m < used && m + used < valid)
                    a[m] = combine(a[m], seg_first(seg_load(in, start + at * stride, at)));
            }
        }
        // The remaining steps down to w = 32, written out (the compiler keeps the array
        // in registers only with constant indices).
        SHORT_FOLD(8);
        SHORT_FOLD(4);
        SHORT_FOLD(2);
        SHORT_FOLD(1);
        SHORT_FINISH(a[0], k);
#endif
    }
}
