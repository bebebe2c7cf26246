// order_free (included by canonical_one.cl): one work-item's walk over the input on the
// order-free path (integers, selections, bitwise operators). Each group takes chunks of
// TILE_WG × UNROLL elements with a grid-sized stride; every chunk but a partial last one
// loads without bounds checks, all UNROLL loads of a work-item in flight before the
// first combine. The work-item's partial comes back; the caller folds the group.
//
// Word loads (ORDER_FREE_WORDS, CUDA): elements of 1, 2 or 4 bytes of a whole chunk load
// as 16-byte words (16, 8 or 4 elements each), so UNROLL elements take
// UNROLL × IN_BYTES / 16 load instructions (ncu had shown the scalar form throttled on
// the load queue at 2^28). 1- and 2-byte integers fold a chunk's words in 32-bit ints
// (OF_NARROW) before one combine into the 64-bit accumulator.
//
// argmin/argmax (HAVE_ARG_KEY): a work-item's elements of one chunk are scanned in
// increasing index for the first strictly better order key (arg_key: NaN above or below
// every number, so the earliest NaN wins), one integer compare and two selects per
// element with a 32-bit position, and only the chunk's winner goes through combine()
// (arg_found: the value its key stands for, at its index).
// Combining every element as an (value, 64-bit index) pair, with its NaN and tie rules,
// had left f32 argmax compute-bound at 2.95 TB/s on the H200. The winner is the pair
// combine() would have kept: chunks and elements are visited in increasing index, and a
// later element replaces the best only when strictly better.

#if ORDER_FREE_WORDS
// Elements per 16-byte word and per 32-bit part of it.
#define OF_PER_WORD (16 / IN_BYTES)
#define OF_PER_PART (4 / IN_BYTES)
#define OF_WORDS_PER_ITEM (UNROLL / OF_PER_WORD)
// Bits of element e (0 … OF_PER_WORD − 1) of a word, in its low IN_BYTES bytes.
inline uint of_bits(uint4 w, uint e) {
    uint p = e / OF_PER_PART;
    uint part = p == 0 ? w.x : p == 1 ? w.y : p == 2 ? w.z : w.w;
    return part >> ((e % OF_PER_PART) * 8 * IN_BYTES);
}
#ifdef IN_IS_HALF
#define OF_VALUE(bits) value_from_bits16((ushort)(bits))
#define OF_LIFT(bits, i) lift_value((ushort)(bits), (i))
#elif IN_BYTES == 4
#define OF_VALUE(bits) ((val_t)AS_IN_FROM_UINT(bits))
#define OF_LIFT(bits, i) lift_value(AS_IN_FROM_UINT(bits), (i))
#else
// 1- and 2-byte integers: the low bytes, reinterpreted as the element type (CUDA
// truncates to two's complement).
#define OF_RAW(bits) ((in_t)((bits) & ((1u << (8 * IN_BYTES)) - 1)))
#define OF_VALUE(bits) ((val_t)OF_RAW(bits))
#define OF_LIFT(bits, i) lift_value(OF_RAW(bits), (i))
// The operator on 32-bit ints, where its result on them equals the 64-bit one's: every
// order-free operator of integers but the product (whose 32-bit result would wrap).
#if UNROLL <= 64
#if defined(OP_SUM)
#define OF_NARROW(a, b) ((a) + (b))
#elif defined(OP_MIN)
#define OF_NARROW(a, b) min((a), (b))
#elif defined(OP_MAX)
#define OF_NARROW(a, b) max((a), (b))
#elif defined(OP_AND)
#define OF_NARROW(a, b) ((a) & (b))
#elif defined(OP_OR)
#define OF_NARROW(a, b) ((a) | (b))
#elif defined(OP_XOR)
#define OF_NARROW(a, b) ((a) ^ (b))
#endif
#endif
#if defined(OF_NARROW) && IN_BYTES == 1 && defined(OP_SUM) && defined(__CUDACC__)
// Sums of bytes: dp4a adds the four bytes of a 32-bit part (each times one) to a running
// sum in one instruction, where extracting and adding them one by one had left i8 sums
// at 2.9 TB/s on the H200, bound by instructions.
#define OF_BYTE_SUM 1
inline int of_byte_sum(uint part, int sum) {
    int r;
    if ((in_t)-1 < (in_t)0)
        asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(part), "r"(0x01010101), "r"(sum));
    else
        asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(part), "r"(0x01010101), "r"(sum));
    return r;
}
#endif
#endif
#endif

inline acc_t order_free_walk(const __global in_t* in, ulong n, uint lid, ulong groups) {
    acc_t acc = IDENTITY;
    ulong chunk = (ulong)TILE_WG * UNROLL;
    ulong chunks = (n + chunk - 1) / chunk;
#if ORDER_FREE_WORDS
    // Every chunk starts 16-byte aligned when the input does (chunk is a multiple of
    // OF_PER_WORD).
    int words_aligned = ((ulong)in & 15) == 0;
#endif
    for (ulong c = get_group_id(0); c < chunks; c += groups) {
        ulong start = c * chunk;
        int whole = start + chunk <= n;
#if ORDER_FREE_WORDS
        if (whole && words_aligned) {
            // Word u of the work-item holds elements start + OF_PER_WORD·(lid + u·TILE_WG) + e.
            const __global uint4* words = (const __global uint4*)(in + start);
            uint4 w[OF_WORDS_PER_ITEM];
            for (uint u = 0; u < OF_WORDS_PER_ITEM; u++)
                w[u] = words[lid + u * TILE_WG];
            ulong first = start + (ulong)OF_PER_WORD * lid;
#ifdef HAVE_ARG_KEY
            argkey_t best = arg_key(OF_VALUE(of_bits(w[0], 0)));
            uint at = 0;
            for (uint u = 0; u < OF_WORDS_PER_ITEM; u++)
                for (uint e = 0; e < OF_PER_WORD; e++) {
                    argkey_t k = arg_key(OF_VALUE(of_bits(w[u], e)));
                    int better = ARG_BETTER(k, best);
                    best = better ? k : best;
                    at = better ? OF_PER_WORD * u * TILE_WG + e : at;
                }
            acc = combine(acc, arg_found(best, first + at));
#elif defined(OF_BYTE_SUM)
            int part = 0;
            for (uint u = 0; u < OF_WORDS_PER_ITEM; u++) {
                part = of_byte_sum(w[u].x, part);
                part = of_byte_sum(w[u].y, part);
                part = of_byte_sum(w[u].z, part);
                part = of_byte_sum(w[u].w, part);
            }
            acc = combine(acc, (acc_t)part);
#elif defined(OF_NARROW)
            // 1- and 2-byte integers: the chunk's elements folded in 32 bits, then one
            // 64-bit combine (a sum of UNROLL ≤ 64 such elements cannot leave 32 bits).
            int part = (int)OF_RAW(of_bits(w[0], 0));
            for (uint u = 0; u < OF_WORDS_PER_ITEM; u++)
                for (uint e = u == 0 ? 1 : 0; e < OF_PER_WORD; e++)
                    part = OF_NARROW(part, (int)OF_RAW(of_bits(w[u], e)));
            acc = combine(acc, (acc_t)part);
#else
            for (uint u = 0; u < OF_WORDS_PER_ITEM; u++)
                for (uint e = 0; e < OF_PER_WORD; e++)
                    acc = combine(acc, OF_LIFT(of_bits(w[u], e),
                                               first + (ulong)OF_PER_WORD * u * TILE_WG + e));
#endif
            continue;
        }
#endif
        ulong b = start + lid;
#ifdef HAVE_ARG_KEY
        val_t v[UNROLL];
        for (uint u = 0; u < UNROLL; u++)
            v[u] = whole || b + u * TILE_WG < n ? lift(in, b + u * TILE_WG).v : (val_t)0;
        // Element b itself is in range whenever any of the work-item's elements is.
        if (b < n) {
            argkey_t best = arg_key(v[0]);
            uint at = 0;
            for (uint u = 1; u < UNROLL; u++) {
                argkey_t k = arg_key(v[u]);
                int better = (whole || b + u * TILE_WG < n) && ARG_BETTER(k, best);
                best = better ? k : best;
                at = better ? u : at;
            }
            acc = combine(acc, arg_found(best, b + (ulong)at * TILE_WG));
        }
#elif defined(IN_IS_HALF) || defined(IN_IS_MAPPED)
        acc_t v[UNROLL];
        for (uint u = 0; u < UNROLL; u++)
            v[u] = whole || b + u * TILE_WG < n ? lift(in, b + u * TILE_WG) : IDENTITY;
        for (uint u = 0; u < UNROLL; u++)
            acc = combine(acc, v[u]);
#else
        in_t v[UNROLL];
        if (whole) {
            for (uint u = 0; u < UNROLL; u++)
                v[u] = in[b + u * TILE_WG];
            for (uint u = 0; u < UNROLL; u++)
                acc = combine(acc, lift_value(v[u], b + u * TILE_WG));
        } else {
            for (uint u = 0; u < UNROLL; u++)
                v[u] = b + u * TILE_WG < n ? in[b + u * TILE_WG] : (in_t)0;
            for (uint u = 0; u < UNROLL; u++)
                if (b + u * TILE_WG < n)
                    acc = combine(acc, lift_value(v[u], b + u * TILE_WG));
        }
#endif
    }
    return acc;
}
