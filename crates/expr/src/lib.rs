//! User-defined reductions: a small expression language (docs/expressions.md), run the
//! same way on every backend.
//!
//! - [`parser`] turns text into a tree, with the column of any bad token;
//! - [`types`] checks it and makes every conversion explicit;
//! - [`Reduction`] puts map, combine, identity, post and accumulator together;
//! - [`eval`] (one element) and [`oracle`] are the reference; [`block`] and [`host`]
//!   are the fast host path, [`rows`] its fused form for float maps,
//!   [`custom_outputs`] custom combines along axes and over segments; [`codegen`]
//!   writes the OpenCL C that the GPU kernels and the analyzer compile.
//!
//! ```
//! use redlab_core::{ArrayRef, DType, Scalar, Value};
//! use redlab_expr::{oracle, Reduction};
//!
//! let x = [1.0f32, 2.0, 3.0];
//! let y = [4.0f32, 5.0, 6.0];
//! let dot = Reduction::builder("x * y", "sum").build(&[DType::F32, DType::F32])?;
//! let value = oracle::reduce(&dot, &[ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)])?;
//! assert_eq!(value, Value::Scalar(Scalar::F32(32.0)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod ast;
pub mod block;
pub mod codegen;
mod combine_program;
mod custom_columns;
pub mod custom_outputs;
mod custom_short;
mod error;
pub mod eval;
mod fused;
pub mod half_round;
pub mod host;
pub mod lexer;
mod loops;
pub mod oracle;
pub mod parser;
mod reduction;
pub mod rows;
pub mod stats;
pub mod types;

pub use error::ExprError;
pub use reduction::{Combine, Reduction, ReductionBuilder};
