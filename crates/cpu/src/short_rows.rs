//! Short contiguous outputs (rows along the last axis of a C-order array, at most one
//! tile each): one typed loop over a run of outputs per task, instead of a view, a type
//! dispatch and a task per output, which cost several times the reduction of a row of
//! 32 elements. Each output is still the 1-D reduction of its own elements by the same
//! functions, so the bits are those of reducing it alone.

use std::sync::Mutex;

use rayon::prelude::*;
use redlab_core::canonical::TILE;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{with_float_dtype, with_float_pair, with_int_dtype};
use redlab_core::{ArrayRef, Element, Error, IntoScalar, Op, Problem, Value};

use crate::canonical::{reduce_row32, Add, Mul};

/// The longest output this path takes: longer ones split their own tiles over threads.
pub const MAX_LEN: usize = TILE;
/// Outputs per task at least: a task per short output cost more than its reduction.
const OUTPUTS_PER_TASK: usize = 256;

/// The axis plan and output length where `selection` is contiguous outputs of 1 to
/// [`MAX_LEN`] elements, the outputs this path takes; `None` otherwise. Both
/// [`compute`] and the `--explain` text ask this, so they cannot disagree.
pub fn applies<'a>(selection: Selection<'a>) -> Option<(&'a AxisPlan, usize)> {
    let Selection::Axes(plan) = selection else {
        return None;
    };
    let len = plan.segment_len();
    let eligible = plan.outputs() > 0 && (1..=MAX_LEN).contains(&len);
    (eligible && plan.contiguous(0).is_some()).then_some((plan, len))
}

/// One value per output where [`applies`] takes `selection`; `None` otherwise.
pub fn compute(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<Value>, Error>> {
    let (plan, len) = applies(selection)?;
    Some(typed(problem, data, plan, len))
}

fn typed(
    problem: &Problem,
    data: ArrayRef<'_>,
    plan: &AxisPlan,
    len: usize,
) -> Result<Vec<Value>, Error> {
    if problem.dtype.is_integer() {
        return with_int_dtype!(problem.dtype, T => {
            each(data.typed::<T>()?, plan, len, |row| crate::integer_value::<T>(problem, row))
        }, else unreachable!("integer dtype"));
    }
    if problem.op.is_arithmetic() {
        return with_float_pair!(problem.dtype, problem.acc, T, A => {
            let src = data.typed::<T>()?;
            // Rows of at most 32: their one partial tile, folded directly (the tile
            // tree's walk around it cost more than the fold).
            match (len <= 32, problem.op) {
                (true, Op::Sum) => each(src, plan, len, |row| Ok(Value::Scalar(reduce_row32::<A, T, _>(Add, row).into_scalar()))),
                (true, _) => each(src, plan, len, |row| Ok(Value::Scalar(reduce_row32::<A, T, _>(Mul, row).into_scalar()))),
                (false, _) => each(src, plan, len, |row| Ok(crate::float_value::<T, A>(problem.op, row))),
            }
        }, else Err(Error::AccNotAllowed {
            op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into(),
        }));
    }
    with_float_dtype!(problem.dtype, T => {
        each(data.typed::<T>()?, plan, len, |row| crate::selection_value::<T>(problem.op, row))
    }, else unreachable!("float dtype"))
}

/// `reduce` of every output's row, outputs in runs of [`OUTPUTS_PER_TASK`] per task.
///
/// The values are written straight into their places (an indexed collect); collecting
/// `Result`s would have gathered them in pieces and copied them once more. The first
/// error, if any, is kept aside and returned instead.
fn each<T: Element + Sync>(
    src: &[T],
    plan: &AxisPlan,
    len: usize,
    reduce: impl Fn(&[T]) -> Result<Value, Error> + Sync,
) -> Result<Vec<Value>, Error> {
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let mut values = Vec::new();
    (0..plan.outputs())
        .into_par_iter()
        .with_min_len(OUTPUTS_PER_TASK)
        .map(|k| {
            let value = plan
                .contiguous(k)
                .and_then(|start| src.get(start..start + len))
                .ok_or_else(|| Error::Shape(format!("output {k} lies outside the input")))
                .and_then(&reduce);
            value.unwrap_or_else(|e| {
                failure
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .get_or_insert(e);
                Value::Empty
            })
        })
        .collect_into_vec(&mut values);
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::shape::Layout;
    use redlab_core::Scalar;

    /// 1000 rows of 3: more than one task's run of outputs, so the outputs are written
    /// from several tasks.
    fn rows() -> (Vec<i64>, AxisPlan) {
        let data: Vec<i64> = (0..3000).map(|k| (k * 7919) % 1009).collect();
        let plan = AxisPlan::new(Layout::c_order(&[1000, 3]), Some(&[1]), false).expect("plan");
        (data, plan)
    }

    #[test]
    fn every_output_lands_in_its_own_place() {
        let (data, plan) = rows();
        let values = each(&data, &plan, 3, |row| {
            Ok(Value::Scalar(Scalar::I64(row[0] - row[2])))
        })
        .expect("no error");
        let want: Vec<Value> = data
            .chunks(3)
            .map(|row| Value::Scalar(Scalar::I64(row[0] - row[2])))
            .collect();
        assert_eq!(values, want);
    }

    #[test]
    fn an_error_of_any_output_is_returned() {
        let (data, plan) = rows();
        let failing = data[3 * 777];
        let got = each(&data, &plan, 3, |row| {
            if row[0] == failing {
                Err(Error::Shape(format!("row starting {failing}")))
            } else {
                Ok(Value::Empty)
            }
        });
        match got {
            Err(Error::Shape(why)) => assert_eq!(why, format!("row starting {failing}")),
            other => panic!("expected the row's error, got {other:?}"),
        }
    }
}
