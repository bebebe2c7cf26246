//! Statistics as user-defined reductions: the operators numpy, torch and CuPy users
//! reach for, each one map, one built-in combine and one `post`, so they run on every
//! backend, along axes and over segments, with the canonical order kept.
//!
//! | name | map | combine | post | numpy |
//! |---|---|---|---|---|
//! | `mean` | `x` (f64 for integers) | sum | `r / n` | `mean` |
//! | `sumsq` | `x * x` | sum | | `sum(x**2)` |
//! | `norm1` | `abs(x)` | sum | | `linalg.norm(x, 1)` |
//! | `norm2` | `x * x` | sum | `sqrt(r)` | `linalg.norm(x)` |
//! | `norminf` | `abs(x)` | max | | `linalg.norm(x, inf)` |
//! | `nansum` | `isnan(x) ? 0 : x` | sum | | `nansum` |
//! | `any` | `x != 0` | or | `r != 0` | `any` |
//! | `all` | `x != 0` | and | `r != 0` | `all` |
//! | `count_nonzero` | `x != 0` | sum | | `count_nonzero` |
//!
//! Integers are converted to f64 where numpy computes in floats (`mean`, the norms).
//! Where numpy differs: the mean of f16/bf16/f32 data is computed and returned in f32
//! (numpy returns the input's type), and `norminf` of nothing is "no value" (numpy
//! raises). Variance, standard deviation, log-sum-exp and the nan-aware min/max/mean
//! need accumulators of more than one value: they are `redlab_cpu::statistics`.

use redlab_core::DType;

use crate::error::ExprError;
use crate::reduction::Reduction;

/// Every statistic's name.
pub const NAMES: &[&str] = &[
    "mean",
    "sumsq",
    "norm1",
    "norm2",
    "norminf",
    "nansum",
    "any",
    "all",
    "count_nonzero",
];

/// The reduction computing statistic `name` over one input of `dtype`.
pub fn reduction(name: &str, dtype: DType) -> Result<Reduction, ExprError> {
    let float_x = if dtype.is_float() { "x" } else { "f64(x)" };
    let (map, combine, post) = match name {
        "mean" => (float_x.to_string(), "sum", Some("r / n")),
        "sumsq" => (format!("{float_x} * {float_x}"), "sum", None),
        "norm1" => (format!("abs({float_x})"), "sum", None),
        "norm2" => (format!("{float_x} * {float_x}"), "sum", Some("sqrt(r)")),
        "norminf" => (format!("abs({float_x})"), "max", None),
        "nansum" if dtype.is_float() => ("isnan(x) ? 0 : x".to_string(), "sum", None),
        "nansum" => ("x".to_string(), "sum", None),
        "any" => ("x != 0".to_string(), "or", Some("r != 0")),
        "all" => ("x != 0".to_string(), "and", Some("r != 0")),
        "count_nonzero" => ("x != 0".to_string(), "sum", None),
        other => {
            return Err(ExprError::typing(format!(
                "unknown statistic '{other}' (known: {})",
                NAMES.join(", ")
            )))
        }
    };
    let mut builder = Reduction::builder(&map, combine);
    if let Some(p) = post {
        builder = builder.post(p);
    }
    builder.build(&[dtype])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle;
    use redlab_core::{ArrayRef, Scalar, Value};

    fn of(name: &str, data: &[f64]) -> Value {
        let r = reduction(name, DType::F64).expect("builds");
        oracle::reduce(&r, &[ArrayRef::from_slice(data)]).expect("reduces")
    }

    #[test]
    fn statistics_match_their_definitions() {
        let x = [3.0, -4.0, 0.0, f64::NAN];
        let finite = [3.0, -4.0, 0.0];
        assert_eq!(of("mean", &finite), Value::Scalar(Scalar::F64(-1.0 / 3.0)));
        assert_eq!(of("sumsq", &finite), Value::Scalar(Scalar::F64(25.0)));
        assert_eq!(of("norm1", &finite), Value::Scalar(Scalar::F64(7.0)));
        assert_eq!(of("norm2", &finite), Value::Scalar(Scalar::F64(5.0)));
        assert_eq!(of("norminf", &finite), Value::Scalar(Scalar::F64(4.0)));
        assert_eq!(of("nansum", &x), Value::Scalar(Scalar::F64(-1.0)));
        assert_eq!(of("count_nonzero", &x), Value::Scalar(Scalar::U64(3)));
        assert_eq!(of("any", &[0.0, 0.0]), Value::Scalar(Scalar::U8(0)));
        assert_eq!(of("any", &[0.0, 2.0]), Value::Scalar(Scalar::U8(1)));
        assert_eq!(of("all", &[1.0, 2.0]), Value::Scalar(Scalar::U8(1)));
        assert_eq!(of("all", &[1.0, 0.0]), Value::Scalar(Scalar::U8(0)));
        assert_eq!(of("all", &[]), Value::Scalar(Scalar::U8(1)));
        assert_eq!(of("any", &[]), Value::Scalar(Scalar::U8(0)));
        assert!(of("mean", &[]).scalar().is_some_and(|s| s.is_nan()));
        let ints = reduction("mean", DType::I32).expect("builds");
        let v = oracle::reduce(&ints, &[ArrayRef::from_slice(&[1i32, 2])]).expect("reduces");
        assert_eq!(v, Value::Scalar(Scalar::F64(1.5)));
        assert!(reduction("median", DType::F32).is_err());
    }
}
