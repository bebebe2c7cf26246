//! Dispatch from run-time type tags to monomorphized generic code.
//!
//! A [`DType`](crate::DType) (and, for float sums, the accumulator's) is only known at run
//! time; these macros are the one place where it becomes a compile-time type, so every
//! generic path below them is compiled per type and stays fast.

/// Runs `$body` with `$t` bound to the Rust type of the run-time tag `$dtype`.
///
/// This is the one place where a run-time type becomes a compile-time one; everything
/// generic below it is monomorphized per type.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        $crate::with_int_dtype!($dtype, $t => $body,
            else $crate::with_float_dtype!($dtype, $t => $body,
                else unreachable!("every DType is an integer or a float type")))
    };
}

/// Like [`with_dtype!`](crate::with_dtype) for the integer types only; `else` handles the float tags.
#[macro_export]
macro_rules! with_int_dtype {
    ($dtype:expr, $t:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::I8 => {
                type $t = i8;
                $body
            }
            $crate::DType::U8 => {
                type $t = u8;
                $body
            }
            $crate::DType::I16 => {
                type $t = i16;
                $body
            }
            $crate::DType::U16 => {
                type $t = u16;
                $body
            }
            $crate::DType::I32 => {
                type $t = i32;
                $body
            }
            $crate::DType::U32 => {
                type $t = u32;
                $body
            }
            $crate::DType::I64 => {
                type $t = i64;
                $body
            }
            $crate::DType::U64 => {
                type $t = u64;
                $body
            }
            _ => $other,
        }
    };
}

/// Like [`with_dtype!`](crate::with_dtype) for the float types only; `else` handles the integer tags.
#[macro_export]
macro_rules! with_float_dtype {
    ($dtype:expr, $t:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::F16 => {
                type $t = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $t = $crate::half::bf16;
                $body
            }
            $crate::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::DType::F64 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// Binds `$t` to a float input type and `$a` to a float accumulator type for every
/// (input, accumulator) pair the rules in [`crate::acc`] allow; `else` handles the rest.
#[macro_export]
macro_rules! with_float_pair {
    ($dtype:expr, $acc:expr, $t:ident, $a:ident => $body:expr, else $other:expr) => {
        match ($dtype, $acc) {
            ($crate::DType::F16, $crate::DType::F32) => {
                type $t = $crate::half::f16;
                type $a = f32;
                $body
            }
            ($crate::DType::F16, $crate::DType::F64) => {
                type $t = $crate::half::f16;
                type $a = f64;
                $body
            }
            ($crate::DType::BF16, $crate::DType::F32) => {
                type $t = $crate::half::bf16;
                type $a = f32;
                $body
            }
            ($crate::DType::BF16, $crate::DType::F64) => {
                type $t = $crate::half::bf16;
                type $a = f64;
                $body
            }
            ($crate::DType::F32, $crate::DType::F32) => {
                type $t = f32;
                type $a = f32;
                $body
            }
            ($crate::DType::F32, $crate::DType::F64) => {
                type $t = f32;
                type $a = f64;
                $body
            }
            ($crate::DType::F64, $crate::DType::F64) => {
                type $t = f64;
                type $a = f64;
                $body
            }
            _ => $other,
        }
    };
}
