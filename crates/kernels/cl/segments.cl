// Reductions with many results (axis and segmented reductions): every output reduces its
// own sequence of elements in the canonical order of docs/canonical-order.md, starting
// from tile 0 of that sequence, so its bits equal a 1-D reduction of that sequence alone.
//
// All kernels share the signature kernel(in, out, outputs). `out` holds, in order:
//   results   outputs × acc_t, padded to 8 bytes (read back by the host; none in
//             SEG_RESULT builds, which write the caller's array, below);
//   header    HEADER_WORDS ulongs (below), written by the host;
//   tables    starts[outputs + 1] and tile prefix[outputs + 1] (table modes only);
//   scratch   one acc_t per tile, for outputs of more than one tile; then column_words'
//             partials, 4 per tile (H_PARTIALS).
// Output k's sequence is elements start(k) + j × STRIDE for j < len(k).
//
// Strategies (the host picks one by shape, `redlab run --explain` says which):
//   short_rows    outputs of at most 1024 elements (one row of a tile): the next power
//                 of two of the longest as lanes, on up to 256 work-items per output,
//                 folded by halving (shuffles within a warp where an output fits one,
//                 else local memory); 4 blocks of outputs per group.
//   short_rows_wide  outputs of 33 to 1024 elements: 32 work-items per output, lanes
//                 j + 32m in work-item j's registers, the fold in registers then
//                 shuffles (below); argmin/argmax scan their lanes by key (below).
//                 Lanes past an output's end hold IDENTITY, which changes no bit, so this
//                 is the canonical fold of a short tile.
//   word_rows     rows of exactly 8, 16, 32 or 64 4-byte elements side by side, as 16-byte
//                 words, span / 8 work-items per row (word_rows.h).
//   row_tiles     a work-group per tile of 1024 lanes × 8 rows, work-item t owning lanes
//                 t, t+256, t+512, t+768 (as canonical.cl): consecutive work-items read
//                 consecutive elements when the stride is 1; order-free operators read
//                 whole tiles as 16-byte words instead (row_words.h).
//   row_whole     many outputs of a few tiles: a work-group per output walks its tiles
//                 in turn and writes its result, with no tree (row_whole.h).
//   column_tiles  for strided outputs that start next to each other (columns): a
//                 work-group of 1024 serves 32 outputs × 32 lane classes of one tile;
//                 work-item (x, y) folds the 32 lanes y + 32m of output x by the halving
//                 rule, so each load of a warp reads 32 neighbouring outputs in one row.
//   column_words  columns of 4-byte elements as 16-byte words, a tile's lane classes
//                 split over 4 work-groups, then column_finish (column_words.h).
//   tree          a work-group per output of more than one tile: the aligned pairwise
//                 tree over its tile results, 256 at a time, then a binary counter over
//                 the blocks' roots, which builds the same tree.

#define LANES 1024
#define ROWS 8
#define TILE (LANES * ROWS)
#define SEG_WG 256
#define NONE 0xffffffffffffffffUL

// Header words.
#define H_LEN 0          // every output's length, or NONE: lengths from the starts table
#define H_STRIDE 1       // elements between consecutive elements of one output
#define H_WIDTH 2        // short_rows: lanes per output (a power of two ≤ 1024)
#define H_TILES_PER 3    // fixed length: tiles per output
#define H_TABLE 4        // 1: starts from the table; 0: from the formula below
#define H_INNER 5        // formula: start(k) = OFFSET + (k / INNER) × OUTER_STRIDE
#define H_OUTER_STRIDE 6 //                   + (k % INNER) × INNER_STRIDE
#define H_INNER_STRIDE 7
#define H_SCRATCH 8      // byte offset of the scratch area from the header
#define H_OFFSET 9       // formula: the first output's first element
#define H_RESULT 10      // SEG_RESULT builds: the device address of the caller's results
#define H_PARTIALS 11    // column_words: byte offset of its partials from the header
#define HEADER_WORDS 16

// Operators whose answer does not depend on the order in which elements combine: all
// but float sums and products (canonical_one.cl's ORDER_FREE). word_rows and column_words
// fold them as the elements arrive instead of in the canonical pairing.
#if !(defined(VALUE_IS_FLOAT) && (defined(OP_SUM) || defined(OP_PROD))) && !defined(OP_CUSTOM)
#define SEG_ORDER_FREE 1
#endif

// Where results go (the caller's array, or out[k]): seg_result.h.
#include "seg_result.h"

// Raw words: the kernels that load whole words of 4 elements (short rows of words below,
// word_rows.h, column_words.h) lift each element from its bits. A word is 16 bytes of
// 4-byte elements or 8 bytes of 2-byte ones (SEG_WORD_BYTES), and its elements are the
// input's own (AS_IN_FROM_UINT; 2-byte types from the low 16 bits, halves through
// lift_value's own conversion) or a map's one input, mapped as it is lifted (MAP_BITS,
// the input's bytes: lift_bits and map_value_bits, generated from the map).
// SEG_WORD_AT(in, e) is the word starting at element e (the caller checks alignment);
// SEG_PART(w, e) the bits of its element e.
#if defined(AS_IN_FROM_UINT) && !defined(IN_IS_MAPPED)
#define SEG_WORDS 4
#define seg_lift_bits(b, j) lift_value(AS_IN_FROM_UINT(b), (j))
#define seg_value_bits(b) ((val_t)AS_IN_FROM_UINT(b))
typedef in_t seg_elem_t;
#elif IN_BYTES == 2 && !defined(IN_IS_MAPPED)
#define SEG_WORDS 2
#define seg_lift_bits(b, j) lift_value((in_t)(b), (j))
#ifdef IN_IS_HALF
#define seg_value_bits(b) value_from_bits16((ushort)(b))
#else
#define seg_value_bits(b) ((val_t)(in_t)(b))
#endif
typedef in_t seg_elem_t;
#elif defined(MAP_BITS)
#define SEG_WORDS MAP_BITS
#define seg_lift_bits(b, j) lift_bits((b), (j))
#define seg_value_bits(b) map_value_bits(b)
#if MAP_BITS == 4
typedef uint seg_elem_t;
#else
typedef ushort seg_elem_t;
#endif
#endif

#if SEG_WORDS == 4
typedef uint4 seg_word_t;
#define SEG_WORD_BYTES 16
#define SEG_PART(word, e) \
    ((e) == 0 ? (word).x : (e) == 1 ? (word).y : (e) == 2 ? (word).z : (word).w)
#elif SEG_WORDS == 2
typedef uint2 seg_word_t;
#define SEG_WORD_BYTES 8
#define SEG_PART(word, e) ((((e) < 2 ? (word).x : (word).y) >> (16 * ((e) & 1))) & 0xffffu)
#endif
// Wide words: 4 elements of 8 bytes (f64, i64, u64) as two 16-byte loads. Only
// column_words reads them, and only for operators whose answer does not depend on the
// order (cw_free_fold), so SEG_WORDS, which the other word paths test, stays undefined.
#if !defined(SEG_WORDS) && IN_BYTES == 8 && defined(AS_IN_FROM_ULONG) && \
    !defined(IN_IS_MAPPED) && defined(SEG_ORDER_FREE)
#define SEG_WIDE_WORDS 1
typedef struct { ulong2 lo, hi; } seg_word_t;
#define SEG_WORD_BYTES 16
#define SEG_PART(word, e) \
    ((e) == 0 ? (word).lo.x : (e) == 1 ? (word).lo.y : (e) == 2 ? (word).hi.x : (word).hi.y)
#define seg_lift_bits(b, j) lift_value(AS_IN_FROM_ULONG(b), (j))
#define seg_value_bits(b) ((val_t)AS_IN_FROM_ULONG(b))
typedef in_t seg_elem_t;
#endif
#if defined(SEG_WORDS) || defined(SEG_WIDE_WORDS)
#define SEG_WORD_AT(in, e) ((const __global seg_word_t*)((const __global seg_elem_t*)(in) + (e)))
#define SEG_WORD_ALIGNED(in, e) (((ulong)SEG_WORD_AT(in, e) & (SEG_WORD_BYTES - 1)) == 0)
#endif

// Mapped words: float sums of maps with f32 values over several inputs (no raw words
// apply) map 4 elements at a time from whole-word loads of every input (SEG_MAP_WORD
// from mapped.rs, the map's rl_map_word): short rows of words and column_words read
// them where the raw words would be. The packed regions start at 256-byte boundaries,
// so those loads are aligned where the first element's index is a multiple of 4.
// SEG_ANY_WORDS_ALIGNED(in, e) is either kind's alignment test.
#if !defined(SEG_WORDS) && defined(SEG_MAP_WORD) && RL_MAP_WORD == 4
#define SEG_MAPPED_WORDS 1
#define SEG_ANY_WORDS_ALIGNED(in, e) ((e) % 4 == 0)
#elif defined(SEG_WORDS) || defined(SEG_WIDE_WORDS)
#define SEG_ANY_WORDS_ALIGNED(in, e) SEG_WORD_ALIGNED(in, e)
#endif

inline ulong seg_start(__global const ulong* h, ulong k) {
    if (h[H_TABLE])
        return h[HEADER_WORDS + k];
    return h[H_OFFSET] + (k / h[H_INNER]) * h[H_OUTER_STRIDE] +
           (k % h[H_INNER]) * h[H_INNER_STRIDE];
}

inline ulong seg_len(__global const ulong* h, ulong k) {
    if (h[H_LEN] != NONE)
        return h[H_LEN];
    return h[HEADER_WORDS + k + 1] - h[HEADER_WORDS + k];
}

// First tile of output k in the scratch area.
inline ulong seg_first_tile(__global const ulong* h, ulong outputs, ulong k) {
    if (h[H_LEN] != NONE)
        return k * h[H_TILES_PER];
    return h[HEADER_WORDS + outputs + 1 + k];
}

inline __global acc_t* seg_scratch(__global ulong* h) {
    return (__global acc_t*)((__global uchar*)h + h[H_SCRATCH]);
}

// Element j of an output, at address `at`; argmin/argmax index it within the output.
inline acc_t seg_load(__global const in_t* in, ulong at, ulong j) {
    acc_t r = lift(in, at);
#if defined(OP_ARGMIN) || defined(OP_ARGMAX)
    r.i = j;
#else
    (void)j;
#endif
    return r;
}

// A lane's first element, as the lane holds it: the canonical order starts every lane at
// the identity and combines its elements in, and a user-defined combine (OP_CUSTOM) is
// applied so, since its identity need only be a right identity (combine(a, e) == a;
// `a ^ (b * 3)` with e = 0 has combine(e, x) == 3x). Every built-in operator's identity
// changes nothing on either side, so their lanes take the element as it is.
#ifdef OP_CUSTOM
#define seg_first(v) combine(IDENTITY, (v))
#else
#define seg_first(v) (v)
#endif

// The last halving steps of a fold that ran in local memory down to w = SEG_TAIL, given
// the work-item's own lane `x` of an output of `width` lanes. Where warps shuffle, the
// first 32 lanes sit in one warp (outputs start at multiples of their width, and widths
// here are ≥ 32), so w = 16 … 1 need no barrier; elsewhere the local fold went down to
// w = 1 already. Lane 0's result is in the output's first work-item.
#ifdef HAVE_SUBGROUP_SHUFFLE
#define SEG_TAIL 32
#else
#define SEG_TAIL 1
#endif
inline acc_t seg_fold_tail(acc_t x, uint width) {
#ifdef HAVE_SUBGROUP_SHUFFLE
    if (width >= 32) {
        for (uint w = 16; w > 0; w >>= 1)
            x = combine(x, sub_group_shuffle_down(x, w));
    }
#else
    (void)width;
#endif
    return x;
}

#include "short_rows.h"

// Which output tile `g` belongs to, and its index within that output.
inline ulong seg_tile_owner(__global const ulong* h, ulong outputs, ulong g, ulong* t) {
    if (h[H_LEN] != NONE) {
        *t = g % h[H_TILES_PER];
        return g / h[H_TILES_PER];
    }
    // Binary search of the tile prefix: the last k with prefix[k] <= g.
    __global const ulong* prefix = h + HEADER_WORDS + outputs + 1;
    ulong lo = 0, hi = outputs;
    while (hi - lo > 1) {
        ulong mid = (lo + hi) / 2;
        if (prefix[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    *t = g - prefix[lo];
    return lo;
}

// A finished tile: the output's result if it is its only tile, else a scratch entry.
inline void seg_store_tile(__global acc_t* out, __global ulong* h, ulong outputs, ulong k,
                           ulong g, ulong len, acc_t v) {
    if (len <= TILE)
        seg_put(out, h, k, v);
    else
        seg_scratch(h)[g] = v;
}

#ifdef HAVE_ARG_KEY
// argmin/argmax over ROWS loaded values vals[first + s * step] (s < ROWS), which are the
// output's elements j0 + s * LANES: the first strictly better key in increasing index,
// then its (value, index) pair. This is combine() over later elements, with selects
// instead of branches, so every load goes out before the first compare. A macro, so the
// register array is indexed with constants only.
#define ARG_SCAN_ROWS(acc, vals, first, step, j0)                        \
    do {                                                              \
        argkey_t bk_ = arg_key(vals[(first)]);                           \
        val_t bv_ = vals[(first)];                                       \
        uint br_ = 0;                                                 \
        for (uint s_ = 1; s_ < ROWS; s_++) {                          \
            argkey_t k_ = arg_key(vals[(first) + s_ * (step)]);          \
            int p_ = ARG_BETTER(k_, bk_);                             \
            bk_ = p_ ? k_ : bk_;                                      \
            bv_ = p_ ? vals[(first) + s_ * (step)] : bv_;                \
            br_ = p_ ? s_ : br_;                                      \
        }                                                             \
        (acc).v = bv_;                                                \
        (acc).i = (j0) + (ulong)br_ * LANES;                          \
    } while (0)
#endif

#include "row_words.h"

// A tile's 1024 lanes, work-item lid holding lanes lid, lid + 256, lid + 512 and lid + 768
// as l0 … l3, folded into one value, valid in work-item 0 (row_tiles, row_whole): w = 512
// and 256 in registers, then by halving in local memory, the canonical order, which float
// sums need. argmin/argmax select by a strict total order (NaN class, key, then index), so
// any grouping gives the same pair: where warps shuffle, each warp folds by shuffles
// first, then one warp folds the warps' results, one barrier instead of one per step.
inline acc_t seg_fold_group(acc_t l0, acc_t l1, acc_t l2, acc_t l3, LOCAL_PTR acc_t* lanes,
                            uint lid) {
    l0 = combine(l0, l2);
    l1 = combine(l1, l3);
#if defined(HAVE_ARG_KEY) && defined(HAVE_SUBGROUP_SHUFFLE)
    acc_t x = combine(l0, l1);
    for (uint w = 16; w > 0; w >>= 1)
        x = combine(x, sub_group_shuffle_down(x, w));
    if (lid % 32 == 0)
        lanes[lid / 32] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) {
        x = lid < SEG_WG / 32 ? lanes[lid] : IDENTITY;
        for (uint w = SEG_WG / 64; w > 0; w >>= 1)
            x = combine(x, sub_group_shuffle_down(x, w));
    }
    return x;
#else
    lanes[lid] = combine(l0, l1);
    for (uint w = SEG_WG / 2; w >= SEG_TAIL; w >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w)
            lanes[lid] = combine(lanes[lid], lanes[lid + w]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return seg_fold_tail(lanes[lid], SEG_WG);
#endif
}

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void row_tiles(__global const in_t* in, __global acc_t* out, ulong outputs) {
    __local acc_t lanes[SEG_WG];
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    ulong g = get_group_id(0);
    ulong t;
    ulong k = seg_tile_owner(h, outputs, g, &t);
    ulong len = seg_len(h, k);
    ulong start = seg_start(h, k);
    ulong stride = h[H_STRIDE];
    acc_t l0 = IDENTITY, l1 = IDENTITY, l2 = IDENTITY, l3 = IDENTITY;
    if (stride == 1 && (t + 1) * TILE <= len) {
        // A whole tile of consecutive elements: no bounds checks, no stride products.
#ifdef SEG_HAS_ROW_WORDS
        l0 = seg_row_words(in, start, t, lid);
#else
#ifdef HAVE_ARG_KEY
        // Every element is loaded before any compare; each lane then scans its rows.
        ulong j0 = t * TILE + lid;
        val_t v[4 * ROWS];
        for (uint q = 0; q < 4 * ROWS; q++)
            v[q] = seg_load(in, start + j0 + (ulong)(q / 4) * LANES + (q % 4) * 256, 0).v;
        ARG_SCAN_ROWS(l0, v, 0, 4, j0);
        ARG_SCAN_ROWS(l1, v, 1, 4, j0 + 256);
        ARG_SCAN_ROWS(l2, v, 2, 4, j0 + 512);
        ARG_SCAN_ROWS(l3, v, 3, 4, j0 + 768);
#else
        for (uint r = 0; r < ROWS; r++) {
            ulong j = t * TILE + (ulong)r * LANES + lid;
            l0 = combine(l0, seg_load(in, start + j, j));
            l1 = combine(l1, seg_load(in, start + j + 256, j + 256));
            l2 = combine(l2, seg_load(in, start + j + 512, j + 512));
            l3 = combine(l3, seg_load(in, start + j + 768, j + 768));
        }
#endif
#endif
    } else {
#ifdef IN_IS_MAPPED
        // Mapped inputs: every work-item loads, from the output's last element where it
        // is past the end, and takes the identity there after the load. Loads predicated
        // on the bounds (below) gave wrong, run-to-run varying sums of integer maps of
        // integer words on an H200 once ptxas optimized (-O1 and up; -O0 was right;
        // results/h200-map-bug); this form was right there. Plain inputs keep the
        // predicated loads, right there and up to 1.4x faster in partial tiles.
        for (uint r = 0; r < ROWS && len > 0; r++) {
            ulong j = t * TILE + (ulong)r * LANES + lid;
            acc_t v0 = seg_load(in, start + min(j, len - 1) * stride, j);
            acc_t v1 = seg_load(in, start + min(j + 256, len - 1) * stride, j + 256);
            acc_t v2 = seg_load(in, start + min(j + 512, len - 1) * stride, j + 512);
            acc_t v3 = seg_load(in, start + min(j + 768, len - 1) * stride, j + 768);
            l0 = combine(l0, j < len ? v0 : IDENTITY);
            l1 = combine(l1, j + 256 < len ? v1 : IDENTITY);
            l2 = combine(l2, j + 512 < len ? v2 : IDENTITY);
            l3 = combine(l3, j + 768 < len ? v3 : IDENTITY);
        }
#else
        for (uint r = 0; r < ROWS; r++) {
            ulong j = t * TILE + (ulong)r * LANES + lid;
            l0 = combine(l0, j < len ? seg_load(in, start + j * stride, j) : IDENTITY);
            l1 = combine(l1, j + 256 < len ? seg_load(in, start + (j + 256) * stride, j + 256) : IDENTITY);
            l2 = combine(l2, j + 512 < len ? seg_load(in, start + (j + 512) * stride, j + 512) : IDENTITY);
            l3 = combine(l3, j + 768 < len ? seg_load(in, start + (j + 768) * stride, j + 768) : IDENTITY);
        }
#endif
    }
    acc_t x = seg_fold_group(l0, l1, l2, l3, lanes, lid);
    if (lid == 0 && k < outputs)
        seg_store_tile(out, h, outputs, k, g, len, x);
}

#include "row_whole.h"

// A whole lane (all 8 rows of element index `a`) loaded into x[at … at + 7], then folded
// into `v` in row order: seg_lane and seg_lane_pair load every row before the first
// combine (with a bounds check between loads, each waited for the one before). Macros, so
// the register array is indexed with constants only. argmin/argmax keep the values and
// scan them by key.
#ifdef HAVE_ARG_KEY
typedef val_t seg_row_t;
#define SEG_LANE_LOAD(x, at, a)                                              \
    for (uint r_ = 0; r_ < ROWS; r_++)                                       \
        (x)[(at) + r_] = seg_load(in, start + ((a) + (ulong)r_ * LANES) * stride, 0).v
#define SEG_LANE_FOLD(v, x, at, a) ARG_SCAN_ROWS(v, x, at, 1, a)
#else
typedef acc_t seg_row_t;
#define SEG_LANE_LOAD(x, at, a)                                              \
    for (uint r_ = 0; r_ < ROWS; r_++)                                       \
        (x)[(at) + r_] = seg_load(in, start + ((a) + (ulong)r_ * LANES) * stride, \
                                  (a) + (ulong)r_ * LANES)
#define SEG_LANE_FOLD(v, x, at, a)                                           \
    for (uint r_ = 0; r_ < ROWS; r_++)                                       \
        (v) = combine((v), (x)[(at) + r_])
#endif

// Lane `lane` of tile `t` of an output: its (up to) 8 rows, combined in row order.
inline acc_t seg_lane(__global const in_t* in, ulong start, ulong stride, ulong len, ulong t,
                      uint lane) {
    ulong j0 = t * TILE + lane;
    acc_t v = IDENTITY;
    if (j0 + (ROWS - 1) * LANES < len) {
        seg_row_t x[ROWS];
        SEG_LANE_LOAD(x, 0, j0);
        SEG_LANE_FOLD(v, x, 0, j0);
        return v;
    }
    for (uint r = 0; r < ROWS; r++) {
        ulong j = j0 + (ulong)r * LANES;
        if (j >= len)
            break;
        v = combine(v, seg_load(in, start + j * stride, j));
    }
    return v;
}

// combine(lane `lane0`, lane `lane1`) of tile `t`: where both lanes have all 8 rows, all
// 16 loads go out before the first combine.
inline acc_t seg_lane_pair(__global const in_t* in, ulong start, ulong stride, ulong len,
                           ulong t, uint lane0, uint lane1) {
    ulong a0 = t * TILE + lane0, a1 = t * TILE + lane1;
    if (a0 + (ROWS - 1) * LANES < len && a1 + (ROWS - 1) * LANES < len) {
        acc_t v0 = IDENTITY, v1 = IDENTITY;
        seg_row_t x[2 * ROWS];
        SEG_LANE_LOAD(x, 0, a0);
        SEG_LANE_LOAD(x, ROWS, a1);
        SEG_LANE_FOLD(v0, x, 0, a0);
        SEG_LANE_FOLD(v1, x, ROWS, a1);
        return combine(v0, v1);
    }
    return combine(seg_lane(in, start, stride, len, t, lane0),
                   seg_lane(in, start, stride, len, t, lane1));
}

// column_tiles: a work-group of COL_WG holds COL_OUTPUTS neighbouring outputs × COL_CLASSES
// lane classes; a warp is 32 neighbouring outputs of one class, so each of its loads
// reads 32 neighbours in one row (a whole 128-byte line of f32).
#define COL_CLASSES 32
#define COL_OUTPUTS 32
#define COL_WG (COL_CLASSES * COL_OUTPUTS)

// The fold of lane class y (lanes y + COL_CLASSES·m) of tile t by the halving rule. A
// tile whose elements fill fewer than 1024 lanes folds only its first P lanes (P the next
// power of two; the rest hold IDENTITY, which changes no bit), so class y has
// Q = max(P / COL_CLASSES, 1) lanes. Halving over m pairs m with m + Q/2 first: an adjacent-pairs tree over m in
// bit-reversed order, built here with a binary counter.
inline acc_t seg_lane_class(__global const in_t* in, ulong start, ulong stride, ulong len,
                            ulong t, uint y) {
    ulong left = len - t * TILE;
    uint used = left < LANES ? (uint)left : LANES;
    uint p = 1, bits = 0;
    while (p < used)
        p <<= 1;
    uint q = p >= COL_CLASSES ? p / COL_CLASSES : 1;
    while ((1u << bits) < q)
        bits++;
    if (p < COL_CLASSES && y >= p)
        return IDENTITY;
    if (q == 1)
        return seg_lane(in, start, stride, len, t, y);
    // Lanes i and i + 1 in pairs (q is a power of two): the counter's first merge always
    // joins them, and loading both lanes' rows together doubles the loads in flight.
    acc_t stack[8];
    uint top = 0;
    for (uint i = 0; i < q; i += 2) {
        uint m = 0;
        for (uint b = 0; b < bits; b++)
            m |= ((i >> b) & 1) << (bits - 1 - b);
        // i is even, so i + 1 reverses to m plus the top bit.
        uint m1 = m | (1u << (bits - 1));
        acc_t r = seg_lane_pair(in, start, stride, len, t, y + COL_CLASSES * m,
                                y + COL_CLASSES * m1);
        for (uint c = (i + 2) >> 1; (c & 1) == 0; c >>= 1)
            r = combine(stack[--top], r);
        stack[top++] = r;
    }
    return stack[0];
}

__kernel __attribute__((reqd_work_group_size(COL_WG, 1, 1)))
void column_tiles(__global const in_t* in, __global acc_t* out, ulong outputs) {
    __local acc_t classes[COL_CLASSES][COL_OUTPUTS];
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    uint x = lid % COL_OUTPUTS, y = lid / COL_OUTPUTS;
    ulong tiles_per = h[H_TILES_PER];
    ulong block = get_group_id(0) / tiles_per;
    ulong t = get_group_id(0) % tiles_per;
    ulong k = block * COL_OUTPUTS + x;
    ulong len = h[H_LEN];
    acc_t v = IDENTITY;
    if (k < outputs)
        v = seg_lane_class(in, seg_start(h, k), h[H_STRIDE], len, t, y);
    classes[y][x] = v;
    // The last halving steps, w = COL_CLASSES / 2 … 1, across the lane classes.
    for (uint w = COL_CLASSES / 2; w > 0; w >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (y < w)
            classes[y][x] = combine(classes[y][x], classes[y + w][x]);
    }
    if (y == 0 && k < outputs)
        seg_store_tile(out, h, outputs, k, k * tiles_per + t, len, classes[0][x]);
}

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void tree(__global const in_t* in, __global acc_t* out, ulong outputs) {
    (void)in;
    __local acc_t level[SEG_WG];
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    ulong k = get_group_id(0);
    ulong tiles = (seg_len(h, k) + TILE - 1) / TILE;
    if (tiles <= 1)
        return;
    __global const acc_t* scratch = seg_scratch(h) + seg_first_tile(h, outputs, k);
    // Roots of complete 256-tile blocks merge on a binary counter (work-item 0).
    acc_t stack[64];
    uint top = 0;
    ulong blocks = (tiles + SEG_WG - 1) / SEG_WG;
    for (ulong b = 0; b < blocks; b++) {
        ulong i = b * SEG_WG + lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        level[lid] = i < tiles ? scratch[i] : IDENTITY;
        for (uint step = 1; step < SEG_WG; step <<= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid % (2 * step) == 0)
                level[lid] = combine(level[lid], level[lid + step]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            acc_t r = level[0];
            for (ulong c = b + 1; (c & 1) == 0; c >>= 1)
                r = combine(stack[--top], r);
            stack[top++] = r;
        }
    }
    if (lid == 0) {
        // A partial last block leaves several roots: close them from the top.
        acc_t r = stack[--top];
        while (top > 0)
            r = combine(stack[--top], r);
        seg_put(out, h, k, r);
    }
}

// SEG_SKIP_COLUMN_WORDS leaves column_words and column_finish out: fully unrolled over a
// tile's lane pairs and rows, they are most of the module's build time (for `abs(x)`
// max over i32, 2.2 of 2.4 MB of PTX and 4.1 of 4.5 s in ptxas), which jobs that launch
// neither need not pay (the CUDA backend builds such a module for them).
#ifndef SEG_SKIP_COLUMN_WORDS
#include "column_words.h"
#endif
#include "word_rows.h"
