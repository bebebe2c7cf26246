//! The native CPU backend of redlab.
//!
//! - Floats: the canonical order v1 ([`redlab_core::canonical`]), tiles vectorized and the
//!   tile tree split over threads at aligned boundaries, so results are bitwise identical
//!   at any thread count ([`canonical`]).
//! - Integers: 64-bit wrapping folds over many independent lanes ([`integer`]).
//! - Selections: NaN-aware, key-based min/max/argmin/argmax ([`select`]).
//!
//! ```
//! use redlab_core::{ArrayRef, Backend, Op, Problem, Scalar, Value};
//! use redlab_cpu::CpuBackend;
//!
//! let cpu = CpuBackend::new(Some(2))?;
//! let problem = Problem::new(Op::Max, redlab_core::DType::F32, None)?;
//! let outcome = cpu.reduce(&problem, ArrayRef::from_slice(&[1.5f32, -3.0, 2.25]))?;
//! assert_eq!(outcome.value, Value::Scalar(Scalar::F32(2.25)));
//! # Ok::<(), redlab_core::Error>(())
//! ```

pub mod canonical;
mod column_lanes;
pub mod columns;
mod columns_exp;
mod columns_moments;
mod exp_merge_avx2;
mod first_extreme_avx2;
pub mod fork;
pub mod integer;
mod log_sum_exp;
mod mapped;
mod mapped_select;
pub mod outputs;
pub mod prefetch;
pub mod roof;
mod row_moments;
pub mod select;
mod select_columns;
mod short_row_select;
mod short_row_stats;
pub mod short_rows;
mod spare;
pub mod statistics;
#[cfg(test)]
mod test_values;

use std::time::Instant;

use redlab_core::num::{AccFloat, FloatInput, IntElement};
use redlab_core::reference::wrap_int;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::IntoScalar;
use redlab_core::{
    with_float_dtype, with_float_pair, with_int_dtype, ArrayRef, Backend, DeviceInfo, Error, Op,
    Outcome, Packed, Problem, Value,
};

use crate::canonical::{Add, Mul};
use crate::select::Selectable;

/// The CPU as a redlab device.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    info: DeviceInfo,
}

/// The most worker threads a backend starts: far above any machine's core count, far
/// below the count whose start-up alone would take minutes.
pub const MAX_THREADS: usize = 1024;

impl CpuBackend {
    /// A CPU backend on `threads` worker threads (all cores when `None`).
    pub fn new(threads: Option<usize>) -> Result<CpuBackend, Error> {
        let mut builder = rayon::ThreadPoolBuilder::new();
        if let Some(k) = threads {
            if k == 0 {
                return Err(backend_error("the thread count must be at least 1"));
            }
            if k > MAX_THREADS {
                let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
                return Err(backend_error(&format!(
                    "{k} threads is more than the {MAX_THREADS} redlab starts (this machine has {cores} hardware threads)"
                )));
            }
            builder = builder.num_threads(k);
        }
        let pool = builder
            .build()
            .map_err(|e| backend_error(&format!("cannot start threads: {e}")))?;
        let info = describe(pool.current_num_threads());
        Ok(CpuBackend { pool, info })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Computes the value without timing it.
    pub fn compute(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Value, Error> {
        problem.check_input(&data)?;
        self.run(data.bytes().len(), || compute(problem, data))
    }
}

impl CpuBackend {
    /// One result per output of `selection` (axis outputs or segments), each the
    /// canonical reduction of its own elements. Outputs run in parallel; a long output
    /// also splits its own work, as a 1-D reduction does.
    pub fn compute_outputs(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        problem.check_input(&data)?;
        if let Some(packed) = self.run(data.bytes().len(), || {
            typed_outputs(problem, data, selection)
        }) {
            return packed.map(|p| p.scalar_values());
        }
        self.value_outputs(problem, data, selection)
    }

    /// The outputs [`typed_outputs`] does not take, one [`Value`] each.
    fn value_outputs(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        let bytes = data.bytes().len();
        if let Some(values) = self.run(bytes, || short_rows::compute(problem, data, selection)) {
            return values;
        }
        if let Some(values) = self.run(bytes, || select_columns::compute(problem, data, selection))
        {
            return values;
        }
        self.run(bytes, || {
            outputs::compute_outputs(data, selection, true, |view| compute(problem, view))
        })
    }

    /// The results of [`CpuBackend::compute_outputs`] as one typed array, the form
    /// callers keep: float sums and products of columns and of short rows, and integer
    /// sums, products and bitwise operators of short rows, are computed in it directly,
    /// without a [`Value`] per output; other selections are packed from their values.
    pub fn compute_outputs_packed(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<Packed, Error> {
        problem.check_input(&data)?;
        match self.run(data.bytes().len(), || {
            typed_outputs(problem, data, selection)
                .or_else(|| short_row_select::packed(problem, data, selection))
        }) {
            Some(packed) => packed,
            None => Packed::of_values(problem, &self.value_outputs(problem, data, selection)?),
        }
    }
}

/// The selections whose results are typed from the start: float sums and products of
/// columns ([`float_columns`]) and short even rows ([`short_rows::packed`]).
fn typed_outputs(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    float_columns(problem, data, selection).or_else(|| short_rows::packed(problem, data, selection))
}

impl CpuBackend {
    /// How [`CpuBackend::compute_outputs`] runs `selection`, in words (`--explain`).
    pub fn explain_outputs(&self, problem: &Problem, selection: Selection<'_>) -> String {
        let columns = float_columns_run(problem, selection).is_some();
        let short_rows = short_rows::applies(selection).is_some();
        if select_columns::takes(problem, selection) {
            format!(
                "cpu selected columns: {} outputs side by side, each row updating the order \
                 keys of a block of columns (8 KiB of each row, vectorized across columns), row chunks \
                 on {} threads; a column holding a NaN is reduced again alone for its first NaN",
                selection.outputs(),
                self.threads()
            )
        } else if columns {
            format!(
                "cpu columns: {} outputs side by side, 1024 canonical lanes per block of columns, \
                 rows added vectorized across columns, blocks on {} threads",
                selection.outputs(),
                self.threads()
            )
        } else if short_rows {
            format!(
                "cpu short rows: {} contiguous outputs of at most one tile, reduced in typed runs \
                 of outputs per task on {} threads, each the 1-D canonical reduction of its own \
                 elements",
                selection.outputs(),
                self.threads()
            )
        } else {
            format!(
                "cpu outputs: {} outputs on {} threads, each a 1-D canonical reduction of its own \
                 elements (long outputs split their tiles across threads too)",
                selection.outputs(),
                self.threads()
            )
        }
    }
}

impl Backend for CpuBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error> {
        let start = Instant::now();
        let value = self.compute(problem, data)?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Outcome {
            value,
            seconds,
            passes: vec![seconds],
        })
    }

    fn stream_read(&self, data: &[u8]) -> Result<f64, Error> {
        let start = Instant::now();
        let folded = self.run(data.len(), || roof::stream_read(data));
        let seconds = start.elapsed().as_secs_f64();
        std::hint::black_box(folded);
        Ok(seconds)
    }
}

fn backend_error(message: &str) -> Error {
    Error::Backend {
        backend: "cpu".into(),
        message: message.into(),
    }
}

fn compute(problem: &Problem, data: ArrayRef<'_>) -> Result<Value, Error> {
    if problem.dtype.is_integer() {
        return with_int_dtype!(problem.dtype, T => integer_value::<T>(problem, data.typed::<T>()?),
            else unreachable!("integer dtype"));
    }
    if problem.op.is_arithmetic() {
        return with_float_pair!(problem.dtype, problem.acc, T, A => {
            Ok(float_value::<T, A>(problem.op, data.typed::<T>()?))
        }, else Err(Error::AccNotAllowed {
            op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into(),
        }));
    }
    with_float_dtype!(problem.dtype, T => selection_value::<T>(problem.op, data.typed::<T>()?),
        else unreachable!("float dtype"))
}

/// The canonical sum (or product, for any other `op`) of `data`; numpy's empty result.
fn float_value<T: FloatInput<A>, A: AccFloat + IntoScalar>(op: Op, data: &[T]) -> Value {
    let total: Option<A> = if op == Op::Sum {
        canonical::reduce(Add, data)
    } else {
        canonical::reduce(Mul, data)
    };
    let empty = if op == Op::Sum { A::POS_ZERO } else { A::ONE };
    Value::Scalar(total.unwrap_or(empty).into_scalar())
}

/// The axis plan and the run of neighbouring outputs where `selection` is float sums
/// or products of columns: outputs with scattered elements whose neighbours read
/// neighbouring elements. Shared by [`float_columns`] and the `--explain` text.
fn float_columns_run<'a>(
    problem: &Problem,
    selection: Selection<'a>,
) -> Option<(&'a AxisPlan, usize)> {
    if !(problem.dtype.is_float() && problem.op.is_arithmetic()) {
        return None;
    }
    columns_moments::columns_run(selection)
}

/// Float sums and products of columns ([`columns`]), where [`float_columns_run`] takes
/// `selection`.
fn float_columns(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let (plan, run) = float_columns_run(problem, selection)?;
    Some(with_float_pair!(problem.dtype, problem.acc, T, A => {
        data.typed::<T>().map(|src| {
            let values: Vec<A> = if problem.op == Op::Sum {
                columns::reduce_columns(Add, src, plan, run)
            } else {
                columns::reduce_columns(Mul, src, plan, run)
            };
            Packed::of_vec(values)
        })
    }, else Err(Error::AccNotAllowed {
        op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into(),
    })))
}

fn integer_value<T: IntElement + Selectable>(
    problem: &Problem,
    data: &[T],
) -> Result<Value, Error> {
    let bits = match problem.op {
        Op::Sum => integer::fold(data, 0, u64::wrapping_add),
        Op::Prod => integer::fold(data, 1, u64::wrapping_mul),
        Op::And => integer::fold(data, u64::MAX, |a, b| a & b),
        Op::Or => integer::fold(data, 0, |a, b| a | b),
        Op::Xor => integer::fold(data, 0, |a, b| a ^ b),
        Op::Min | Op::Max | Op::ArgMin | Op::ArgMax => return selection_value(problem.op, data),
    };
    Ok(Value::Scalar(wrap_int(problem.acc, bits as i128)))
}

fn selection_value<T: Selectable + IntoScalar>(op: Op, data: &[T]) -> Result<Value, Error> {
    let want_min = op.wants_minimum().ok_or(Error::OpNotForType {
        op,
        dtype: T::DTYPE,
    })?;
    let best = select::select(data, want_min, op.is_indexed());
    Ok(Value::from_selection(op.is_indexed(), best))
}

fn describe(threads: usize) -> DeviceInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let mut details = vec![
        ("threads".to_string(), threads.to_string()),
        ("arch".to_string(), std::env::consts::ARCH.to_string()),
    ];
    if let Some(l3) = last_level_cache_bytes() {
        details.push(("last-level cache".to_string(), format!("{} MiB", l3 >> 20)));
    }
    DeviceInfo {
        id: "cpu".into(),
        backend: "cpu".into(),
        name: model,
        compute_units: threads,
        details,
    }
}

/// Size of the largest CPU cache, from sysfs (Linux), for cold-cache benchmarking.
pub fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|entry| {
        let text = std::fs::read_to_string(entry.ok()?.path().join("size")).ok()?;
        let text = text.trim();
        let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
        let value: u64 = digits.parse().ok()?;
        Some(match unit {
            "K" => value << 10,
            "M" => value << 20,
            "G" => value << 30,
            _ => value,
        })
    })
    .max()
}
