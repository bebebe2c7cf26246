//! OpenCL C for a reduction's map (and custom combine), written from the typed tree so
//! that it computes what [`crate::eval`] computes, bit for bit where the operations are
//! exact (`+ - * /`, `sqrt`, `%`, comparisons, conversions, `min`/`max`/`abs`/`floor`/
//! `ceil`). `exp`, `log` and `pow` are the device's own and may differ in the last bits.
//!
//! - Float multiplications are written so no compiler fuses them with an addition into
//!   an FMA (`RL_FMUL`: `__fmul_rn`/`__dmul_rn` on CUDA, `FP_CONTRACT OFF` on OpenCL):
//!   a fused `acc + x*y` would round once instead of twice and change the bits.
//! - Signed integer arithmetic goes through `ulong`, where C defines wrapping.
//! - Inputs share one buffer: input k starts at byte `off_k`, each region padded to 256
//!   bytes ([`region_offsets`]); the kernel knows `n`, so the offsets cost no argument.
//!   Inputs that already lie in device memory are read where they are instead: the
//!   kernel's buffer is then a table of their addresses ([`InputLayout::Addressed`]).

use std::fmt::Write;

use redlab_core::DType;

use crate::types::{Arith, Cmp, Func, Kind, Node, Ty, Val};

/// Bytes each input's region is aligned to in the packed input buffer.
pub const REGION_ALIGN: usize = 256;

/// Byte offset of each input's region for `n` elements, and the total size.
pub fn region_offsets(inputs: &[DType], n: usize) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(inputs.len());
    let mut at = 0;
    for d in inputs {
        offsets.push(at);
        at += (n * d.size_bytes()).div_ceil(REGION_ALIGN) * REGION_ALIGN;
    }
    (offsets, at)
}

/// `RL_REGION` over a table of addresses, and `RL_IN_RESTRICT` on CUDA: the part of
/// [`InputLayout::Addressed`]'s definitions that does not depend on the table's copy.
macro_rules! addressed_region {
    () => {
        "#define RL_REGION(in, k, off) ((const __global uchar*)(((const __global ulong*)(in))[k]))\n\
         #ifndef __OPENCL_VERSION__\n\
         #define RL_IN_RESTRICT __restrict__\n\
         #endif\n"
    };
}

/// Where the kernel finds each input of a map: `RL_REGION(in, k, off)` is the first
/// byte of input `k`, given the packed layout's offset `off` of its region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputLayout {
    /// The inputs packed into the kernel's buffer, region after region
    /// ([`region_offsets`]): what the library uploads from host arrays.
    Packed,
    /// The kernel's buffer holds one 64-bit device address per input, and each input is
    /// read where it lies (several tensors already on a CUDA device, without a copy).
    /// Each address must be 16-byte aligned, as packed regions are, so whole-word loads
    /// stay aligned.
    Addressed,
}

impl InputLayout {
    /// The definition of `RL_REGION` for this layout.
    pub fn region_macro(self) -> &'static str {
        match self {
            InputLayout::Packed => "#define RL_REGION(in, k, off) ((in) + (off))\n",
            // On CUDA the production kernel copies the table into a private array
            // first (`RL_TABLE_IN_REGISTERS`, with `RL_MAP_INPUTS` from
            // [`map_function`]), whose entries the compiler keeps in registers: read
            // from global memory, each element's load took its address from the table
            // again, under the element's bounds check (results/h100-ncu-dot-paths).
            // `REDLAB_ADDRESS_TABLE=global` leaves the table in global memory, to measure
            // the copy against it (read once per process).
            InputLayout::Addressed if table_in_registers() => {
                concat!(
                    addressed_region!(),
                    "#ifndef __OPENCL_VERSION__\n#define RL_TABLE_IN_REGISTERS 1\n#endif\n"
                )
            }
            InputLayout::Addressed => addressed_region!(),
        }
    }
}

/// Whether CUDA kernels over inputs read by address copy the table into registers
/// (the default; `REDLAB_ADDRESS_TABLE=global` turns it off for measurements).
fn table_in_registers() -> bool {
    static SET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SET.get_or_init(|| std::env::var("REDLAB_ADDRESS_TABLE").map_or(true, |v| v != "global"))
}

/// The C type a value of `ty` is held in.
pub fn c_type(ty: Ty) -> &'static str {
    match ty {
        Ty::Bool => "int",
        Ty::I64 => "long",
        Ty::U64 => "ulong",
        Ty::F32 => "float",
        Ty::F64 => "double",
    }
}

/// Whether the tree (or the inputs) needs `double`.
pub fn uses_f64(node: &Node, inputs: &[DType]) -> bool {
    inputs.contains(&DType::F64) || any_node(node, &|n| n.ty == Ty::F64)
}

fn any_node(node: &Node, pred: &dyn Fn(&Node) -> bool) -> bool {
    if pred(node) {
        return true;
    }
    match &node.kind {
        Kind::Const(_) | Kind::Input(_) | Kind::Index | Kind::Var(_) => false,
        Kind::Neg(e) | Kind::Not(e) | Kind::Convert(e) | Kind::Narrow(_, e) => any_node(e, pred),
        Kind::Arith(_, a, b) | Kind::Compare(_, a, b) | Kind::Logic(_, a, b) => {
            any_node(a, pred) || any_node(b, pred)
        }
        Kind::Select(c, a, b) => any_node(c, pred) || any_node(a, pred) || any_node(b, pred),
        Kind::Call(_, args) => args.iter().any(|a| any_node(a, pred)),
    }
}

/// Whether the tree calls `exp`, `log` or `pow`, whose last bits are each device's own.
pub fn uses_device_math(node: &Node) -> bool {
    any_node(node, &|n| {
        matches!(n.kind, Kind::Call(Func::Exp | Func::Log | Func::Pow, _))
    })
}

/// Whether the tree reads the element index `i` (whose value depends on where a slice
/// of the inputs starts, and on how kernels that gather elements arrange them).
pub fn uses_index(node: &Node) -> bool {
    any_node(node, &|n| matches!(n.kind, Kind::Index))
}

/// The helper functions every generated expression may call.
pub fn helpers(fp64: bool) -> String {
    let mut s = String::from(
        "#ifdef __OPENCL_VERSION__\n#pragma OPENCL FP_CONTRACT OFF\n#define RL_FMUL(a, b) ((a) * (b))\n#define RL_DMUL(a, b) ((a) * (b))\n#else\n#define RL_FMUL(a, b) __fmul_rn((a), (b))\n#define RL_DMUL(a, b) __dmul_rn((a), (b))\n#endif\n\
inline float rl_half(ushort b) { return vload_half(0, (const half*)&b); }\n\
inline long rl_add_l(long a, long b) { return (long)((ulong)a + (ulong)b); }\n\
inline long rl_sub_l(long a, long b) { return (long)((ulong)a - (ulong)b); }\n\
inline long rl_mul_l(long a, long b) { return (long)((ulong)a * (ulong)b); }\n\
inline long rl_neg_l(long a) { return (long)(0UL - (ulong)a); }\n\
inline long rl_abs_l(long a) { return a < 0 ? rl_neg_l(a) : a; }\n\
inline long rl_div_l(long a, long b) { return b == 0 ? 0L : (b == -1L ? rl_neg_l(a) : a / b); }\n\
inline long rl_rem_l(long a, long b) { return (b == 0 || b == -1L) ? 0L : a % b; }\n\
inline ulong rl_div_ul(ulong a, ulong b) { return b == 0 ? 0UL : a / b; }\n\
inline ulong rl_rem_ul(ulong a, ulong b) { return b == 0 ? 0UL : a % b; }\n\
inline float rl_min_f(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (b < a ? b : a)); }\n\
inline float rl_max_f(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (b > a ? b : a)); }\n\
inline long rl_f2l(float x) { return isnan(x) ? 0L : (x >= 9223372036854775808.0f ? (long)0x7fffffffffffffffUL : (x <= -9223372036854775808.0f ? (long)0x8000000000000000UL : (long)x)); }\n\
inline ulong rl_f2ul(float x) { return (isnan(x) || x <= 0.0f) ? 0UL : (x >= 18446744073709551616.0f ? 0xffffffffffffffffUL : (ulong)x); }\n",
    );
    s.push_str(crate::half_round::OPENCL_F32);
    if fp64 {
        s.push_str(
            "inline double rl_min_d(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (b < a ? b : a)); }\n\
inline double rl_max_d(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (b > a ? b : a)); }\n\
inline long rl_d2l(double x) { return isnan(x) ? 0L : (x >= 9223372036854775808.0 ? (long)0x7fffffffffffffffUL : (x <= -9223372036854775808.0 ? (long)0x8000000000000000UL : (long)x)); }\n\
inline ulong rl_d2ul(double x) { return (isnan(x) || x <= 0.0) ? 0UL : (x >= 18446744073709551616.0 ? 0xffffffffffffffffUL : (ulong)x); }\n",
        );
        s.push_str(crate::half_round::OPENCL_F64);
    }
    s
}

/// `rl_map(in, i, n)`: the mapped value of element `i` (type [`c_type`] of the map),
/// after `RL_MAP_INPUTS`, the number of inputs.
pub fn map_function(map: &Node, inputs: &[DType]) -> String {
    let mut s = format!(
        "#define RL_MAP_INPUTS {}\ninline {} rl_map(const __global uchar* in, ulong i, ulong n) {{\n    ulong off = 0;\n",
        inputs.len(),
        c_type(map.ty)
    );
    for (k, d) in inputs.iter().enumerate() {
        let load = match d {
            DType::F16 => {
                format!("vload_half(i, (const __global half*)RL_REGION(in, {k}, off))")
            }
            DType::BF16 => format!(
                "as_float(((uint)((const __global ushort*)RL_REGION(in, {k}, off))[i]) << 16)"
            ),
            other => {
                let storage = storage(*other);
                let widened = c_type(Ty::of_dtype(*other));
                format!("({widened})((const __global {storage}*)RL_REGION(in, {k}, off))[i]")
            }
        };
        let _ = writeln!(
            s,
            "    {} rl_in{k} = {load};\n    off += (n * {} + {a} - 1) / {a} * {a};",
            c_type(Ty::of_dtype(*d)),
            d.size_bytes(),
            a = REGION_ALIGN
        );
    }
    let _ = writeln!(s, "    (void)off;\n    return {};\n}}", expr(map, &[]));
    s
}

/// `rl_map_word(in, e, n, out)`: the mapped values of elements `e … e + wv - 1` into
/// `out`, reading each input's `wv` elements with whole-word loads (one 16-byte load
/// where they fill 16 bytes). `e` must be a multiple of `wv`, as it is where warp tiles
/// call it, so every load is aligned (regions start at 256-byte boundaries). Loads of
/// 4-byte elements one by one at a 16-byte stride cost four times the L1 wavefronts;
/// this is the mapped form of the raw-word loads of the plain kernels.
pub fn map_word_function(map: &Node, inputs: &[DType], wv: usize) -> String {
    let ty = c_type(map.ty);
    let mut s = format!(
        "#define RL_MAP_WORD {wv}\ntypedef {ty} rl_map_t;\ninline void rl_map_word(const __global uchar* in, ulong e, ulong n, {ty}* out) {{\n    ulong off = 0;\n"
    );
    for (k, d) in inputs.iter().enumerate() {
        let size = d.size_bytes();
        let bytes = wv * size;
        let at = format!("(RL_REGION(in, {k}, off) + e * {size})");
        // The raw bits of this input's wv elements, as 32-bit words (or one ushort).
        match bytes {
            2 => {
                let _ = writeln!(
                    s,
                    "    uint rl_w{k}[1]; rl_w{k}[0] = *(const __global ushort*){at};"
                );
            }
            4 => {
                let _ = writeln!(
                    s,
                    "    uint rl_w{k}[1]; rl_w{k}[0] = *(const __global uint*){at};"
                );
            }
            8 => {
                let _ = writeln!(
                    s,
                    "    uint rl_w{k}[2]; {{ uint2 t = *(const __global uint2*){at}; rl_w{k}[0] = t.x; rl_w{k}[1] = t.y; }}"
                );
            }
            _ => {
                let words = bytes / 4;
                let _ = writeln!(s, "    uint rl_w{k}[{words}];");
                for q in 0..words / 4 {
                    let _ = writeln!(
                        s,
                        "    {{ uint4 t = ((const __global uint4*){at})[{q}]; rl_w{k}[{}] = t.x; rl_w{k}[{}] = t.y; rl_w{k}[{}] = t.z; rl_w{k}[{}] = t.w; }}",
                        4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "    off += (n * {size} + {a} - 1) / {a} * {a};",
            a = REGION_ALIGN
        );
    }
    let body = expr(map, &[]);
    for c in 0..wv {
        let _ = write!(s, "    {{");
        for (k, d) in inputs.iter().enumerate() {
            let _ = write!(
                s,
                " {} rl_in{k} = {};",
                c_type(Ty::of_dtype(*d)),
                element_of_words(*d, &format!("rl_w{k}"), c)
            );
        }
        let _ = writeln!(s, " ulong i = e + {c}; (void)i; out[{c}] = {body}; }}");
    }
    s.push_str("    (void)off;\n}\n");
    s
}

/// `rl_map_bits(b)`: the mapped value of one element of a one-input map whose input holds
/// 2- or 4-byte elements (`input`), given the element's raw bits (2-byte elements in the
/// low 16). Kernels that load whole words of 4 elements (the segment kernels' columns
/// and rows) map each word's parts with it; the map must not read the element index
/// `i`, which they do not pass. `None` for other inputs.
pub fn map_bits_function(map: &Node, input: DType) -> Option<String> {
    if !matches!(input.size_bytes(), 2 | 4) || uses_index(map) {
        return None;
    }
    Some(format!(
        "inline {} rl_map_bits(uint rl_b) {{\n    uint rl_w[1] = {{rl_b}};\n    {} rl_in0 = {};\n    return {};\n}}\n",
        c_type(map.ty),
        c_type(Ty::of_dtype(input)),
        element_of_words(input, "rl_w", 0),
        expr(map, &[])
    ))
}

/// Element `c` of the raw words `w` of an input of `dtype`, widened to its loaded type.
fn element_of_words(dtype: DType, w: &str, c: usize) -> String {
    let size = dtype.size_bytes();
    let bits = match size {
        8 => format!(
            "(((ulong){w}[{}] << 32) | (ulong){w}[{}])",
            2 * c + 1,
            2 * c
        ),
        4 => format!("{w}[{c}]"),
        2 => format!("(({w}[{}] >> {}) & 0xffffu)", c / 2, 16 * (c % 2)),
        _ => format!("(({w}[{}] >> {}) & 0xffu)", c / 4, 8 * (c % 4)),
    };
    match dtype {
        DType::F32 => format!("as_float({bits})"),
        DType::F64 => format!("as_double({bits})"),
        DType::F16 => format!("rl_half((ushort){bits})"),
        DType::BF16 => format!("as_float({bits} << 16)"),
        DType::I8 => format!("(long)(signed char){bits}"),
        DType::I16 => format!("(long)(short){bits}"),
        DType::I32 => format!("(long)(int){bits}"),
        DType::I64 => format!("(long){bits}"),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => format!("(ulong){bits}"),
    }
}

/// `rl_post(r, n)`: `post` over a result `r` held as `r_ty` and the element count `n`,
/// returning `post`'s own type, as `Reduction::finish` computes it on the host.
pub fn post_function(post: &Node, r_ty: Ty) -> String {
    format!(
        "inline {} rl_post({} r, ulong n) {{\n    (void)r;\n    (void)n;\n    return {};\n}}\n",
        c_type(post.ty),
        c_type(r_ty),
        expr(post, &["r", "n"])
    )
}

/// A C expression for `node`; `vars` names the part's variables (`a`, `b`).
pub fn expr(node: &Node, vars: &[&str]) -> String {
    let e = |n: &Node| expr(n, vars);
    match &node.kind {
        Kind::Const(v) => constant(*v),
        Kind::Input(k) => {
            // Inputs are loaded in their own class; the checker made the node's type equal.
            format!("rl_in{k}")
        }
        Kind::Index => "i".into(),
        Kind::Var(k) => vars.get(*k).copied().unwrap_or("0").to_string(),
        Kind::Neg(a) => match node.ty {
            Ty::I64 => format!("rl_neg_l({})", e(a)),
            Ty::U64 => format!("(0UL - {})", e(a)),
            _ => format!("(-{})", e(a)),
        },
        Kind::Not(a) => format!("(!{})", e(a)),
        Kind::Arith(op, a, b) => arith(*op, node.ty, &e(a), &e(b)),
        Kind::Compare(op, a, b) => {
            let sym = match op {
                Cmp::Eq => "==",
                Cmp::Ne => "!=",
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
            };
            format!("(int)({} {sym} {})", e(a), e(b))
        }
        Kind::Logic(and, a, b) => {
            format!(
                "(int)({} {} {})",
                e(a),
                if *and { "&&" } else { "||" },
                e(b)
            )
        }
        Kind::Select(c, a, b) => format!("({} ? {} : {})", e(c), e(a), e(b)),
        Kind::Call(func, args) => {
            let x = e(&args[0]);
            let y = args.get(1).map(e).unwrap_or_default();
            match (func, node.ty) {
                (Func::IsNan, _) => format!("(int)isnan({x})"),
                (Func::Min, Ty::F32) => format!("rl_min_f({x}, {y})"),
                (Func::Max, Ty::F32) => format!("rl_max_f({x}, {y})"),
                (Func::Min, Ty::F64) => format!("rl_min_d({x}, {y})"),
                (Func::Max, Ty::F64) => format!("rl_max_d({x}, {y})"),
                (Func::Min, _) => format!("({y} < {x} ? {y} : {x})"),
                (Func::Max, _) => format!("({y} > {x} ? {y} : {x})"),
                (Func::Abs, Ty::I64) => format!("rl_abs_l({x})"),
                (Func::Abs, Ty::F32 | Ty::F64) => format!("fabs({x})"),
                (Func::Floor, Ty::F32 | Ty::F64) => format!("floor({x})"),
                (Func::Ceil, Ty::F32 | Ty::F64) => format!("ceil({x})"),
                (Func::Abs | Func::Floor | Func::Ceil, _) => x,
                (Func::Sqrt, _) => format!("sqrt({x})"),
                (Func::Exp, _) => format!("exp({x})"),
                (Func::Log, _) => format!("log({x})"),
                (Func::Pow, _) => format!("pow({x}, {y})"),
            }
        }
        Kind::Convert(a) => convert(a.ty, node.ty, &e(a)),
        Kind::Narrow(d @ (DType::F16 | DType::BF16), a) => {
            let name = if *d == DType::F16 {
                "rl_f16"
            } else {
                "rl_bf16"
            };
            let suffix = if a.ty == Ty::F64 { "d" } else { "f" };
            format!("{name}_{suffix}({})", e(a))
        }
        Kind::Narrow(d, a) => {
            let wide = c_type(node.ty);
            let st = storage(*d);
            if a.ty.is_float() {
                saturate(*d, c_type(a.ty), wide, &e(a))
            } else {
                format!("({wide})({st})({})", e(a))
            }
        }
    }
}

/// Float → narrow integer, saturating, NaN → 0, as one C expression (OpenCL C has no
/// statement expressions). The operand appears more than once, which is harmless:
/// expressions have no side effects. The bounds are powers of two, exact in any float.
fn saturate(d: DType, ft: &str, wide: &str, x: &str) -> String {
    let bits = (d.size_bytes() * 8) as i32;
    let st = storage(d);
    let (lo, hi, min, max) = if d.is_signed_integer() {
        let half = 1i64 << (bits - 1);
        (
            -(half as f64),
            half as f64,
            format!("(-{}L)", half),
            format!("{}L", half - 1),
        )
    } else {
        (
            0.0,
            2f64.powi(bits),
            "0L".to_string(),
            format!("{}L", (1i64 << bits) - 1),
        )
    };
    format!(
        "(isnan({x}) ? ({wide})0 : ({x} >= ({ft}){hi:.1} ? ({wide}){max} : ({x} <= ({ft}){lo:.1} ? ({wide}){min} : ({wide})({st})({x}))))"
    )
}

/// The OpenCL C type an element of `d` is stored as (`ushort` for f16/bf16 bits). i8 is
/// `signed char`: OpenCL C's `char` is signed, but the same source built as CUDA takes
/// the host compiler's `char`, which is unsigned on some hosts (aarch64).
pub fn storage(d: DType) -> &'static str {
    match d {
        DType::I8 => "signed char",
        DType::U8 => "uchar",
        DType::I16 => "short",
        DType::U16 | DType::F16 | DType::BF16 => "ushort",
        DType::I32 => "int",
        DType::U32 => "uint",
        DType::I64 => "long",
        DType::U64 => "ulong",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

fn arith(op: Arith, ty: Ty, a: &str, b: &str) -> String {
    match (ty, op) {
        (Ty::I64, Arith::Add) => format!("rl_add_l({a}, {b})"),
        (Ty::I64, Arith::Sub) => format!("rl_sub_l({a}, {b})"),
        (Ty::I64, Arith::Mul) => format!("rl_mul_l({a}, {b})"),
        (Ty::I64, Arith::Div) => format!("rl_div_l({a}, {b})"),
        (Ty::I64, Arith::Rem) => format!("rl_rem_l({a}, {b})"),
        (Ty::U64, Arith::Div) => format!("rl_div_ul({a}, {b})"),
        (Ty::U64, Arith::Rem) => format!("rl_rem_ul({a}, {b})"),
        (Ty::F32, Arith::Mul) => format!("RL_FMUL({a}, {b})"),
        (Ty::F64, Arith::Mul) => format!("RL_DMUL({a}, {b})"),
        (Ty::F32 | Ty::F64, Arith::Rem) => format!("fmod({a}, {b})"),
        (_, op) => {
            let sym = match op {
                Arith::Add => "+",
                Arith::Sub => "-",
                Arith::Mul => "*",
                Arith::Div => "/",
                Arith::Rem => "%",
                Arith::BitAnd => "&",
                Arith::BitOr => "|",
                Arith::BitXor => "^",
            };
            format!("({a} {sym} {b})")
        }
    }
}

/// `x` of type `from` converted to `to` by the language's rules, as C.
pub fn convert(from: Ty, to: Ty, x: &str) -> String {
    match (from, to) {
        (_, Ty::Bool) => format!("(int)({x} != 0)"),
        (Ty::F32, Ty::I64) => format!("rl_f2l({x})"),
        (Ty::F64, Ty::I64) => format!("rl_d2l({x})"),
        (Ty::F32, Ty::U64) => format!("rl_f2ul({x})"),
        (Ty::F64, Ty::U64) => format!("rl_d2ul({x})"),
        (_, to) => format!("({})({x})", c_type(to)),
    }
}

/// A constant, by its bits (exact, and NaN and infinities need no macros).
pub fn constant(v: Val) -> String {
    match v {
        Val::Bool(b) => (b as i32).to_string(),
        Val::I64(x) => format!("((long)0x{:x}UL)", x as u64),
        Val::U64(x) => format!("0x{x:x}UL"),
        Val::F32(x) => format!("as_float(0x{:08x}u)", x.to_bits()),
        Val::F64(x) => format!("as_double(0x{:016x}UL)", x.to_bits()),
    }
}
