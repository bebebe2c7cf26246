//! The reduction model of redlab, with no device dependency.
//!
//! - what to reduce: [`Op`], [`DType`], accumulator rules ([`acc`]), [`Problem`];
//! - the data: [`HostArray`] and its typed view [`ArrayRef`], seeded inputs ([`generate`], [`hashed`]),
//!   shapes, axes and segments ([`shape`], [`segmented`]);
//! - the answer: [`Value`], [`Outcome`];
//! - who reduces: the [`Backend`] trait;
//! - what is right: [`canonical`] (the one float order, version [`canonical::VERSION`])
//!   and [`reference`](mod@reference) (the oracle).
//!
//! ```
//! use redlab_core::{reference, ArrayRef, Op, Problem, Scalar, Value};
//!
//! let problem = Problem::new(Op::Sum, redlab_core::DType::I32, None)?;
//! let data = [i32::MAX, 1];
//! let value = reference::reduce(&problem, ArrayRef::from_slice(&data))?;
//! assert_eq!(value, Value::Scalar(Scalar::I64(i32::MAX as i64 + 1)));
//! # Ok::<(), redlab_core::Error>(())
//! ```

pub mod acc;
mod array;
mod backend;
pub mod canonical;
pub mod canonical_exp;
pub mod canonical_ln;
mod dispatch;
mod dtype;
mod error;
pub mod generate;
pub mod hashed;
pub mod host_memory;
pub mod merge;
pub mod num;
mod op;
mod packed;
mod problem;
pub mod reference;
pub mod segmented;
pub mod shape;
pub mod shard;
pub mod size;
mod value;
pub mod value_bytes;

pub use array::{ArrayRef, ByteSource, HostArray};
pub use backend::{Backend, DeviceInfo};
pub use dtype::{DType, Element};
pub use error::Error;
pub use half;
pub use op::Op;
pub use packed::{Packed, PackedBytes};
pub use problem::{Outcome, Problem, Repeated};
pub use value::{IntoScalar, Scalar, Value};
