//! The block evaluator: numexpr's idea. The typed tree is evaluated one operation at a
//! time over a block of elements, so every operation is one tight loop over a few KiB
//! that stays in L1 and that the compiler vectorizes; the tree is walked once per block,
//! not once per element. The per-element rules are those of [`crate::eval`].

use redlab_core::half::{bf16, f16};
use redlab_core::{ArrayRef, DType};

use crate::eval::{convert_val, IntRules};
use crate::half_round::Half;
use crate::loops::{
    compare_scalar, float_binary, float_columns, float_scalar, float_unary, from_inputs, int_arith,
    int_call_columns, IntOperand,
};
use crate::types::{Cmp, Func, Kind, Node, Ty, Val};

/// Elements per block: one canonical tile (8192), 32 KiB of f32 per column.
pub const BLOCK: usize = 8192;

/// A block of values of one type.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // one variant per Ty
pub enum Column {
    Bool(Vec<bool>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Column {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::F32(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `k`.
    pub fn get(&self, k: usize) -> Val {
        match self {
            Column::Bool(v) => Val::Bool(v[k]),
            Column::I64(v) => Val::I64(v[k]),
            Column::U64(v) => Val::U64(v[k]),
            Column::F32(v) => Val::F32(v[k]),
            Column::F64(v) => Val::F64(v[k]),
        }
    }

    /// `len` copies of `v`.
    pub fn splat(v: Val, len: usize) -> Column {
        match v {
            Val::Bool(x) => Column::Bool(vec![x; len]),
            Val::I64(x) => Column::I64(vec![x; len]),
            Val::U64(x) => Column::U64(vec![x; len]),
            Val::F32(x) => Column::F32(vec![x; len]),
            Val::F64(x) => Column::F64(vec![x; len]),
        }
    }

    /// Values `range` as a new column.
    pub fn slice(&self, start: usize, end: usize) -> Column {
        match self {
            Column::Bool(v) => Column::Bool(v[start..end].to_vec()),
            Column::I64(v) => Column::I64(v[start..end].to_vec()),
            Column::U64(v) => Column::U64(v[start..end].to_vec()),
            Column::F32(v) => Column::F32(v[start..end].to_vec()),
            Column::F64(v) => Column::F64(v[start..end].to_vec()),
        }
    }

    /// Writes the values as elements of `dtype` (little-endian) into `out`, which holds
    /// exactly `len × size` bytes.
    pub fn write_as(&self, dtype: DType, out: &mut [u8]) {
        macro_rules! put {
            ($v:expr, $conv:expr) => {{
                let size = dtype.size_bytes();
                for (dst, &x) in out.chunks_exact_mut(size).zip($v.iter()) {
                    dst.copy_from_slice(&$conv(x).to_le_bytes());
                }
            }};
        }
        match (self, dtype) {
            (Column::F32(v), DType::F32) => out.copy_from_slice(as_bytes(v)),
            (Column::F64(v), DType::F64) => out.copy_from_slice(as_bytes(v)),
            (Column::I64(v), DType::I64) => out.copy_from_slice(as_bytes(v)),
            (Column::U64(v), DType::U64) => out.copy_from_slice(as_bytes(v)),
            (Column::I64(v), DType::I32) => put!(v, |x: i64| x as i32),
            (Column::I64(v), DType::I16) => put!(v, |x: i64| x as i16),
            (Column::I64(v), DType::I8) => put!(v, |x: i64| x as i8),
            (Column::U64(v), DType::U32) => put!(v, |x: u64| x as u32),
            (Column::U64(v), DType::U16) => put!(v, |x: u64| x as u16),
            (Column::U64(v), DType::U8) => put!(v, |x: u64| x as u8),
            (Column::Bool(v), DType::U8) => put!(v, |x: bool| x as u8),
            (Column::F32(v), DType::F16) => put!(v, f16::from_f32),
            (Column::F32(v), DType::BF16) => put!(v, bf16::from_f32),
            (col, d) => {
                let converted = convert_column(col.clone(), Ty::of_dtype(d));
                debug_assert_ne!(
                    converted.ty(),
                    col.ty(),
                    "no rule writes {:?} as {d}",
                    col.ty()
                );
                if converted.ty() != col.ty() {
                    converted.write_as(d, out);
                }
            }
        }
    }

    /// The values as an array of `dtype` without copying, where they already are one.
    pub fn as_array(&self, dtype: DType) -> Option<ArrayRef<'_>> {
        match (self, dtype) {
            (Column::F32(v), DType::F32) => Some(ArrayRef::from_slice(v)),
            (Column::F64(v), DType::F64) => Some(ArrayRef::from_slice(v)),
            (Column::I64(v), DType::I64) => Some(ArrayRef::from_slice(v)),
            (Column::U64(v), DType::U64) => Some(ArrayRef::from_slice(v)),
            // A bool is one byte, 0 or 1: the u8 array a bool map's results are stored as.
            (Column::Bool(v), DType::U8) => ArrayRef::from_bytes(DType::U8, as_bytes(v)).ok(),
            _ => None,
        }
    }

    /// The values' type.
    pub fn ty(&self) -> Ty {
        match self {
            Column::Bool(_) => Ty::Bool,
            Column::I64(_) => Ty::I64,
            Column::U64(_) => Ty::U64,
            Column::F32(_) => Ty::F32,
            Column::F64(_) => Ty::F64,
        }
    }
}

fn as_bytes<T: bytemuck_free::Pod>(v: &[T]) -> &[u8] {
    bytemuck_free::bytes(v)
}

/// Bytes in 8-byte-aligned storage, so that any element type can be viewed in place.
#[derive(Debug, Clone, Default)]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl redlab_core::ByteSource for AlignedBytes {
    fn bytes(&self) -> &[u8] {
        AlignedBytes::bytes(self)
    }
}

impl AlignedBytes {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> AlignedBytes {
        AlignedBytes {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck_free::bytes(&self.words)[..self.len]
    }

    /// The bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut bytemuck_free::bytes_mut(&mut self.words)[..len]
    }
}

/// Plain-old-data views without an extra dependency: the element types here are
/// primitive numbers, whose every bit pattern is valid and which have no padding.
mod bytemuck_free {
    /// Primitive numbers.
    pub trait Pod: Copy {}
    impl Pod for f32 {}
    impl Pod for f64 {}
    impl Pod for i64 {}
    impl Pod for u64 {}
    impl Pod for u8 {}
    impl Pod for bool {}

    pub fn bytes<T: Pod>(v: &[T]) -> &[u8] {
        // SAFETY: T is a primitive number or a bool (one byte, 0 or 1: no padding, and
        // any of its bytes is a valid u8); the length is
        // the slice's size in bytes and u8 has alignment 1.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
    }

    pub fn bytes_mut(v: &mut [u64]) -> &mut [u8] {
        // SAFETY: as above; every byte pattern is a valid u64, so writes through the
        // byte view cannot make the words invalid.
        unsafe {
            std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v))
        }
    }
}

/// Evaluates `node` over elements `start .. start + len` of `inputs`, with `vars` the
/// part's variables as columns of `len` values.
pub fn eval_block(
    node: &Node,
    inputs: &[ArrayRef<'_>],
    start: usize,
    len: usize,
    vars: &[Column],
) -> Column {
    if let Some(column) = from_inputs(node, inputs, start, len) {
        return column;
    }
    match &node.kind {
        Kind::Const(v) => Column::splat(*v, len),
        Kind::Input(k) => convert_column(load_block(&inputs[*k], start, len), node.ty),
        Kind::Index => Column::U64((start as u64..(start + len) as u64).collect()),
        Kind::Var(k) => vars[*k].clone(),
        Kind::Neg(e) => match eval_block(e, inputs, start, len, vars) {
            Column::I64(v) => Column::I64(v.into_iter().map(IntRules::neg).collect()),
            Column::U64(v) => Column::U64(v.into_iter().map(IntRules::neg).collect()),
            Column::F32(v) => Column::F32(v.into_iter().map(|x| -x).collect()),
            Column::F64(v) => Column::F64(v.into_iter().map(|x| -x).collect()),
            Column::Bool(v) => Column::I64(v.into_iter().map(|b| -(b as i64)).collect()),
        },
        Kind::Not(e) => match truth(eval_block(e, inputs, start, len, vars)) {
            Column::Bool(v) => Column::Bool(v.into_iter().map(|b| !b).collect()),
            other => other,
        },
        Kind::Arith(op, a, b) if matches!(b.kind, Kind::Const(_)) => {
            // A constant operand stays a scalar: `x * 2` is one pass over x.
            let Kind::Const(c) = b.kind else {
                unreachable!("guarded")
            };
            let op = *op;
            match (eval_block(a, inputs, start, len, vars), c) {
                (Column::F32(mut x), Val::F32(q)) => {
                    float_scalar(op, &mut x, q);
                    Column::F32(x)
                }
                (Column::F64(mut x), Val::F64(q)) => {
                    float_scalar(op, &mut x, q);
                    Column::F64(x)
                }
                (Column::I64(mut x), Val::I64(q)) => {
                    int_arith(op, &mut x, IntOperand::Scalar(q));
                    Column::I64(x)
                }
                (Column::U64(mut x), Val::U64(q)) => {
                    int_arith(op, &mut x, IntOperand::Scalar(q));
                    Column::U64(x)
                }
                (x, q) => per_element(&x, &Column::splat(q, len), |p, q| {
                    crate::eval::arith_val(op, p, q)
                }),
            }
        }
        Kind::Compare(op, a, b) if matches!(b.kind, Kind::Const(_)) => {
            let Kind::Const(c) = b.kind else {
                unreachable!("guarded")
            };
            let op = *op;
            let a = eval_block(a, inputs, start, len, vars);
            match (&a, c) {
                (Column::F32(x), Val::F32(q)) => Column::Bool(compare_scalar(op, x, q)),
                (Column::F64(x), Val::F64(q)) => Column::Bool(compare_scalar(op, x, q)),
                (Column::I64(x), Val::I64(q)) => Column::Bool(compare_scalar(op, x, q)),
                (Column::U64(x), Val::U64(q)) => Column::Bool(compare_scalar(op, x, q)),
                _ => Column::Bool(compare(op, &a, &Column::splat(c, len))),
            }
        }
        // An input operand of the operation's own type is read in place, not copied.
        Kind::Arith(op, a, b) if in_place_f32(b, inputs).is_some() => {
            let y = in_place_f32(b, inputs).map(|s| &s[start..start + len]);
            match (eval_block(a, inputs, start, len, vars), y) {
                (Column::F32(mut x), Some(y)) => {
                    float_columns(*op, &mut x, y);
                    Column::F32(x)
                }
                (x, _) => {
                    let y = eval_block(b, inputs, start, len, vars);
                    per_element(&x, &y, |p, q| crate::eval::arith_val(*op, p, q))
                }
            }
        }
        Kind::Arith(op, a, b) => {
            let (a, b) = (
                eval_block(a, inputs, start, len, vars),
                eval_block(b, inputs, start, len, vars),
            );
            let op = *op;
            match (a, b) {
                (Column::I64(mut x), Column::I64(y)) => {
                    int_arith(op, &mut x, IntOperand::Column(&y));
                    Column::I64(x)
                }
                (Column::U64(mut x), Column::U64(y)) => {
                    int_arith(op, &mut x, IntOperand::Column(&y));
                    Column::U64(x)
                }
                (Column::F32(mut x), Column::F32(y)) => {
                    float_columns(op, &mut x, &y);
                    Column::F32(x)
                }
                (Column::F64(mut x), Column::F64(y)) => {
                    float_columns(op, &mut x, &y);
                    Column::F64(x)
                }
                (x, y) => per_element(&x, &y, |p, q| crate::eval::arith_val(op, p, q)),
            }
        }
        Kind::Compare(op, a, b) => {
            let (a, b) = (
                eval_block(a, inputs, start, len, vars),
                eval_block(b, inputs, start, len, vars),
            );
            Column::Bool(compare(*op, &a, &b))
        }
        Kind::Logic(and, a, b) => {
            let (Column::Bool(x), Column::Bool(y)) = (
                truth(eval_block(a, inputs, start, len, vars)),
                truth(eval_block(b, inputs, start, len, vars)),
            ) else {
                unreachable!("truth() returns bools")
            };
            Column::Bool(if *and {
                zip(&x, &y, |p, q| p && q)
            } else {
                zip(&x, &y, |p, q| p || q)
            })
        }
        Kind::Select(c, a, b) => {
            let Column::Bool(c) = truth(eval_block(c, inputs, start, len, vars)) else {
                unreachable!("truth() returns bools")
            };
            // Two constants (`x > t ? 1 : 0`, an indicator): the values straight from the
            // mask, without two columns of copies (their allocation per block cost more
            // than the whole select).
            if let (Kind::Const(p), Kind::Const(q)) = (&a.kind, &b.kind) {
                return select_constants(&c, *p, *q);
            }
            let (a, b) = (
                eval_block(a, inputs, start, len, vars),
                eval_block(b, inputs, start, len, vars),
            );
            select(&c, a, b)
        }
        Kind::Call(f, args) => {
            let a = eval_block(&args[0], inputs, start, len, vars);
            let b = args.get(1).map(|e| eval_block(e, inputs, start, len, vars));
            call(*f, a, b)
        }
        Kind::Convert(e) => convert_column(eval_block(e, inputs, start, len, vars), node.ty),
        Kind::Narrow(d, e) => narrow_column(*d, eval_block(e, inputs, start, len, vars), node.ty),
    }
}

/// The f32 input a node reads unconverted, as a slice (for reading it in place).
fn in_place_f32<'a>(node: &Node, inputs: &[ArrayRef<'a>]) -> Option<&'a [f32]> {
    in_place::<f32>(node, inputs, Ty::F32)
}

/// The input of element type `T` (and expression type `ty`) that a node reads
/// unconverted, as a slice.
pub(crate) fn in_place<'a, T: redlab_core::Element>(
    node: &Node,
    inputs: &[ArrayRef<'a>],
    ty: Ty,
) -> Option<&'a [T]> {
    match node.kind {
        Kind::Input(k) if node.ty == ty && inputs[k].dtype() == T::DTYPE => {
            inputs[k].typed::<T>().ok()
        }
        _ => None,
    }
}

pub(crate) fn zip<T: Copy, U>(x: &[T], y: &[T], f: impl Fn(T, T) -> U) -> Vec<U> {
    x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect()
}

fn per_element(x: &Column, y: &Column, f: impl Fn(Val, Val) -> Val) -> Column {
    let vals: Vec<Val> = (0..x.len()).map(|k| f(x.get(k), y.get(k))).collect();
    from_vals(&vals, vals.first().map_or(x.ty(), |v| v.ty()))
}

fn map_values(col: &Column, f: impl Fn(Val) -> Val, ty: Ty, len: usize) -> Column {
    let vals: Vec<Val> = (0..len).map(|k| f(col.get(k))).collect();
    from_vals(&vals, ty)
}

fn from_vals(vals: &[Val], ty: Ty) -> Column {
    let conv = |v: &Val| convert_val(*v, ty);
    match ty {
        Ty::Bool => Column::Bool(
            vals.iter()
                .map(|v| matches!(conv(v), Val::Bool(true)))
                .collect(),
        ),
        Ty::I64 => Column::I64(
            vals.iter()
                .map(|v| if let Val::I64(x) = conv(v) { x } else { 0 })
                .collect(),
        ),
        Ty::U64 => Column::U64(
            vals.iter()
                .map(|v| if let Val::U64(x) = conv(v) { x } else { 0 })
                .collect(),
        ),
        Ty::F32 => Column::F32(
            vals.iter()
                .map(|v| if let Val::F32(x) = conv(v) { x } else { 0.0 })
                .collect(),
        ),
        Ty::F64 => Column::F64(
            vals.iter()
                .map(|v| if let Val::F64(x) = conv(v) { x } else { 0.0 })
                .collect(),
        ),
    }
}

fn truth(col: Column) -> Column {
    convert_column(col, Ty::Bool)
}

/// `col` converted to `ty`, elementwise by [`convert_val`]'s rules.
pub fn convert_column(col: Column, ty: Ty) -> Column {
    if col.ty() == ty {
        return col;
    }
    match (&col, ty) {
        (Column::F32(v), Ty::F64) => Column::F64(v.iter().map(|&x| x as f64).collect()),
        (Column::F64(v), Ty::F32) => Column::F32(v.iter().map(|&x| x as f32).collect()),
        (Column::I64(v), Ty::F32) => Column::F32(v.iter().map(|&x| x as f32).collect()),
        (Column::I64(v), Ty::F64) => Column::F64(v.iter().map(|&x| x as f64).collect()),
        (Column::U64(v), Ty::F32) => Column::F32(v.iter().map(|&x| x as f32).collect()),
        (Column::U64(v), Ty::F64) => Column::F64(v.iter().map(|&x| x as f64).collect()),
        (Column::F32(v), Ty::Bool) => Column::Bool(v.iter().map(|&x| x != 0.0).collect()),
        (Column::F64(v), Ty::Bool) => Column::Bool(v.iter().map(|&x| x != 0.0).collect()),
        (Column::I64(v), Ty::Bool) => Column::Bool(v.iter().map(|&x| x != 0).collect()),
        (Column::U64(v), Ty::Bool) => Column::Bool(v.iter().map(|&x| x != 0).collect()),
        // The rest of convert_val's table, each a typed loop (through Val they cost 10–20×
        // the loop): bools are 0/1, floats saturate into integers with NaN → 0 (`as`).
        (Column::Bool(v), Ty::I64) => Column::I64(v.iter().map(|&x| x as i64).collect()),
        (Column::Bool(v), Ty::U64) => Column::U64(v.iter().map(|&x| x as u64).collect()),
        (Column::Bool(v), Ty::F32) => Column::F32(v.iter().map(|&x| x as u8 as f32).collect()),
        (Column::Bool(v), Ty::F64) => Column::F64(v.iter().map(|&x| x as u8 as f64).collect()),
        (Column::I64(v), Ty::U64) => Column::U64(v.iter().map(|&x| x as u64).collect()),
        (Column::U64(v), Ty::I64) => Column::I64(v.iter().map(|&x| x as i64).collect()),
        (Column::F32(v), Ty::I64) => Column::I64(v.iter().map(|&x| x as i64).collect()),
        (Column::F32(v), Ty::U64) => Column::U64(v.iter().map(|&x| x as u64).collect()),
        (Column::F64(v), Ty::I64) => Column::I64(v.iter().map(|&x| x as i64).collect()),
        (Column::F64(v), Ty::U64) => Column::U64(v.iter().map(|&x| x as u64).collect()),
        _ => map_values(&col, |v| convert_val(v, ty), ty, col.len()),
    }
}

/// `col` cast to the narrow integer `dtype` and widened back, elementwise by
/// [`crate::eval::narrow_val`]'s rules, as typed loops.
fn narrow_column(dtype: DType, col: Column, ty: Ty) -> Column {
    macro_rules! through {
        ($narrow:ty, $wide:ty, $out:ident) => {
            Column::$out(match &col {
                Column::Bool(v) => v.iter().map(|&x| x as $narrow as $wide).collect(),
                Column::I64(v) => v.iter().map(|&x| x as $narrow as $wide).collect(),
                Column::U64(v) => v.iter().map(|&x| x as $narrow as $wide).collect(),
                Column::F32(v) => v.iter().map(|&x| x as $narrow as $wide).collect(),
                Column::F64(v) => v.iter().map(|&x| x as $narrow as $wide).collect(),
            })
        };
    }
    let out = match dtype {
        DType::I8 => through!(i8, i64, I64),
        DType::I16 => through!(i16, i64, I64),
        DType::I32 => through!(i32, i64, I64),
        DType::U8 => through!(u8, u64, U64),
        DType::U16 => through!(u16, u64, U64),
        DType::U32 => through!(u32, u64, U64),
        DType::F16 | DType::BF16 => {
            let format = if dtype == DType::F16 {
                Half::F16
            } else {
                Half::BF16
            };
            // Integers and bools go through f32 first, as `f32(…)` converts them.
            Column::F32(match convert_column_unless_f64(col) {
                Column::F64(v) => v.iter().map(|&x| format.round_f64(x)).collect(),
                Column::F32(v) => v.iter().map(|&x| format.round_f32(x)).collect(),
                _ => unreachable!("converted to a float column"),
            })
        }
        other => convert_column(col, Ty::of_dtype(other)),
    };
    convert_column(out, ty)
}

/// `col` as an f32 column, unless it is f64 (which rounds straight from its own bits).
fn convert_column_unless_f64(col: Column) -> Column {
    match col {
        Column::F64(_) => col,
        other => convert_column(other, Ty::F32),
    }
}

fn compare(op: Cmp, a: &Column, b: &Column) -> Vec<bool> {
    // Built for AVX2/AVX-512 too: the baseline has no 64-bit integer comparison.
    #[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
    fn go<T: PartialOrd + Copy>(op: Cmp, x: &[T], y: &[T]) -> Vec<bool> {
        match op {
            Cmp::Eq => zip(x, y, |p, q| p == q),
            Cmp::Ne => zip(x, y, |p, q| p != q),
            Cmp::Lt => zip(x, y, |p, q| p < q),
            Cmp::Le => zip(x, y, |p, q| p <= q),
            Cmp::Gt => zip(x, y, |p, q| p > q),
            Cmp::Ge => zip(x, y, |p, q| p >= q),
        }
    }
    match (a, b) {
        (Column::Bool(x), Column::Bool(y)) => go(op, x, y),
        (Column::I64(x), Column::I64(y)) => go(op, x, y),
        (Column::U64(x), Column::U64(y)) => go(op, x, y),
        (Column::F32(x), Column::F32(y)) => go(op, x, y),
        (Column::F64(x), Column::F64(y)) => go(op, x, y),
        _ => (0..a.len())
            .map(|k| crate::eval::compare_val(op, a.get(k), b.get(k)))
            .collect(),
    }
}

/// `c[k] ? a[k] : b[k]`, without a branch per element: conditions on data are as good
/// as random, and a mispredicted branch per element had made `x > 0 ? x : 0` ten times
/// slower than `abs(x)`. The bits are picked through a mask (`-1` or `0` from the
/// condition), which the compiler turns into vector blends.
/// `c[k] ? p : q` for two constants of one type (the checker gives both branches the
/// node's type).
fn select_constants(c: &[bool], p: Val, q: Val) -> Column {
    match (p, q) {
        (Val::Bool(p), Val::Bool(q)) => {
            Column::Bool(c.iter().map(|&k| if k { p } else { q }).collect())
        }
        (Val::I64(p), Val::I64(q)) => {
            Column::I64(c.iter().map(|&k| if k { p } else { q }).collect())
        }
        (Val::U64(p), Val::U64(q)) => {
            Column::U64(c.iter().map(|&k| if k { p } else { q }).collect())
        }
        (Val::F32(p), Val::F32(q)) => {
            Column::F32(c.iter().map(|&k| if k { p } else { q }).collect())
        }
        (Val::F64(p), Val::F64(q)) => {
            Column::F64(c.iter().map(|&k| if k { p } else { q }).collect())
        }
        (p, q) => select(c, Column::splat(p, c.len()), Column::splat(q, c.len())),
    }
}

fn select(c: &[bool], a: Column, b: Column) -> Column {
    fn go<
        T: Copy,
        B: Copy
            + std::ops::BitAnd<Output = B>
            + std::ops::BitOr<Output = B>
            + std::ops::Not<Output = B>,
    >(
        c: &[bool],
        x: &[T],
        y: &[T],
        mask: impl Fn(bool) -> B,
        to: impl Fn(T) -> B,
        from: impl Fn(B) -> T,
    ) -> Vec<T> {
        c.iter()
            .zip(x.iter().zip(y))
            .map(|(&c, (&p, &q))| {
                let m = mask(c);
                from((to(p) & m) | (to(q) & !m))
            })
            .collect()
    }
    let m32 = |c: bool| (c as u32).wrapping_neg();
    let m64 = |c: bool| (c as u64).wrapping_neg();
    match (&a, &b) {
        (Column::Bool(x), Column::Bool(y)) => Column::Bool(
            c.iter()
                .zip(x.iter().zip(y))
                .map(|(&c, (&p, &q))| (c & p) | (!c & q))
                .collect(),
        ),
        (Column::I64(x), Column::I64(y)) => {
            Column::I64(go(c, x, y, m64, |v: i64| v as u64, |b| b as i64))
        }
        (Column::U64(x), Column::U64(y)) => Column::U64(go(c, x, y, m64, |v| v, |b| b)),
        (Column::F32(x), Column::F32(y)) => {
            Column::F32(go(c, x, y, m32, f32::to_bits, f32::from_bits))
        }
        (Column::F64(x), Column::F64(y)) => {
            Column::F64(go(c, x, y, m64, f64::to_bits, f64::from_bits))
        }
        _ => {
            let vals: Vec<Val> = (0..c.len())
                .map(|k| if c[k] { a.get(k) } else { b.get(k) })
                .collect();
            from_vals(&vals, a.ty())
        }
    }
}

/// `f(a)` or `f(a, b)`. Float columns are transformed in place, one loop per function
/// with the function chosen outside it (a `match` per element had cost 10–20× the loop).
fn call(f: Func, a: Column, b: Option<Column>) -> Column {
    match (a, b) {
        (Column::F32(x), _) if f == Func::IsNan => {
            Column::Bool(x.iter().map(|v| v.is_nan()).collect())
        }
        (Column::F64(x), _) if f == Func::IsNan => {
            Column::Bool(x.iter().map(|v| v.is_nan()).collect())
        }
        (Column::F32(mut x), None) => {
            float_unary(f, &mut x);
            Column::F32(x)
        }
        (Column::F64(mut x), None) => {
            float_unary(f, &mut x);
            Column::F64(x)
        }
        (Column::F32(mut x), Some(Column::F32(y))) => {
            float_binary(f, &mut x, &y);
            Column::F32(x)
        }
        (Column::F64(mut x), Some(Column::F64(y))) => {
            float_binary(f, &mut x, &y);
            Column::F64(x)
        }
        (Column::I64(mut x), None) => {
            int_call_columns(f, &mut x, None);
            Column::I64(x)
        }
        (Column::U64(mut x), None) => {
            int_call_columns(f, &mut x, None);
            Column::U64(x)
        }
        (Column::I64(mut x), Some(Column::I64(y))) => {
            int_call_columns(f, &mut x, Some(&y));
            Column::I64(x)
        }
        (Column::U64(mut x), Some(Column::U64(y))) => {
            int_call_columns(f, &mut x, Some(&y));
            Column::U64(x)
        }
        (x, y) => {
            let y = y.unwrap_or_else(|| x.clone());
            per_element(&x, &y, |p, q| crate::eval::call_val(f, p, q))
        }
    }
}

/// Elements `start .. start + len` of `input` in their loaded type.
/// `s` widened element by element; built for AVX2/AVX-512 too (the baseline has no
/// sign-extending loads, and widening was most of a two-input integer map's time).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
fn widen<T: Copy, U: From<T>>(s: &[T]) -> Vec<U> {
    s.iter().map(|&x| U::from(x)).collect()
}

pub(crate) fn load_block(input: &ArrayRef<'_>, start: usize, len: usize) -> Column {
    let part = input.slice(start, start + len);
    macro_rules! widen {
        ($t:ty, $variant:ident) => {
            Column::$variant(part.typed::<$t>().map(widen).unwrap_or_default())
        };
    }
    match input.dtype() {
        DType::I8 => widen!(i8, I64),
        DType::I16 => widen!(i16, I64),
        DType::I32 => widen!(i32, I64),
        DType::I64 => Column::I64(part.typed::<i64>().map(<[i64]>::to_vec).unwrap_or_default()),
        DType::U8 => widen!(u8, U64),
        DType::U16 => widen!(u16, U64),
        DType::U32 => widen!(u32, U64),
        DType::U64 => Column::U64(part.typed::<u64>().map(<[u64]>::to_vec).unwrap_or_default()),
        DType::F16 => widen!(f16, F32),
        DType::BF16 => widen!(bf16, F32),
        DType::F32 => Column::F32(part.typed::<f32>().map(<[f32]>::to_vec).unwrap_or_default()),
        DType::F64 => Column::F64(part.typed::<f64>().map(<[f64]>::to_vec).unwrap_or_default()),
    }
}
