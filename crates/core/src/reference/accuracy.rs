//! Accuracy references for floats: an exactly rounded sum, a double-double product, and
//! the distance of a result from them in units in the last place (ulps) of its type.
//!
//! - [`exact_sum`] keeps a list of non-overlapping f64 partials whose sum is exactly the
//!   sum so far (Shewchuk's algorithm, as in Python's `math.fsum`), then rounds once to
//!   f64 with the half-way correction. Every supported input converts to f64 exactly, so
//!   the result is the exactly rounded f64 sum; when the intermediate overflows (inputs
//!   near f64::MAX) it returns ±inf or NaN and the error is reported as unknown.
//! - [`dd_product`] multiplies in double-double (≈106 bits): its relative error is below
//!   n·2^-104, far under one ulp of f32 or f64 for any practical n, unless the product
//!   under- or overflows f64.
//!
//! For an f32 result the f64 reference is then within 2^-29 ulp(f32) of the exact value,
//! which is why errors are printed with two decimals and never read as "exactly 0.5".

use crate::num::FloatElement;
use crate::{Scalar, Value};

/// The exactly rounded (to f64) sum of `values`.
pub fn exact_sum<I: IntoIterator<Item = f64>>(values: I) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    let mut special = 0.0f64; // accumulates inf/nan separately so they do not poison partials
    for mut x in values {
        if !x.is_finite() {
            special += x;
            continue;
        }
        let mut kept = 0;
        for i in 0..partials.len() {
            let mut y = partials[i];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    if special != 0.0 || special.is_nan() {
        return special;
    }
    round_partials(&partials)
}

/// Sums non-overlapping partials (ascending magnitude) with one correct rounding.
fn round_partials(partials: &[f64]) -> f64 {
    let Some((&top, rest)) = partials.split_last() else {
        return 0.0;
    };
    let mut hi = top;
    let mut lo = 0.0;
    let mut remaining = rest.len();
    while remaining > 0 {
        remaining -= 1;
        let x = hi;
        let y = rest[remaining];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    // Half-way case: if the rest would push the rounding over, adjust (as fsum does).
    if remaining > 0
        && ((lo < 0.0 && rest[remaining - 1] < 0.0) || (lo > 0.0 && rest[remaining - 1] > 0.0))
    {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

/// The product of `values` in double-double arithmetic, rounded to f64.
pub fn dd_product<I: IntoIterator<Item = f64>>(values: I) -> f64 {
    let (mut hi, mut lo) = (1.0f64, 0.0f64);
    for x in values {
        let p = hi * x;
        if !p.is_finite() || p == 0.0 {
            // Out of double-double's comfortable range: fall back to plain f64, which
            // already holds inf, nan or a signed zero correctly.
            hi = p;
            lo = 0.0;
            continue;
        }
        let err = hi.mul_add(x, -p);
        let low = lo.mul_add(x, err);
        let s = p + low;
        lo = low - (s - p);
        hi = s;
    }
    hi + lo
}

/// The exact value of a float sum or product of `data`, for error reporting.
pub fn exact_value<T: FloatElement>(product: bool, data: &[T]) -> f64 {
    let values = data.iter().map(|x| x.to_f64());
    if product {
        dd_product(values)
    } else {
        exact_sum(values)
    }
}

/// Distance from `result` to `exact` in ulps of the result's type at `exact`.
///
/// `None` when it is not a float result or either side is not finite.
pub fn error_ulps(result: &Value, exact: f64) -> Option<f64> {
    let scalar = result.scalar()?;
    let got = scalar.to_f64();
    if !got.is_finite() || !exact.is_finite() {
        return None;
    }
    let ulp = match scalar {
        Scalar::F32(_) | Scalar::F16(_) | Scalar::BF16(_) => {
            let x = (exact as f32).abs();
            let next = f32::from_bits(x.to_bits() + 1);
            (next - x) as f64
        }
        Scalar::F64(_) => {
            let x = exact.abs();
            f64::from_bits(x.to_bits() + 1) - x
        }
        _ => return None,
    };
    Some((got - exact).abs() / ulp)
}

/// The any-order error bound of a float sum or product, computed once per input so
/// that many results over the same input are judged in O(1).
///
/// Any order of `n − 1` roundings satisfies |error| ≤ γ_{n−1}·Σ|x_i| for sums and
/// |error| ≤ γ_{n−1}·|Π x_i| for products (γ_k = k·u / (1 − k·u)), plus `n` times the
/// smallest normal for underflow. NaN must match NaN; a product whose exact value
/// overflows accepts any result (whether an infinity meets a zero first is the order's
/// business). Integer and selection results must be checked for equality instead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnyOrderBound {
    exact: f64,
    bound: f64,
    overflowing_product: bool,
}

impl AnyOrderBound {
    /// Computes the exact value and the bound for `problem` over `data`.
    pub fn new(
        problem: &crate::Problem,
        data: crate::ArrayRef<'_>,
    ) -> Result<AnyOrderBound, String> {
        use crate::{with_float_dtype, DType, Op};
        let product = problem.op == Op::Prod;
        let (exact, magnitude) = with_float_dtype!(problem.dtype, T => {
            let values = data.typed::<T>().map_err(|e| e.to_string())?;
            let exact = exact_value(product, values);
            let magnitude = if product { exact.abs() } else { exact_sum(values.iter().map(|x| x.to_f64().abs())) };
            (exact, magnitude)
        }, else return Err(format!("{} is not a float type", problem.dtype)));
        let n = data.len() as f64;
        let (unit, tiny) = if problem.acc == DType::F64 {
            (f64::EPSILON / 2.0, f64::MIN_POSITIVE)
        } else {
            (f32::EPSILON as f64 / 2.0, f32::MIN_POSITIVE as f64)
        };
        let k = (n - 1.0).max(0.0);
        let gamma = if k * unit < 1.0 {
            k * unit / (1.0 - k * unit)
        } else {
            f64::INFINITY
        };
        Ok(AnyOrderBound {
            exact,
            bound: gamma * magnitude + n * tiny,
            overflowing_product: product && !exact.is_finite(),
        })
    }

    /// Whether `got` is within the bound.
    pub fn check(&self, got: &Value) -> Result<(), String> {
        let value = got.scalar().map_or(f64::NAN, |s| s.to_f64());
        let exact = self.exact;
        if self.overflowing_product {
            return Ok(());
        }
        if exact.is_nan() || value.is_nan() || exact.is_infinite() {
            return if (exact.is_nan() && value.is_nan()) || exact == value {
                Ok(())
            } else {
                Err(format!("got {got}, exact {exact}"))
            };
        }
        if (value - exact).abs() <= self.bound {
            Ok(())
        } else {
            Err(format!(
                "got {got}, exact {exact}: error {} exceeds the bound {}",
                (value - exact).abs(),
                self.bound
            ))
        }
    }
}

/// Whether `got` is an acceptable result for `problem` over `data`, given the
/// reference's `expected`: equal, or — for float sums and products of a strategy with
/// its own order (`canonical` false) — within the [`AnyOrderBound`]. Integers,
/// selections and canonical-order results must be equal.
pub fn check_result(
    problem: &crate::Problem,
    data: crate::ArrayRef<'_>,
    got: &Value,
    expected: &Value,
    canonical: bool,
) -> Result<(), String> {
    if got.same_as(expected) {
        return Ok(());
    }
    let float_arith = problem.dtype.is_float() && problem.op.is_arithmetic();
    if canonical || !float_arith {
        return Err(format!("got {got}, reference {expected}"));
    }
    check_any_order(problem, data, got)
}

/// [`AnyOrderBound`] for one result.
pub fn check_any_order(
    problem: &crate::Problem,
    data: crate::ArrayRef<'_>,
    got: &Value,
) -> Result<(), String> {
    AnyOrderBound::new(problem, data)?.check(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sum_cancels_exactly() {
        assert_eq!(exact_sum([1e100, 1.0, -1e100]), 1.0);
        assert_eq!(exact_sum([0.1; 10]), 1.0);
        assert_eq!(exact_sum([]), 0.0);
        assert_eq!(exact_sum([f64::INFINITY, 1.0]), f64::INFINITY);
        assert!(exact_sum([f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    }

    #[test]
    fn exact_sum_rounds_half_way_cases_correctly() {
        // 1 + 2^-53 + 2^-106 rounds up to 1 + 2^-52; plain summation gives 1.
        let tiny = 2f64.powi(-53);
        assert_eq!(exact_sum([1.0, tiny, tiny * tiny]), 1.0 + 2.0 * tiny);
    }

    #[test]
    fn dd_product_is_exact_where_it_can_be() {
        assert_eq!(dd_product([3.0, 0.5, -7.0]), -10.5);
        // (1 + 2^-30)(1 - 2^-30) = 1 - 2^-60: plain f64 rounds the first step's
        // product to 1 + 2^-30 exactly and then loses nothing either, but the
        // double-double keeps 1 - 2^-60 as hi + lo before the final rounding.
        let e = 2f64.powi(-30);
        assert_eq!(
            dd_product([1.0 + e, 1.0 - e, 2f64.powi(60)]),
            2f64.powi(60) - 1.0
        );
        assert!(dd_product([f64::INFINITY, 0.0]).is_nan());
    }

    #[test]
    fn any_order_bound_accepts_reorderings_and_rejects_wrong_sums() {
        let problem = crate::Problem::new(crate::Op::Sum, crate::DType::F32, None).expect("valid");
        let data: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin()).collect();
        let view = crate::ArrayRef::from_slice(&data);
        let reversed: f32 = data.iter().rev().sum();
        assert!(check_any_order(&problem, view, &Value::Scalar(Scalar::F32(reversed))).is_ok());
        assert!(
            check_any_order(&problem, view, &Value::Scalar(Scalar::F32(reversed + 1.0))).is_err()
        );
    }

    #[test]
    fn ulps_are_measured_in_the_result_type() {
        let one_ulp_up = Value::Scalar(Scalar::F32(f32::from_bits(1.0f32.to_bits() + 1)));
        assert_eq!(error_ulps(&one_ulp_up, 1.0), Some(1.0));
        assert_eq!(error_ulps(&Value::Scalar(Scalar::I32(3)), 3.0), None);
    }
}
