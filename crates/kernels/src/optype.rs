//! The operator and type declarations injected into every kernel at build time, the way
//! the Khronos SDK sample appends its operator before building.
//!
//! Every kernel is written against one small contract:
//!
//! - `in_t`: how input elements are stored (`ushort` for f16/bf16 bits);
//! - `acc_t`: a partial result; a struct `{ v, i }` for argmin/argmax;
//! - `IDENTITY`: the partial that changes nothing;
//! - `lift(in, i)`: element `i` of the input as a partial (it carries `i` for argmin);
//! - `combine(a, b)`: two partials into one, `a` covering lower indices when order
//!   matters (float sums); for selections it is commutative (ties go to the lower index).
//!
//! Integer partials are 64 bits wide (sign- or zero-extended): sums and products wrap
//! there, and the host truncates to the accumulator, which is exact. Float min/max work on
//! an integer key that orders -0.0 below +0.0, as the CPU backend does.

use redlab_core::{DType, Op, Problem};

/// What the generated declarations need and produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpType {
    /// The OpenCL C text.
    pub source: String,
    /// Whether the declarations use `double` (the device needs `cl_khr_fp64`).
    pub needs_fp64: bool,
    /// Bytes of one `acc_t` on the device.
    pub acc_bytes: usize,
    /// The value part of `acc_t`.
    pub value: ValueKind,
    /// Whether float min/max partials are integer keys (see [`op_type`]) rather than
    /// floats.
    pub float_key: bool,
}

/// The value domain partials are computed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `long`: signed integers, sign-extended.
    I64,
    /// `ulong`: unsigned integers, zero-extended.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl ValueKind {
    fn c_type(self) -> &'static str {
        match self {
            ValueKind::I64 => "long",
            ValueKind::U64 => "ulong",
            ValueKind::F32 => "float",
            ValueKind::F64 => "double",
        }
    }
}

/// The OpenCL C storage type of an input element (one table with the expression
/// generator's).
pub fn storage_type(dtype: DType) -> &'static str {
    redlab_expr::codegen::storage(dtype)
}

/// The value domain of a problem's partials.
pub fn value_kind(problem: &Problem) -> ValueKind {
    let dtype = problem.dtype;
    if dtype.is_integer() {
        return if dtype.is_signed_integer() {
            ValueKind::I64
        } else {
            ValueKind::U64
        };
    }
    // Sums and products accumulate in the accumulator; selections keep the value, and
    // every f16/bf16/f32 value is exact in float.
    let wide = if problem.op.is_arithmetic() {
        problem.acc == DType::F64
    } else {
        dtype == DType::F64
    };
    if wide {
        ValueKind::F64
    } else {
        ValueKind::F32
    }
}

/// The shape of one device partial of `problem`, without the declarations' text: what
/// host code that encodes or decodes partials needs per call. Building the whole
/// [`OpType`] source (a few kilobytes of formatted text) to read these had cost about a
/// microsecond per enqueued reduction from Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialLayout {
    /// The value part of `acc_t`.
    pub value: ValueKind,
    /// Bytes of one `acc_t` on the device.
    pub acc_bytes: usize,
    /// Whether float min/max partials are integer keys rather than floats.
    pub float_key: bool,
    /// Whether the declarations use `double` (the device needs `cl_khr_fp64`).
    pub needs_fp64: bool,
}

/// [`PartialLayout`] of `problem`: the same fields [`op_type`] reports (reading the
/// input's own elements, not through a map).
pub fn partial_layout(problem: &Problem) -> PartialLayout {
    let value = value_kind(problem);
    let is_float = matches!(value, ValueKind::F32 | ValueKind::F64);
    let float_key = is_float && matches!(problem.op, Op::Min | Op::Max);
    let acc_bytes = match problem.op {
        // A value and a 64-bit index.
        Op::ArgMin | Op::ArgMax => 16,
        _ if value == ValueKind::F32 => 4,
        _ => 8,
    };
    PartialLayout {
        value,
        acc_bytes,
        float_key,
        needs_fp64: value == ValueKind::F64 || problem.dtype == DType::F64,
    }
}

/// Generates the declarations for `problem`.
pub fn op_type(problem: &Problem) -> OpType {
    op_type_reading(problem, None)
}

/// How elements are read when they are not the input's own elements: the text of
/// `rl_map(in, i, n)` (and its helpers) from a user-defined map, whose result is the
/// problem's input type. The input buffer holds every input array ([`crate::mapped`]).
pub struct MapSource<'a> {
    /// Helpers and `rl_map`, in OpenCL C.
    pub text: &'a str,
    /// Whether the map computes in `double`.
    pub needs_fp64: bool,
}

/// The declarations for `problem`, reading elements through `map` where given.
///
/// A mapped `lift` needs `n` to find the inputs after the first, so it is
/// `lift_n(in, i, n)` behind a `lift(in, i)` macro that takes `n` from the calling
/// kernel (the production kernel names its length `n`); `IN_IS_MAPPED` tells kernels to
/// read through `lift` only (no raw-word loads).
pub fn op_type_reading(problem: &Problem, map: Option<&MapSource<'_>>) -> OpType {
    let value = value_kind(problem);
    let v = value.c_type();
    let (in_t, read, lift_sig) = match map {
        Some(_) => (
            "uchar",
            format!("({v})rl_map(in, i, n)"),
            "inline acc_t lift_n(const __global in_t* in, ulong i, ulong n)",
        ),
        None => (
            storage_type(problem.dtype),
            match problem.dtype {
                DType::F16 => format!("({v})vload_half(i, (const __global half*)in)"),
                DType::BF16 => format!("({v})as_float(((uint)in[i]) << 16)"),
                _ => format!("({v})in[i]"),
            },
            "inline acc_t lift(const __global in_t* in, ulong i)",
        ),
    };
    let is_float = matches!(value, ValueKind::F32 | ValueKind::F64);
    let key = match value {
        ValueKind::F32 => "inline int vkey(float x) { int b = as_int(x); return b ^ ((b >> 31) & 0x7fffffff); }\n",
        ValueKind::F64 => "inline long vkey(double x) { long b = as_long(x); return b ^ ((b >> 63) & 0x7fffffffffffffffL); }\n",
        _ => "",
    };
    // "b comes before a" in the order of the operator (strictly).
    let before = |want_min: bool| -> String {
        let cmp = if want_min { "<" } else { ">" };
        if is_float {
            format!("(vkey(b) {cmp} vkey(a))")
        } else {
            format!("(b {cmp} a)")
        }
    };
    let extreme_identity = |want_min: bool| -> &'static str {
        match (value, want_min) {
            (ValueKind::I64, true) => "LONG_MAX",
            (ValueKind::I64, false) => "LONG_MIN",
            (ValueKind::U64, true) => "ULONG_MAX",
            (ValueKind::U64, false) => "0UL",
            (ValueKind::F32, true) => "INFINITY",
            (ValueKind::F32, false) => "(-INFINITY)",
            (ValueKind::F64, true) => "((double)INFINITY)",
            (ValueKind::F64, false) => "((double)-INFINITY)",
        }
    };
    let mut s = String::new();
    s.push_str(&format!("typedef {in_t} in_t;\ntypedef {v} val_t;\n{key}"));
    if let Some(map) = map {
        s.push_str(map.text);
    }
    // Float min/max run on integer keys: one lift per element (NaN becomes the key that
    // wins, so it propagates), then a single integer min/max per combine. Comparing floats
    // with NaN and signed-zero rules in every combine made these kernels compute-bound.
    let float_key = is_float && matches!(problem.op, Op::Min | Op::Max);
    let acc_bytes = if float_key {
        let want_min = problem.op == Op::Min;
        let (k, max, min) = if value == ValueKind::F32 {
            ("int", "0x7fffffff", "(-0x7fffffff - 1)")
        } else {
            ("long", "0x7fffffffffffffffL", "(-0x7fffffffffffffffL - 1L)")
        };
        let (identity, nan_key, pick) = if want_min {
            (max, min, "min")
        } else {
            (min, max, "max")
        };
        s.push_str(&format!(
            "typedef {k} acc_t;\n\
             #define IDENTITY (({k}){identity})\n\
             #define NAN_KEY (({k}){nan_key})\n\
             {lift_sig} {{ val_t x = {read}; return isnan(x) ? NAN_KEY : vkey(x); }}\n\
             inline acc_t combine(acc_t a, acc_t b) {{ return {pick}(a, b); }}\n"
        ));
        if value == ValueKind::F32 {
            4
        } else {
            8
        }
    } else {
        match problem.op {
            Op::ArgMin | Op::ArgMax => {
                let want_min = problem.op == Op::ArgMin;
                let cmp = if want_min { "<" } else { ">" };
                let order = if is_float {
                    format!("vkey(b.v) {cmp} vkey(a.v)")
                } else {
                    format!("b.v {cmp} a.v")
                };
                let equal = if is_float {
                    "vkey(b.v) == vkey(a.v)"
                } else {
                    "b.v == a.v"
                };
                let nan = if is_float {
                    "    int an = isnan(a.v), bn = isnan(b.v);\n    if (an || bn) return (an && bn) ? (b.i < a.i ? b : a) : (an ? a : b);\n"
                } else {
                    ""
                };
                // A scan over elements in increasing index keeps the first strictly
                // better key: the key orders values as combine() does, with NaN above
                // (argmax) or below (argmin) every number, so the earliest NaN wins.
                // Selects on keys compile without branches, so a work-item's loads all
                // go out before its compares (branchy combines held one load in flight).
                let (key_t, key_of) = match (value, want_min) {
                    (ValueKind::F32, false) => ("int", "isnan(x) ? 0x7fffffff : vkey(x)"),
                    (ValueKind::F32, true) => ("int", "isnan(x) ? (-0x7fffffff - 1) : vkey(x)"),
                    (ValueKind::F64, false) => ("long", "isnan(x) ? 0x7fffffffffffffffL : vkey(x)"),
                    (ValueKind::F64, true) => {
                        ("long", "isnan(x) ? (-0x7fffffffffffffffL - 1L) : vkey(x)")
                    }
                    // 1- and 2-byte integers compare as 32-bit ints, not as the 64-bit
                    // values they are held in.
                    _ if problem.dtype.size_bytes() <= 2 => ("int", "(int)x"),
                    _ => ("val_t", "x"),
                };
                // The value a key stands for (the key's xor is its own inverse; the NaN
                // keys turn into NaNs): what a scan over keys hands to combine().
                let value_of = match value {
                    ValueKind::F32 => "as_float(k ^ ((k >> 31) & 0x7fffffff))",
                    ValueKind::F64 => "as_double(k ^ ((k >> 63) & 0x7fffffffffffffffL))",
                    _ => "(val_t)k",
                };
                s.push_str(&format!(
                "typedef struct {{ val_t v; ulong i; }} acc_t;\n\
                 #define NO_INDEX 0xffffffffffffffffUL\n\
                 inline acc_t identity_acc(void) {{ acc_t r; r.v = ({v})0; r.i = NO_INDEX; return r; }}\n\
                 #define IDENTITY identity_acc()\n\
                 {lift_sig} {{ acc_t r; r.v = {read}; r.i = i; return r; }}\n\
                 inline acc_t combine(acc_t a, acc_t b) {{\n\
                 \x20   if (a.i == NO_INDEX) return b;\n\
                 \x20   if (b.i == NO_INDEX) return a;\n\
                 {nan}\
                 \x20   if ({order}) return b;\n\
                 \x20   if ({equal} && b.i < a.i) return b;\n\
                 \x20   return a;\n\
                 }}\n\
                 #define HAVE_ARG_KEY 1\n\
                 typedef {key_t} argkey_t;\n\
                 inline argkey_t arg_key(val_t x) {{ return {key_of}; }}\n\
                 inline val_t arg_value(argkey_t k) {{ return {value_of}; }}\n\
                 inline acc_t arg_found(argkey_t k, ulong i) {{ acc_t r; r.v = arg_value(k); r.i = i; return r; }}\n\
                 #define ARG_BETTER(k, best) ((k) {cmp} (best))\n"
            ));
                16
            }
            op => {
                let (identity, body) = match op {
                    Op::Sum => (
                        if is_float {
                            format!("(({v})-0.0)")
                        } else {
                            format!("(({v})0)")
                        },
                        "a + b".to_string(),
                    ),
                    Op::Prod => (format!("(({v})1)"), "a * b".to_string()),
                    Op::And => (format!("(({v})~({v})0)"), "a & b".to_string()),
                    Op::Or => (format!("(({v})0)"), "a | b".to_string()),
                    Op::Xor => (format!("(({v})0)"), "a ^ b".to_string()),
                    Op::Min | Op::Max => {
                        let want_min = op == Op::Min;
                        let pick = format!("{} ? b : a", before(want_min));
                        let body = if is_float {
                            format!("isnan(a) ? a : (isnan(b) ? b : ({pick}))")
                        } else {
                            pick
                        };
                        (extreme_identity(want_min).to_string(), body)
                    }
                    Op::ArgMin | Op::ArgMax => unreachable!("handled above"),
                };
                s.push_str(&format!(
                    "typedef val_t acc_t;\n\
                 #define IDENTITY {identity}\n\
                 {lift_sig} {{ return {read}; }}\n\
                 inline acc_t combine(acc_t a, acc_t b) {{ return {body}; }}\n"
                ));
                if value == ValueKind::F32 {
                    4
                } else {
                    8
                }
            }
        }
    };
    if map.is_some() {
        s.push_str("#define lift(p, i) lift_n((p), (i), n)\n");
    }
    s.push_str(&contract_extras(
        problem,
        value,
        acc_bytes,
        float_key,
        map.is_some(),
    ));
    let needs_fp64 =
        value == ValueKind::F64 || problem.dtype == DType::F64 || map.is_some_and(|m| m.needs_fp64);
    let mut head = String::new();
    if needs_fp64 {
        head.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    head.push_str(&s);
    OpType {
        source: head,
        needs_fp64,
        acc_bytes,
        value,
        float_key,
    }
}

/// Names for the rest of the contract: which operator (`OP_SUM` …), the value domain,
/// `ACC_BYTES`, bit casts for atomics, the built-in collectives where the operator has
/// one, and `lift_value` for kernels that load raw bits themselves.
fn contract_extras(
    problem: &Problem,
    value: ValueKind,
    acc_bytes: usize,
    float_key: bool,
    mapped: bool,
) -> String {
    let mut s = format!(
        "#define OP_{} 1\n#define ACC_BYTES {acc_bytes}\n#define VALUE_IS_{} 1\n",
        problem.op.name().to_ascii_uppercase(),
        if matches!(value, ValueKind::I64 | ValueKind::U64) {
            "INTEGER"
        } else {
            "FLOAT"
        }
    );
    s.push_str(match (value, float_key) {
        (ValueKind::I64, _) | (ValueKind::F64, true) => "#define AS_ACC64(x) as_long(x)\n",
        (ValueKind::U64, _) => "#define AS_ACC64(x) (x)\n",
        (ValueKind::F32, true) => "#define AS_ACC32(x) as_int(x)\n",
        (ValueKind::F32, false) => "#define AS_ACC32(x) as_float(x)\n",
        (ValueKind::F64, false) => "#define AS_ACC64(x) as_double(x)\n",
    });
    if let Some(name) = builtin_collective(problem) {
        s.push_str(&format!(
            "#define WG_REDUCE(x) work_group_reduce_{name}(x)\n#define SG_REDUCE(x) sub_group_reduce_{name}(x)\n"
        ));
    }
    // lift_value(x, i): the partial of an element whose raw value the kernel loaded
    // itself; halves (raw bits) get theirs after value_from_bits16 below.
    let lift_value = |value_of_x: &str| -> String {
        format!(
            "inline acc_t lift_value(in_t x, ulong i) {{ {} }}\n",
            lift_body(problem, float_key, value_of_x)
        )
    };
    let is_half = matches!(problem.dtype, DType::F16 | DType::BF16);
    if !is_half {
        s.push_str(&lift_value(&format!("({})x", value.c_type())));
    }
    if mapped {
        // Elements exist only through lift(): no raw loads, no word sizes.
        s.push_str("#define IN_IS_MAPPED 1\n#define IN_BYTES 0\n");
        return s;
    }
    if matches!(problem.dtype, DType::F16 | DType::BF16) {
        s.push_str("#define IN_IS_HALF 1\n");
    }
    s.push_str(&format!(
        "#define IN_BYTES {}\n",
        problem.dtype.size_bytes()
    ));
    // A float element from its raw bits (for kernels that load whole words).
    let v = value.c_type();
    match problem.dtype {
        DType::F16 => s.push_str(&format!(
            "inline val_t value_from_bits16(ushort b) {{ return ({v})vload_half(0, (const half*)&b); }}\n"
        )),
        DType::BF16 => s.push_str(&format!(
            "inline val_t value_from_bits16(ushort b) {{ return ({v})as_float(((uint)b) << 16); }}\n"
        )),
        _ => {}
    }
    if is_half {
        s.push_str(&lift_value("value_from_bits16(x)"));
    }
    let from_uint = match problem.dtype {
        DType::I32 => Some("as_int(x)"),
        DType::U32 => Some("(x)"),
        DType::F32 => Some("as_float(x)"),
        _ => None,
    };
    if let Some(cast) = from_uint {
        s.push_str(&format!("#define AS_IN_FROM_UINT(x) {cast}\n"));
    }
    let from_ulong = match problem.dtype {
        DType::I64 => Some("as_long(x)"),
        DType::U64 => Some("(x)"),
        DType::F64 => Some("as_double(x)"),
        _ => None,
    };
    if let Some(cast) = from_ulong {
        s.push_str(&format!("#define AS_IN_FROM_ULONG(x) {cast}\n"));
    }
    s
}

/// The body of a lift function: the partial of element `i` whose value (of `val_t`) is
/// `value_of_x`, as `lift()` makes it for `problem` (a (value, index) pair, a float key,
/// or the value).
fn lift_body(problem: &Problem, float_key: bool, value_of_x: &str) -> String {
    if problem.op.is_indexed() {
        format!("acc_t r; r.v = {value_of_x}; r.i = i; return r;")
    } else if float_key {
        format!("(void)i; val_t v = {value_of_x}; return isnan(v) ? NAN_KEY : vkey(v);")
    } else {
        format!("(void)i; return {value_of_x};")
    }
}

/// `MAP_BITS` (the input's bytes per element), `map_value_bits(b)` and `lift_bits(b, i)`
/// for kernels of `problem` (the problem over mapped values, declared by `decls`) that
/// read a map's one input of `input_bytes`-byte elements as raw words: the mapped value
/// of an element's bits, and its partial as element `i`, as `lift()` makes it. Needs
/// `rl_map_bits` (generated from the map).
pub fn lift_bits_source(problem: &Problem, decls: &OpType, input_bytes: usize) -> String {
    format!(
        "#define MAP_BITS {input_bytes}\n\
         inline val_t map_value_bits(uint b) {{ return (val_t)rl_map_bits(b); }}\n\
         inline acc_t lift_bits(uint b, ulong i) {{ {} }}\n",
        lift_body(problem, decls.float_key, "map_value_bits(b)")
    )
}

/// The OpenCL C built-in collective for the operator (`add`, `min`, `max`), where its
/// semantics match redlab's: sums of any type, min/max of integers (the built-ins do not
/// propagate NaN, so float min/max have none).
pub fn builtin_collective(problem: &Problem) -> Option<&'static str> {
    match problem.op {
        Op::Sum => Some("add"),
        Op::Min if problem.dtype.is_integer() => Some("min"),
        Op::Max if problem.dtype.is_integer() => Some("max"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decls(op: Op, dtype: DType, acc: Option<DType>) -> OpType {
        op_type(&Problem::new(op, dtype, acc).expect("valid"))
    }

    #[test]
    fn integer_sums_widen_to_64_bits() {
        let d = decls(Op::Sum, DType::I8, None);
        assert!(d.source.contains("typedef signed char in_t;"));
        assert!(d.source.contains("typedef long val_t;"));
        assert_eq!((d.acc_bytes, d.needs_fp64), (8, false));
    }

    #[test]
    fn float_sums_pad_with_negative_zero_and_halves_load_with_vload_half() {
        let d = decls(Op::Sum, DType::F16, None);
        assert!(d.source.contains("vload_half"));
        assert!(d.source.contains("((float)-0.0)"));
        assert_eq!(d.acc_bytes, 4);
        assert!(decls(Op::Sum, DType::F32, Some(DType::F64)).needs_fp64);
    }

    /// The cheap layout agrees with the declarations for every operator, type and
    /// allowed accumulator.
    #[test]
    fn partial_layout_matches_the_declarations() {
        for dtype in DType::ALL {
            for op in Op::ALL {
                if op.check_dtype(dtype).is_err() {
                    continue;
                }
                for acc in redlab_core::acc::allowed_accs(op, dtype) {
                    let problem = Problem::new(op, dtype, Some(acc)).expect("valid");
                    let d = op_type(&problem);
                    let want = PartialLayout {
                        value: d.value,
                        acc_bytes: d.acc_bytes,
                        float_key: d.float_key,
                        needs_fp64: d.needs_fp64,
                    };
                    assert_eq!(partial_layout(&problem), want, "{problem}");
                }
            }
        }
    }

    #[test]
    fn argmin_carries_an_index_and_breaks_ties_low() {
        let d = decls(Op::ArgMin, DType::F64, None);
        assert!(d
            .source
            .contains("typedef struct { val_t v; ulong i; } acc_t;"));
        assert!(d.source.contains("b.i < a.i"));
        assert_eq!(d.acc_bytes, 16);
    }
}
