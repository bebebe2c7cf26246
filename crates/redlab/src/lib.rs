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

mod device;
mod error;
pub mod fuzzing;
pub mod input;
#[cfg(feature = "cuda")]
pub mod placement;

use std::sync::OnceLock;

pub use device::{list_devices, Device, DeviceReport, Unavailable};
pub use error::Error;
pub use redlab_core::{
    acc, canonical, generate, reference, ArrayRef, Backend, DType, DeviceInfo, Element, HostArray,
    Op, Outcome, Problem, Scalar, Value,
};
use redlab_cpu::CpuBackend;

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

/// The sum of `data` on the CPU: integers exactly (in 64 bits), floats in the canonical
/// order.
pub fn sum<T: Element>(data: &[T]) -> Result<Value, Error> {
    reduce(Op::Sum, data)
}
