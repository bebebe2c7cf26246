//! The kernel library of redlab: single-source OpenCL C reduction kernels (`cl/`), the
//! registry that describes each strategy ([`registry`]), the per-problem operator and
//! type declarations injected before building ([`optype`]), and source assembly
//! ([`assembly`]), user-defined maps compiled into the production kernel ([`mapped`]),
//! with the host side every backend shares: partial encoding
//! ([`codec`]) and the pass driver ([`driver`]). No device is needed to use or test this crate.
//!
//! ```
//! use redlab_core::{DType, Op, Problem};
//! use redlab_kernels::{assembly, registry};
//!
//! let reduce2 = registry::find("reduce2").expect("registered under its SDK name");
//! assert_eq!(reduce2.name, "sequential-addressing");
//! let problem = Problem::new(Op::Max, DType::F32, None)?;
//! let text = assembly::assemble(&reduce2, &problem, &[], &[], assembly::Target::OpenCl, true)
//!     .expect("assembles");
//! assert!(text.source.contains("__kernel"));
//! # Ok::<(), redlab_core::Error>(())
//! ```

pub mod assembly;
pub mod capability;
pub mod codec;
pub mod conformance;
pub mod driver;
pub mod generate;
pub mod mapped;
pub mod mapped_addressed;
pub mod mapped_segments;
pub mod nan_columns;
pub mod optype;
pub mod registry;
pub mod segment_results;
pub mod segments;
pub mod stat_launch;
pub mod statistics;
pub mod tile_plan;

pub use capability::{Capabilities, Feature};
pub use driver::{ChainStep, Launcher, Run, RunError};
pub use registry::{Geometry, PassStructure, Variant};
