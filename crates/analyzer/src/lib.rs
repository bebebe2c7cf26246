//! The redlab analyzer: runs OpenCL C kernels in a SIMT simulator and reports, per warp
//! and per source line, branch divergence, local-memory bank conflicts, global-memory
//! coalescing (requests and 32-byte sectors), barriers, and errors (barrier divergence,
//! local races, out-of-bounds and uninitialized local reads), for the project's own
//! variants and for kernels users write.
//!
//! The pipeline: [`preprocess`] → [`parser`] → [`sim::launch`] over
//! [`memory::Memory`], with [`metrics`] collected on the way; [`variant`] runs a
//! built-in variant through the same pass driver the GPU backends use, [`report`]
//! turns runs into JSON and [`html`] into pictures.
//!
//! ```
//! use redlab_analyzer::{compile, sim, memory::Memory, memory::Buffer};
//!
//! let src = "__kernel void twice(__global int* a) { a[get_global_id(0)] *= 2; }";
//! let program = compile("twice.cl", src, &[], &|_, _| Ok(None))?;
//! let mut mem = Memory::default();
//! mem.global.push(Buffer::new("a", vec![1; 64 * 4]));
//! let cfg = sim::LaunchConfig::linear(64, 32);
//! let run = sim::launch(&program.program, &program.files, "twice", &[sim::Arg::Global(0)], &mut mem, &cfg)?;
//! assert_eq!(run.metrics.total.global_load.requests, 2); // one per warp
//! assert_eq!(run.metrics.total.global_load.sectors, 8); // 128 bytes per warp
//! # Ok::<(), redlab_analyzer::AnalyzeError>(())
//! ```

pub mod args;
pub mod ast;
pub mod clamsee;
pub mod global_races;
pub mod html;
pub mod html_compare;
pub mod lexer;
pub mod mapped;
pub mod mask;
pub mod memory;
pub mod metrics;
pub mod parse_expr;
pub mod parser;
pub mod preprocess;
pub mod report;
pub mod segments;
pub mod session;
pub mod sim;
pub mod source;
pub mod statistics;
pub mod types;
pub mod value;
pub mod variant;

pub use source::AnalyzeError;

use ast::Program;
use preprocess::Resolver;
use source::Files;

/// A parsed program with its files and `@watch` names.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The syntax tree.
    pub program: Program,
    /// The files read.
    pub files: Files,
    /// Local arrays marked `// @watch NAME`.
    pub watches: Vec<String>,
}

/// Preprocesses and parses `text`; `defines` are `-D` options (`NAME` or `NAME=VALUE`).
pub fn compile(
    name: &str,
    text: &str,
    defines: &[String],
    resolve: &Resolver<'_>,
) -> Result<Compiled, AnalyzeError> {
    let pp = preprocess::preprocess(name, text, defines, resolve)
        .map_err(|(d, files)| d.resolve(&files))?;
    let program = parser::parse(&pp.tokens).map_err(|d| d.resolve(&pp.files))?;
    Ok(Compiled {
        program,
        files: pp.files,
        watches: pp.watches,
    })
}

/// Resolves `#include "name"` to the project's own kernel headers.
pub fn project_headers(name: &str, _from: &str) -> Result<Option<(String, String)>, String> {
    Ok(redlab_kernels::assembly::file(name).map(|t| (name.to_string(), t.to_string())))
}
