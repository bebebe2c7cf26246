//! redlab: parallel reductions — sum, product, min, max, bitwise and/or/xor,
//! argmin/argmax — with float results that are bitwise identical across runs, thread
//! counts and devices, because every backend sums in one canonical order
//! ([`canonical`], version [`canonical::VERSION`]).
//!
//! ```
//! use redlab::{Scalar, Value};
//!
//! let data: Vec<f32> = (0..100_000).map(|i| (i as f32).sin()).collect();
//! let total = redlab::sum(&data)?;
//! // The same bits on any number of threads, and equal to the reference order.
//! let reference = redlab::reference::reduce(
//!     &redlab::Problem::new(redlab::Op::Sum, redlab::DType::F32, None)?,
//!     redlab::ArrayRef::from_slice(&data),
//! )?;
//! assert!(total.same_as(&reference));
//!
//! let (value, index) = match redlab::reduce(redlab::Op::ArgMax, &[3i32, 9, 9, -1])? {
//!     Value::Indexed { value, index } => (value, index),
//!     other => unreachable!("{other:?}"),
//! };
//! assert_eq!((value, index), (Scalar::I32(9), 1));
//! # Ok::<(), redlab::Error>(())
//! ```
//!
//! Devices are opened by name with [`Device::open`]; inputs come from slices, seeded
//! generators ([`generate`]) or files ([`input::load`]).

#![deny(missing_docs)]

// The command line lives in the library so that other front ends (the Python package)
// run the very same commands; its `redlab::…` paths then name this crate.
extern crate self as redlab;

pub mod cli;
mod device;
mod error;
pub mod fuzzing;
pub mod generated;
pub mod input;
pub mod npy_out;
#[cfg(feature = "cuda")]
pub mod placement;
pub mod rendezvous;
pub mod sharded;
pub mod sharded_outputs;

use std::sync::OnceLock;

pub use device::{list_devices, state_kind, Device, DeviceReport, Unavailable};
pub use error::Error;
pub use redlab_core::{
    acc, canonical, generate, reference, segmented, shape, ArrayRef, Backend, DType, DeviceInfo,
    Element, HostArray, Op, Outcome, Packed, PackedBytes, Problem, Repeated, Scalar, Value,
};
pub use redlab_cpu::statistics::{finish_tiles, Statistic};
use redlab_cpu::CpuBackend;
pub use redlab_expr::{parser, stats, ExprError, Reduction, ReductionBuilder};

/// The CPU device behind the free functions, created on first use.
fn default_cpu() -> Result<&'static CpuBackend, Error> {
    static CPU: OnceLock<CpuBackend> = OnceLock::new();
    if let Some(cpu) = CPU.get() {
        return Ok(cpu);
    }
    let cpu = CpuBackend::new(None)?;
    Ok(CPU.get_or_init(|| cpu))
}

/// Reduces `data` with `op` on the CPU, accumulating in the default type
/// ([`acc::default_acc`]).
pub fn reduce<T: Element>(op: Op, data: &[T]) -> Result<Value, Error> {
    let problem = Problem::new(op, T::DTYPE, None)?;
    Ok(default_cpu()?.compute(&problem, ArrayRef::from_slice(data))?)
}

/// Reduces `data`, viewed through `layout`, along `axes` (`None`: all) on the CPU: one
/// value per output element, in C order of the kept axes, each the canonical reduction
/// of its own elements (docs/canonical-order.md, "Axes and segments"). The result's shape
/// is [`shape::AxisPlan::out_dims`].
///
/// ```
/// use redlab::shape::Layout;
///
/// // Row sums of a 2×3 matrix stored in C order.
/// let m = [1i32, 2, 3, 10, 20, 30];
/// let rows = redlab::reduce_axis(redlab::Op::Sum, &m, &Layout::c_order(&[2, 3]), Some(&[1]))?;
/// assert_eq!(rows, vec![redlab::Value::Scalar(redlab::Scalar::I64(6)),
///                       redlab::Value::Scalar(redlab::Scalar::I64(60))]);
/// # Ok::<(), redlab::Error>(())
/// ```
pub fn reduce_axis<T: Element>(
    op: Op,
    data: &[T],
    layout: &shape::Layout,
    axes: Option<&[isize]>,
) -> Result<Vec<Value>, Error> {
    let (problem, plan) = device::axis_request(op, data, layout, axes)?;
    Ok(default_cpu()?.compute_outputs(
        &problem,
        ArrayRef::from_slice(data),
        segmented::Selection::Axes(&plan),
    )?)
}

/// Reduces each segment of `data` on the CPU (CSR offsets or a fixed length), each in
/// the canonical order of its own elements.
pub fn reduce_segments<T: Element>(
    op: Op,
    data: &[T],
    segments: &shape::Segments,
) -> Result<Vec<Value>, Error> {
    let (problem, ranges) = device::segment_request(op, data, segments)?;
    Ok(default_cpu()?.compute_outputs(
        &problem,
        ArrayRef::from_slice(data),
        segmented::Selection::Ranges(&ranges),
    )?)
}

/// [`reduce_axis`] as a vector of the results' own type `R` (numpy's result type; see
/// [`Device::reduce_axis_as`]), without a [`Value`] per output.
///
/// ```
/// use redlab::shape::Layout;
///
/// let m = [1.5f32, 2.0, 3.0, 10.0, 20.0, 30.0];
/// let rows: Vec<f32> = redlab::reduce_axis_as(redlab::Op::Sum, &m, &Layout::c_order(&[2, 3]), Some(&[1]))?;
/// assert_eq!(rows, [6.5, 60.0]);
/// # Ok::<(), redlab::Error>(())
/// ```
pub fn reduce_axis_as<T: Element, R: Element>(
    op: Op,
    data: &[T],
    layout: &shape::Layout,
    axes: Option<&[isize]>,
) -> Result<Vec<R>, Error> {
    let (problem, plan) = device::axis_request(op, data, layout, axes)?;
    let packed = default_cpu()?.compute_outputs_packed(
        &problem,
        ArrayRef::from_slice(data),
        segmented::Selection::Axes(&plan),
    )?;
    device::typed_results(packed)
}

/// [`reduce_segments`] as a vector of the results' own type `R` (see
/// [`Device::reduce_axis_as`]).
///
/// ```
/// use redlab::shape::Segments;
///
/// let data = [3u8, 200, 100, 7, 1];
/// let sums: Vec<u64> = redlab::reduce_segments_as(redlab::Op::Sum, &data, &Segments::Offsets(vec![0, 3, 3, 5]))?;
/// assert_eq!(sums, [303, 0, 8]);
/// # Ok::<(), redlab::Error>(())
/// ```
pub fn reduce_segments_as<T: Element, R: Element>(
    op: Op,
    data: &[T],
    segments: &shape::Segments,
) -> Result<Vec<R>, Error> {
    let (problem, ranges) = device::segment_request(op, data, segments)?;
    let packed = default_cpu()?.compute_outputs_packed(
        &problem,
        ArrayRef::from_slice(data),
        segmented::Selection::Ranges(&ranges),
    )?;
    device::typed_results(packed)
}

/// The sum of `data` on the CPU: integers exactly (in 64 bits), floats in the canonical
/// order.
pub fn sum<T: Element>(data: &[T]) -> Result<Value, Error> {
    reduce(Op::Sum, data)
}
