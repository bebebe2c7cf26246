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
// or a one-input map's raw elements), so 256 × 8 words cover TILE elements. Where the
// tile's first element is not word-aligned (rows whose length is not a multiple of 4),
// the words start `lead` elements later, at the first aligned one, and the last word
// would pass the tile's end; the last work-item loads the `lead` elements before the
// first word and the 4 − lead after the last whole one instead. The tile's elements are
// those of the scalar path either way, only grouped differently, and every operator here
// gives the same bits for any grouping (argmin/argmax order by key, then index).
// SEG_ROW_WORDS = 0 keeps the scalar loads (for comparisons).

#ifndef SEG_ROW_WORDS
#define SEG_ROW_WORDS 1
#endif

#if SEG_ROW_WORDS && defined(SEG_WORDS) && defined(SEG_ORDER_FREE)
#define SEG_HAS_ROW_WORDS 1
#define RW_WORDS_PER_ITEM (TILE / (SEG_WG * 4))

// Tile `t` of the output starting at element `start`, as work-item `lid`'s share: with
// `lead` elements before the first aligned word, elements t·TILE + lead + 4(lid + SEG_WG·u)
// + e of the output (u < RW_WORDS_PER_ITEM, e < 4) inside the tile, and, for the last
// work-item, the tile's first `lead` and last 4 − lead elements where lead > 0.
inline acc_t seg_row_words(__global const in_t* in, ulong start, ulong t, uint lid) {
    ulong first = t * TILE;
    ulong misfit = ((ulong)SEG_WORD_AT(in, start + first) & (SEG_WORD_BYTES - 1)) /
                   sizeof(seg_elem_t);
    uint lead = misfit == 0 ? 0 : 4 - (uint)misfit;
    const __global seg_word_t* words = SEG_WORD_AT(in, start + first + lead);
    // The one word that would pass the tile's end where lead > 0: its slot loads the
    // word before it instead (every load stays unconditional and in the tile) and is
    // skipped below.
    int spare = lead > 0 && lid == SEG_WG - 1;
    seg_word_t w[RW_WORDS_PER_ITEM];
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        w[u] = words[lid + SEG_WG * u - (spare && u + 1 == RW_WORDS_PER_ITEM ? 1 : 0)];
    // The lead and tail elements, loaded with the words so that their latency overlaps.
    // Loaded after the scan they were a second round trip for the tile's last warp, and
    // on an H100 argmax along rows off the word grid read 1.00–1.02× the scalar loads'
    // speed instead of 1.12–1.13× (results/h100-row-words).
    acc_t ends[4];
    if (spare) {
        for (uint e = 0; e < 4; e++) {
            ulong j = e < lead ? first + e : first + TILE - 4 + e;
            ends[e] = seg_load(in, start + j, j);
        }
    }
    uint full = spare ? RW_WORDS_PER_ITEM - 1 : RW_WORDS_PER_ITEM;
    ulong mine = first + lead + 4 * (ulong)lid;
#ifdef HAVE_ARG_KEY
    // In increasing index: u, then e. The first strictly better key wins, so ties keep
    // the smallest index, as combine() would.
    argkey_t best = arg_key(seg_value_bits(SEG_PART(w[0], 0)));
    uint at = 0;
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        for (uint e = 0; e < 4; e++) {
            argkey_t k = arg_key(seg_value_bits(SEG_PART(w[u], e)));
            int better = u < full && ARG_BETTER(k, best);
            best = better ? k : best;
            at = better ? 4 * SEG_WG * u + e : at;
        }
    acc_t acc = arg_found(best, mine + at);
#else
    acc_t acc = IDENTITY;
    for (uint u = 0; u < RW_WORDS_PER_ITEM; u++)
        for (uint e = 0; e < 4; e++)
            if (u < full)
                acc = combine(acc, seg_lift_bits(SEG_PART(w[u], e), mine + 4 * SEG_WG * u + e));
#endif
    if (spare) {
        // combine() orders argmin/argmax pairs by key, then index, so these join in any
        // order.
        for (uint e = 0; e < 4; e++)
            acc = combine(acc, ends[e]);
    }
    return acc;
}
#endif
