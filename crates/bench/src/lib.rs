//! The benchmark harness of redlab: how rows are timed ([`TimingPlan`], [`time_row`]),
//! summarized ([`Stats`]), recorded ([`Record`], one JSON line each) and compared with a
//! read roof measured on the same bytes, interleaved with the timed calls — and shown in
//! an HTML [`report`] with [`charts`].
//!
//! Benchmarks measure; they never decide correctness, but every timed call is still
//! checked against the reference, so a fast wrong answer shows as `wrong`, not as a win.
//!
//! ```
//! use redlab_bench::Stats;
//! let s = Stats::of(&[2.0, 1.0, 3.0]).unwrap();
//! assert_eq!(s.median, 2.0);
//! ```

pub mod charts;
mod harness;
mod plan;
mod record;
pub mod report;
pub mod report_shapes;
mod stats;

pub use harness::{time_row, RowOutcome};
pub use plan::{CacheMode, TimingPlan, MIN_ROOF_SAMPLES};
pub use record::{Record, Status, ROOF_TOLERANCE};
pub use stats::{gbps, Stats};
