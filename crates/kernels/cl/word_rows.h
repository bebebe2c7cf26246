// word_rows (included by segments.cl): rows of SPAN = 8, 16, 32 or 64 consecutive elements
// that lie side by side, output k at OFFSET + k × SPAN (the rows of a C-order matrix with
// 8, 16, 32 or 64 columns). short_rows gives such a row one work-item per element, reads
// the header per element and folds with five shuffles per row; on the H200 it read 2^20
// rows of 32 f32 at 0.7 TB/s, bound by instructions (SM 72%, DRAM 16%:
// results/h200-axis-graph/rows-of-32). short_rows_wide read rows of 64 at 0.3–0.4 TB/s.
//
// Here P = SPAN / 8 work-items share a row. Work-item q < P holds its lanes 4q … 4q + 3
// and 4(q + P) … 4(q + P) + 3, two words of 4 elements (16 bytes of 4-byte elements, 8 of
// 2-byte ones: SEG_WORDS in segments.cl), so a warp load reads the whole first or second
// half of 32 / P rows, every sector used. The canonical halving fold of a
// short tile (docs/canonical-order.md, as short_rows runs it) then becomes:
//   w = SPAN / 2   the work-item's two words, element by element, in registers;
//   w = 2P … 4     work-items q and q + w / 4 of the row (shuffles, or local memory);
//   w = 2, 1       the elements of the word: (e0 ∘ e2) ∘ (e1 ∘ e3).
// Lanes past an output's end do not exist (every row is exactly SPAN long), so no
// IDENTITY is folded in.
//
// Operators whose answer does not depend on the order (all but float sums and products,
// as canonical_one.cl's ORDER_FREE) first fold the work-item's own 8 lanes, then shuffle
// one value per step instead of 4: argmax along rows of 32 f32 read 1119 GB/s on the
// H200 with the canonical steps, where its pairs' shuffles dominate.
//
// The word loads need raw 2- or 4-byte elements (SEG_WORDS: the input's own, or a map's
// one input) and an aligned first row, which the kernel checks; otherwise it loads the
// same lanes one element at a time, in the same order. The host picks this kernel where the rows qualify
// (`SegmentJob::for_problem`).

#define WR_BLOCKS 4 // blocks of rows per work-group, so each work-item has 8 words in flight

#ifdef SEG_ORDER_FREE
#define WR_HELD 1 // values per work-item across the row's steps: its lanes folded first
#else
#define WR_HELD 4 // one per element of a word, as the canonical fold pairs them
#endif

#ifdef SEG_WORDS
#define WR_WORDS 1

// Element e of a word, lifted as lane j of its output.
inline acc_t wr_lift(seg_word_t w, uint e, ulong j) {
    return seg_lift_bits(SEG_PART(w, e), j);
}

#ifdef HAVE_ARG_KEY
#define WR_ARG_SCAN 1
// argmin/argmax: the work-item's 8 lanes (word w0 at lanes j0 …, then w1 at j1 … > j0)
// scanned in increasing index for the first strictly better order key, one compare and
// two selects per lane, instead of 8 pairs and 7 combines of (value, 64-bit index).
inline acc_t wr_arg_scan(seg_word_t w0, seg_word_t w1, ulong j0, ulong j1) {
    uint bits[8] = {SEG_PART(w0, 0), SEG_PART(w0, 1), SEG_PART(w0, 2), SEG_PART(w0, 3),
                    SEG_PART(w1, 0), SEG_PART(w1, 1), SEG_PART(w1, 2), SEG_PART(w1, 3)};
    argkey_t best = arg_key(seg_value_bits(bits[0]));
    uint at = 0;
#pragma unroll
    for (uint e = 1; e < 8; e++) {
        argkey_t k = arg_key(seg_value_bits(bits[e]));
        int better = ARG_BETTER(k, best);
        best = better ? k : best;
        at = better ? e : at;
    }
    return arg_found(best, at < 4 ? j0 + at : j1 + (at - 4));
}
#endif
#endif

__kernel __attribute__((reqd_work_group_size(SEG_WG, 1, 1)))
void word_rows(__global const in_t* in, __global acc_t* out, ulong outputs) {
#ifndef HAVE_SUBGROUP_SHUFFLE
    __local acc_t parts[WR_HELD][SEG_WG];
#endif
    __global ulong* h = seg_header(out, outputs);
    uint lid = get_local_id(0);
    uint span = (uint)h[H_WIDTH];
    uint p = span / 8;
    uint q = lid % p;
    ulong per_block = SEG_WG / p;
    ulong first = get_group_id(0) * (ulong)WR_BLOCKS * per_block + lid / p;
    ulong offset = h[H_OFFSET];
    ulong j0 = 4 * (ulong)q, j1 = 4 * (ulong)(q + p);
    acc_t a[WR_BLOCKS][4];
#ifdef WR_WORDS
    if (SEG_WORD_ALIGNED(in, offset)) {
        // Every word load of the work-item first, then the step w = SPAN / 2.
        seg_word_t w0[WR_BLOCKS], w1[WR_BLOCKS];
#pragma unroll
        for (uint u = 0; u < WR_BLOCKS; u++) {
            ulong k = first + u * per_block;
            if (k < outputs) {
                const __global seg_word_t* row = SEG_WORD_AT(in, offset + k * span);
                w0[u] = row[q];
                w1[u] = row[q + p];
            }
        }
#pragma unroll
        for (uint u = 0; u < WR_BLOCKS; u++) {
            int here = first + u * per_block < outputs;
#ifdef WR_ARG_SCAN
            // The scan's winner in a[u][0]; the identities leave it through the fold.
            a[u][0] = here ? wr_arg_scan(w0[u], w1[u], j0, j1) : IDENTITY;
            a[u][1] = a[u][2] = a[u][3] = IDENTITY;
#else
#pragma unroll
            for (uint e = 0; e < 4; e++)
                a[u][e] = here ? combine(seg_first(wr_lift(w0[u], e, j0 + e)),
                                          seg_first(wr_lift(w1[u], e, j1 + e)))
                               : IDENTITY;
#endif
        }
    } else
#endif
    {
#pragma unroll
        for (uint u = 0; u < WR_BLOCKS; u++) {
            ulong k = first + u * per_block;
            ulong base = offset + k * span;
#pragma unroll
            for (uint e = 0; e < 4; e++)
                a[u][e] = k < outputs ? combine(seg_first(seg_load(in, base + j0 + e, j0 + e)),
                                                seg_first(seg_load(in, base + j1 + e, j1 + e)))
                                      : IDENTITY;
        }
    }
    // Steps w = 2 and 1 (the word's elements) into a[u][0]: here for order-free
    // operators, after the steps across the row for the canonical fold.
#define WR_FOLD_WORDS()                                                              \
    for (uint u = 0; u < WR_BLOCKS; u++)                                             \
        a[u][0] = combine(combine(a[u][0], a[u][2]), combine(a[u][1], a[u][3]))
#if WR_HELD == 1
    WR_FOLD_WORDS();
#endif
    // Steps w = 2P … 4: work-item q takes q + m of the same row (m = w / 4 < P, so both
    // are in one warp: rows start at multiples of P work-items).
#ifdef HAVE_SUBGROUP_SHUFFLE
    for (uint m = p / 2; m > 0; m >>= 1) {
#pragma unroll
        for (uint u = 0; u < WR_BLOCKS; u++)
#pragma unroll
            for (uint e = 0; e < WR_HELD; e++)
                a[u][e] = combine(a[u][e], sub_group_shuffle_down(a[u][e], m));
    }
#else
#pragma unroll
    for (uint u = 0; u < WR_BLOCKS; u++) {
        for (uint m = p / 2; m > 0; m >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint e = 0; e < WR_HELD; e++)
                parts[e][lid] = a[u][e];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (q < m)
                for (uint e = 0; e < WR_HELD; e++)
                    a[u][e] = combine(a[u][e], parts[e][lid + m]);
        }
    }
#endif
#if WR_HELD == 4
    WR_FOLD_WORDS();
#endif
#pragma unroll
    for (uint u = 0; u < WR_BLOCKS; u++) {
        ulong k = first + u * per_block;
        if (q == 0 && k < outputs)
            seg_put(out, h, k, a[u][0]);
    }
}
