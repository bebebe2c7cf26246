//! Whole-array user-defined reductions of one input (the statistics among them: mean,
//! the norms, nansum, any/all, count_nonzero) enqueued on the caller's stream as one
//! launch of the production kernel.
//!
//! The segment kernels (`stream_outputs.rs`) can store any axis job's results in place,
//! but a whole array is then one output: its tiles, a tree over their results and a
//! finish, after a header copy, which on an H200 cost about twice torch's time per call
//! at 2^10 elements and read large arrays at half to four fifths of torch's speed
//! (results/h200-stat-prepared). Here the production kernel reads the caller's memory
//! through the map as its `lift()`, its last group applies `post` over the element
//! count and stores the result in the caller's memory (`RESULT_POST_T`,
//! canonical_one.cl; [`redlab_kernels::mapped::whole_to_result`]): one launch and no
//! copy, like a plain sum ([`CudaDevice::enqueue_reduce`]); a map that is the input
//! itself (a float mean) keeps the plain sum's kernel and tuned parameters, with its
//! raw-word loads. The result's bits are the
//! segment kernels' (one output in its own canonical order, the same `post` over the
//! same count), as the Python tests check against the host. Several inputs already on
//! the device take the same launch with a table of their addresses as its buffer
//! ([`CudaDevice::enqueue_addressed_whole`]).

use std::collections::HashMap;

use cudarc::driver::sys;
use redlab_core::DType;
use redlab_expr::codegen::InputLayout;
use redlab_kernels::{mapped, mapped_addressed, RunError};

use crate::memory::Timeline;
use crate::{CudaDevice, StreamMapped};

/// One planned launch: the kernel (built with `SEPARATE_RESULT`), its grid and the
/// partials' width, which picks the stream's scratch buffer.
#[derive(Clone, Copy)]
pub(crate) struct WholeLaunch {
    function: sys::CUfunction,
    global: usize,
    local: usize,
    acc_bytes: usize,
}

/// Launches by the prepared reduction's key, then by length: a call looks both up by
/// reference, without building a key.
pub(crate) type WholeLaunches = HashMap<String, HashMap<usize, WholeLaunch>>;

/// Lengths planned per reduction before its table starts over (programs whose lengths
/// vary without bound must not grow it without end).
const MAX_LENGTHS: usize = 4096;

impl CudaDevice {
    /// The launch of `prepared` over `n > 0` elements, planned and built on first use.
    fn whole_launch(&self, prepared: &StreamMapped, n: usize) -> Result<WholeLaunch, RunError> {
        let lock = || {
            self.whole_launches
                .lock()
                .map_err(|_| RunError::Device("launch table poisoned".into()))
        };
        let key = prepared.key_text();
        if let Some(launch) = lock()?.get(key).and_then(|by_length| by_length.get(&n)) {
            return Ok(*launch);
        }
        let whole = mapped::whole_to_result_for(prepared.reduction(), prepared.layout())
            .map_err(RunError::Skipped)?;
        let problem = whole.problem;
        let variant = mapped::variant().map_err(RunError::Device)?;
        let choice = self.auto(&problem, n);
        let tuned = choice.param_pairs();
        // Only the production kernel's own parameters: a tuned choice of another
        // variant names others.
        let pairs: Vec<(&str, u32)> = whole
            .params(&choice.variant, &tuned)
            .into_iter()
            .filter(|(name, _)| variant.params.iter().any(|p| p.name == *name))
            .collect();
        let (params, global, local) = self.one_launch(&variant, &problem, &pairs, n)?;
        let function = self.functions(
            &variant,
            &problem,
            Some(&whole.decls),
            &params,
            true,
            &["reduce"],
        )?[0];
        let launch = WholeLaunch {
            function,
            global,
            local,
            acc_bytes: redlab_kernels::codec::Codec::new(&problem).acc_bytes,
        };
        let mut table = lock()?;
        let by_length = table.entry(key.to_string()).or_default();
        if by_length.len() >= MAX_LENGTHS {
            by_length.clear();
        }
        by_length.insert(n, launch);
        Ok(launch)
    }

    /// Enqueues `prepared` over the `n` elements at `input` (its one input's type) on
    /// `stream`, storing the result after `post` ([`StreamMapped::dtype`], `result_bytes`
    /// bytes) at `result`, and returns without waiting. [`RunError::Skipped`] where this
    /// path does not apply (no elements, an input not 16-byte aligned, a result that
    /// needs the host): the caller then takes the segment kernels' path.
    ///
    /// # Safety
    /// `input` must hold `n` elements and `result` must have room for `result_bytes`
    /// bytes, both device memory of this device's primary context, alive until the work
    /// on `stream` completes; `stream` must be a stream of that context (0 is the legacy
    /// default stream).
    pub unsafe fn enqueue_mapped_whole(
        &self,
        prepared: &StreamMapped,
        input: u64,
        n: usize,
        stream: u64,
        (result, result_bytes): (u64, usize),
    ) -> Result<(), RunError> {
        if n == 0 {
            return Err(RunError::Skipped("an empty input has no launch".into()));
        }
        if prepared.layout() != InputLayout::Packed {
            return Err(RunError::Skipped(
                "several inputs enqueue through their address table".into(),
            ));
        }
        // SAFETY: the caller's promise.
        unsafe { self.enqueue_whole_launch(prepared, input, n, stream, (result, result_bytes)) }
    }

    /// Enqueues `prepared` (from [`StreamMapped::addressed`]) over the `n` elements of
    /// each of `inputs` (device address and type, one per input of its map) on `stream`,
    /// as [`CudaDevice::enqueue_mapped_whole`] does for one input. The inputs are read
    /// where they lie through a table of their addresses kept on the device
    /// (kept while the device is open); [`RunError::Skipped`] where none can be
    /// kept, or an input is not 16-byte aligned.
    ///
    /// # Safety
    /// As [`CudaDevice::enqueue_mapped_whole`], for every input.
    pub unsafe fn enqueue_addressed_whole(
        &self,
        prepared: &StreamMapped,
        inputs: &[(u64, DType)],
        n: usize,
        stream: u64,
        (result, result_bytes): (u64, usize),
    ) -> Result<(), RunError> {
        if n == 0 {
            return Err(RunError::Skipped("an empty input has no launch".into()));
        }
        if prepared.layout() != InputLayout::Addressed {
            return Err(RunError::Skipped("one input is its own buffer".into()));
        }
        mapped_addressed::check(prepared.reduction(), inputs).map_err(RunError::Skipped)?;
        let table = self.kept_address_table(inputs)?;
        // SAFETY: the caller's promise for the inputs; kept tables live with the device.
        unsafe { self.enqueue_whole_launch(prepared, table, n, stream, (result, result_bytes)) }
    }

    /// The one launch of `prepared` over `input` (its input, or its table).
    ///
    /// # Safety
    /// As [`CudaDevice::enqueue_mapped_whole`].
    unsafe fn enqueue_whole_launch(
        &self,
        prepared: &StreamMapped,
        input: u64,
        n: usize,
        stream: u64,
        (result, result_bytes): (u64, usize),
    ) -> Result<(), RunError> {
        if input % 16 != 0 {
            return Err(RunError::Skipped(format!(
                "the production kernel reads 16-byte aligned inputs (address {input:#x})"
            )));
        }
        let width = prepared.dtype().size_bytes();
        if result_bytes != width {
            return Err(RunError::Device(format!(
                "the result array holds {result_bytes} bytes; one {} takes {width}",
                prepared.dtype()
            )));
        }
        self.timeline.bind()?;
        let launch = self.whole_launch(prepared, n)?;
        let scratch = self.stream_scratch(stream, launch.acc_bytes)?;
        Timeline::enqueue_to(
            launch.function,
            stream as sys::CUstream,
            input,
            scratch,
            n,
            launch.global,
            launch.local,
            result,
        )
    }
}
