// The statistics' per-lane state and its steps (included by statistics.cl): the empty
// state, one element's push, the merges (general, of equal known counts, of the count
// tables' prefixes, and of counts compiled in), a tile's first element and the store the
// host reads. The order and rounding of every step are the host's
// (redlab_cpu::statistics).

typedef struct {
    double a; // moments: count; log-sum-exp: max; extremes: kept count
    double b; // moments: mean; log-sum-exp: Σ exp(x − max); extremes: best
    double c; // moments: M2
} st_t;

inline st_t st_empty(void) {
    st_t s;
#if STAT_KIND == 1
    s.a = -(double)INFINITY;
#else
    s.a = 0.0;
#endif
    s.b = 0.0;
    s.c = 0.0;
    return s;
}

// One more element; `inverse` is 1 / (the lane's count after it), the row's reciprocal.
inline void st_push(st_t* s, double x, double inverse) {
#if ST_MOMENTS
    s->a = s->a + 1.0;
    double d = x - s->b;
    s->b = s->b + ST_MUL(d, inverse);
    s->c = s->c + ST_MUL(d, x - s->b);
#elif STAT_KIND == 1
    (void)inverse;
    // Both exponents, exp(x − max) for a smaller x and exp(max − x) for a larger one (or
    // NaN, which then stays in the sum), are −|x − max|: one exponential, no divergence.
    // Equal elements add exactly 1 (equal infinities would give exp(NaN)).
    // Both sides are computed and one is selected, without a branch, so that a
    // work-item's independent pushes (its lanes, its rows) can overlap their
    // exponentials: each is a chain of dependent f64 steps.
    double e = canonical_exp(-fabs(x - s->a));
    e = x == s->a ? 1.0 : e;
    bool keep = x <= s->a;
    double added = s->b + e;
    double scaled = ST_MUL(s->b, e) + 1.0;
    s->b = keep ? added : scaled;
    s->a = keep ? s->a : x;
#else
    (void)inverse;
    if (!isnan(x)) {
        s->a = s->a + 1.0;
#if STAT_KIND == 2
        // Ties of zeros keep -0.0 (the host's rule), so the order cannot show.
        bool better = x < s->b || (x == s->b && signbit(x) && !signbit(s->b));
#else
        bool better = x > s->b || (x == s->b && !signbit(x) && signbit(s->b));
#endif
        if (s->a == 1.0 || better) {
            s->b = x;
        }
    }
#endif
}

// `lo` holds the lower indices.
inline st_t st_merge(st_t lo, st_t hi) {
#if ST_MOMENTS
    if (hi.a == 0.0) return lo;
    if (lo.a == 0.0) return hi;
    st_t r;
    r.a = lo.a + hi.a;
    double d = hi.b - lo.b;
    if (lo.a == hi.a) {
        // Equal counts c (every merge of whole lanes, and of lanes holding one element
        // each): c / 2c is exactly 0.5 and c·c / 2c exactly c / 2 (c ≤ 8192 inside a
        // tile, so c·c is exact), so this is the general formula's result bit for bit,
        // without its two divisions: var of 65536 rows of 1024 f32 on the H200 read
        // 851 GB/s with them, 1214 without (results/h200-stat-warp-rows).
        r.b = lo.b + ST_MUL(d, 0.5);
        r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), ST_MUL(lo.a, 0.5));
        return r;
    }
    r.b = lo.b + ST_MUL(d, hi.a / r.a);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), ST_MUL(lo.a, hi.a) / r.a);
    return r;
#elif STAT_KIND == 1
    // Without a branch (see st_push), and the host's merge bit for bit: an empty side
    // (max −∞, sum 0) adds an exact 0 (its exp(−∞) is 0, or it holds the maximum with a
    // sum of 0); equal maxima keep both sums unscaled, the lower side's maximum (−0.0
    // before +0.0); a NaN maximum gives NaN (its bits are not promised).
    st_t r;
    r.c = 0.0;
    double m = lo.a >= hi.a ? lo.a : hi.a;
    // The side holding the maximum keeps its sum (exp(∞ − ∞) would be NaN); the other's
    // (its max − max) is −|lo.a − hi.a| exactly, so one exponential serves both.
    double e = canonical_exp(-fabs(lo.a - hi.a));
    double left = lo.a == m ? lo.b : ST_MUL(lo.b, e);
    double right = hi.a == m ? hi.b : ST_MUL(hi.b, e);
    bool nan = isnan(lo.a) || isnan(hi.a);
    r.a = nan ? (isnan(lo.a) ? lo.a : hi.a) : m;
    r.b = nan ? r.a : left + right;
    return r;
#else
    if (hi.a == 0.0) return lo;
    if (lo.a == 0.0) return hi;
    st_t r = lo;
    r.a = lo.a + hi.a;
#if STAT_KIND == 2
    bool better = hi.b < lo.b || (hi.b == lo.b && signbit(hi.b) && !signbit(lo.b));
#else
    bool better = hi.b > lo.b || (hi.b == lo.b && !signbit(hi.b) && signbit(lo.b));
#endif
    if (better) r.b = hi.b;
    return r;
#endif
}

// st_merge of two non-empty states of the same `count` of elements, `count` a literal
// where it is called (a whole row's subtrees): for the moments, the equal-count branch
// without the count tests, so the same bits with constants the compiler folds; the
// other states have no count to know and merge as usual.
inline st_t st_merge_equal(st_t lo, st_t hi, double count) {
#if ST_MOMENTS
    st_t r;
    r.a = count + count;
    double d = hi.b - lo.b;
    r.b = lo.b + ST_MUL(d, 0.5);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), count * 0.5);
    return r;
#else
    (void)count;
    return st_merge(lo, hi);
#endif
}

#if ST_MOMENTS && defined(ST_PREFIX_WEIGHTS)
// st_merge where the lanes that hold elements are a prefix of the lanes folded by
// halving (every lane j < len holds ⌈(len − j) / stride⌉ elements): the lower side then
// holds the same count c as the upper one or c + 1, and every count is below 1024 at
// the call sites. The unequal merge's two divisions, c / (2c + 1) and c(c + 1) / (2c + 1),
// depend on c alone: they are read from st_mean_weight and st_m2_weight, which the
// host filled with the same correctly rounded quotients, so the bits are st_merge's.
// On the H200 the divisions were about a third of the instructions of var along rows
// of 300 (results/h200-stat-span-pairs). No branch: an empty upper side (so, by the
// prefix, any empty side) keeps the lower one.
inline st_t st_merge_prefix(st_t lo, st_t hi) {
    double c = hi.a;
    // The count as an index without a conversion: adding 2^52 leaves the integer c in
    // the low bits (on the H200 var and nanmean read 0.2–1.6% more than with a conversion,
    // results/h200-stat-prefix-weights). The mask keeps any state's count in bounds.
    uint k = (uint)as_ulong(c + 4503599627370496.0) & (ST_PREFIX_WEIGHTS - 1u);
    bool equal = lo.a == c;
    double mean_weight = equal ? 0.5 : st_mean_weight[k];
    double m2_weight = equal ? ST_MUL(c, 0.5) : st_m2_weight[k];
    double d = hi.b - lo.b;
    st_t r;
    r.a = lo.a + c;
    r.b = lo.b + ST_MUL(d, mean_weight);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), m2_weight);
    return c == 0.0 ? lo : r;
}

// st_merge_prefix for counts of any size (a whole tile's lanes fold up to 8192 elements):
// past the tables, st_merge's divisions, which only the last few merges of a long tile
// reach.
inline st_t st_merge_prefix_large(st_t lo, st_t hi) {
    if (hi.a >= (double)ST_PREFIX_WEIGHTS) return st_merge(lo, hi);
    return st_merge_prefix(lo, hi);
}
#else
#define st_merge_prefix st_merge
#define st_merge_prefix_large st_merge
#endif

// A lane's first element: st_push into an empty state. Log-sum-exp's push would take
// exp(−∞) = 0 there; this gives its result without the exponential: the maximum is x and
// the sum 1 (NaN for NaN, whose bits are not promised).
inline st_t st_first(double x) {
#if STAT_KIND == 1
    st_t s;
    s.a = x;
    s.b = isnan(x) ? x : 1.0;
    s.c = 0.0;
    return s;
#else
    st_t s = st_empty();
    st_push(&s, x, 1.0);
    return s;
#endif
}

#if ST_MOMENTS
// st_merge of a lower side of `lo_n` and an upper side of `hi_n` elements, neither empty.
// The product of the counts is taken in integers (exact, as the f64 product is), so that
// with literal counts both quotients are constants.
inline st_t st_merge_counted(st_t lo, st_t hi, uint lo_n, uint hi_n) {
    double n = (double)(lo_n + hi_n);
    double d = hi.b - lo.b;
    st_t r;
    r.a = n;
    r.b = lo.b + ST_MUL(d, (double)hi_n / n);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), (double)(lo_n * hi_n) / n);
    return r;
}

// The join of a binary counter's lower side `lo` and upper side `hi` when the work-item
// holds one lane more (`more`) or not: (lo_m, hi_m) and (lo_l, hi_l) are the sides' counts
// in either case, literals where it is called (the columns' and rows' walks for a length
// compiled in). Where both cases agree, which is everywhere but on the path of the one
// lane they differ in, the join is one constant form; there, both are computed and one
// selected, so work-items of either kind in one warp do not diverge.
inline st_t st_known_join(st_t lo, st_t hi, uint lo_m, uint hi_m, uint lo_l, uint hi_l,
                          bool more) {
    st_t with_more = hi_m == 0 ? lo : lo_m == 0 ? hi : st_merge_counted(lo, hi, lo_m, hi_m);
    if (lo_m == lo_l && hi_m == hi_l) {
        return with_more;
    }
    st_t without = hi_l == 0 ? lo : lo_l == 0 ? hi : st_merge_counted(lo, hi, lo_l, hi_l);
    return more ? with_more : without;
}

// Leaf `leaf` of a binary counter whose subtrees' states are `stack` and their counts in
// either case `count_m` and `count_l` (st_known_join): its lane's first `n_m` elements
// `x[0 …]` in the case of one lane more, its first `n_l` otherwise (n_m − n_l is 0 or 1),
// pushed in order, then merged with the subtrees it closes, one per trailing one bit of
// its index below `levels` (the older side lower).
inline void st_known_push(st_t* stack, uint* count_m, uint* count_l, uint leaf, uint levels,
                          const double* x, uint n_m, uint n_l, bool more) {
    st_t node = n_l ? st_first(x[0]) : st_empty();
    // No unroll pragma here: the bounds are literals only once this is inlined, and PoCL
    // warned where it could not honour one.
    for (uint r = 1; r < n_l; r++) {
        st_push(&node, x[r], 1.0 / (double)(r + 1));
    }
    if (n_m != n_l) {
        st_t longer = node;
        if (n_l == 0) {
            longer = st_first(x[0]);
        } else {
            st_push(&longer, x[n_l], 1.0 / (double)(n_l + 1));
        }
        node = more ? longer : node;
    }
    uint top = 0;
    for (uint l = 0; l < levels; l++) {
        if (((leaf >> l) & 1u) == 0) break;
        node = st_known_join(stack[l], node, count_m[l], n_m, count_l[l], n_l, more);
        n_m += count_m[l];
        n_l += count_l[l];
        top = l + 1;
    }
    stack[top] = node;
    count_m[top] = n_m;
    count_l[top] = n_l;
}

#endif

// Task `task`'s state, where the host reads it.
inline void st_store(__global double* out, ulong task, st_t s) {
    out[3 * task] = s.a;
    out[3 * task + 1] = s.b;
    out[3 * task + 2] = s.c;
}
