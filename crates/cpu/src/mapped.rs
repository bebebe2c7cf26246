//! User-defined reductions on the CPU: the map evaluated in blocks over chunks that are
//! aligned subtrees of the canonical order ([`redlab_expr::host`]), each chunk reduced by
//! this backend's own kernel for the built-in problem, chunks in parallel on the pool.

use std::time::Instant;

use redlab_core::{ArrayRef, Error, Outcome};
use redlab_expr::{host, Reduction};

use crate::CpuBackend;

impl CpuBackend {
    /// Reduces `inputs` as `reduction` says (`post` applied); `seconds` is wall time.
    pub fn reduce_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        let start = Instant::now();
        // One chunk never forks; handing it to the pool would only add a cross-thread
        // round trip to the latency of small reductions.
        let one_chunk = inputs
            .first()
            .is_none_or(|a| a.len() <= host::CHUNK_TILES * redlab_core::canonical::TILE);
        let value = if one_chunk {
            host::reduce(reduction, inputs, crate::compute)?
        } else {
            self.pool
                .install(|| host::reduce(reduction, inputs, crate::compute))?
        };
        let seconds = start.elapsed().as_secs_f64();
        Ok(Outcome {
            value,
            seconds,
            passes: vec![seconds],
        })
    }
}
