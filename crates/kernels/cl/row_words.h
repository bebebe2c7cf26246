// row_words (included by segments.cl): a whole tile of a long row (8192 consecutive
// elements) read as 16-byte words, for operators whose answer does not depend on the
// order in which elements combine (SEG_ORDER_FREE: integer sums, min, max, bitwise ops,
// argmin/argmax). row_tiles otherwise gives each work-item 32 scalar loads in the
// canonical lane layout, which order-free operators do not need: here work-item `lid`
// loads words lid + 256u (u < 8), each warp instruction reading 512 contiguous bytes,
// and folds its 32 elements as they come. argmin/argmax scan them by order key, one
// integer compare and two selects per element, and build one (value, index) pair at the
// end, as the 1-D order-free walk does (order_free.h). On an H100, in a CUDA graph,
// argmax along rows of 2^18–2^22 f32 read 1.10× as fast as with row_tiles' scalar loads
// and per-lane scans (0.91–0.96 → 1.01–1.06 of torch's speed); max and min, which
// combined as they loaded already, stayed within 0.3% (results/h100-row-words).
//
// Words hold 4 elements (SEG_WORDS: 16 bytes of 4-byte elements, 8 bytes of 2-byte ones,
// or a one-input map's raw elements), so the loop below covers 256 × 8 × 4 = TILE
// elements. The caller checks that the tile's first element is word-aligned; the tile's
// elements are then those of the scalar path, only grouped differently, and every
// operator here gives the same bits for any grouping (argmin/argmax order by key, then
// index). SEG_ROW_WORDS = 0 keeps the scalar loads (for comparisons).

#ifndef SEG_ROW_WORDS
#define SEG_ROW_WORDS 1
#endif

#if SEG_ROW_WORDS && defined(SEG_WORDS) && defined(SEG_ORDER_FREE)
#define SEG_HAS_ROW_WORDS 1
#define RW_WORDS_PER_ITEM (TILE / (SEG_WG * 4))

// Tile `t` of the output starting at element `start`, as work-item `lid`'s share:
// elements t·TILE + 4(lid + SEG_WG·u) + e of the output, u < RW_WORDS_PER_ITEM, e < 4.
inline acc_t seg_row_words(__global const in_t* in, ulong start, ulong t, uint lid) {
    ulong first = t * TILE;
    const __global seg_word_t* words = SEG_WORD_AT(in, start + first);
    seg_word_t w[RW_WORDS_PER_ITEM];
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        w[u] = words[lid + SEG_WG * u];
    ulong mine = first + 4 * (ulong)lid;
#ifdef HAVE_ARG_KEY
    // In increasing index: u, then e. The first strictly better key wins, so ties keep
    // the smallest index, as combine() would.
    argkey_t best = arg_key(seg_value_bits(SEG_PART(w[0], 0)));
    uint at = 0;
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        for (uint e = 0; e < 4; e++) {
            argkey_t k = arg_key(seg_value_bits(SEG_PART(w[u], e)));
            int better = ARG_BETTER(k, best);
            best = better ? k : best;
            at = better ? 4 * SEG_WG * u + e : at;
        }
    return arg_found(best, mine + at);
#else
    acc_t acc = IDENTITY;
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        for (uint e = 0; e < 4; e++)
            acc = combine(acc, seg_lift_bits(SEG_PART(w[u], e), mine + 4 * SEG_WG * u + e));
    return acc;
#endif
}
#endif
